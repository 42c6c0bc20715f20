// The warm-up behind /readyz (src/app/warmup.ts): it runs the hot paths' statements on the real Neo4j, once before
// ready and in background rounds after, and leaves nothing behind but the warm-up tenants' set-up: no node of its
// throwaway tenants, nothing in the app's caches, no idempotency record.
import { execute, parse } from 'graphql';
import pino from 'pino';
import { describe, expect } from 'vitest';
import {
  CatalogWithAttributesDocument,
  EntityTypeByGuidDocument,
  EntityTypeByNameDocument,
  EntityTypesPageDocument,
  TypeAttributesDocument,
} from '../../client/src/generated.js';
import {
  BACKGROUND_CONCURRENCY,
  keepWarming,
  WARMUP_ROUNDS,
  WARMUP_TENANTS,
  warmUp,
} from '../../src/app/warmup.js';
import { ModelCache } from '../../src/cache/model-cache.js';
import { ModelReads } from '../../src/cache/model-reads.js';
import { VersionReader } from '../../src/cache/version-reader.js';
import { createContext, type Services } from '../../src/context.js';
import { createExecutor } from '../../src/db/executor.js';
import { claimIdempotencyKey, readIdempotencyState } from '../../src/db/idempotency-records.js';
import { Readiness, type WarmupReport } from '../../src/db/readiness.js';
import { AppError } from '../../src/errors.js';
import { declareAttribute } from '../../src/resolvers/attributes.js';
import { createOrGetEntityType } from '../../src/resolvers/entity-types.js';
import { schema } from '../../src/schema/index.js';
import { createTenantDirectory } from '../../src/services/tenants.js';
import { it } from '../fixtures.js';
import { newTenant } from '../helpers.js';

describe('the warm-up', () => {
  it('before ready: one rehearsal of every hot statement for a warm-up tenant, writing nothing but its set-up, caches untouched', async ({
    world,
  }) => {
    const services = world.app.services;
    const modelBefore = services.model.cache.stats();
    const engineBefore = services.engineCache.stats();
    const order: string[] = [];
    const variants: string[] = [];
    const report = await warmUp(services, world.driver, undefined, (cypher, changed) => {
      order.push(cypher);
      variants.push(`${changed ? 'changed' : 'fresh'} ${cypher}`);
    });

    expect(report.roundsMs).toHaveLength(1);
    // planned in the order writes are served while warming: an Idempotency-Key's statements, a type's creation, an
    // entity's (the most frequent write), then a declaration's
    const first = (marker: string) => order.findIndex((cypher) => cypher.includes(marker));
    const [key, type, entity, declaration] = [
      first('IdempotencyKey'),
      first('TypeTombstone'),
      first('$entity.type_guid'),
      first(':HAS_ATTRIBUTE]->(a:AttributeDefinition'),
    ];
    expect(Math.min(key, type, entity, declaration)).toBeGreaterThanOrEqual(0);
    expect(key).toBeLessThan(type);
    expect(type).toBeLessThan(entity);
    expect(entity).toBeLessThan(declaration);
    // a keyed type creation's statements planned first, each in the variant its request sends it (the key's read and
    // the look-up before any change, the claim as its write's first statement, the creation and the stored answer
    // after it), and no other variant of them before the last of these
    const at = (variant: 'fresh' | 'changed', marker: string) =>
      variants.findIndex((v) => v.startsWith(`${variant} `) && v.includes(marker));
    const keyed = [
      at('fresh', 'k.expires_at > datetime()'),
      at('fresh', 'WITH t ORDER BY rank LIMIT 1'),
      at('fresh', 'old.expires_at <= datetime()'),
      at('changed', 'TypeTombstone'),
      at('changed', 'SET k.status = $status'),
    ];
    expect(Math.min(...keyed)).toBeGreaterThanOrEqual(0);
    expect([...keyed].sort((a, b) => a - b)).toEqual(keyed);
    const lookUpChanged = at('changed', 'WITH t ORDER BY rank LIMIT 1');
    const creationFresh = at('fresh', 'TypeTombstone');
    expect(Math.min(lookUpChanged, creationFresh)).toBeGreaterThan(keyed[4] as number);
    // an unkeyed type creation's first statement, as its transaction sends it, before an entity's
    expect(creationFresh).toBeLessThan(entity);
    // the rehearsal: three create-or-gets, two declarations, two entity writes, three reads, the idempotency
    // statements, each with its version reads
    expect(report.statements).toBeGreaterThanOrEqual(20);

    const session = world.driver.session();
    try {
      // the warm-up tenants hold their set-up (system types) and nothing a rehearsal wrote
      const rehearsed = await session.run(
        `MATCH (n) WHERE n.tenant IN $tenants AND (n:Entity OR (n:EntityType AND n.origin = 'user_defined')
           OR n:IdempotencyKey OR n:ModelChange OR (n:AttributeDefinition AND n.origin = 'user_defined'))
         RETURN count(n) AS n`,
        { tenants: WARMUP_TENANTS },
      );
      expect(Number(rehearsed.records[0]?.get('n'))).toBe(0);
      const setUp = await session.run('MATCH (t:Tenant) WHERE t.id IN $tenants RETURN count(t) AS n', {
        tenants: WARMUP_TENANTS,
      });
      expect(Number(setUp.records[0]?.get('n'))).toBeGreaterThanOrEqual(1);
    } finally {
      await session.close();
    }
    const modelAfter = services.model.cache.stats();
    expect([modelAfter.entries, modelAfter.tenants]).toEqual([modelBefore.entries, modelBefore.tenants]);
    expect(services.engineCache.stats().entries).toBe(engineBefore.entries);
  });

  it('after ready, in the background: every warm-up tenant set up, then rounds of BACKGROUND_CONCURRENCY rehearsals for throwaway tenants, within the rounds allowed, leaving nothing', async ({
    world,
  }) => {
    const services = world.app.services;
    const first = { ms: 1, roundsMs: [5_000], statements: 20 }; // a cold first round: more rounds follow
    // the warm-up tenants as on a database where only one was set up (their set-up is idempotent: MERGE)
    const reset = world.driver.session();
    try {
      await reset.run('MATCH (t:Tenant) WHERE t.id IN $tenants REMOVE t.system_version', {
        tenants: WARMUP_TENANTS.slice(1),
      });
    } finally {
      await reset.close();
    }
    const report = await keepWarming(
      services,
      world.driver,
      undefined,
      first,
      WARMUP_ROUNDS.min,
      () => false,
    );
    expect(report.roundsMs).toHaveLength(WARMUP_ROUNDS.min);
    expect(report.roundsMs[0]).toBe(5_000);
    expect(report.statements / ((WARMUP_ROUNDS.min - 1) * BACKGROUND_CONCURRENCY)).toBeGreaterThanOrEqual(20);
    // asked to stop: no round; capped at one round (the suite's apps): none
    expect((await keepWarming(services, world.driver, undefined, first, 10, () => true)).roundsMs).toEqual([
      5_000,
    ]);
    expect((await keepWarming(services, world.driver, undefined, first, 1, () => false)).roundsMs).toEqual([
      5_000,
    ]);

    const session = world.driver.session();
    try {
      const left = await session.run(
        `MATCH (n) WHERE n.tenant STARTS WITH 'warm-up ' OR (n:Tenant AND n.id STARTS WITH 'warm-up ')
         RETURN count(n) AS n`,
      );
      expect(Number(left.records[0]?.get('n'))).toBe(0);
      // every tenant of the first rehearsal set up: a restart's warm-up skips the set-up, whichever it picks
      const setUp = await session.run(
        'MATCH (t:Tenant) WHERE t.id IN $tenants AND t.system_version IS NOT NULL RETURN count(t) AS n',
        { tenants: WARMUP_TENANTS },
      );
      expect(Number(setUp.records[0]?.get('n'))).toBe(WARMUP_TENANTS.length);
    } finally {
      await session.close();
    }
  });

  it("the background rounds plan GraphQL's reads: every statement the client's catalog queries send, as a fresh read sends it", async ({
    world,
  }) => {
    const services = world.app.services;
    // a catalog with what the queries select: a parent, an enumeration with a default, a reference
    const tenant = newTenant();
    const viewer = { subject: 'u', tenant, roles: new Set<string>(), crossTenant: false };
    const ctx = (within: Services = services) =>
      createContext(within, viewer, { requestId: 'r', operation: 'test' });
    const column = (await createOrGetEntityType(ctx(), 'Column')).type.guid;
    const table = (await createOrGetEntityType(ctx(), 'Table')).type.guid;
    await declareAttribute(ctx(), table, {
      name: 'grade',
      cardinality: 'multi',
      value_type: 'number',
      allowed_values: [1, 2, 3],
      default_value: [1],
    });
    await declareAttribute(ctx(), table, {
      name: 'columns',
      value_type: 'entity_ref',
      cardinality: 'multi',
      allowed_ref_type: column,
    });
    // the client's queries, through the schema's resolvers, on an executor that sees each statement, with an empty
    // model cache (the statements a cold service sends)
    const sent = new Set<string>();
    const db = createExecutor(world.driver, { observe: (cypher, changed) => !changed && sent.add(cypher) });
    const cold: Services = {
      ...services,
      db,
      model: new ModelReads(new ModelCache(1024 * 1024), new VersionReader(db)),
    };
    const queries: [unknown, Record<string, unknown>][] = [
      [CatalogWithAttributesDocument, { first: 100 }],
      [EntityTypesPageDocument, { first: 100 }],
      [TypeAttributesDocument, { guid: table }],
      [EntityTypeByGuidDocument, { guid: table }],
      [EntityTypeByNameDocument, { name: 'Table' }],
    ];
    for (const [document, variableValues] of queries) {
      const result = await execute({
        schema,
        document: parse(String(document)),
        variableValues,
        contextValue: ctx(cold),
      });
      expect(result.errors).toBeUndefined();
    }
    expect([...sent].some((cypher) => cypher.includes('UNWIND $typeGuids'))).toBe(true);

    const planned = new Set<string>();
    const first = { ms: 1, roundsMs: [5_000], statements: 20 };
    await keepWarming(
      services,
      world.driver,
      undefined,
      first,
      2,
      () => false,
      (cypher, changed) => {
        if (!changed) planned.add(cypher);
      },
    );
    expect([...sent].filter((cypher) => !planned.has(cypher))).toEqual([]);
  });

  it('while it runs, a write whose statements it has run is served; one reaching a statement it has not run, or not as its transaction sends it, is refused 503 and rolled back; once ready, every statement', async ({
    world,
  }) => {
    const services = world.app.services;
    const tenant = newTenant();
    await services.tenants.ensure(tenant); // (a tenant's set-up is not a hot path: planned after ready)
    let open = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    let rehearsed = (_: WarmupReport) => {};
    const rehearsal = new Promise<WarmupReport>((resolve) => {
      rehearsed = resolve;
    });
    // the real warm-up, held in the warming state once its rehearsal has run
    const readiness = new Readiness({
      probe: async () => {},
      warm: async (planned) => {
        const report = await warmUp(services, world.driver, undefined, planned);
        rehearsed(report);
        await gate;
        return report;
      },
      logger: pino({ level: 'silent' }),
      probeIntervalMs: 10,
      rampMs: 0,
    });
    readiness.start();
    try {
      await rehearsal;
      expect(readiness.state).toBe('warming');
      const db = createExecutor(world.driver, { admit: () => readiness.admit() });
      const gated: Services = { ...services, db, tenants: createTenantDirectory(db) };
      const ctx = createContext(
        gated,
        { subject: 'u', tenant, roles: new Set(), crossTenant: false },
        { requestId: 'warming', operation: 'test' },
      );
      // a hot path, served before ready
      expect((await createOrGetEntityType(ctx, 'Orders')).type.name).toBe('Orders');
      // a planned write, then a statement the warm-up never ran: refused, and the claim it made rolled back
      const owner = { tenant, subject: 'u', key: 'k-1' };
      const refusal = await db
        .write(async (run) => {
          await claimIdempotencyKey(run, owner, 'fingerprint');
          return run('MATCH (k:IdempotencyKey {tenant: $tenant}) RETURN count(k) AS n', { tenant });
        })
        .catch((e: unknown) => e);
      expect(refusal).toBeInstanceOf(AppError);
      expect(refusal).toMatchObject({ reason: 'storage_unavailable', status: 503, retryAfterSeconds: 1 });
      const keys = await world.driver.executeQuery(
        'MATCH (k:IdempotencyKey {tenant: $tenant}) RETURN count(k) AS n',
        { tenant },
      );
      expect(Number(keys.records[0]?.get('n'))).toBe(0);
      // a statement the warm-up planned, sent as it never planned it (the key's look-up, after a claim: the warm-up
      // sent it only in a transaction that had changed nothing yet, and Neo4j would plan it anew): refused too
      const variant = await db
        .write(async (run) => {
          await claimIdempotencyKey(run, { ...owner, key: 'k-2' }, 'fingerprint');
          return readIdempotencyState(run, owner);
        })
        .catch((e: unknown) => e);
      expect(variant).toMatchObject({ reason: 'storage_unavailable', status: 503 });
      // ready: the same statement runs
      open();
      await readiness.whenReady();
      const rows = await db.read((run) =>
        run('MATCH (k:IdempotencyKey {tenant: $tenant}) RETURN count(k) AS n', { tenant }),
      );
      expect(Number(rows[0]?.n)).toBe(0);
    } finally {
      open();
      await readiness.stop();
    }
  });

  it("admission is told whether a transaction is of a request under way: a request's first no, its next ones yes; the app's own executor never", async ({
    world,
  }) => {
    const asked: [string | undefined, boolean][] = [];
    const shared = createExecutor(world.driver, {
      admit: (tenant, continuing) => {
        asked.push([tenant, continuing]);
        return undefined;
      },
    });
    await shared.read((run) => run('RETURN 1 AS n'));
    await shared.read((run) => run('RETURN 1 AS n'));
    const request = shared.forRequest({ stats: { queries: 0 }, tenant: 't' });
    await request.read((run) => run('RETURN 1 AS n'));
    await request.write((run) => run('RETURN 1 AS n'));
    await request.readOne((run) => run('RETURN 1 AS n'));
    expect(asked).toEqual([
      [undefined, false],
      [undefined, false],
      ['t', false],
      ['t', true],
      ['t', true],
    ]);
  });

  it('an app is ready (GET /readyz 200) once its first warm-up has run', async ({ world }) => {
    const res = await world.app.inject({ method: 'GET', url: '/readyz' });
    expect([res.statusCode, res.json().DATA]).toEqual([200, { status: 'ready' }]);
  });
});
