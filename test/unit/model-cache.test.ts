// The model cache's rules without a database: exact versions, the byte budget, a tenant's share of it, and the
// shared version read that a request may join only if it started after the request arrived.

import { describe, expect, it } from 'vitest';
import { jsonLength, ModelCache } from '../../src/cache/model-cache.js';
import { VersionReader } from '../../src/cache/version-reader.js';
import type { Executor } from '../../src/db/executor.js';
import type { Run } from '../../src/db/run.js';

describe('ModelCache', () => {
  it('answers only at the exact version it holds, per tenant', () => {
    const cache = new ModelCache(1_000_000);
    cache.set('t1', 'type', 'g', 'v1', { name: 'a' }, 100);
    cache.set('t1', 'type_page', 'p', 'v1', { rows: [] }, 100);
    expect(cache.get('t1', 'type', 'g', 'v1')).toEqual({ name: 'a' });
    expect(cache.get('t1', 'type', 'g', 'v2')).toBeUndefined();
    expect(cache.get('t2', 'type', 'g', 'v1')).toBeUndefined();
    cache.set('t1', 'type', 'g', 'v2', { name: 'b' }, 100);
    expect(cache.get('t1', 'type', 'g', 'v1')).toBeUndefined(); // replaced
    expect(cache.get('t1', 'type', 'g', 'v2')).toEqual({ name: 'b' });
    // Another entry of the tenant is not walked when its version moves: it answers no request holding v2.
    expect(cache.get('t1', 'type_page', 'p', 'v2')).toBeUndefined();
    expect(cache.stats()).toMatchObject({ entries: 2, bytes: 200, invalidations: 1 });
    expect(cache.stats().byKind.type).toMatchObject({ hits: 2, misses: 3, entries: 1, bytes: 100 });
  });

  it('holds a placeholder (mark) that answers no version, until a value replaces it (not counted as invalidated)', () => {
    const cache = new ModelCache(1_000_000);
    expect(cache.holds('t', 'type_name', 'n')).toBe(false);
    cache.mark('t', 'type_name', 'n');
    expect(cache.holds('t', 'type_name', 'n')).toBe(true);
    expect(cache.holds('other', 'type_name', 'n')).toBe(false);
    expect(cache.get('t', 'type_name', 'n', '')).toBeUndefined();
    expect(cache.stats()).toMatchObject({ entries: 1, bytes: 130 }); // 128 and the id's character
    cache.set('t', 'type_name', 'n', 'v1', { guid: 'g' }, 100);
    expect(cache.get('t', 'type_name', 'n', 'v1')).toEqual({ guid: 'g' });
    expect(cache.stats()).toMatchObject({ entries: 1, bytes: 100, invalidations: 0 });
  });

  it('marks a key that holds nothing only: a value kept meanwhile stays', () => {
    const cache = new ModelCache(1_000_000);
    cache.set('t', 'type_name', 'n', 'v1', { guid: 'g' }, 100);
    cache.mark('t', 'type_name', 'n');
    expect(cache.get('t', 'type_name', 'n', 'v1')).toEqual({ guid: 'g' });
  });

  it("counts a placeholder's id against its tenant's share: a tenant marking names evicts its own entries only", () => {
    const cache = new ModelCache(64_000, 0.25); // a tenant holds at most 16,000 bytes, an entry at most 4,000
    cache.set('small', 'type', 'g', 'v', 'kept', 200);
    const id = (i: number, length = 936) => `${i}`.padEnd(length, 'x'); // 128 + 2 × 936 = 2,000 bytes
    for (let i = 0; i < 9; i++) cache.mark('big', 'type_name', id(i)); // eight fit in the share, not nine
    expect(cache.describe().find((t) => t.entries === 8)?.bytes).toBe(16_000);
    expect(cache.holds('big', 'type_name', id(0))).toBe(false); // the oldest went
    expect(cache.holds('big', 'type_name', id(8))).toBe(true);
    expect(cache.get('small', 'type', 'g', 'v')).toBe('kept');
    // The largest entry kept is 4,000 bytes: a placeholder of 4,000 is kept, one of 4,002 is not.
    cache.mark('t', 'type_name', id(1, 1_936));
    cache.mark('t', 'type_name', id(2, 1_937));
    expect(cache.holds('t', 'type_name', id(1, 1_936))).toBe(true);
    expect(cache.holds('t', 'type_name', id(2, 1_937))).toBe(false);
  });

  it('leaves stale entries to go first when room is needed: a tenant full of them is not walked on a write', () => {
    const cache = new ModelCache(16_000, 0.25); // a tenant holds at most 4,000 bytes: 20 entries of 200
    for (let i = 0; i < 20; i++) cache.set('t', 'type', `old${i}`, 'v1', i, 200);
    cache.set('t', 'type', 'new', 'v2', 'fresh', 200); // the model moved on: the oldest stale entry makes room
    expect(cache.get('t', 'type', 'new', 'v2')).toBe('fresh');
    expect(cache.get('t', 'type', 'old0', 'v1')).toBeUndefined();
    expect(cache.get('t', 'type', 'old19', 'v1')).toBe(19);
    expect(cache.stats()).toMatchObject({ entries: 20, bytes: 4_000, evictions: 1 });
  });

  it('keeps a cached null (an unknown guid) as an answer', () => {
    const cache = new ModelCache(1_000_000);
    cache.set('t', 'type', 'nope', 'v', null, 10);
    expect(cache.get('t', 'type', 'nope', 'v')).toBeNull();
  });

  it('stays within its byte budget, least recently used out first, across tenants', () => {
    const cache = new ModelCache(4_000, 1);
    for (const t of ['a', 'b', 'c', 'd']) cache.set(t, 'type', 'g', 'v', t, 200);
    expect(cache.get('a', 'type', 'g', 'v')).toBe('a'); // a is now the most recently used
    for (let i = 0; i < 20; i++) cache.set('e', 'type', `g${i}`, 'v', i, 200);
    expect(cache.stats().bytes).toBeLessThanOrEqual(4_000);
    expect(cache.get('b', 'type', 'g', 'v')).toBeUndefined();
    expect(cache.stats().evictions).toBeGreaterThan(0);
  });

  it('lets one tenant hold at most its share: a tenant paging through everything evicts its own entries, not the others', () => {
    const cache = new ModelCache(16_000, 0.25);
    cache.set('small', 'type_page', 'first', 'v', 'page', 200);
    for (let i = 0; i < 1_000; i++) cache.set('huge', 'type_page', `p${i}`, 'v', i, 200);
    expect(cache.get('small', 'type_page', 'first', 'v')).toBe('page');
    const huge = cache.describe().find((t) => t.entries > 1);
    expect(huge?.bytes).toBeLessThanOrEqual(4_000);
    expect(cache.get('huge', 'type_page', 'p999', 'v')).toBe(999);
    expect(cache.get('huge', 'type_page', 'p0', 'v')).toBeUndefined();
  });

  it('keeps an entry of a sixteenth of the budget, not one byte more', () => {
    const cache = new ModelCache(16_000);
    cache.set('t', 'attributes', 'g', 'v', 'big', 1_001);
    expect(cache.stats().entries).toBe(0);
    cache.set('t', 'attributes', 'g', 'v', 'at the limit', 1_000);
    expect(cache.get('t', 'attributes', 'g', 'v')).toBe('at the limit');
  });

  it('names tenants in its diagnostic by a keyed hash, never in clear', () => {
    const cache = new ModelCache(1_000_000);
    cache.set('acme-secret-tenant', 'type', 'g', 'v', 1, 10);
    const text = JSON.stringify(cache.describe());
    expect(text).not.toContain('acme');
    expect(cache.describe()[0]?.tenant_hash).toMatch(/^[0-9a-f]{16}$/);
  });
});

/** An executor whose version reads are answered by the test, one at a time. */
function controlledReads() {
  const statements: { tenants: string[]; answer: (versions: Record<string, string>) => void }[] = [];
  const db = {
    readLatest: async <T>(work: (run: Run) => Promise<T>) => ({ value: await work(run), bookmarks: ['b'] }),
  } as unknown as Executor;
  const run: Run = (_cypher, params) =>
    new Promise((resolve) => {
      const tenants = (params?.tenants ?? []) as string[];
      statements.push({
        tenants,
        answer: (versions) => resolve(tenants.map((id) => ({ id, parts: [versions[id] ?? ''] }))),
      });
    });
  return { db, statements };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('VersionReader', () => {
  it('shares one statement between the requests waiting at once, for all their tenants', async () => {
    const { db, statements } = controlledReads();
    const reader = new VersionReader(db);
    const reads = [reader.read('a'), reader.read('b'), reader.read('a')];
    await tick();
    expect(statements).toHaveLength(1);
    expect(statements[0]?.tenants.sort()).toEqual(['a', 'b']);
    statements[0]?.answer({ a: 'va', b: 'vb' });
    const got = await Promise.all(reads);
    expect(got.map((r) => r.version)).toEqual(['va', 'vb', 'va']);
    expect(got[0]?.share).toBeCloseTo(1 / 3);
    expect(reader.stats()).toEqual({ reads: 1, requests: 3, leased: 0 });
  });

  it('never gives a request a read that started before it arrived: it waits for the next statement', async () => {
    const { db, statements } = controlledReads();
    const reader = new VersionReader(db);
    const early = reader.read('t');
    await tick();
    expect(statements).toHaveLength(1); // in flight
    const late = reader.read('t'); // arrives while that read is under way (perhaps before a write committed)
    let lateVersion: string | undefined;
    void late.then((r) => {
      lateVersion = r.version;
    });
    statements[0]?.answer({ t: 'before-the-write' });
    expect((await early).version).toBe('before-the-write');
    await tick();
    expect(lateVersion).toBeUndefined(); // not answered by the earlier statement
    expect(statements).toHaveLength(2); // its own statement started once the first one ended
    statements[1]?.answer({ t: 'after-the-write' });
    expect((await late).version).toBe('after-the-write');
  });

  it('with a lease: a read answers the requests arriving within the lease from its start, with no statement; then reads again', async () => {
    const { db, statements } = controlledReads();
    const reader = new VersionReader(db, 200);
    expect(reader.writeWaitMs).toBe(205);
    const first = reader.read('t');
    await tick();
    const startedAt = performance.now();
    await new Promise((r) => setTimeout(r, 15));
    statements[0]?.answer({ t: 'v1' });
    expect((await first).version).toBe('v1');
    // Within the lease (counted from the read's start, not its end), in its first half: answered from it, no statement.
    const leased = await reader.read('t');
    expect([leased.version, leased.share, statements.length]).toEqual(['v1', 0, 1]);
    // Past half its life, a read renews it ahead: a statement nobody waits on; meanwhile the lease still answers.
    await new Promise((r) => setTimeout(r, Math.max(0, startedAt + 110 - performance.now())));
    expect((await reader.read('t')).version).toBe('v1');
    await tick();
    expect(statements).toHaveLength(2);
    expect((await reader.read('t')).version).toBe('v1'); // one renewal at a time
    await tick();
    expect(statements).toHaveLength(2);
    statements[1]?.answer({ t: 'v2' });
    await tick();
    expect((await reader.read('t')).version).toBe('v2');
    // A change this process committed ends the lease at once; another tenant never had one.
    reader.forget('t');
    void reader.read('t');
    void reader.read('other');
    await tick();
    expect(statements).toHaveLength(3);
    expect(statements[2]?.tenants.sort()).toEqual(['other', 't']);
    expect(new VersionReader(db).writeWaitMs).toBe(0);
  });

  it('without a lease in use, nothing renews: past the lease a request waits for a read of its own', async () => {
    const { db, statements } = controlledReads();
    const reader = new VersionReader(db, 30);
    const first = reader.read('t');
    await tick();
    statements[0]?.answer({ t: 'v1' });
    await first;
    await new Promise((r) => setTimeout(r, 40));
    expect(statements).toHaveLength(1);
    let answered = false;
    const late = reader.read('t').then((r) => {
      answered = true;
      return r;
    });
    await tick();
    expect([answered, statements.length]).toEqual([false, 2]);
    statements[1]?.answer({ t: 'v2' });
    expect((await late).version).toBe('v2');
  });

  it('reads at most 500 tenants in one statement: 500 waiting take one, 501 take two', async () => {
    for (const [tenants, statementsSent] of [
      [500, 1],
      [501, 2],
    ] as const) {
      const { db, statements } = controlledReads();
      const reader = new VersionReader(db);
      const reads = Array.from({ length: tenants }, (_, i) => reader.read(`t${i}`));
      for (let k = 0; k < statementsSent; k++) {
        await tick();
        statements[k]?.answer({});
      }
      await Promise.all(reads);
      expect(statements.map((x) => x.tenants.length)).toEqual(tenants === 500 ? [500] : [500, 1]);
    }
  });

  it('fails every request of a failed statement, and serves the next ones afresh', async () => {
    const failing = {
      readLatest: () => Promise.reject(new Error('database down')),
    } as unknown as Executor;
    const reader = new VersionReader(failing);
    await expect(Promise.all([reader.read('a'), reader.read('b')])).rejects.toThrow('database down');
    await expect(reader.read('a')).rejects.toThrow('database down');
    expect(reader.stats().reads).toBe(2);
  });
});

describe('jsonLength', () => {
  it("is the length of the value's JSON text for values without escapes, walked rather than serialised", () => {
    const values: unknown[] = [
      null,
      true,
      false,
      0,
      -12.5,
      'grade',
      [],
      {},
      [1, 'a', null, undefined, [true, { x: 'y' }]],
      { name: 'Person', skipped: undefined, nested: { list: ['A', 'B'], n: 3 }, at: new Date(0) },
      { allowed_values: Array.from({ length: 1_000 }, (_, i) => `value-${i}-${'x'.repeat(100)}`) },
    ];
    for (const value of values) expect(jsonLength(value)).toBe(JSON.stringify(value).length);
  });
});
