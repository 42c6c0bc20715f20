import type { InjectOptions } from 'fastify';
import { describe, expect } from 'vitest';
import { parseConfig } from '../../src/config.js';
import { GRAPHQL_LIMITS } from '../../src/schema/limits.js';
import { createLogger, LogRing } from '../../src/telemetry/logging.js';
import { it as baseIt } from '../fixtures.js';
import {
  newTenant,
  operatorToken,
  restClient,
  TEST_SECRET,
  type TestWorld,
  testApp,
  tokenFor,
  untilReady,
} from '../helpers.js';

const it = baseIt.extend<{ logged: TestWorld['app'] }>({
  logged: [
    async ({ world }, use) => {
      // an app whose logs go only to a ring we can read
      const ring = new LogRing(5000);
      const config = parseConfig({
        AUTH_JWT_SECRET: TEST_SECRET,
        NEO4J_URI: 'bolt://x:1',
        LOG_LEVEL: 'info',
      });
      const logged = await testApp({
        config,
        driver: world.driver,
        logRing: ring,
        logger: createLogger({ level: 'info', ring, stdout: false }),
      });
      await logged.ready();
      await untilReady(logged);
      await use(logged);
      await logged.close();
    },
    { scope: 'file' },
  ],
});

const graphql = async (world: TestWorld, token: string, query: string) =>
  (
    await world.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ query }),
    })
  ).json();

describe('GET /admin/logs', () => {
  it('returns recent structured entries, filterable by level and time; never a token or secret', async ({
    logged,
  }) => {
    const token = await tokenFor(newTenant());
    const api = restClient(logged, token);
    const since = Date.now();
    await api.get(`/entities/types?cursor=abc&access_token=${token}`);
    logged.log.warn(
      { authorization: `Bearer ${token}`, password: 'hunter2', nested: { token: 'abc', secret: 's3' } },
      'careful',
    );
    logged.log.info({ note: `a token in text ${token}` }, 'free text');
    const admin = restClient(logged, await operatorToken());
    const all = await admin.get(`/admin/logs?since=${since}&limit=1000`);
    expect(all.status).toBe(200);
    const text = JSON.stringify(all.body.DATA);
    expect(all.body.DATA.entries.length).toBeGreaterThan(2);
    expect(text).not.toContain(token);
    expect(text).not.toContain(token.split('.')[1]);
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('s3');
    expect(text).not.toContain('access_token');
    expect(text).toContain('careful');
    // One access line per request, with method, path (no query string), status and timing.
    const access = all.body.DATA.entries.filter((e: any) => e.msg === 'request completed');
    expect(access).toEqual([
      expect.objectContaining({
        req: { method: 'GET', url: '/entities/types' },
        res: { statusCode: 400 },
        responseTime: expect.any(Number),
        reqId: expect.any(String),
      }),
    ]);
    expect(all.body.DATA.entries.some((e: any) => e.msg === 'incoming request')).toBe(false);
    const warnings = await admin.get(`/admin/logs?level=warn&since=${since}`);
    expect(warnings.body.DATA.entries.every((e: any) => e.level >= 40)).toBe(true);
    expect(warnings.body.DATA.entries.some((e: any) => e.msg === 'careful')).toBe(true);
    const future = await admin.get(`/admin/logs?since=${Date.now() + 60_000}`);
    expect(future.body.DATA.entries).toEqual([]);
    expect((await admin.get('/admin/logs?level=loud')).body.DATA.reason).toBe('invalid_field');
  });

  it('is refused (403 not_authorized) to non-administrators and to administrators of other tenants', async ({
    logged,
  }) => {
    for (const token of [
      await tokenFor(newTenant(), { roles: ['admin'] }),
      await tokenFor('default'),
      await tokenFor('default', { roles: ['platform'] }),
    ]) {
      const res = await restClient(logged, token).get('/admin/logs');
      expect([res.status, res.body.DATA.reason]).toEqual([403, 'not_authorized']);
    }
    const cross = await restClient(logged, await tokenFor(newTenant(), { crossTenant: true })).get(
      '/admin/logs',
    );
    expect(cross.status).toBe(200);
  });
});

describe('tokens are never logged, in any shape a request can carry them', () => {
  it('planted in every place a request carries text (paths, encodings, query, headers, bodies, GraphQL), no line holds it', async ({
    world,
  }) => {
    const ring = new LogRing(5000);
    const config = parseConfig({ AUTH_JWT_SECRET: TEST_SECRET, NEO4J_URI: 'bolt://x:1', LOG_LEVEL: 'trace' });
    const app = await testApp({
      config,
      driver: world.driver,
      logRing: ring,
      logger: createLogger({ level: 'trace', ring, stdout: false }),
    });
    try {
      await app.ready();
      await untilReady(app);
      const caller = await tokenFor(newTenant());
      // the token a careless user pastes where it does not belong (another's, valid)
      const secret = await tokenFor(newTenant(), { sub: 'victim@example.com' });
      const [h, p, sig] = secret.split('.') as [string, string, string];
      const everyCharacter = [...secret]
        .map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`)
        .join('');
      const auth = { authorization: `Bearer ${caller}` };
      const json = { ...auth, 'content-type': 'application/json' };
      const requests: InjectOptions[] = [
        { method: 'GET', url: `/entities/types/by-name/${secret}`, headers: auth },
        { method: 'GET', url: `/entities/types/by-name/Bearer%20${secret}`, headers: auth },
        { method: 'GET', url: `/entities/types/by-name/${everyCharacter}`, headers: auth },
        { method: 'GET', url: `/${h}%2E${p}%2E${sig}`, headers: auth },
        { method: 'GET', url: `/x${secret}`, headers: auth },
        { method: 'GET', url: `/entities/types?cursor=${secret}&page_size=${secret}`, headers: auth },
        { method: 'GET', url: `/entities/types/${secret}/history`, headers: auth },
        { method: 'POST', url: '/entities/types', headers: json, payload: JSON.stringify({ name: secret }) },
        { method: 'POST', url: '/entities/types', headers: json, payload: `{"name": ${secret}` },
        {
          method: 'POST',
          url: '/entities/types',
          headers: { ...json, 'idempotency-key': secret },
          payload: JSON.stringify({ name: 'keyed' }),
        },
        { method: 'GET', url: '/entities/types', headers: { ...auth, 'neo4j-bookmark': secret } },
        { method: 'GET', url: '/entities/types', headers: { ...auth, 'x-request-id': secret } },
        { method: 'GET', url: '/entities/types', headers: { authorization: `Bearer ${secret}x` } },
        { method: 'GET', url: '/entities/types', headers: { authorization: secret } },
        {
          method: 'POST',
          url: '/graphql',
          headers: json,
          payload: JSON.stringify({
            query: `query Q($n: String!) { entityTypeByName(name: $n) { guid } x: entityTypeByName(name: "${secret}") { guid } }`,
            variables: { n: secret },
            operationName: 'Q',
          }),
        },
        {
          method: 'POST',
          url: '/graphql',
          headers: json,
          payload: JSON.stringify({ query: `{ ${secret} }` }),
        },
        {
          method: 'POST',
          url: '/graphql',
          headers: json,
          payload: JSON.stringify({ query: '{ entityTypes { edges { cursor } } }', operationName: secret }),
        },
        {
          method: 'GET',
          url: `/graphql?query=${encodeURIComponent(`{ entityTypeByName(name: "${secret}") { guid } }`)}`,
          headers: auth,
        },
      ];
      for (const request of requests) {
        const res = await app.inject(request);
        expect(res.statusCode, String(request.url)).toBeLessThan(500);
      }
      const lines = ring.query({ limit: 5000 }).entries.map((e) => JSON.stringify(e));
      expect(lines.length).toBeGreaterThan(requests.length);
      for (const line of lines) {
        expect(line).not.toContain(sig);
        expect(line).not.toContain(p);
      }
    } finally {
      await app.close();
    }
  });
});

describe('GraphQL bounds', () => {
  it('refuses queries deeper than the limit with query_too_deep', async ({ world }) => {
    const token = await tokenFor(newTenant());
    const deep = `{ entityTypeByName(name: "column") { ${'parentType { '.repeat(GRAPHQL_LIMITS.maxDepth)} name ${'} '.repeat(GRAPHQL_LIMITS.maxDepth)} } }`;
    const res = await graphql(world, token, deep);
    expect(res.errors[0].extensions.reason).toBe('query_too_deep');
    const ok = await graphql(
      world,
      token,
      '{ entityTypeByName(name: "column") { parentType { parentType { name } } } }',
    );
    expect(ok.data.entityTypeByName.parentType.parentType.name).toBe('schema');
  });

  it('refuses too many aliases, tokens and directives', async ({ world }) => {
    const token = await tokenFor(newTenant());
    const aliases = Array.from(
      { length: GRAPHQL_LIMITS.maxAliases + 1 },
      (_, i) => `a${i}: entityTypeByName(name: "table") { name }`,
    );
    expect((await graphql(world, token, `{ ${aliases.join(' ')} }`)).errors[0].extensions.reason).toBe(
      'too_many_aliases',
    );
    const tokens = `{ ${Array.from({ length: GRAPHQL_LIMITS.maxTokens + 100 }, () => '__typename').join(' ')} }`;
    expect((await graphql(world, token, tokens)).errors[0].extensions.reason).toBe('too_many_tokens');
    const directives = `{ __typename ${'@include(if: true) '.repeat(GRAPHQL_LIMITS.maxDirectives + 1)} }`;
    expect((await graphql(world, token, directives)).errors[0].extensions.reason).toBe('too_many_directives');
  });

  it('keeps introspection available to authenticated clients, and suggests field names to them', async ({
    world,
  }) => {
    const token = await tokenFor(newTenant());
    const res = await graphql(
      world,
      token,
      '{ __schema { types { name fields { name type { name ofType { name ofType { name } } } } } } }',
    );
    expect(res.errors).toBeUndefined();
    expect(res.data.__schema.types.some((t: any) => t.name === 'EntityType')).toBe(true);
    const typo = await graphql(world, token, '{ entityTyp { name } }');
    expect(typo.errors[0].message).toContain('Did you mean "entityType"');
  });

  it('refuses a query whose static cost exceeds the limit with query_too_costly', async ({ world }) => {
    const token = await tokenFor(newTenant());
    const wide = Array.from(
      { length: 8 },
      (_, i) => `f${i}: attributes { name allowedRefType { name attributes { name } } }`,
    ).join(' ');
    const res = await graphql(world, token, `{ entityTypes(first: 500) { edges { node { ${wide} } } } }`);
    expect(res.errors[0].extensions.reason).toBe('query_too_costly');
  });

  it('a typical nested catalog query is within every bound', async ({ world }) => {
    const token = await tokenFor(newTenant());
    const res = await graphql(
      world,
      token,
      '{ entityTypes(first: 500) { edges { node { name parentType { name } attributes { name ownerType { name } allowedRefType { name parentType { name } } } withdrawnAttributes { state } } } } }',
    );
    expect(res.errors).toBeUndefined();
    expect(res.data.entityTypes.edges.length).toBe(11);
  });
});

describe('GraphiQL', () => {
  it('is served to a browser at /graphql without a token; queries still need one', async ({ world }) => {
    const page = await world.app.inject({ method: 'GET', url: '/graphql', headers: { accept: 'text/html' } });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.body).toContain('graphiql');
    for (const accept of [
      'text/html',
      'application/json, text/html;q=0.1',
      'application/graphql-response+json, text/html',
    ]) {
      const res = await world.app.inject({
        method: 'GET',
        url: '/graphql?query=%7BentityTypes%7Bedges%7Bnode%7Bname%7D%7D%7D%7D',
        headers: { accept },
      });
      expect(res.body).not.toContain('"entityTypes"');
    }
  });
});
describe('unexpected GraphQL errors', () => {
  it('are masked with reason internal_error', async ({ world }) => {
    const token = await tokenFor(newTenant());
    const broken = await testApp({
      config: parseConfig({ AUTH_JWT_SECRET: TEST_SECRET, NEO4J_URI: 'bolt://x:1', LOG_LEVEL: 'silent' }),
      driver: world.driver,
    });
    // sabotage the per-request loader so a resolver throws something that is not a refusal
    broken.addHook('preHandler', async (req) => {
      if (req.ctx)
        req.ctx.loaders.platformAttributes = () => Promise.reject(new Error('disk on fire at /var/lib'));
    });
    await untilReady(broken);
    const res = (
      await broken.inject({
        method: 'POST',
        url: '/graphql',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ query: '{ entityTypeByName(name: "table") { attributes { name } } }' }),
      })
    ).json();
    expect(res.errors[0].message).toMatch(/^Unexpected error \(request [0-9a-f-]{36}\)\.$/);
    expect(res.errors[0].extensions).toMatchObject({
      reason: 'internal_error',
      requestId: expect.any(String),
    });
    expect(res.errors[0].message).toContain(res.errors[0].extensions.requestId);
    expect(JSON.stringify(res)).not.toContain('disk on fire');
    await broken.close();
  });
});
