// The breaker and retries every transaction runs through (src/db/storage-policy.ts), with transactions that fail
// the way the driver does: an unreachable database opens the breaker after 3 failures in a row, then statements are
// refused at once with storage_unavailable and Retry-After until a probe succeeds (calls during the probe wait for it); transient failures are run again;
// an unreachable database is retried once, and never after the commit was sent.
import { Neo4jError } from 'neo4j-driver';
import { describe, expect, it } from 'vitest';
import { createStoragePolicy } from '../../src/db/storage-policy.js';

const unavailable = () => new Neo4jError('Could not connect', 'ServiceUnavailable', '', '');
const deadlock = () => new Neo4jError('deadlock', 'Neo.TransientError.Transaction.DeadlockDetected', '', '');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the storage policy', () => {
  it('opens after 3 unavailability failures: then refuses at once, without running the transaction', async () => {
    const policy = createStoragePolicy({ halfOpenAfterMs: 60_000 });
    let runs = 0;
    const down = () =>
      policy.run(async () => {
        runs += 1;
        throw unavailable();
      });
    for (let i = 0; i < 3; i++) await expect(down()).rejects.toBeInstanceOf(Neo4jError);
    expect(runs).toBe(6); // each retried once (nothing committed)
    expect(policy.state).toBe('open');
    const started = Date.now();
    const refusal = await down().catch((e) => e);
    expect(Date.now() - started).toBeLessThan(50);
    expect(runs).toBe(6);
    expect(refusal).toMatchObject({ reason: 'storage_unavailable', status: 503 });
    expect(refusal.retryAfterSeconds).toBe(60);
  });

  it('half-open after its delay: one probe; its success closes the breaker', async () => {
    const policy = createStoragePolicy({ halfOpenAfterMs: 100 });
    for (let i = 0; i < 3; i++) {
      await policy
        .run(async () => {
          throw unavailable();
        })
        .catch(() => {});
    }
    expect(policy.state).toBe('open');
    await sleep(120);
    let release: () => void = () => {};
    const probe = policy.run(() => new Promise<string>((r) => (release = () => r('ok'))));
    await sleep(10); // the probe's transaction is running
    expect(policy.state).toBe('half-open');
    // while the probe is out, the others wait for its outcome (a probe is bounded by the connect timeout)
    let otherDone = false;
    const other = policy
      .run(async () => 'other')
      .finally(() => {
        otherDone = true;
      });
    await sleep(20);
    expect(otherDone).toBe(false);
    release();
    expect(await probe).toBe('ok');
    expect(await other).toBe('other');
    expect(policy.state).toBe('closed');
    expect(await policy.run(async () => 'served')).toBe('served');
  });

  it('a failed probe opens it again', async () => {
    const policy = createStoragePolicy({ halfOpenAfterMs: 50 });
    const fail = () =>
      policy
        .run(async () => {
          throw unavailable();
        })
        .catch((e) => e);
    for (let i = 0; i < 3; i++) await fail();
    await sleep(70);
    expect(await fail()).toBeInstanceOf(Neo4jError);
    expect(policy.state).toBe('open');
  });

  it('runs a transaction again on a transient failure (a deadlock), not counted by the breaker', async () => {
    const policy = createStoragePolicy();
    let runs = 0;
    const value = await policy.run(async () => {
      runs += 1;
      if (runs < 4) throw deadlock();
      return 'done';
    });
    expect([value, runs, policy.state]).toEqual(['done', 4, 'closed']);
  });

  it('gives up on transient failures after its retry time', async () => {
    const policy = createStoragePolicy({ transientRetryMs: 100 });
    const started = Date.now();
    await expect(
      policy.run(async () => {
        throw deadlock();
      }),
    ).rejects.toBeInstanceOf(Neo4jError);
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it('never runs again a transaction whose commit was sent when the database went away (it may have applied)', async () => {
    const policy = createStoragePolicy();
    let runs = 0;
    await expect(
      policy.run(async (committing) => {
        runs += 1;
        committing();
        throw unavailable();
      }),
    ).rejects.toBeInstanceOf(Neo4jError);
    expect(runs).toBe(1);
  });

  it('a pooled connection the database dropped: retried once on a new one, and served', async () => {
    const policy = createStoragePolicy();
    let runs = 0;
    const value = await policy.run(async () => {
      runs += 1;
      if (runs === 1) throw new Neo4jError('stale', 'SessionExpired', '', '');
      return 'fresh';
    });
    expect([value, runs, policy.state]).toEqual(['fresh', 2, 'closed']);
  });
});
