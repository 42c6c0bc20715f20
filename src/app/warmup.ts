// The warm-up behind readiness (db/readiness.ts): before /readyz says 200, the service's hot paths run through the
// same resolvers as requests (create-or-get a type, declare a scalar and a reference attribute, create entities with
// values, page the types, list the attributes, read an entity, an Idempotency-Key's statements), every statement in
// ONE transaction rolled back at the end (rehearse): nothing is written, and Neo4j has planned, compiled and run each
// hot statement (also as a transaction that has changed nothing yet sends it: rehearse, in db/executor.ts).
//
// Serve as soon as serving is good: ONE rehearsal, then the pool filled and the breaker closed, and the service is
// ready. The first rehearsal after a Neo4j restart is the cost (every statement planned on a cold JVM); the later
// rounds only make a warm database a little faster, which is not worth holding back service for, so they run after
// ready, in the background, at most BACKGROUND_CONCURRENCY rehearsals at once (a bounded share of the database beside
// the requests), while they keep getting faster. The first rehearsal runs for a tenant kept for it (one of
// WARMUP_TENANTS, set up once and committed): a new tenant's set-up (its system types, five statements) is not a hot
// path and is planned by the background rounds, which use throwaway tenants.
//
// GraphQL's reads of the catalog (GRAPHQL_READS) are in the background rounds only: before ready, each of their
// statements planned twice (as the rehearsal's changed transaction and a fresh read send it) would hold /readyz
// back for reads. Never planned at all, the first such query could spend its time budget (query_timeout) waiting
// for its statements' first plans.
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { execute, parse } from 'graphql';
import type { Driver } from 'neo4j-driver';
import { EngineCache } from '../cache/engine-cache.js';
import { ModelCache } from '../cache/model-cache.js';
import { ModelReads } from '../cache/model-reads.js';
import { VersionReader } from '../cache/version-reader.js';
import { createContext, type Services, type Viewer } from '../context.js';
import { createExecutor, type Executor, type Observe, rehearse } from '../db/executor.js';
import {
  claimIdempotencyKey,
  readIdempotencyState,
  storeIdempotentAnswer,
} from '../db/idempotency-records.js';
import type { WarmupReport } from '../db/readiness.js';
import { storagePolicyOf } from '../db/storage-policy.js';
import { declareAttribute, listAttributes } from '../resolvers/attributes.js';
import { createEntityWithValues, getEntity } from '../resolvers/entities.js';
import { createOrGetEntityType, listEntityTypes } from '../resolvers/entity-types.js';
import { schema } from '../schema/index.js';
import { createTenantDirectory } from '../services/tenants.js';

/** The budget of the rehearsal's own caches. */
const PRIVATE_CACHE_BYTES = 1024 * 1024;
/**
 * Rounds of the rehearsal at least (`cold`: after a first round slower than COLD_FIRST_ROUND_MS, a JVM that has just
 * started, whose rounds keep getting faster for longer than 20% at a time shows), and at most. The first makes the
 * service ready; the others run after, in the background.
 */
export const WARMUP_ROUNDS = { min: 3, cold: 6, max: 10 } as const;
/**
 * The tenants of the first rehearsal, one picked at random: all set up (committed) after the first ready, so that a
 * restart's first round skips a set-up; several, so that instances warming up at once on one database seldom wait for
 * each other's locks (a rehearsal holds its tenant's until it is rolled back).
 */
export const WARMUP_TENANTS = Array.from({ length: 16 }, (_, i) => `metamodel-warm-up-${i}`);
/** Rehearsals at once in the background rounds, beside the requests being served. */
export const BACKGROUND_CONCURRENCY = 1;
/** A first round (one rehearsal) this slow means a cold database: its statements were planned and compiled anew. */
const COLD_FIRST_ROUND_MS = 2_000;
/** A round at least this much faster than the one before calls for another. */
const STILL_WARMING = 0.8;
/** Connections opened at once after the first round (the driver keeps them in its pool): as many as 16 clients use. */
const POOL_FILL = 16;
/** One round's transaction may take this long (a cold database plans a dozen statements). */
const ROUND_TIMEOUT_MS = 30_000;

/**
 * GraphQL's reads of the catalog, as a UI asks for them: a page of types with their parents and definitions (own and
 * the platform's, their enumerations, defaults, usage and the types they refer to), a type by guid and by name. Run
 * through the schema's own resolvers, so that the statements are those a query sends (its loaders batch them).
 */
export const GRAPHQL_READS = parse(`
  query WarmUp($guid: ID!, $name: String!) {
    entityTypes(first: 100) {
      edges {
        cursor
        node {
          guid name origin version createdAt formerNames { name }
          parentType { guid name }
          attributes {
            guid name valueType cardinality required filterable origin state allowedValues defaultValue
            ownerType { guid name } allowedRefType { guid name } allowedValuesUsage { declared limit }
          }
        }
      }
      pageInfo { hasNextPage endCursor }
    }
    entityType(guid: $guid) { guid name attributes { name } }
    entityTypeByName(name: $name) { guid name }
  }
`);

/**
 * One pass over the hot paths, for `tenant` (a new one unless given), rolled back, `planned` told of each statement.
 * With `graphql`, GraphQL's reads (GRAPHQL_READS) last: the background rounds only, so that they cost nothing before
 * ready.
 */
async function rehearsal(
  services: Services,
  driver: Driver,
  database: string | undefined,
  {
    tenant = `warm-up ${randomUUID()}`,
    planned,
    graphql = false,
  }: { tenant?: string; planned?: Observe | undefined; graphql?: boolean } = {},
): Promise<number> {
  return rehearse(
    driver,
    database,
    async (db) => {
      // Caches of its own: what it reads and writes is seen inside its transaction only (and never committed).
      const scoped: Services = {
        ...services,
        db,
        tenants: createTenantDirectory(db),
        model: new ModelReads(new ModelCache(PRIVATE_CACHE_BYTES), new VersionReader(db)),
        engineCache: new EngineCache(100, PRIVATE_CACHE_BYTES),
      };
      const viewer: Viewer = { subject: 'warm-up', tenant, roles: new Set(), crossTenant: false };
      // A context per step, as per request: each reads the model version afresh.
      const ctx = (within: Services = scoped) =>
        createContext(within, viewer, { requestId: `warm-up-${randomUUID()}`, operation: 'warm-up' });
      await scoped.tenants.ensure(tenant);
      // A keyed type creation first, as its request sends it (services/keyed-requests.ts, db/executor.ts): the key's
      // state read and the type's look-up before any change, then in the write the key claimed, the type created
      // and the answer stored. Every write of the service's clients is keyed, and one is served while the warm-up
      // goes on once its own statements are planned in the variants it sends them (readiness.ts): so these come
      // first, and nothing else before them. (With the key's statements as a write of their own before the type's,
      // the look-up would come after a change and be planned a second time, in a variant no request sends, before the
      // keyed creation could be served.) An unkeyed type creation next (its first statement then planned as a
      // transaction that changed nothing sends it), an entity's creation (the most frequent write of a catalog), then
      // a declaration's, then an entity's with values. (With an entity's creation after the declarations', clients
      // whose writes under way at an outage are all entities' would be served only as the rehearsal ends.)
      const owner = { tenant, subject: 'warm-up', key: randomUUID() };
      await db.readOne((run) => readIdempotencyState(run, owner));
      const keyedDb: Executor = {
        ...db,
        write: (work) =>
          db.write(async (run) => {
            await claimIdempotencyKey(run, owner, 'warm-up');
            const value = await work(run);
            await storeIdempotentAnswer(run, owner, {
              status: 201,
              body: '{}',
              contentType: 'application/json',
            });
            return value;
          }),
        forRequest: () => keyedDb,
      };
      const column = (await createOrGetEntityType(ctx({ ...scoped, db: keyedDb }), 'Warm-up column')).type
        .guid;
      const table = (await createOrGetEntityType(ctx(), 'Warm-up table')).type.guid;
      const ref = await createEntityWithValues(ctx(), { type_guid: column, name: 'id' });
      await createOrGetEntityType(ctx(), 'warm-up TABLE');
      await declareAttribute(ctx(), table, { name: 'note', value_type: 'string', cardinality: 'single' });
      await declareAttribute(ctx(), table, {
        name: 'columns',
        value_type: 'entity_ref',
        cardinality: 'multi',
        allowed_ref_type: column,
      });
      const entity = await createEntityWithValues(ctx(), {
        type_guid: table,
        name: 'orders',
        values: { note: 'warm-up', columns: [ref.guid] },
      });
      await listEntityTypes(ctx(), { pageSize: 100 });
      await listAttributes(ctx(), table);
      await getEntity(ctx(), entity.guid);
      if (graphql) {
        // (an enumeration with a default: the definitions' texts are loaded only for those that have them)
        await declareAttribute(ctx(), table, {
          name: 'tier',
          value_type: 'string',
          cardinality: 'single',
          allowed_values: ['gold', 'silver'],
          default_value: 'gold',
        });
        const result = await execute({
          schema,
          document: GRAPHQL_READS,
          variableValues: { guid: table, name: 'Warm-up table' },
          contextValue: ctx(),
        });
        if (result.errors?.length) throw result.errors[0];
      }
      return db.stats.queries;
    },
    { timeoutMs: ROUND_TIMEOUT_MS },
    { request_id: `warm-up-${randomUUID()}`, operation: 'warm-up' },
    planned,
  );
}

/**
 * Whether the rounds so far (their times, the first alone) call for another: see WARMUP_ROUNDS and STILL_WARMING.
 * `most` caps them lower (1: a single rehearsal, every hot statement planned once and nothing more).
 */
export function anotherRound(roundsMs: readonly number[], most: number = WARMUP_ROUNDS.max): boolean {
  const rounds = roundsMs.length;
  if (rounds >= Math.min(most, WARMUP_ROUNDS.max)) return false;
  const least = (roundsMs[0] ?? 0) > COLD_FIRST_ROUND_MS ? WARMUP_ROUNDS.cold : WARMUP_ROUNDS.min;
  if (rounds < least) return true;
  return (roundsMs[rounds - 1] as number) < (roundsMs[rounds - 2] as number) * STILL_WARMING;
}

/**
 * Makes the service ready to serve: the warm-up tenant set up (once per database), one rehearsal (every hot statement
 * planned), the connection pool filled, the breaker closed.
 */
export async function warmUp(
  services: Services,
  driver: Driver,
  database: string | undefined,
  planned?: Observe,
): Promise<WarmupReport> {
  const started = performance.now();
  const tenant = WARMUP_TENANTS[Math.floor(Math.random() * WARMUP_TENANTS.length)] as string;
  await createTenantDirectory(
    createExecutor(driver, { database, ...(planned ? { observe: planned } : {}) }),
  ).ensure(tenant);
  const begun = performance.now();
  const statements = await rehearsal(services, driver, database, { tenant, planned });
  const roundsMs = [Math.round(performance.now() - begun)];
  // The pool filled and the breaker closed after the rehearsal, not beside it: POOL_FILL connections opened at once
  // on a JVM just started would hold the rehearsal back; after it, they open in a moment.
  await Promise.all(Array.from({ length: POOL_FILL }, () => ping(driver, database)));
  await closeBreaker(driver, database);
  return { ms: Math.round(performance.now() - started), roundsMs, statements };
}

/**
 * The rounds after ready, in the background: every WARMUP_TENANTS set up, then BACKGROUND_CONCURRENCY rehearsals at
 * once (throwaway tenants, GraphQL's reads included), while they keep getting faster (anotherRound, counting the
 * first round's time), at most `maxRounds` in all. Stops at the first failure (the database went away: readiness
 * warms up again when it is back) or when `stopped()` says so. `planned` is told of each statement, as in warmUp.
 */
export async function keepWarming(
  services: Services,
  driver: Driver,
  database: string | undefined,
  first: WarmupReport,
  maxRounds: number,
  stopped: () => boolean,
  planned?: Observe,
): Promise<WarmupReport> {
  const started = performance.now();
  const roundsMs = [...first.roundsMs];
  let statements = 0;
  // Every tenant of the first rehearsal set up now (a read each once done): the next restart's warm-up, whichever it
  // picks, skips the set-up's five writes (were each set up only when picked, most restarts would pick one not yet
  // set up).
  const tenants = createTenantDirectory(createExecutor(driver, { database }));
  for (const tenant of WARMUP_TENANTS) {
    if (stopped()) break;
    await tenants.ensure(tenant);
  }
  while (!stopped() && anotherRound(roundsMs, maxRounds)) {
    const begun = performance.now();
    const counts = await Promise.all(
      Array.from({ length: BACKGROUND_CONCURRENCY }, () =>
        rehearsal(services, driver, database, { planned, graphql: true }),
      ),
    );
    statements += counts.reduce((a, b) => a + b, 0);
    roundsMs.push(Math.round(performance.now() - begun));
  }
  return { ms: Math.round(performance.now() - started), roundsMs, statements };
}

/**
 * The circuit breaker opened during the outage, and the warm-up went around it: one statement through it now, so
 * that it is closed before the first requests (half-open, they would wait for one of them to probe it, and the first
 * writes after ready be slow). Waits for its half-open delay when it is still open.
 */
async function closeBreaker(driver: Driver, database: string | undefined) {
  const policy = storagePolicyOf(driver);
  for (let attempt = 0; ; attempt++) {
    try {
      await policy.run(() => ping(driver, database));
      return;
    } catch (error) {
      if (attempt >= 5 || policy.state === 'closed') throw error;
      await new Promise((r) => setTimeout(r, Math.min(1_000, policy.retryAfterSeconds() * 1_000)));
    }
  }
}

/** One trivial statement on a pooled connection (opened if none is free). */
async function ping(driver: Driver, database: string | undefined) {
  const session = driver.session({ database });
  try {
    await session.run('RETURN 1');
  } finally {
    await session.close();
  }
}
