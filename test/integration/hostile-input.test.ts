// Hostile input, property-based (fast-check): random and adversarial bodies, paths, query strings, cursors,
// Unicode names and tokens at every REST path and at /graphql. Whatever comes in: never a 5xx, always the
// envelope with a reason when refused, and a refused request leaves the tenant's stored state exactly as it was.
import fc from 'fast-check';
import { describe, expect } from 'vitest';
import { it } from '../fixtures.js';
import {
  createType,
  fingerprint,
  newTenant,
  restClient,
  TENANT_LABELS,
  type TestWorld,
  tokenFor,
} from '../helpers.js';

const RUNS = 60;

interface Target {
  tenant: string;
  token: string;
  type: string;
  refType: string;
  entity: string;
}

async function target(world: TestWorld): Promise<Target> {
  const tenant = newTenant('hostile');
  const token = await tokenFor(tenant);
  const api = restClient(world.app, token);
  const type = await createType(api, 'Victim');
  const refType = await createType(api, 'Target');
  await api.post(`/entities/types/${type}/attributes`, {
    name: 'color',
    value_type: 'string',
    cardinality: 'single',
    allowed_values: ['red'],
  });
  await api.post(`/entities/types/${type}/attributes`, {
    name: 'link',
    value_type: 'entity_ref',
    cardinality: 'multi',
    allowed_ref_type: refType,
  });
  const entity = (await api.post('/entities', { type_guid: refType, name: 'anchor' })).body.DATA.entity.guid;
  return { tenant, token, type, refType, entity };
}

interface Sent {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  url: string;
  payload?: string;
  headers?: Record<string, string>;
}

/** Sends one request; checks the envelope and the never-5xx rule; returns status and body. */
async function send(world: TestWorld, t: Target, req: Sent) {
  const res = await world.app.inject({
    method: req.method,
    url: req.url,
    headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json', ...req.headers },
    ...(req.payload !== undefined ? { payload: req.payload } : {}),
  });
  const where = `${req.method} ${req.url} ${req.payload?.slice(0, 200) ?? ''}`;
  expect(res.statusCode, where).toBeLessThan(500);
  const body = res.json();
  expect(['SUCCESS', 'FAIL'], where).toContain(body.STATUS);
  expect(typeof body.MESSAGE, where).toBe('string');
  if (res.statusCode >= 400) {
    expect(body.STATUS, where).toBe('FAIL');
    expect(body.DATA.reason, where).toMatch(/^[a-z_]+$/);
  }
  return { status: res.statusCode, body };
}

/** Sends a request; if it is refused, the tenant's stored state must be unchanged. */
async function sendAndCheckState(world: TestWorld, t: Target, req: Sent) {
  // A successful withdrawal earlier in the run starts a background purge that updates its definition: let it
  // settle so that only this request can change what is stored.
  await world.app.services.purger.idle();
  const before = await fingerprint(world.driver, t.tenant);
  const res = await send(world, t, req);
  await world.app.services.purger.idle();
  if (res.status >= 400)
    expect(await fingerprint(world.driver, t.tenant), `${req.method} ${req.url}`).toEqual(before);
  return res;
}

// Strings that break naive code: control characters, lone surrogates, RTL and zero-width marks, combining marks,
// emoji, huge runs, path and format metacharacters.
const nasty = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.stringMatching(
    /^[\u0300-\u036f\u200b-\u200f\u202a-\u202e\u2066-\u2069\u05d0-\u05ea\u0627-\u064a a-z😀]{0,30}$/u,
  ),
  fc.constantFrom(
    'x'.repeat(10_000),
    '\u0000',
    '\ud800',
    '..',
    '../../etc/passwd',
    '%',
    '%00',
    '%E0%A4%A',
    '{}',
    '[]',
    'null',
    '__proto__',
    'constructor',
    ' ',
    '\u200b',
    'e\u0301',
    '\u202etxt.exe',
    "'; MATCH (n) DETACH DELETE n; //",
    '$tenant',
  ),
);

const anyJson = fc.jsonValue({ maxDepth: 3 });

function declaration(t: Target) {
  return fc.record(
    {
      name: fc.oneof(nasty, anyJson),
      value_type: fc.oneof(
        fc.constantFrom('string', 'number', 'boolean', 'date', 'json', 'entity_ref', 'text'),
        anyJson,
      ),
      cardinality: fc.oneof(fc.constantFrom('single', 'multi', 'many'), anyJson),
      allowed_values: fc.oneof(fc.array(anyJson, { maxLength: 5 }), anyJson),
      allowed_ref_type: fc.oneof(fc.constantFrom(t.refType, t.type), nasty, anyJson),
      required: anyJson,
      default_value: fc.oneof(fc.constant(t.entity), anyJson, nasty),
      filterable: anyJson,
      extra: anyJson,
    },
    { requiredKeys: [] },
  );
}

/** Percent-encodes; a string with lone surrogates becomes the (invalid UTF-8) bytes of a surrogate. */
const encode = (s: string) =>
  s.isWellFormed() ? encodeURIComponent(s) : `${encodeURIComponent(s.toWellFormed())}%ED%A0%80`;

const bodyText = (value: unknown) => (value === undefined ? '' : JSON.stringify(value));

describe('the state fingerprint', () => {
  it('seeks every label that carries a tenant, and sees what a scan of every node sees', async ({
    world,
  }) => {
    const t = await target(world);
    const api = restClient(world.app, t.token);
    const doomed = await world.app.inject({
      method: 'POST',
      url: '/entities/types',
      headers: {
        authorization: `Bearer ${t.token}`,
        'content-type': 'application/json',
        'idempotency-key': 'k-1',
      },
      payload: { name: 'Deleted once' },
    });
    // renamed, then deleted: the type leaves a tombstone
    const doomedGuid = doomed.json().DATA.entity_type.guid;
    expect((await api.patch(`/entities/types/${doomedGuid}`, { name: 'Renamed once' })).status).toBe(200);
    expect((await api.delete(`/entities/types/${doomedGuid}`)).status).toBe(200);
    // renamed, then the name it was created under released: a release node
    const released = (await api.post('/entities/types', { name: 'Released once' })).body.DATA.entity_type
      .guid;
    expect((await api.patch(`/entities/types/${released}`, { name: 'Released twice' })).status).toBe(200);
    const release = await api.post(`/entities/types/${released}/former-names/release`, {
      name: 'Released once',
    });
    expect(release.body.DATA.released).toBe(true);
    // The labels in the database once this test has written its own (it may run first on a fresh one).
    const known = await world.driver.executeQuery(
      'CALL db.labels() YIELD label RETURN collect(label) AS labels',
    );
    const labels: string[] = [];
    for (const label of (known.records[0]?.get('labels') ?? []) as string[]) {
      const tenanted = await world.driver.executeQuery(
        `RETURN exists { MATCH (n:\`${label}\`) WHERE n.tenant IS NOT NULL } AS tenanted`,
      );
      if (tenanted.records[0]?.get('tenanted') === true) labels.push(label);
    }
    // every label that holds a tenant's nodes is one the fingerprint seeks, and this test has written each of them
    expect(labels.filter((label) => !(label in TENANT_LABELS))).toEqual([]);
    expect(new Set(labels)).toEqual(new Set(Object.keys(TENANT_LABELS)));

    const scanned = await world.driver.executeQuery(
      `MATCH (n) WHERE n.tenant = $tenant
       OPTIONAL MATCH (n)-[r]->(m)
       WITH n, count(r) AS out
       RETURN collect(labels(n)[0] + '|' + coalesce(n.guid, '') + '|' + out) AS nodes`,
      { tenant: t.tenant },
    );
    const all = ((scanned.records[0]?.get('nodes') ?? []) as string[]).map((n) =>
      n.split('|').slice(0, 2).join('|'),
    );
    const seen = (await fingerprint(world.driver, t.tenant)).map((n) => n.split('|').slice(0, 2).join('|'));
    expect(new Set(all.map((n) => n.split('|')[0]))).toEqual(new Set(Object.keys(TENANT_LABELS)));
    expect(seen.sort()).toEqual(all.sort());
  });
});

describe('hostile bodies', () => {
  it('POST /entities/types: any body, never a 5xx, refusals leave state unchanged', async ({ world }) => {
    const t = await target(world);
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(anyJson, fc.record({ name: fc.oneof(nasty, anyJson) }), fc.string()),
        async (body) => {
          const payload = typeof body === 'string' && Math.random() < 0.5 ? body : bodyText(body);
          await sendAndCheckState(world, t, { method: 'POST', url: '/entities/types', payload });
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('POST /entities/types/{guid}/attributes: any declaration, never a 5xx, refusals leave state unchanged', async ({
    world,
  }) => {
    const t = await target(world);
    await fc.assert(
      fc.asyncProperty(declaration(t), fc.boolean(), async (decl, dryRun) => {
        await sendAndCheckState(world, t, {
          method: 'POST',
          url: `/entities/types/${t.type}/attributes${dryRun ? '?dry_run=true' : ''}`,
          payload: bodyText(decl),
        });
      }),
      { numRuns: RUNS * 2 },
    );
  });

  it('POST /entities, /entities/lookup, /platform/dashboards, PATCH types: any body, never a 5xx', async ({
    world,
  }) => {
    const t = await target(world);
    const entityBody = fc.record(
      {
        type_guid: fc.oneof(fc.constantFrom(t.type, t.refType), nasty, anyJson),
        name: fc.oneof(nasty, anyJson),
        values: fc.oneof(
          fc.record(
            { color: anyJson, link: fc.oneof(fc.constant([t.entity]), anyJson) },
            { requiredKeys: [] },
          ),
          fc.dictionary(nasty, anyJson, { maxKeys: 3 }),
          anyJson,
        ),
      },
      { requiredKeys: [] },
    );
    const requests = fc.oneof(
      entityBody.map((b) => ({ method: 'POST' as const, url: '/entities', payload: bodyText(b) })),
      fc
        .oneof(fc.record({ identifiers: fc.oneof(fc.array(nasty, { maxLength: 20 }), anyJson) }), anyJson)
        .map((b) => ({ method: 'POST' as const, url: '/entities/lookup', payload: bodyText(b) })),
      fc.oneof(fc.record({ name: fc.oneof(nasty, anyJson) }), anyJson).map((b) => ({
        method: 'POST' as const,
        url: '/platform/dashboards',
        payload: bodyText(b),
      })),
      fc.oneof(fc.record({ name: fc.oneof(nasty, anyJson) }), anyJson).map((b) => ({
        method: 'PATCH' as const,
        url: `/entities/types/${t.type}`,
        payload: bodyText(b),
      })),
      fc.oneof(fc.record({ tenant: fc.oneof(nasty, anyJson) }), anyJson).map((b) => ({
        method: 'POST' as const,
        url: '/admin/jobs/purge',
        payload: bodyText(b),
      })),
    );
    await fc.assert(
      fc.asyncProperty(requests, async (req) => {
        await sendAndCheckState(world, t, req);
      }),
      { numRuns: RUNS * 2 },
    );
  });
});

describe('hostile paths, query strings and cursors', () => {
  it('any path segment or query string at every route: never a 5xx, refusals leave state unchanged', async ({
    world,
  }) => {
    const t = await target(world);
    const segment = fc.oneof(
      nasty.map(encode),
      fc.constantFrom('%', '%zz', '%E0%A4%A', '%00', '..', '.', '%2F', t.type),
    );
    const query = fc.oneof(
      fc.webQueryParameters(),
      fc
        .record(
          { cursor: nasty, page_size: fc.oneof(nasty, fc.integer().map(String)), dry_run: nasty },
          { requiredKeys: [] },
        )
        .map((q) =>
          Object.entries(q)
            .map(([k, v]) => `${k}=${encode(String(v))}`)
            .join('&'),
        ),
    );
    const routes = (a: string, b: string) => [
      { method: 'GET' as const, url: `/entities/types/${a}` },
      { method: 'GET' as const, url: `/entities/types/${a}/attributes` },
      { method: 'DELETE' as const, url: `/entities/types/${a}` },
      { method: 'DELETE' as const, url: `/entities/attributes/${a}/${b}` },
      { method: 'DELETE' as const, url: `/entities/attributes/${t.type}/${b}` },
      { method: 'GET' as const, url: `/entities/${a}` },
      { method: 'GET' as const, url: `/${a}/${b}` },
    ];
    await fc.assert(
      fc.asyncProperty(segment, segment, query, fc.nat(6), async (a, b, q, pick) => {
        const route = routes(a, b)[pick]!;
        await sendAndCheckState(world, t, { ...route, url: `${route.url}?${q}` });
        await sendAndCheckState(world, t, { method: 'GET', url: `/entities/types?${q}` });
      }),
      { numRuns: RUNS },
    );
  });

  it('a cursor this API did not issue is always invalid_cursor', async ({ world }) => {
    const t = await target(world);
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(nasty, fc.base64String(), fc.string()).filter((c) => c.length > 0),
        async (cursor) => {
          const res = await send(world, t, {
            method: 'GET',
            url: `/entities/types?cursor=${encode(cursor)}`,
          });
          // (a string that is no Unicode text cannot be written in a URL: its escape is refused first)
          const reason = cursor.isWellFormed() ? 'invalid_cursor' : 'invalid_url';
          expect([res.status, res.body.DATA.reason]).toEqual([400, reason]);
        },
      ),
      { numRuns: RUNS },
    );
  });
});

describe('hostile names', () => {
  it('any Unicode name is either a type (created, then resolved again the same) or refused with a reason', async ({
    world,
  }) => {
    const t = await target(world);
    await fc.assert(
      fc.asyncProperty(nasty, async (name) => {
        const first = await sendAndCheckState(world, t, {
          method: 'POST',
          url: '/entities/types',
          payload: JSON.stringify({ name }),
        });
        if (first.status >= 400) {
          expect(['empty_value', 'name_too_long', 'invalid_field', 'invalid_unicode']).toContain(
            first.body.DATA.reason,
          );
          return;
        }
        const again = await send(world, t, {
          method: 'POST',
          url: '/entities/types',
          payload: JSON.stringify({ name: ` ${name.toUpperCase()} ` }),
        });
        if (again.status < 400 && name.toUpperCase().toLowerCase() === name.toLowerCase()) {
          expect(again.body.DATA.entity_type.guid).toBe(first.body.DATA.entity_type.guid);
        }
      }),
      { numRuns: RUNS },
    );
  });
});

describe('hostile tokens', () => {
  it('any Authorization header that is not a valid token is 401 unauthenticated, and changes nothing', async ({
    world,
  }) => {
    const t = await target(world);
    const header = fc.oneof(
      nasty,
      fc.string().map((s) => `Bearer ${s}`),
      fc.base64String().map((s) => `Bearer eyJhbGciOiJIUzI1NiJ9.${s}.${s}`),
      fc.constant(`Bearer ${t.token.slice(0, -2)}xx`),
      fc.constant(`Bearer ${t.token}.extra`),
      fc.constant(`Basic ${t.token}`),
    );
    await fc.assert(
      fc.asyncProperty(
        header,
        fc.constantFrom('/entities/types', '/graphql', '/admin/logs'),
        async (authorization, url) => {
          const before = await fingerprint(world.driver, t.tenant);
          const res = await world.app.inject({
            method: url === '/graphql' ? 'POST' : 'GET',
            url,
            headers: {
              authorization: authorization.replace(/[\r\n]/g, ''),
              'content-type': 'application/json',
            },
            payload: url === '/graphql' ? '{"query":"{ __typename }"}' : undefined,
          });
          expect(res.statusCode).toBe(401);
          expect(res.json()).toMatchObject({ STATUS: 'FAIL', DATA: { reason: 'unauthenticated' } });
          expect(await fingerprint(world.driver, t.tenant)).toEqual(before);
        },
      ),
      { numRuns: RUNS },
    );
  });
});

describe('hostile GraphQL', () => {
  it('any query text and variables: a JSON answer, never a 5xx, refusals leave state unchanged', async ({
    world,
  }) => {
    const t = await target(world);
    const operation = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.constantFrom(
        '{ entityTypes(first: 600) { edges { node { name } } } }',
        'mutation($n: String!) { createEntityType(name: $n) { created } }',
        'mutation($g: ID!, $i: DeclareAttributeInput!) { declareAttribute(typeGuid: $g, input: $i) { attribute { name } } }',
        'mutation($g: ID!, $n: String!) { withdrawAttribute(typeGuid: $g, name: $n, dryRun: true) { dryRun } }',
        'query($g: ID!) { entityType(guid: $g) { attributes { name allowedRefType { name } } } }',
        `{ ${'a: __typename '.repeat(50)} }`,
        '{ entityTypes { edges { node { parentType { parentType { parentType { parentType { parentType { parentType { parentType { parentType { parentType { parentType { name } } } } } } } } } } } } } }',
      ),
    );
    const variables = fc.oneof(
      anyJson,
      fc.record(
        {
          n: fc.oneof(nasty, anyJson),
          g: fc.oneof(fc.constant(t.type), nasty, anyJson),
          i: fc.oneof(
            declaration(t).map((d) => ({ ...d, valueType: d.value_type })),
            anyJson,
          ),
        },
        { requiredKeys: [] },
      ),
    );
    await fc.assert(
      fc.asyncProperty(operation, variables, async (query, vars) => {
        const before = await fingerprint(world.driver, t.tenant);
        const res = await world.app.inject({
          method: 'POST',
          url: '/graphql',
          headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
          payload: JSON.stringify({ query, variables: vars }),
        });
        expect(res.statusCode).toBeLessThan(500);
        const body = res.json();
        if (body.errors) {
          for (const error of body.errors) expect(error.extensions?.reason).not.toBe('internal_error');
          if (!body.data || Object.values(body.data).every((v) => v === null)) {
            expect(await fingerprint(world.driver, t.tenant)).toEqual(before);
          }
        }
      }),
      { numRuns: RUNS * 2 },
    );
  });
});
