// The HTTP surface: envelope on every response, authentication (docs/api.md#authentication-tenancy-and-the-envelope),
// body limits, malformed input.
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { SignJWT } from 'jose';
import { describe, expect } from 'vitest';
import { mintToken } from '../../src/auth/tokens.js';
import { parseConfig } from '../../src/config.js';
import { createDriver } from '../../src/db/driver.js';
import { freePort } from '../../src/db/local-neo4j.js';
import { itServed } from '../fixtures.js';
import {
  fingerprint,
  newTenant,
  restClient,
  TEST_SECRET,
  testApp,
  tokenFor,
  untilReady,
} from '../helpers.js';

const it = itServed();

const MB = 1024 * 1024;

/** An app whose Neo4j URI points at a port nothing listens on. */
async function appWithoutDatabase() {
  const uri = `bolt://127.0.0.1:${await freePort()}`;
  const config = parseConfig({ AUTH_JWT_SECRET: TEST_SECRET, NEO4J_URI: uri, LOG_LEVEL: 'silent' });
  const driver = createDriver({ uri });
  return { app: await testApp({ config, driver }), driver };
}

/** Sends a request over a real socket; `chunks` are written one by one (chunked when no length is declared). */
function rawRequest(opts: {
  url: string;
  method: string;
  path: string;
  headers: Record<string, string | number>;
  chunks?: Buffer[];
}): Promise<{ status: number; body: any; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${opts.url}${opts.path}`,
      { method: opts.method, headers: opts.headers },
      (res) => {
        let text = '';
        res.on('data', (d) => {
          text += d;
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: text ? JSON.parse(text) : null,
            headers: res.headers,
          }),
        );
      },
    );
    req.on('error', (e: NodeJS.ErrnoException) => {
      // the server may close the socket once it has answered; the answer already arrived in that case
      if (e.code !== 'EPIPE' && e.code !== 'ECONNRESET') reject(e);
    });
    (async () => {
      for (const chunk of opts.chunks ?? []) {
        if (req.destroyed) return;
        if (!req.write(chunk)) await new Promise((r) => req.once('drain', r));
      }
      req.end();
    })().catch(() => {});
  });
}

describe('Envelope', () => {
  it('unknown paths answer 404 with the envelope and reason not_found, without reading the body', async ({
    world,
  }) => {
    const api = restClient(world.app, await tokenFor(newTenant()));
    for (const res of [
      await api.get('/nope'),
      await api.post('/data-lineage/sync/my_ds'),
      await api.post('/nope', '{not json'),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual({
        STATUS: 'FAIL',
        MESSAGE: expect.any(String),
        DATA: { reason: 'not_found' },
      });
    }
  });

  it('a known path asked with a method it is not served with answers 405 with Allow, before the body is read', async ({
    world,
  }) => {
    const token = await tokenFor(newTenant());
    for (const [method, url, allow] of [
      ['DELETE', '/entities/types', 'GET, HEAD, POST'],
      ['PUT', '/entities/types/abc', 'DELETE, GET, HEAD, PATCH'],
      ['TRACE', '/healthz', 'GET, HEAD'],
      // GET /entities/{guid} matches too, but the path is the lookup's resource: the most specific pattern's methods.
      ['QUERY', '/entities/lookup', 'POST'],
      ['OPTIONS', '/entities/abc', 'GET, HEAD'],
      ['OPTIONS', '/entities/types/abc/attributes', 'GET, HEAD, POST'],
    ] as const) {
      const res = await world.app.inject({
        method: method as 'GET',
        url,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        payload: '{not json',
      });
      expect([method, url, res.statusCode, res.headers.allow]).toEqual([method, url, 405, allow]);
      expect(res.json()).toEqual({
        STATUS: 'FAIL',
        MESSAGE: `${method} is not served at this path.`,
        DATA: { reason: 'method_not_allowed' },
      });
    }
  });

  it('malformed percent-encoding and absurdly long path segments still get the envelope', async ({
    world,
  }) => {
    const api = restClient(world.app, await tokenFor(newTenant()));
    const bad = await api.get('/entities/types/%E0%A4%A/attributes');
    expect([bad.status, bad.body.STATUS, bad.body.DATA.reason]).toEqual([400, 'FAIL', 'invalid_url']);
    const long = await api.get(`/entities/types/${'x'.repeat(5000)}/attributes`);
    expect([long.status, long.body.STATUS, long.body.DATA.reason]).toEqual([414, 'FAIL', 'uri_too_long']);
  });

  it('a success carries STATUS SUCCESS and an empty MESSAGE', async ({ world }) => {
    const api = restClient(world.app, await tokenFor(newTenant()));
    const res = await api.get('/entities/types');
    expect(res.body.STATUS).toBe('SUCCESS');
    expect(res.body.MESSAGE).toBe('');
    expect(res.headers['x-request-id']).toEqual(expect.any(String));
  });

  it('while Neo4j is unreachable a request gets 503 storage_unavailable in the envelope', async () => {
    const { app, driver } = await appWithoutDatabase();
    const res = await restClient(app, await tokenFor(newTenant())).get('/entities/types');
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ STATUS: 'FAIL', DATA: { reason: 'storage_unavailable' } });
    await app.close();
    await driver.close();
  });

  it('an unexpected error is a 500 envelope, internal_error, with the request id and no internals', async ({
    world,
  }) => {
    const config = parseConfig({
      AUTH_JWT_SECRET: TEST_SECRET,
      NEO4J_URI: 'bolt://unused:1',
      LOG_LEVEL: 'silent',
    });
    const app = await testApp({ config, driver: world.driver });
    app.get('/boom', async () => {
      throw new Error('secret internals');
    });
    await untilReady(app);
    const res = await restClient(app, await tokenFor(newTenant())).get('/boom');
    expect(res.status).toBe(500);
    expect(res.body).toMatchObject({ STATUS: 'FAIL', DATA: { reason: 'internal_error' } });
    expect(res.body.MESSAGE).not.toContain('secret internals');
    expect(res.body.MESSAGE).toContain(String(res.headers['x-request-id']));
    await app.close();
  });
});

describe('Authentication (docs/api.md)', () => {
  const protectedCalls = [
    ['GET', '/entities/types'],
    ['POST', '/entities/types'],
    ['PATCH', '/entities/types/x'],
    ['DELETE', '/entities/types/x'],
    ['POST', '/platform/dashboards'],
    ['POST', '/graphql'],
  ] as const;

  async function tokens() {
    const tenant = newTenant();
    const key = new TextEncoder().encode(TEST_SECRET);
    return {
      missing: undefined,
      garbage: 'not-a-token',
      expired: await mintToken(TEST_SECRET, { tenant, expiresIn: Math.floor(Date.now() / 1000) - 60 }),
      wrongKey: await mintToken('another-secret-that-is-long-enough-012345', { tenant }),
      noTenant: await new SignJWT({ roles: [] })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject('s')
        .sign(key),
      emptyTenant: await new SignJWT({ tenant: ' ' })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject('s')
        .sign(key),
      noSubject: await new SignJWT({ tenant }).setProtectedHeader({ alg: 'HS256' }).sign(key),
      badRoles: await new SignJWT({ tenant, roles: 'admin' })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject('s')
        .sign(key),
      algNone: `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ tenant, sub: 's' })).toString('base64url')}.`,
    };
  }

  it('no, malformed, expired, badly signed or claim-less tokens get 401 unauthenticated on every path', async ({
    world,
  }) => {
    for (const [name, token] of Object.entries(await tokens())) {
      for (const [method, url] of protectedCalls) {
        const res = await world.app.inject({
          method,
          url,
          headers: {
            'content-type': 'application/json',
            ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}),
          },
          payload: method === 'GET' || method === 'DELETE' ? undefined : '{}',
        });
        expect(res.statusCode, `${name} ${method} ${url}`).toBe(401);
        expect(res.json()).toMatchObject({ STATUS: 'FAIL', DATA: { reason: 'unauthenticated' } });
      }
    }
  });

  it('the bearer scheme name is case-insensitive (RFC 7235)', async ({ world }) => {
    const token = await tokenFor(newTenant());
    for (const scheme of ['bearer', 'BEARER', 'Bearer']) {
      const res = await world.app.inject({
        method: 'GET',
        url: '/entities/types',
        headers: { authorization: `${scheme} ${token}` },
      });
      expect(res.statusCode).toBe(200);
    }
  });
  it('a token in another scheme or the query string is not accepted', async ({ world }) => {
    const token = await tokenFor(newTenant());
    const basic = await world.app.inject({
      method: 'GET',
      url: '/entities/types',
      headers: { authorization: `Basic ${token}` },
    });
    expect(basic.statusCode).toBe(401);
    const query = await world.app.inject({ method: 'GET', url: `/entities/types?access_token=${token}` });
    expect(query.statusCode).toBe(401);
  });

  it('authenticated but not allowed: 403 not_authorized', async ({ world }) => {
    const api = restClient(world.app, await tokenFor(newTenant(), { roles: ['admin'] }));
    const res = await api.post('/platform/dashboards', { name: 'Sales' });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ STATUS: 'FAIL', DATA: { reason: 'not_authorized' } });
  });

  it('health and readiness need no token', async ({ world }) => {
    const health = await world.app.inject({ method: 'GET', url: '/healthz' });
    expect(health.statusCode).toBe(200);
    expect(health.json()).toMatchObject({ STATUS: 'SUCCESS', DATA: { status: 'ok' } });
    const ready = await world.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toMatchObject({ STATUS: 'SUCCESS', DATA: { status: 'ready' } });
  });

  it('readiness is 503 storage_unavailable while Neo4j is unreachable', async () => {
    const { app, driver } = await appWithoutDatabase();
    const res = await app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ STATUS: 'FAIL', DATA: { reason: 'storage_unavailable' } });
    await app.close();
    await driver.close();
  });
});

describe('Request body limit (8 MB, before parsing)', () => {
  it('a declared Content-Length over 8 MB is refused with 413 before any body byte is sent', async ({
    world,
  }) => {
    const token = await tokenFor(newTenant());
    // No body is ever written: the answer can only come from the declared length.
    const res = await new Promise<{ status: number; body: any }>((resolve, reject) => {
      const req = httpRequest(
        `${world.url}/entities/types`,
        {
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            'content-length': 8 * MB + 1,
          },
        },
        (r) => {
          let text = '';
          r.on('data', (d) => {
            text += d;
          });
          r.on('end', () => {
            req.destroy();
            resolve({ status: r.statusCode ?? 0, body: JSON.parse(text) });
          });
        },
      );
      req.on('error', reject);
      req.flushHeaders();
    });
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ STATUS: 'FAIL', DATA: { reason: 'request_too_large' } });
  });

  it('a chunked body that grows past 8 MB is refused with 413', async ({ world }) => {
    const token = await tokenFor(newTenant());
    const chunk = Buffer.alloc(MB, 0x20);
    const res = await rawRequest({
      url: world.url,
      method: 'POST',
      path: '/entities/types',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'transfer-encoding': 'chunked',
      },
      chunks: Array.from({ length: 10 }, () => chunk),
    });
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ STATUS: 'FAIL', DATA: { reason: 'request_too_large' } });
  });

  it('after a 413 for a streamed body, the rest is discarded and the connection serves the next request', async ({
    world,
  }) => {
    const token = await tokenFor(newTenant());
    const socket = connect(world.port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    let received = '';
    socket.on('data', (d) => {
      received += d.toString('latin1');
    });
    socket.write(
      `POST /entities/types HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${token}\r\n` +
        'content-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n',
    );
    const chunk = Buffer.alloc(MB, 0x20);
    const frame = Buffer.concat([
      Buffer.from(`${chunk.length.toString(16)}\r\n`),
      chunk,
      Buffer.from('\r\n'),
    ]);
    let sent = 0;
    // Keep sending past the limit (as a client that does not read answers while it writes would).
    while (sent < 12) {
      if (!socket.write(frame)) await new Promise((r) => socket.once('drain', r));
      sent += 1;
    }
    socket.write('0\r\n\r\nGET /healthz HTTP/1.1\r\nhost: x\r\n\r\n');
    for (let i = 0; i < 100 && (received.match(/HTTP\/1\.1 /g) ?? []).length < 2; i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    socket.destroy();
    const statuses = [...received.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => m[1]);
    expect(statuses).toEqual(['413', '200']);
    expect(received).toContain('request_too_large');
  });

  it('large bodies sent at once are each judged or refused as busy at once, none lost; sent again, each is judged', async ({
    world,
  }) => {
    const token = await tokenFor(newTenant());
    const body = Buffer.from(`{"name":"${'n'.repeat(2 * MB)}"}`);
    const send = () =>
      rawRequest({
        url: world.url,
        method: 'POST',
        path: '/entities/types',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'transfer-encoding': 'chunked',
        },
        chunks: Array.from({ length: 8 }, (_, i) =>
          body.subarray(i * (body.length / 8), (i + 1) * (body.length / 8)),
        ),
      });
    const begun = performance.now();
    const answers = await Promise.all(Array.from({ length: 12 }, send));
    // Each draws three times its bytes as they arrive; a tenant's share (half of 64 MiB) holds five at once. Those
    // that hold part and wait on each other are refused, the newest first, at once (not at the queue's timeout).
    const seen = answers.map((a) => `${a.status} ${a.body?.DATA?.reason}`);
    expect(seen.filter((a) => a === '400 name_too_long').length).toBeGreaterThanOrEqual(4);
    expect(seen.filter((a) => a !== '400 name_too_long')).toEqual(
      seen.filter((a) => a === '429 tenant_busy'),
    );
    for (const refused of answers.filter((a) => a.status === 429))
      expect(refused.headers['retry-after']).toBe('1');
    expect(performance.now() - begun).toBeLessThan(5_000);
    const again = await Promise.all(answers.filter((a) => a.status === 429).map(() => send()));
    expect(again.every((a) => a.status === 400 || a.status === 429)).toBe(true);
    for (let round = 0; round < 5 && again.some((a) => a.status === 429); round += 1) {
      const retried = await Promise.all(again.filter((a) => a.status === 429).map(() => send()));
      again.splice(0, again.length, ...again.filter((a) => a.status !== 429), ...retried);
    }
    expect(again.map((a) => a.body?.DATA?.reason)).toEqual(again.map(() => 'name_too_long'));
  });

  it('the same limit guards /graphql', async ({ world }) => {
    const token = await tokenFor(newTenant());
    const res = await rawRequest({
      url: world.url,
      method: 'POST',
      path: '/graphql',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'transfer-encoding': 'chunked',
      },
      chunks: Array.from({ length: 9 }, () => Buffer.alloc(MB, 0x20)),
    });
    expect(res.status).toBe(413);
    expect(res.body.DATA.reason).toBe('request_too_large');
  });

  it('a body of exactly 8 MB is read and judged on its content', async ({ world }) => {
    const token = await tokenFor(newTenant());
    const prefix = '{"name":"';
    const suffix = '"}';
    const body = Buffer.from(prefix + 'n'.repeat(8 * MB - prefix.length - suffix.length) + suffix);
    expect(body.length).toBe(8 * MB);
    const res = await rawRequest({
      url: world.url,
      method: 'POST',
      path: '/entities/types',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'content-length': body.length,
      },
      chunks: [body],
    });
    expect(res.status).toBe(400);
    expect(res.body.DATA.reason).toBe('name_too_long');
  });
});

describe('Malformed input', () => {
  it('malformed JSON is a 400 invalid_json, never a 5xx', async ({ world }) => {
    const api = restClient(world.app, await tokenFor(newTenant()));
    for (const body of ['{', '{"name": }', 'nul', '{"name":"a",}', '\u0000']) {
      const res = await api.post('/entities/types', body);
      expect(res.status, body).toBe(400);
      expect(res.body.DATA.reason).toBe('invalid_json');
    }
  });

  it('a body that is not UTF-8 is a 400 invalid_json, nothing written (REST and GraphQL, small and long strings)', async ({
    world,
  }) => {
    const tenant = newTenant();
    const token = await tokenFor(tenant);
    const api = restClient(world.app, token);
    expect((await api.get('/entities/types?page_size=1')).status).toBe(200);
    const before = await fingerprint(world.driver, tenant);
    const latin1 = (text: string) => Buffer.from(text, 'latin1');
    const bodies: [string, Buffer][] = [
      ['/entities/types', latin1('{"name":"café"}')],
      // a string long enough to be decoded a slice at a time (json/long-strings.ts)
      ['/entities/types', latin1(`{"name":"x","pad":"${'é'.repeat(300_000)}"}`)],
      ['/graphql', latin1('{"query":"mutation { createEntityType(name: \\"café\\") { created } }"}')],
    ];
    for (const [url, payload] of bodies) {
      const res = await world.app.inject({
        method: 'POST',
        url,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        payload,
      });
      expect([res.statusCode, res.json().DATA?.reason], url).toEqual([400, 'invalid_json']);
    }
    expect(await fingerprint(world.driver, tenant)).toEqual(before);
    // the same text in UTF-8 is read as it is
    const utf8 = await api.post('/entities/types', Buffer.from('{"name":"café"}', 'utf8').toString('utf8'));
    expect([utf8.status, utf8.body.DATA.entity_type.name]).toEqual([201, 'café']);
  });

  it('prototype keys in a body are dropped, not honoured', async ({ world }) => {
    const api = restClient(world.app, await tokenFor(newTenant()));
    const res = await api.post(
      '/entities/types',
      '{"name":"Proto","__proto__":{"name":"Injected"},"constructor":{"prototype":{"x":1}}}',
    );
    expect(res.status).toBe(201);
    expect(res.body.DATA.entity_type.name).toBe('Proto');
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('a JSON body sent with another content type is still read as JSON', async ({ world }) => {
    const token = await tokenFor(newTenant());
    const res = await world.app.inject({
      method: 'POST',
      url: '/entities/types',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' },
      payload: '{"name":"Plain"}',
    });
    expect(res.statusCode).toBe(201);
  });
});
