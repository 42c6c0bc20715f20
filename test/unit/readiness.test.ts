// Readiness (src/db/readiness.ts): ready only once the database answers AND the warm-up has run since it last went
// away; a loss during a warm-up makes that warm-up count for nothing; /readyz's check waits for a warm-up under way
// within its bound, and a failing probe makes the service not ready again. And the storage policy tells its
// listeners when a transaction found the database unreachable.
import { Neo4jError } from 'neo4j-driver';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import {
  ADMIT_WAIT_MS,
  ProbeTimeout,
  Readiness,
  WARMING_CONCURRENCY,
  type WarmupReport,
} from '../../src/db/readiness.js';
import { createStoragePolicy } from '../../src/db/storage-policy.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const logger = pino({ level: 'silent' });

/** A database whose reachability the test sets, and a warm-up the test finishes by hand. */
function fixture(
  log = logger,
  ramp: { rampMs: number; rampConcurrency?: number } = { rampMs: 0 },
  heartbeatMs = 0,
) {
  const db = { up: false, probes: 0 };
  const warmups: {
    finish(): void;
    fail(error?: Error): void;
    plan(cypher: string, changed: boolean): void;
  }[] = [];
  const readiness = new Readiness({
    probe: async () => {
      db.probes += 1;
      if (!db.up) throw new Neo4jError('unreachable', 'ServiceUnavailable', '', '');
    },
    warm: (planned) =>
      new Promise<WarmupReport>((resolve, reject) => {
        warmups.push({
          finish: () => resolve({ ms: 1, roundsMs: [1], statements: 1 }),
          fail: (error = new Error('failed')) => reject(error),
          plan: planned,
        });
      }),
    logger: log,
    probeIntervalMs: 10,
    heartbeatMs,
    ...ramp,
  });
  /** The database answers: the loop starts, and the first warm-up begins. */
  const upAndWarming = async () => {
    db.up = true;
    readiness.start();
    await until(() => warmups.length === 1);
  };
  /** Warm-up `n` (from 1) has begun; it ends, and the service is ready. */
  const warmed = async (n: number) => {
    await until(() => warmups.length === n);
    warmups[n - 1]?.finish();
    await until(() => readiness.state === 'ready');
  };
  return { db, warmups, readiness, upAndWarming, warmed };
}

/** A service whose warm-up is instant and whose heartbeat beats every 20 ms, on a database that answers as `probe` does. */
const beating = (probe: (timeoutMs: number) => Promise<void>, log = logger) =>
  new Readiness({
    probe,
    warm: async () => ({ ms: 1, roundsMs: [1], statements: 1 }),
    logger: log,
    probeIntervalMs: 10,
    heartbeatMs: 20,
    rampMs: 0,
  });

const until = async (what: () => boolean) => {
  for (let i = 0; i < 200 && !what(); i++) await sleep(5);
  expect(what()).toBe(true);
};

describe('readiness', () => {
  it('is down while the database does not answer, warming once it does, ready only when the warm-up ends', async () => {
    const { db, warmups, readiness, warmed } = fixture();
    readiness.start();
    await sleep(50);
    expect([readiness.state, warmups.length]).toEqual(['down', 0]);
    expect(db.probes).toBeGreaterThan(1); // probed again and again
    expect(await readiness.check(20)).toBe(false);
    db.up = true;
    await until(() => warmups.length === 1);
    expect(readiness.state).toBe('warming');
    expect(await readiness.check(20)).toBe(false);
    await warmed(1);
    expect(await readiness.check(20)).toBe(true);
    await readiness.stop();
  });

  it('warns of a warm-up that failed other than by the database being away, at most once a minute however its message varies', async () => {
    const lines: { level: number; msg: string; err?: { message: string } }[] = [];
    const capture = pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const { warmups, readiness, upAndWarming } = fixture(capture);
    await upAndWarming();
    const warnings = () => lines.filter((l) => l.level === 40);
    warmups[0]?.fail(new Neo4jError('gone', 'ServiceUnavailable', 'gone', ''));
    await until(() => warmups.length === 2);
    expect(warnings()).toEqual([]);
    warmups[1]?.fail(new Error('Node(1) already exists with label `EntityType`'));
    await until(() => warmups.length === 3);
    warmups[2]?.fail(new Error('Node(2) already exists with label `EntityType`'));
    await until(() => warmups.length === 4);
    expect(warnings().map((l) => [l.msg, l.err?.message])).toEqual([
      ['warm-up failed: not ready; trying again', 'Node(1) already exists with label `EntityType`'],
    ]);
    expect(readiness.state).toBe('warming');
    warmups[3]?.finish();
    await until(() => readiness.state === 'ready');
    await readiness.stop();
  });

  it('a loss during the warm-up makes it count for nothing: warmed again before ready', async () => {
    const { warmups, readiness, upAndWarming } = fixture();
    await upAndWarming();
    readiness.lost();
    warmups[0]?.finish();
    await until(() => warmups.length === 2);
    expect(readiness.state).toBe('warming');
    warmups[1]?.finish();
    await until(() => readiness.state === 'ready');
    await readiness.stop();
  });

  it('a failed warm-up is tried again', async () => {
    const { warmups, readiness, upAndWarming, warmed } = fixture();
    await upAndWarming();
    warmups[0]?.fail();
    await warmed(2);
    await readiness.stop();
  });

  it('the check waits for a warm-up under way within its bound, and answers false past it', async () => {
    const { warmups, readiness, upAndWarming } = fixture();
    await upAndWarming();
    const started = Date.now();
    expect(await readiness.check(60)).toBe(false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(55);
    const checking = readiness.check(2_000);
    await sleep(20);
    warmups[0]?.finish();
    expect(await checking).toBe(true);
    await readiness.stop();
  });

  it('ready, then the probe fails: not ready, and warmed again once the database is back', async () => {
    const { db, readiness, upAndWarming, warmed } = fixture();
    await upAndWarming();
    await warmed(1);
    db.up = false;
    expect(await readiness.check(20)).toBe(false);
    expect(readiness.state).toBe('down');
    db.up = true;
    await warmed(2);
    expect(await readiness.check(20)).toBe(true);
    await readiness.stop();
  });

  it('ready, then a probe times out (a busy database): not ready for that probe, but still admitting', async () => {
    let slow = true;
    const busy = new Readiness({
      probe: async (ms) => {
        if (slow) throw new ProbeTimeout(ms);
      },
      warm: async () => ({ ms: 1, roundsMs: [1], statements: 1 }),
      logger,
      probeIntervalMs: 10,
      heartbeatMs: 0,
      rampMs: 0,
    });
    busy.start();
    slow = false;
    await busy.whenReady();
    slow = true;
    expect(await busy.check(20)).toBe(false);
    expect(busy.state).toBe('ready');
    await expect(busy.admit()).resolves.toBeUndefined();
    await busy.stop();
  });

  it('ready and idle, the database goes away and comes back: the heartbeat finds it away without a request or a /readyz, and the service is warmed again', async () => {
    const { db, readiness, upAndWarming, warmed } = fixture(logger, { rampMs: 0 }, 20);
    await upAndWarming();
    await warmed(1);
    db.up = false;
    await until(() => readiness.state === 'down');
    db.up = true;
    await warmed(2);
    await readiness.stop();
  });

  it('the heartbeat probes only a pause in the transactions, and a probe past its time (a busy database) leaves the service ready', async () => {
    const { db, readiness, upAndWarming, warmed } = fixture(logger, { rampMs: 0 }, 300);
    await upAndWarming();
    await warmed(1);
    // a transaction let in every 10 ms for twice the heartbeat's time: no probe
    let before = db.probes;
    const until600 = performance.now() + 600;
    while (performance.now() < until600) {
      await readiness.admit();
      await sleep(10);
    }
    expect(db.probes - before).toBe(0);
    // idle: probed
    before = db.probes;
    for (let i = 0; i < 300 && db.probes - before < 2; i++) await sleep(10);
    expect(db.probes - before).toBeGreaterThanOrEqual(2);
    expect(readiness.state).toBe('ready');
    await readiness.stop();
    // stopped: no more heartbeats
    before = db.probes;
    await sleep(700);
    expect(db.probes).toBe(before);

    let probes = 0;
    const busy = beating(async (ms) => {
      probes += 1;
      if (probes > 1) throw new ProbeTimeout(ms);
    });
    busy.start();
    await busy.whenReady();
    await until(() => probes >= 4);
    expect(busy.state).toBe('ready');
    await busy.stop();
  });

  it('a probe failing other than by the database being away (credentials refused, say), by the heartbeat or by /readyz, leaves the service ready, and warns at most once a minute', async () => {
    const lines: { level: number; msg: string; err?: { message: string } }[] = [];
    const capture = pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    let probes = 0;
    const refused = beating(async () => {
      probes += 1;
      if (probes > 1)
        throw new Neo4jError('The client is unauthorized', 'Neo.ClientError.Security.Unauthorized', '', '');
    }, capture);
    refused.start();
    await refused.whenReady();
    await until(() => probes >= 5);
    expect(refused.state).toBe('ready');
    // /readyz reads a probe's failure by the same rule: not ready for that probe, not sent down, and its warning is
    // the same one (at most one a minute in all)
    expect(await refused.check(100)).toBe(false);
    expect(refused.state).toBe('ready');
    expect(lines.filter((l) => l.level === 40).map((l) => [l.msg, l.err?.message])).toEqual([
      ['the database probe failed; still ready', 'The client is unauthorized'],
    ]);
    await refused.stop();
  });

  it('lost() while ready (a statement found the database away) starts the recovery at once', async () => {
    const { readiness, upAndWarming, warmed } = fixture();
    await upAndWarming();
    await warmed(1);
    readiness.lost();
    expect(readiness.state).not.toBe('ready');
    await warmed(2);
    await readiness.stop();
  });
});

describe('/readyz probes', () => {
  it('one probe in flight serves every check meanwhile (the route needs no token), and the next check probes again', async () => {
    const { db, readiness, upAndWarming, warmed } = fixture();
    await upAndWarming();
    await warmed(1);
    const before = db.probes;
    const answers = await Promise.all(Array.from({ length: 50 }, () => readiness.check(1_000)));
    expect(answers.every((a) => a)).toBe(true);
    expect(db.probes - before).toBe(1);
    expect(await readiness.check(1_000)).toBe(true);
    expect(db.probes - before).toBe(2);
    await readiness.stop();
  });
});

describe('readiness admits transactions', () => {
  it('for its ramp after ready again after an outage: a few transactions at once; another waits for a turn at most ADMIT_WAIT_MS, then is refused; after the ramp, all', async () => {
    const { readiness, warmed, db } = fixture(logger, { rampMs: 600, rampConcurrency: 2 });
    db.up = true;
    readiness.start();
    await warmed(1);
    // the first ready (the service just started): no ramp
    await expect(readiness.admit()).resolves.toBeUndefined();
    readiness.lost();
    await warmed(2);
    const first = await readiness.admit();
    const second = await readiness.admit();
    expect([typeof first?.release, typeof second?.release]).toEqual(['function', 'function']);
    // after ready, every statement may be sent
    expect(() => first?.check?.('MATCH (n) RETURN n', false)).not.toThrow();
    // a third waits for a turn: handed the first's when it ends
    const third = readiness.admit();
    await sleep(20);
    first?.release();
    first?.release(); // (a second call gives nothing back twice)
    const handed = await third;
    expect(typeof handed?.release).toBe('function');
    // none free: refused after its wait, as while warming
    const started = Date.now();
    await expect(readiness.admit()).rejects.toMatchObject({ reason: 'storage_unavailable', status: 503 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(ADMIT_WAIT_MS - 5);
    second?.release();
    handed?.release();
    // the ramp over: admitted at once, with nothing to give back
    await sleep(400);
    await expect(readiness.admit()).resolves.toBeUndefined();
    await readiness.stop();
  });

  it('under its ramp a transaction of a request under way gets the next turn before a request not begun yet', async () => {
    const { readiness, warmed, db } = fixture(logger, { rampMs: 2_000, rampConcurrency: 1 });
    db.up = true;
    readiness.start();
    await warmed(1);
    readiness.lost();
    await warmed(2);
    const running = await readiness.admit('t1');
    const order: string[] = [];
    // two requests not begun wait, then a request's second transaction arrives
    const fresh = readiness.admit('t2').then((turn) => {
      order.push('new');
      return turn;
    });
    const fresher = readiness.admit('t3').then((turn) => {
      order.push('newer');
      return turn;
    });
    await sleep(10);
    const continuing = readiness.admit('t1', true).then((turn) => {
      order.push('continuing');
      return turn;
    });
    await sleep(10);
    running?.release();
    (await continuing)?.release();
    (await fresh)?.release();
    (await fresher)?.release();
    expect(order).toEqual(['continuing', 'new', 'newer']);
    await readiness.stop();
  });

  it('while warming, once the warm-up has planned statements: a few transactions at once, each refused at its first statement not planned yet as it sends it; a loss forgets what was planned', async () => {
    const { readiness, upAndWarming, warmups } = fixture(logger, { rampMs: 0, rampConcurrency: 4 });
    expect(WARMING_CONCURRENCY).toBe(2);
    await upAndWarming();
    const warmup = warmups[0] as (typeof warmups)[number];
    // nothing planned yet: refused after the hold
    await expect(readiness.admit()).rejects.toMatchObject({ reason: 'storage_unavailable' });
    warmup.plan('MATCH (a) RETURN a', false);
    warmup.plan('CREATE (d)', true);
    const turn = await readiness.admit();
    expect(() => turn?.check?.('MATCH (a) RETURN a', false)).not.toThrow();
    expect(() => turn?.check?.('CREATE (d)', true)).not.toThrow();
    const refusalOf = (cypher: string, changed: boolean) => {
      try {
        turn?.check?.(cypher, changed);
      } catch (e) {
        return e;
      }
      return undefined;
    };
    // a statement not planned, and a planned one in the other variant (in a transaction that has changed something,
    // or one that has not yet): Neo4j would plan either anew
    for (const [cypher, changed] of [
      ['MATCH (b) RETURN b', false],
      ['MATCH (a) RETURN a', true],
      ['CREATE (d)', false],
    ] as const) {
      const refusal = refusalOf(cypher, changed);
      expect(refusal).toMatchObject({ reason: 'storage_unavailable', status: 503, retryAfterSeconds: 1 });
      expect((refusal as Error).message).toContain('warming up');
    }
    // WARMING_CONCURRENCY of the ramp's 4 turns: two at once; a third is refused after its wait
    const second = await readiness.admit();
    let started = Date.now();
    await expect(readiness.admit()).rejects.toMatchObject({ reason: 'storage_unavailable' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(ADMIT_WAIT_MS - 5);
    // a turn not refused is given back with nothing to wait for
    expect(second?.release()).toBeUndefined();
    // one transaction at a time per tenant while warming: a second of the same tenant is refused after the hold;
    // another tenant's waits for a turn and is let in; the tenant's next once its first has ended
    const mine = await readiness.admit('tenant a');
    started = Date.now();
    await expect(readiness.admit('tenant a')).rejects.toMatchObject({
      reason: 'storage_unavailable',
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(ADMIT_WAIT_MS - 5);
    const theirs = readiness.admit('tenant b');
    await sleep(20);
    mine?.release();
    mine?.release(); // (given back once)
    (await theirs)?.release();
    const again = await readiness.admit('tenant a');
    again?.release();
    // what the warm-up plans next is let through at once, by a turn taken before
    warmup.plan('MATCH (b) RETURN b', false);
    expect(() => turn?.check?.('MATCH (b) RETURN b', false)).not.toThrow();
    // the database found away: nothing planned counts, a turn taken before is refused at its next statement, and a
    // statement the old warm-up reports afterwards does not count either
    readiness.lost();
    expect(() => turn?.check?.('MATCH (a) RETURN a', false)).toThrow(/unreachable/);
    // a refused transaction's refusal is held ADMIT_WAIT_MS once its turn is given back (a client ignoring
    // Retry-After gets a few answers a second, not one per round trip)
    const held = Date.now();
    await turn?.release();
    expect(Date.now() - held).toBeGreaterThanOrEqual(ADMIT_WAIT_MS - 5);
    warmup.plan('MATCH (c) RETURN c', false);
    warmup.fail();
    await until(() => warmups.length === 2);
    await expect(readiness.admit()).rejects.toMatchObject({ reason: 'storage_unavailable' });
    // ready: every statement
    const last = warmups[1] as (typeof warmups)[number];
    last.plan('MATCH (a) RETURN a', false);
    const late = await readiness.admit();
    last.finish();
    await readiness.whenReady();
    expect(() => late?.check?.('MATCH (z) RETURN z', true)).not.toThrow();
    late?.release();
    await readiness.stop();
  });

  it('ready: admitted; down or warming: refused after ADMIT_WAIT_MS with 503 storage_unavailable and Retry-After', async () => {
    const { warmups, readiness, upAndWarming } = fixture();
    const refusal = async () => {
      try {
        await readiness.admit();
        return undefined;
      } catch (e) {
        return e as { reason: string; status: number; retryAfterSeconds: number; message: string };
      }
    };
    const started = Date.now();
    expect(await refusal()).toMatchObject({
      reason: 'storage_unavailable',
      status: 503,
      retryAfterSeconds: 1,
    });
    // held, not refused at once: a client ignoring Retry-After gets a few answers a second, not thousands
    expect(Date.now() - started).toBeGreaterThanOrEqual(ADMIT_WAIT_MS - 5);
    expect(Date.now() - started).toBeLessThan(ADMIT_WAIT_MS + 200);
    expect((await refusal())?.message).toContain('unreachable');
    await upAndWarming();
    expect(await refusal()).toMatchObject({ reason: 'storage_unavailable', status: 503 });
    expect((await refusal())?.message).toContain('warming up');
    warmups[0]?.finish();
    await readiness.whenReady();
    const admitted = Date.now();
    expect(await refusal()).toBeUndefined();
    expect(Date.now() - admitted).toBeLessThan(20);
    readiness.lost();
    expect(await refusal()).toMatchObject({ reason: 'storage_unavailable', status: 503 });
    await until(() => warmups.length === 2);
    warmups[1]?.finish();
    await readiness.whenReady();
    expect(await refusal()).toBeUndefined();
    await readiness.stop();
  });

  it('a transaction arriving while warming is refused after its hold even when the warm-up ends meanwhile', async () => {
    const { warmups, readiness, upAndWarming } = fixture();
    await upAndWarming();
    const held = readiness.admit();
    await sleep(ADMIT_WAIT_MS / 3);
    warmups[0]?.finish();
    await expect(held).rejects.toMatchObject({ reason: 'storage_unavailable' });
    await expect(readiness.admit()).resolves.toBeUndefined();
    await readiness.stop();
  });

  it('goes on warming in the background after ready, and stops when the database is found away', async () => {
    const { db, readiness } = fixture();
    const background: { first: WarmupReport; stopped: () => boolean }[] = [];
    const warming = new Readiness({
      probe: async () => {
        if (!db.up) throw new Error('unreachable');
      },
      warm: async () => ({ ms: 5, roundsMs: [5], statements: 20 }),
      keepWarming: async (first, stopped) => {
        background.push({ first, stopped });
        while (!stopped()) await sleep(5);
        return { ms: 1, roundsMs: [...first.roundsMs, 1], statements: 40 };
      },
      logger,
      probeIntervalMs: 10,
      heartbeatMs: 0,
      rampMs: 0,
    });
    db.up = true;
    warming.start();
    await warming.whenReady();
    await until(() => background.length === 1);
    // ready while the background rounds run: transactions are admitted
    expect(warming.state).toBe('ready');
    await expect(warming.admit()).resolves.toBeUndefined();
    expect(background[0]?.first.roundsMs).toEqual([5]);
    expect(background[0]?.stopped()).toBe(false);
    warming.lost();
    expect(background[0]?.stopped()).toBe(true);
    await warming.whenReady();
    await until(() => background.length === 2);
    expect(background[1]?.stopped()).toBe(false);
    await warming.stop();
    expect(background[1]?.stopped()).toBe(true);
    await readiness.stop();
  });

  it('after an outage the background rounds wait for the ramp to end; at start-up they begin at once', async () => {
    const db = { up: true };
    const begun: number[] = [];
    const readiness = new Readiness({
      probe: async () => {
        if (!db.up) throw new Error('unreachable');
      },
      warm: async () => ({ ms: 5, roundsMs: [5], statements: 20 }),
      keepWarming: async (first, stopped) => {
        begun.push(performance.now());
        while (!stopped()) await sleep(5);
        return first;
      },
      logger,
      probeIntervalMs: 10,
      heartbeatMs: 0,
      rampMs: 400,
    });
    readiness.start();
    await readiness.whenReady();
    await until(() => begun.length === 1);
    readiness.lost();
    await readiness.whenReady();
    const readyAt = performance.now();
    // the first requests have the database to themselves while the ramp lasts
    await sleep(200);
    expect(begun).toHaveLength(1);
    await until(() => begun.length === 2);
    expect((begun[1] as number) - readyAt).toBeGreaterThanOrEqual(350);
    await readiness.stop();
  });

  it('whenReady resolves once ready, not before', async () => {
    const { warmups, readiness, upAndWarming } = fixture();
    let ready = false;
    void readiness.whenReady().then(() => {
      ready = true;
    });
    await upAndWarming();
    await sleep(20);
    expect(ready).toBe(false);
    warmups[0]?.finish();
    await until(() => ready);
    await readiness.stop();
  });
});

describe('the storage policy tells who listens when the database is unreachable', () => {
  it('once per failed attempt, and not for other failures nor after the listener stops', async () => {
    const policy = createStoragePolicy({ halfOpenAfterMs: 60_000, failures: 100 });
    let heard = 0;
    const stop = policy.onUnavailable(() => {
      heard += 1;
    });
    await policy
      .run(async () => {
        throw new Neo4jError('Could not connect', 'ServiceUnavailable', '', '');
      })
      .catch(() => {});
    expect(heard).toBe(2); // the attempt and its one retry
    await policy
      .run(async () => {
        throw new Error('a bug');
      })
      .catch(() => {});
    expect(heard).toBe(2);
    stop();
    await policy
      .run(async () => {
        throw new Neo4jError('Could not connect', 'ServiceUnavailable', '', '');
      })
      .catch(() => {});
    expect(heard).toBe(2);
  });
});
