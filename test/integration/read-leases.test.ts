// Reads served from memory under a lease keep the cross-replica guarantee (cache/version-reader.ts): over two
// instances on one database, with writers and readers at once on both, every read returns every write acknowledged
// before the read began. And the check can fail: with the writers not waiting out the leases (a lease check
// removed), the same traffic reads stale listings.
import { test as base, describe, expect } from 'vitest';
import { instance } from '../fixtures.js';
import { createType, newTenant, restClient, type TestWorld, tokenFor } from '../helpers.js';

const it = base.extend<{ a: TestWorld; b: TestWorld; fast: TestWorld; slow: TestWorld }>({
  a: instance(),
  b: instance(),
  // A planted fault: a writer that does not wait out the leases, beside a reader holding them long.
  fast: instance({ MODEL_READ_LEASE_MS: '0' }),
  slow: instance({ MODEL_READ_LEASE_MS: '1000' }),
});

interface Traffic {
  writes: { name: string; ackedAt: number }[];
  reads: { startedAt: number; names: Set<string> }[];
}

/** Each read that misses a write acknowledged before it began, as "read at t missed name". */
function staleReads({ writes, reads }: Traffic): string[] {
  const stale: string[] = [];
  for (const read of reads) {
    for (const write of writes) {
      if (write.ackedAt < read.startedAt && !read.names.has(write.name)) {
        stale.push(
          `read at ${read.startedAt.toFixed(1)} missed ${write.name} (acknowledged ${write.ackedAt.toFixed(1)})`,
        );
      }
    }
  }
  return stale;
}

/** Writers declaring attributes through `writers`, readers listing them through `readers`, for `ms`. */
async function traffic(
  writers: TestWorld[],
  readers: TestWorld[],
  ms: number,
  pauseMs = 1,
): Promise<Traffic> {
  const tenant = newTenant('leases');
  const token = await tokenFor(tenant);
  const guid = await createType(restClient(writers[0]?.app as TestWorld['app'], token), 'Leased');
  const log: Traffic = { writes: [], reads: [] };
  const until = performance.now() + ms;
  let next = 0;
  const write = async (world: TestWorld) => {
    const api = restClient(world.app, token);
    while (performance.now() < until && next < 180) {
      const name = `a${next++}`;
      const res = await api.post(`/entities/types/${guid}/attributes`, {
        name,
        value_type: 'string',
        cardinality: 'single',
      });
      expect(res.status).toBe(201);
      log.writes.push({ name, ackedAt: performance.now() });
    }
  };
  const read = async (world: TestWorld) => {
    const api = restClient(world.app, token);
    while (performance.now() < until) {
      const startedAt = performance.now();
      const res = await api.get(`/entities/types/${guid}/attributes`);
      expect(res.status).toBe(200);
      log.reads.push({
        startedAt,
        names: new Set(res.body.DATA.attributes.map((d: { name: string }) => d.name)),
      });
      // (a moment between reads, so that the writers get their share of the one thread the instances share)
      await new Promise((r) => setTimeout(r, pauseMs));
    }
  };
  await Promise.all([
    ...writers.flatMap((w) => [write(w), write(w)]),
    ...readers.flatMap((r) => [read(r), read(r), read(r)]),
  ]);
  return log;
}

describe('read leases across instances', () => {
  it('every read returns every write acknowledged before it began, on either instance', async ({ a, b }) => {
    const log = await traffic([a, b], [a, b], 3_000);
    expect(log.writes.length).toBeGreaterThan(20);
    expect(log.reads.length).toBeGreaterThan(100);
    expect(staleReads(log)).toEqual([]);
    // The leases answered most reads: far fewer version reads than listings.
    const stats = [a, b].map((w) => w.app.services.model.versions.stats());
    expect(stats.reduce((n, s) => n + s.leased, 0)).toBeGreaterThan(0);
  });

  it('fails when a writer does not wait out the readers’ leases (a planted stale read)', async ({
    fast,
    slow,
  }) => {
    // (a second's lease, writes every few hundred milliseconds: a write acknowledged within a lease is read stale)
    const log = await traffic([fast], [slow], 4_000, 10);
    expect(log.writes.length).toBeGreaterThanOrEqual(3);
    expect(staleReads(log).length).toBeGreaterThan(0);
  });
});
