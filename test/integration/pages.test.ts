// The public pages are light and locked down: small HTML shells with a strict Content-Security-Policy over assets
// compressed once and cached for a year; API answers are never cached; CORS only for configured origins.
import { readFileSync } from 'node:fs';
import { buildClientSchema, lexicographicSortSchema, printSchema } from 'graphql';
import { describe, expect } from 'vitest';
import { it as baseIt, instance } from '../fixtures.js';
import { newTenant, type TestWorld, tokenFor } from '../helpers.js';

const it = baseIt.extend<{ withCors: TestWorld }>({
  withCors: instance({ CORS_ORIGINS: 'https://catalog.example.com' }),
});

const get = (world: TestWorld, url: string, headers: Record<string, string> = {}) =>
  world.app.inject({ method: 'GET', url, headers });

const assetsOf = (html: string) =>
  [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1] as string);

describe('Pages: small shells over cached, compressed assets', () => {
  for (const [page, url, headers] of [
    ['GraphiQL', '/graphql', { accept: 'text/html' }],
    ['the REST reference', '/docs', {}],
  ] as const) {
    it(`${page}: a shell under 2 KB with CSP, no framing, no sniffing; revalidated by ETag`, async ({
      world,
    }) => {
      const res = await get(world, url, headers);
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.body.length).toBeLessThan(2_048);
      const csp = String(res.headers['content-security-policy']);
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toMatch(/unsafe-eval|https?:/);
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['cache-control']).toBe('no-cache');
      const again = await get(world, url, { ...headers, 'if-none-match': String(res.headers.etag) });
      expect([again.statusCode, again.body]).toEqual([304, '']);
    });

    it(`${page}: its assets are immutable, compressed once, and refetched as 304`, async ({ world }) => {
      const shell = await get(world, url, headers);
      const assets = assetsOf(shell.body);
      expect(assets.length).toBeGreaterThanOrEqual(2);
      for (const asset of assets) {
        const plain = await get(world, asset);
        expect([asset, plain.statusCode]).toEqual([asset, 200]);
        expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
        const br = await get(world, asset, { 'accept-encoding': 'gzip, br' });
        expect(br.headers['content-encoding']).toBe('br');
        expect(br.rawPayload.length).toBeLessThan(plain.rawPayload.length);
        const gz = await get(world, asset, { 'accept-encoding': 'gzip' });
        expect(gz.headers['content-encoding']).toBe('gzip');
        const cached = await get(world, asset, { 'if-none-match': String(plain.headers.etag) });
        expect(cached.statusCode).toBe(304);
      }
    });
  }

  it('GraphiQL brings the schema it shows: the public schema (schema.graphql), the same for every visitor', async ({
    world,
  }) => {
    const shell = await get(world, '/graphql', { accept: 'text/html' });
    const asset = assetsOf(shell.body).find((a) => /\/graphql-schema\.[^.]+\.js$/.test(a)) as string;
    const body = (await get(world, asset)).body;
    const introspection = JSON.parse(body.slice(body.indexOf('=') + 1, body.lastIndexOf(';')));
    const printed = `${printSchema(lexicographicSortSchema(buildClientSchema(introspection)))}\n`;
    expect(printed).toBe(readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8'));
    // The page names the token's place and carries a starter query; the service still wants a token for anything.
    expect(shell.body).toContain('entityTypes(first: 5)');
    const introspect = await world.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ query: '{ __schema { queryType { name } } }' }),
    });
    expect([introspect.statusCode, introspect.json().DATA.reason]).toEqual([401, 'unauthenticated']);
  });

  it('GraphiQL keeps the headers typed across reloads: the page asks it to persist them (shouldPersistHeaders)', async ({
    world,
  }) => {
    const shell = await get(world, '/graphql', { accept: 'text/html' });
    const config = /<script type="application\/json" id="graphiql-options">(.*?)<\/script>/s.exec(shell.body);
    expect(JSON.parse(config?.[1] ?? '{}')).toMatchObject({
      shouldPersistHeaders: true,
      headers: JSON.stringify({ Authorization: 'Bearer <token>' }),
    });
    // The start script hands the options to GraphiQL as they are.
    const start = assetsOf(shell.body).find((a) => /\/graphiql-start\.[^.]+\.js$/.test(a)) as string;
    expect((await get(world, start)).body).toContain(
      "renderYogaGraphiQL(document.querySelector('#root'),options)",
    );
  });

  it('an asset name that is not one of the pages’ is a 404 in the envelope', async ({ world }) => {
    const res = await get(world, '/assets/nope.js');
    expect([res.statusCode, res.json().DATA.reason]).toEqual([404, 'not_found']);
  });

  it('the GraphiQL bundle (megabytes) is sent compressed at under a third of its size', async ({ world }) => {
    const shell = await get(world, '/graphql', { accept: 'text/html' });
    const bundle = assetsOf(shell.body).find((a) => /\/graphiql\.[^.]+\.js$/.test(a)) as string;
    const plain = await get(world, bundle);
    const br = await get(world, bundle, { 'accept-encoding': 'br' });
    expect(plain.rawPayload.length).toBeGreaterThan(1_000_000);
    expect(br.rawPayload.length).toBeLessThan(plain.rawPayload.length / 3);
  });
});

describe('API answers', () => {
  it('are never stored by caches (Cache-Control: no-store), refusals included', async ({ world }) => {
    const token = await tokenFor(newTenant());
    for (const res of [
      await get(world, '/entities/types', { authorization: `Bearer ${token}` }),
      await get(world, '/entities/types'),
      await get(world, '/nope', { authorization: `Bearer ${token}` }),
      await world.app.inject({
        method: 'POST',
        url: '/graphql',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        payload: '{"query":"{ __typename }"}',
      }),
    ]) {
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    }
  });
});

describe('CORS: configured origins only (CORS_ORIGINS)', () => {
  const preflight = (app: TestWorld['app'], origin: string) =>
    app.inject({
      method: 'OPTIONS',
      url: '/entities/types',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    });

  it('without CORS_ORIGINS a preflight is 405 and no answer carries Access-Control-Allow-Origin', async ({
    world,
  }) => {
    const res = await preflight(world.app, 'https://catalog.example.com');
    expect(res.statusCode).toBe(405);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    const token = await tokenFor(newTenant());
    const answer = await get(world, '/entities/types', {
      authorization: `Bearer ${token}`,
      origin: 'https://catalog.example.com',
    });
    expect(answer.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('a configured origin is allowed (preflight without a token), any other is not', async ({ withCors }) => {
    const allowed = await preflight(withCors.app, 'https://catalog.example.com');
    expect(allowed.statusCode).toBe(204);
    expect(allowed.headers['access-control-allow-origin']).toBe('https://catalog.example.com');
    // every request header the service honours may be sent from a browser
    const allowedHeaders = String(allowed.headers['access-control-allow-headers']).split(/,\s*/);
    for (const h of [
      'authorization',
      'content-type',
      'neo4j-bookmark',
      'idempotency-key',
      'x-change-reason',
      'x-request-id',
      'traceparent',
      'tracestate',
    ]) {
      expect(allowedHeaders).toContain(h);
    }
    const other = await preflight(withCors.app, 'https://evil.example.org');
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    const token = await tokenFor(newTenant());
    const answer = await withCors.app.inject({
      method: 'GET',
      url: '/entities/types',
      headers: { authorization: `Bearer ${token}`, origin: 'https://catalog.example.com' },
    });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['access-control-allow-origin']).toBe('https://catalog.example.com');
    expect(String(answer.headers['access-control-expose-headers']).split(/,\s*/)).toEqual(
      expect.arrayContaining(['x-request-id', 'x-db-queries', 'neo4j-bookmark', 'idempotent-replayed']),
    );
  });
});
