// Test world: an app on the run's Neo4j, a fresh tenant per test, tokens, and REST/GraphQL callers.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Driver } from 'neo4j-driver';
import pino from 'pino';
import { inject, vi } from 'vitest';
import { createMetamodelClient, type FetchLike, MetamodelGraphQLError } from '../client/src/index.js';
import { type AppDeps, buildApp } from '../src/app/build.js';
import { mintToken } from '../src/auth/tokens.js';
import { parseConfig } from '../src/config.js';
import type { Envelope } from '../src/contract/wire.js';
import { createDriver } from '../src/db/driver.js';
import { assertConforms } from './conformance.js';

export const TEST_SECRET = 'test-secret-that-is-long-enough-0123456789';
/**
 * Warm-up rounds of the suite's apps: one rehearsal plans every hot statement; the further rounds warm a JVM for
 * traffic, which tests do not measure. Dozens of apps warming fully cost about a quarter of the suite's time (the
 * fault test keeps the full warm-up: it checks readiness after an outage as a deployment sees it).
 */
export const TEST_WARMUP_ROUNDS = 1;

/**
 * `buildApp` as the suite uses it: a silent logger, TEST_WARMUP_ROUNDS warm-up rounds and no ramp after ready (tests
 * send their requests at once on a database the suite keeps warm), unless `deps` says otherwise.
 */
export const testApp = (deps: AppDeps) =>
  buildApp({
    logger: pino({ level: process.env.TEST_LOG ?? 'silent' }),
    warmupRounds: TEST_WARMUP_ROUNDS,
    rampAfterReady: false,
    ...deps,
  });

export interface TestWorld {
  app: FastifyInstance;
  driver: Driver;
  close(): Promise<void>;
}

/**
 * An app on the run's Neo4j (`testApp`). Purges run without a grace period unless `env` says otherwise.
 */
export async function createWorld(
  env: Record<string, string> = {},
  deps: Partial<Pick<AppDeps, 'tracing' | 'warmupRounds'>> = {},
): Promise<TestWorld> {
  const uri = inject('neo4jUri');
  const config = parseConfig({
    NODE_ENV: 'test',
    AUTH_JWT_SECRET: TEST_SECRET,
    NEO4J_URI: uri,
    LOG_LEVEL: 'silent',
    PURGE_GRACE_SECONDS: '0',
    // A GraphQL query's wall-clock budget (2 s by default) is tested on its own (limits.test.ts); elsewhere the suite's
    // 87 files at once on two cores must not turn a correctness test into a query_timeout (one did in CI).
    GRAPHQL_QUERY_TIMEOUT_MS: '10000',
    // Every test mints tokens of its own from one address: the bucket of requests without a verified token is tested
    // on its own (rate-limits.test.ts), not met by every file's new tokens and refused ones.
    UNVERIFIED_PER_ADDRESS_PER_SECOND: '1000000',
    UNVERIFIED_PER_SECOND: '10000000',
    // The production default's request memory, whatever this machine's heap (derived otherwise: app/memory.ts).
    REQUEST_MEMORY_MB: '64',
    ...env,
  });
  const driver = createDriver({ uri });
  const app = await testApp({ config, driver, ...deps });
  await app.ready();
  await untilReady(app);
  return {
    app,
    driver,
    async close() {
      await app.close();
      await driver.close();
    },
  };
}

/**
 * Waits until the app is ready (the database answers and the warm-up has run), as a load balancer would before
 * sending it traffic: transactions are refused until then.
 */
export async function untilReady(app: FastifyInstance, timeoutMs = 60_000) {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      app.readiness.whenReady(),
      new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`the app was not ready within ${timeoutMs} ms`)),
          timeoutMs,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export const newTenant = (label = 't') => `${label}-${randomUUID()}`;

export function tokenFor(
  tenant: string,
  opts: { roles?: string[]; crossTenant?: boolean; sub?: string } = {},
) {
  return mintToken(TEST_SECRET, { tenant, ...opts });
}

export interface Reply<D = Record<string, any>> {
  status: number;
  body: Envelope<D>;
  headers: Record<string, unknown>;
}

/** A REST caller bound to one token. */
export function restClient(app: FastifyInstance, token: string | undefined) {
  const call = async <D = Record<string, any>>(
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    url: string,
    payload?: unknown,
    extra: Record<string, string> = {},
  ): Promise<Reply<D>> => {
    const res = await app.inject({
      method,
      url,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(payload !== undefined ? { 'content-type': 'application/json' } : {}),
        ...extra,
      },
      ...(payload !== undefined
        ? { payload: typeof payload === 'string' ? payload : JSON.stringify(payload) }
        : {}),
    });
    const body = res.json() as Envelope<D>;
    // Every REST answer of the suite is held against the OpenAPI document (test/conformance.ts).
    // ... and to its route's budget: the statements it sent and the bytes it answered.
    assertConforms(method, url, res.statusCode, String(res.headers['content-type'] ?? ''), body, {
      statements: Number(res.headers['x-db-queries'] ?? 0),
      bytes: res.rawPayload.length,
    });
    return { status: res.statusCode, body, headers: res.headers };
  };
  return {
    get: <D = Record<string, any>>(url: string) => call<D>('GET', url),
    /** `headers`: extra request headers (X-Change-Reason, Idempotency-Key). */
    post: <D = Record<string, any>>(url: string, body?: unknown, headers?: Record<string, string>) =>
      call<D>('POST', url, body ?? {}, headers),
    patch: <D = Record<string, any>>(url: string, body?: unknown, headers?: Record<string, string>) =>
      call<D>('PATCH', url, body ?? {}, headers),
    delete: <D = Record<string, any>>(url: string, headers?: Record<string, string>) =>
      call<D>('DELETE', url, undefined, headers),
  };
}

/** A fetch over Fastify's inject: the client talks to the app with no listening port. */
export function injectFetch(app: FastifyInstance, onResponse?: (headers: Headers) => void): FetchLike {
  return async (url, init) => {
    const { pathname, search } = new URL(url);
    const res = await app.inject({
      method: init.method,
      url: pathname + search,
      headers: init.headers,
      payload: init.body,
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      if (Array.isArray(value)) for (const v of value) headers.append(name, v);
      else if (value !== undefined) headers.set(name, String(value));
    }
    onResponse?.(headers);
    const noBody = [101, 204, 205, 304].includes(res.statusCode);
    return new Response(noBody ? null : res.body, { status: res.statusCode, headers });
  };
}

/**
 * The GraphQL client (client/) bound to one token, over inject. `lastQueries()` is the x-db-queries header of the
 * last answer (database queries that request sent).
 */
export function graphqlClient(app: FastifyInstance, token: string) {
  let lastQueries: number | undefined;
  const client = createMetamodelClient({
    url: 'http://metamodel.test',
    token,
    fetch: injectFetch(app, (headers) => {
      lastQueries = Number(headers.get('x-db-queries'));
    }),
  });
  return { ...client, lastQueries: () => lastQueries };
}

/** The reason a call was refused with (extensions.reason of its first error); undefined when it succeeded. */
export async function refusalOf(call: Promise<unknown>): Promise<string | undefined> {
  try {
    await call;
    return undefined;
  } catch (e) {
    if (e instanceof MetamodelGraphQLError) return e.reason;
    throw e;
  }
}

/** Token of an operator: an administrator of the default tenant. */
export const operatorToken = () => tokenFor('default', { roles: ['admin'] });

/** Creates a user-defined type in the tenant of `api` and returns its guid. */
export async function createType(api: ReturnType<typeof restClient>, name: string): Promise<string> {
  const res = await api.post('/entities/types', { name });
  if (res.status !== 201 && res.status !== 200) throw new Error(`type ${name}: ${JSON.stringify(res.body)}`);
  return res.body.DATA.entity_type.guid;
}

export async function typeGuidByName(api: ReturnType<typeof restClient>, name: string): Promise<string> {
  const res = await api.post('/entities/types', { name });
  return res.body.DATA.entity_type.guid;
}

/**
 * The labels of the nodes that carry a tenant, each with the properties of the index or constraint that leads with
 * `tenant`, so that fingerprint() seeks instead of scanning every node of the database. hostile-input.test.ts
 * checks that no other label carries a tenant.
 */
export const TENANT_LABELS: Record<string, string[]> = {
  EntityType: ['name_key'],
  AttributeDefinition: ['owner_guid'],
  Entity: ['type_guid', 'guid'],
  TypeTombstone: ['name_key'],
  TypeNameRelease: ['name_key'],
  ModelVersion: ['shard'],
  ModelChange: ['shard', 'seq'],
  IdempotencyKey: ['subject', 'key'],
  IdempotencyLedger: ['shard'],
};

const TENANT_NODES = Object.entries(TENANT_LABELS)
  .map(
    ([label, keys]) =>
      `MATCH (n:${label}) WHERE n.tenant = $tenant ${keys.map((k) => `AND n.${k} IS NOT NULL`).join(' ')} RETURN n`,
  )
  .join(' UNION ');

/**
 * Everything stored for a tenant, in a comparable form: nodes with their identifying state, and relationships. A
 * refused request must leave it exactly as it was.
 */
export async function fingerprint(driver: Driver, tenant: string) {
  const res = await driver.executeQuery(
    `CALL { ${TENANT_NODES} }
     OPTIONAL MATCH (n)-[r]->(m)
     WITH n, collect(type(r) + '>' + coalesce(m.guid, m.id, '')) AS out
     RETURN collect(labels(n)[0] + '|' + coalesce(n.guid, '') + '|' + coalesce(n.name, '') + '|' +
                    coalesce(n.state, '') + '|' + coalesce(n.definitions_version, '') + '|' + size(keys(n)) + '|' +
                    reduce(s = '', x IN out | s + x + ',')) AS nodes`,
    { tenant },
  );
  const nodes = res.records[0]?.get('nodes') as string[] | undefined;
  return [...(nodes ?? [])].sort();
}

/**
 * Waits until no redeclaration of `tenant` is carrying its values any more. Any instance's purger may run a carry
 * (every test file's app shares the database), so waiting for this app's purger to be idle is not enough.
 */
export async function carriesDone(world: TestWorld, tenant: string, timeoutMs = 30_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const rows = await world.driver.executeQuery(
      `MATCH (a:AttributeDefinition {tenant: $tenant}) WHERE a.state = 'withdrawn' AND a.carry IS NOT NULL
       RETURN count(a) AS n`,
      { tenant },
    );
    if (Number(rows.records[0]?.get('n') ?? 0) === 0) return;
    if (Date.now() > until) throw new Error(`carries of ${tenant} not done after ${timeoutMs} ms`);
    world.app.services.purger.kick();
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * A GraphQL POST through the app, with how many texts of `atLeast` characters or more JSON.parse was given while it
 * ran (counted before the caller reads the answer): stored JSON texts must reach the answer unparsed.
 */
export async function graphqlCountingParses(
  app: FastifyInstance,
  token: string,
  query: string,
  atLeast: number,
) {
  const parse = vi.spyOn(JSON, 'parse');
  try {
    const res = await app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ query }),
    });
    const parses = parse.mock.calls.filter(
      ([text]) => typeof text === 'string' && text.length >= atLeast,
    ).length;
    return { res, parses };
  } finally {
    parse.mockRestore();
  }
}
