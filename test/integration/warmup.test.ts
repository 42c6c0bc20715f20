// The warm-up behind /readyz (src/app/warmup.ts): it runs the hot paths' statements on the real Neo4j, in rounds,
// and leaves nothing behind: no node of its throwaway tenants, nothing in the app's caches, no idempotency record.
import { describe, expect } from 'vitest';
import { WARMUP_CONCURRENCY, WARMUP_ROUNDS, warmUp } from '../../src/app/warmup.js';
import { it } from '../fixtures.js';

describe('the warm-up', () => {
  it('runs every hot statement in rounds, writes nothing, and leaves the shared caches as they were', async ({
    world,
  }) => {
    const services = world.app.services;
    const modelBefore = services.model.cache.stats();
    const engineBefore = services.engineCache.stats();
    const report = await warmUp(services, world.driver, undefined);

    expect(report.roundsMs.length).toBeGreaterThanOrEqual(WARMUP_ROUNDS.min);
    expect(report.roundsMs.length).toBeLessThanOrEqual(WARMUP_ROUNDS.max);
    // each round: the tenant's system types, three create-or-gets, two declarations, two entity writes, three
    // reads, the idempotency statements, each with its version reads
    const rehearsals = 1 + (report.roundsMs.length - 1) * WARMUP_CONCURRENCY;
    expect(report.statements / rehearsals).toBeGreaterThanOrEqual(20);

    const session = world.driver.session();
    try {
      const left = await session.run(
        `MATCH (n) WHERE n.tenant STARTS WITH 'warm-up ' OR (n:Tenant AND n.id STARTS WITH 'warm-up ')
         RETURN count(n) AS n`,
      );
      expect(Number(left.records[0]?.get('n'))).toBe(0);
    } finally {
      await session.close();
    }
    const modelAfter = services.model.cache.stats();
    expect([modelAfter.entries, modelAfter.tenants]).toEqual([modelBefore.entries, modelBefore.tenants]);
    expect(services.engineCache.stats().entries).toBe(engineBefore.entries);
  });

  it('capped at one round (as the test suite apps are): one rehearsal, every hot statement run once', async ({
    world,
  }) => {
    const report = await warmUp(world.app.services, world.driver, undefined, 1);
    expect(report.roundsMs).toHaveLength(1);
    expect(report.statements).toBeGreaterThanOrEqual(20);
    expect(report.statements).toBeLessThan(20 * WARMUP_CONCURRENCY);
  });

  it('an app is ready (GET /readyz 200) once its first warm-up has run', async ({ world }) => {
    const res = await world.app.inject({ method: 'GET', url: '/readyz' });
    expect([res.statusCode, res.json().DATA]).toEqual([200, { status: 'ready' }]);
  });
});
