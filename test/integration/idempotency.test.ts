// Idempotency-Key (issue #17, src/http/idempotency-key.ts): a write sent again with its key gets the first answer and
// is not applied twice; another request with the key is refused; requests with one key at once run once; the
// answer is committed with the write; keys are per tenant and expire.
import type { FastifyInstance } from 'fastify';
import { test as base, describe, expect } from 'vitest';
import { removeExpiredIdempotencyRecords } from '../../src/db/idempotency-records.js';
import { instance, it } from '../fixtures.js';
import { createType, newTenant, restClient, type TestWorld, tokenFor } from '../helpers.js';

async function send(
  app: FastifyInstance,
  token: string,
  method: 'POST' | 'PATCH' | 'DELETE',
  url: string,
  body: unknown,
  key?: string | string[],
) {
  const res = await app.inject({
    method,
    url,
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      ...(key !== undefined ? { 'idempotency-key': key } : {}),
    },
    payload: JSON.stringify(body),
  });
  return {
    status: res.statusCode,
    body: res.body,
    json: res.json() as { DATA: Record<string, any> },
    replayed: res.headers['idempotent-replayed'],
    bookmark: res.headers['neo4j-bookmark'],
  };
}

async function count(world: TestWorld, cypher: string, params: Record<string, unknown>) {
  const session = world.driver.session();
  try {
    const result = await session.run(cypher, params);
    return Number(result.records[0]?.get(0));
  } finally {
    await session.close();
  }
}

async function setup(world: TestWorld) {
  const tenant = newTenant('idem');
  const token = await tokenFor(tenant);
  const api = restClient(world.app, token);
  const typeGuid = await createType(api, 'Orders');
  return { tenant, token, api, typeGuid };
}

const entitiesOf = (world: TestWorld, tenant: string, typeGuid: string) =>
  count(world, 'MATCH (e:Entity {tenant: $tenant, type_guid: $typeGuid}) RETURN count(e)', {
    tenant,
    typeGuid,
  });

describe('a write sent again with its Idempotency-Key', () => {
  it('declaration: the same 201 answer, replayed, one definition (without a key: attribute_def_already_exists)', async ({
    world,
  }) => {
    const { token, typeGuid, tenant } = await setup(world);
    const url = `/entities/types/${typeGuid}/attributes`;
    const body = { name: 'rows', value_type: 'number', cardinality: 'single' };
    const first = await send(world.app, token, 'POST', url, body, 'declare-rows-1');
    expect(first.status).toBe(201);
    expect(first.replayed).toBeUndefined();
    expect(first.bookmark).toBeTruthy();
    const again = await send(world.app, token, 'POST', url, body, 'declare-rows-1');
    expect([again.status, again.body, again.replayed]).toEqual([201, first.body, 'true']);
    const unkeyed = await send(world.app, token, 'POST', url, body);
    expect([unkeyed.status, unkeyed.json.DATA.reason]).toEqual([409, 'attribute_def_already_exists']);
    expect(
      await count(
        world,
        'MATCH (a:AttributeDefinition {tenant: $tenant, owner_guid: $typeGuid}) RETURN count(a)',
        {
          tenant,
          typeGuid,
        },
      ),
    ).toBe(1);
  });

  it('entity creation: the same entity, not a second one; the quoted and bare forms are one key', async ({
    world,
  }) => {
    const { token, typeGuid, tenant } = await setup(world);
    const body = { type_guid: typeGuid, name: 'order 1' };
    const first = await send(world.app, token, 'POST', '/entities', body, '"create-order-1"');
    expect(first.status).toBe(201);
    const again = await send(world.app, token, 'POST', '/entities', body, 'create-order-1');
    expect([again.status, again.body, again.replayed]).toEqual([201, first.body, 'true']);
    expect(await entitiesOf(world, tenant, typeGuid)).toBe(1);
    // a new key is a new request
    expect((await send(world.app, token, 'POST', '/entities', body, 'create-order-2')).status).toBe(201);
    expect(await entitiesOf(world, tenant, typeGuid)).toBe(2);
  });

  it('a type create replayed after the type was deleted: the first 201 again (the key stands for that answer), not a second create', async ({
    world,
  }) => {
    const { token, api } = await setup(world);
    const body = { name: 'Short Lived' };
    const first = await send(world.app, token, 'POST', '/entities/types', body, 'create-short-lived');
    expect(first.status).toBe(201);
    const guid = first.json.DATA.entity_type.guid as string;
    expect((await api.delete(`/entities/types/${guid}`)).status).toBe(200);
    const again = await send(world.app, token, 'POST', '/entities/types', body, 'create-short-lived');
    expect([again.status, again.body, again.replayed]).toEqual([201, first.body, 'true']);
    // nothing was created by the replay: the guid it names stays gone until a new request creates the type again
    expect((await api.get(`/entities/types/${guid}`)).status).toBe(404);
    const anew = await send(world.app, token, 'POST', '/entities/types', body, 'create-short-lived-2');
    expect([anew.status, anew.replayed]).toEqual([201, undefined]);
    expect((await api.get(`/entities/types/${guid}`)).status).toBe(200);
  });

  it('another request with the key: 422 idempotency_key_reused, nothing written', async ({ world }) => {
    const { token, typeGuid, tenant } = await setup(world);
    const key = 'reused';
    expect(
      (await send(world.app, token, 'POST', '/entities', { type_guid: typeGuid, name: 'a' }, key)).status,
    ).toBe(201);
    const other = await send(world.app, token, 'POST', '/entities', { type_guid: typeGuid, name: 'b' }, key);
    expect([other.status, other.json.DATA.reason]).toEqual([422, 'idempotency_key_reused']);
    const elsewhere = await send(
      world.app,
      token,
      'PATCH',
      `/entities/types/${typeGuid}`,
      { name: 'Sales' },
      key,
    );
    expect([elsewhere.status, elsewhere.json.DATA.reason]).toEqual([422, 'idempotency_key_reused']);
    expect(await entitiesOf(world, tenant, typeGuid)).toBe(1);
  });

  it('sent 12 times at once: runs once, every answer the same', async ({ world }) => {
    const { token, typeGuid, tenant } = await setup(world);
    const body = { type_guid: typeGuid, name: 'burst' };
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => send(world.app, token, 'POST', '/entities', body, 'burst-key')),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(12).fill(201));
    expect(new Set(answers.map((a) => a.body)).size).toBe(1);
    expect(answers.filter((a) => a.replayed === 'true')).toHaveLength(11);
    expect(await entitiesOf(world, tenant, typeGuid)).toBe(1);
  });

  it('per tenant: another tenant with the same key writes its own', async ({ world }) => {
    const one = await setup(world);
    const two = await setup(world);
    const a = await send(
      world.app,
      one.token,
      'POST',
      '/entities',
      { type_guid: one.typeGuid, name: 'x' },
      'k',
    );
    const b = await send(
      world.app,
      two.token,
      'POST',
      '/entities',
      { type_guid: two.typeGuid, name: 'x' },
      'k',
    );
    expect([a.status, b.status, b.replayed]).toEqual([201, 201, undefined]);
    expect(b.json.DATA.entity.guid).not.toBe(a.json.DATA.entity.guid);
  });

  it('a refusal before any write is not kept: the corrected request with the same key runs', async ({
    world,
  }) => {
    const { token, typeGuid } = await setup(world);
    const url = `/entities/types/${typeGuid}/attributes`;
    const wrong = await send(
      world.app,
      token,
      'POST',
      url,
      { name: 'n', value_type: 'nope', cardinality: 'single' },
      'fix',
    );
    expect([wrong.status, wrong.json.DATA.reason]).toEqual([400, 'unknown_value_type']);
    const fixed = await send(
      world.app,
      token,
      'POST',
      url,
      { name: 'n', value_type: 'string', cardinality: 'single' },
      'fix',
    );
    expect([fixed.status, fixed.replayed]).toEqual([201, undefined]);
  });

  it('an expired record is no record: the request runs again', async ({ world }) => {
    const { token, typeGuid, tenant } = await setup(world);
    const body = { type_guid: typeGuid, name: 'late' };
    expect((await send(world.app, token, 'POST', '/entities', body, 'old')).status).toBe(201);
    await count(
      world,
      'MATCH (k:IdempotencyKey {tenant: $tenant, key: $key}) SET k.expires_at = datetime() - duration({hours: 1}) RETURN count(k)',
      { tenant, key: 'old' },
    );
    const again = await send(world.app, token, 'POST', '/entities', body, 'old');
    expect([again.status, again.replayed]).toEqual([201, undefined]);
    expect(await entitiesOf(world, tenant, typeGuid)).toBe(2);
  });

  it('the daily job removes expired records, in batches, and keeps live ones', async ({ world }) => {
    const { token, typeGuid, tenant } = await setup(world);
    for (const key of ['e1', 'e2', 'e3', 'live'])
      await send(world.app, token, 'POST', '/entities', { type_guid: typeGuid, name: key }, key);
    await count(
      world,
      `MATCH (k:IdempotencyKey {tenant: $tenant}) WHERE k.key STARTS WITH 'e'
       SET k.expires_at = datetime() - duration({hours: 1}) RETURN count(k)`,
      { tenant },
    );
    const db = world.app.services.db;
    let removed = 0;
    for (let batch = 2; batch === 2; removed += batch) {
      batch = await db.write((run) => removeExpiredIdempotencyRecords(run, 2));
    }
    expect(removed).toBeGreaterThanOrEqual(3);
    expect(
      await count(world, 'MATCH (k:IdempotencyKey {tenant: $tenant}) RETURN collect(k.key) = ["live"]', {
        tenant,
      }),
    ).toBe(1);
  });

  it('malformed keys are refused with invalid_idempotency_key, before anything runs', async ({ world }) => {
    const { token, typeGuid, tenant } = await setup(world);
    for (const key of ['', '""', 'x'.repeat(256), 'caf\u00e9', 'a b', ['one', 'two']]) {
      const res = await send(world.app, token, 'POST', '/entities', { type_guid: typeGuid, name: 'm' }, key);
      expect([JSON.stringify(key), res.status, res.json.DATA.reason]).toEqual([
        JSON.stringify(key),
        400,
        'invalid_idempotency_key',
      ]);
    }
    expect(await entitiesOf(world, tenant, typeGuid)).toBe(0);
    expect(
      (await send(world.app, token, 'POST', '/entities', { type_guid: typeGuid, name: 'm' }, 'x'.repeat(255)))
        .status,
    ).toBe(201);
  });
});

describe('GraphQL mutations with an Idempotency-Key', () => {
  const gql = (world: TestWorld, token: string, query: string, key?: string) =>
    world.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        ...(key ? { 'idempotency-key': key } : {}),
      },
      payload: { query },
    });

  it('createEntityType sent again: the first answer (created: true), not created: false', async ({
    world,
  }) => {
    const token = await tokenFor(newTenant('idem'));
    const m = 'mutation { createEntityType(name: "Keyed") { created entityType { guid } } }';
    const first = await gql(world, token, m, 'gql-1');
    expect(first.json().data.createEntityType.created).toBe(true);
    const again = await gql(world, token, m, 'gql-1');
    expect([again.body, again.headers['idempotent-replayed']]).toEqual([first.body, 'true']);
    expect((await gql(world, token, m)).json().data.createEntityType.created).toBe(false);
  });

  it('one write per keyed request: two mutation fields are refused with idempotency_key_not_supported, nothing written', async ({
    world,
  }) => {
    const token = await tokenFor(newTenant('idem'));
    const m =
      'mutation { a: createEntityType(name: "One") { created } b: createEntityType(name: "Two") { created } }';
    const res = await gql(world, token, m, 'two-writes');
    expect(res.json().errors[0].extensions.reason).toBe('idempotency_key_not_supported');
    const one = await gql(world, token, 'mutation { createEntityType(name: "One") { created } }');
    expect(one.json().data.createEntityType.created).toBe(true);
  });
});

// A world whose tenants may run any number of requests at once, so that 200 requests with one key all reach it together.
const wide = base.extend<{ world: TestWorld; wideWorld: TestWorld }>({
  world: instance(),
  wideWorld: instance({ TENANT_CONCURRENCY: '1000', REQUEST_CONCURRENCY: '1000' }),
});

describe('Idempotency-Keys that cannot be turned into a weapon', () => {
  const ledgerOf = async (world: TestWorld, tenant: string) => {
    const session = world.driver.session();
    try {
      const res = await session.run(
        `CALL { MATCH (l:IdempotencyLedger {tenant: $tenant}) RETURN coalesce(sum(l.keys), 0) AS keys, coalesce(sum(l.bytes), 0) AS bytes }
         CALL { MATCH (k:IdempotencyKey {tenant: $tenant}) RETURN count(k) AS records, coalesce(sum(k.bytes), 0) AS recordBytes }
         RETURN keys, bytes, records, recordBytes`,
        { tenant },
      );
      const r = res.records[0];
      return {
        keys: Number(r?.get('keys')),
        bytes: Number(r?.get('bytes')),
        records: Number(r?.get('records')),
        recordBytes: Number(r?.get('recordBytes')),
      };
    } finally {
      await session.close();
    }
  };

  it('a key belongs to its subject: another caller of the tenant sending the same key and body writes its own', async ({
    world,
  }) => {
    const { tenant, typeGuid } = await setup(world);
    const ann = await tokenFor(tenant, { sub: 'ann' });
    const bob = await tokenFor(tenant, { sub: 'bob' });
    const body = { type_guid: typeGuid, name: 'same' };
    const a = await send(world.app, ann, 'POST', '/entities', body, 'shared-key');
    const b = await send(world.app, bob, 'POST', '/entities', body, 'shared-key');
    expect([a.status, b.status, b.replayed]).toEqual([201, 201, undefined]);
    expect(b.json.DATA.entity.guid).not.toBe(a.json.DATA.entity.guid);
    // each replays only its own answer
    const a2 = await send(world.app, ann, 'POST', '/entities', body, 'shared-key');
    const b2 = await send(world.app, bob, 'POST', '/entities', body, 'shared-key');
    expect([a2.body, a2.replayed, b2.body, b2.replayed]).toEqual([a.body, 'true', b.body, 'true']);
    expect(await entitiesOf(world, tenant, typeGuid)).toBe(2);
  });

  it('a replay passes authorization like a fresh request: the same subject without the role gets its own 403, not the stored 201', async ({
    world,
  }) => {
    const tenant = newTenant('idem');
    const withRole = await tokenFor(tenant, { sub: 'svc', roles: ['platform'] });
    const without = await tokenFor(tenant, { sub: 'svc' });
    const body = { name: 'Revenue' };
    const first = await send(world.app, withRole, 'POST', '/platform/dashboards', body, 'dash-1');
    expect(first.status).toBe(201);
    const denied = await send(world.app, without, 'POST', '/platform/dashboards', body, 'dash-1');
    expect([denied.status, denied.json.DATA.reason, denied.replayed]).toEqual([
      403,
      'not_authorized',
      undefined,
    ]);
    const again = await send(world.app, withRole, 'POST', '/platform/dashboards', body, 'dash-1');
    expect([again.status, again.body, again.replayed]).toEqual([201, first.body, 'true']);
  });

  it('an answer over the stored-answer bound is refused (idempotency_answer_too_large) and its write rolled back; without a key it is written', async ({
    world,
  }) => {
    const { token, tenant, typeGuid, api } = await setup(world);
    // 600 distinct values of 1,024 characters, each a control character JSON spells in six bytes: about 3.7 MB
    const values = Array.from(
      { length: 600 },
      (_, i) => `${String(i).padStart(4, '0')}${'\u0001'.repeat(1020)}`,
    );
    const body = { name: 'codes', value_type: 'string', cardinality: 'single', allowed_values: values };
    const url = `/entities/types/${typeGuid}/attributes`;
    const keyed = await send(world.app, token, 'POST', url, body, 'big-answer');
    expect([keyed.status, keyed.json.DATA.reason]).toEqual([422, 'idempotency_answer_too_large']);
    expect(keyed.bookmark).toBeUndefined();
    const names = (await api.get(`/entities/types/${typeGuid}/attributes`)).body.DATA.attributes.map(
      (a: { name: string }) => a.name,
    );
    expect(names).not.toContain('codes');
    expect((await ledgerOf(world, tenant)).records).toBe(0);
    expect((await send(world.app, token, 'POST', url, body)).status).toBe(201);
  });

  it('GraphQL: a keyed mutation whose answer would pass the bound is refused and its write rolled back', async ({
    world,
  }) => {
    const { token, tenant, typeGuid, api } = await setup(world);
    // three declarations whose history records carry about 1 MB each
    for (const n of [1, 2, 3]) {
      const values = Array.from({ length: 1000 }, (_, i) => `${n}-${i}-${'v'.repeat(1000)}`);
      const res = await api.post(`/entities/types/${typeGuid}/attributes`, {
        name: `enum${n}`,
        value_type: 'string',
        cardinality: 'single',
        allowed_values: values,
      });
      expect(res.status).toBe(201);
    }
    // each history page carries one of those records (pages stop at 1 MiB): three aliases are 3 MB
    const rename = `mutation { renameEntityType(guid: "${typeGuid}", name: "Renamed") { name ${[1, 2, 3].map((n) => `h${n}: history(first: 500) { edges { node { after } } }`).join(' ')} } }`;
    const res = await world.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'idempotency-key': 'gql-big',
      },
      payload: { query: rename },
    });
    expect(res.json().errors?.[0]?.extensions?.reason).toBe('result_too_large');
    expect((await api.get(`/entities/types/${typeGuid}`)).body.DATA.entity_type.name).toBe('Orders');
    expect((await ledgerOf(world, tenant)).records).toBe(0);
  });

  wide(
    'sent 200 times at once: one write, every answer its answer, the waiting requests answered from memory (no statement of theirs)',
    async ({ wideWorld: world }) => {
      const { token, typeGuid, tenant } = await setup(world);
      const body = { type_guid: typeGuid, name: 'crowd' };
      const answers = await Promise.all(
        Array.from({ length: 200 }, () =>
          world.app.inject({
            method: 'POST',
            url: '/entities',
            headers: {
              authorization: `Bearer ${token}`,
              'content-type': 'application/json',
              'idempotency-key': 'crowd-key',
            },
            payload: JSON.stringify(body),
          }),
        ),
      );
      expect(answers.map((a) => a.statusCode)).toEqual(Array(200).fill(201));
      expect(new Set(answers.map((a) => a.body)).size).toBe(1);
      const replays = answers.filter((a) => a.headers['idempotent-replayed'] === 'true');
      expect(replays).toHaveLength(199);
      expect(replays.map((a) => Number(a.headers['x-db-queries']))).toEqual(Array(199).fill(0));
      expect(await entitiesOf(world, tenant, typeGuid)).toBe(1);
    },
  );

  it('requests with one key and different bodies at once: one write; the others get its answer or idempotency_key_reused', async ({
    world,
  }) => {
    const { token, typeGuid, tenant } = await setup(world);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        send(world.app, token, 'POST', '/entities', { type_guid: typeGuid, name: `n${i % 2}` }, 'mixed'),
      ),
    );
    const written = answers.filter((a) => a.status === 201 && a.replayed === undefined);
    expect(written).toHaveLength(1);
    for (const a of answers) {
      if (a.status === 201) expect(a.body).toBe(written[0]?.body);
      else expect([a.status, a.json.DATA.reason]).toEqual([422, 'idempotency_key_reused']);
    }
    expect(await entitiesOf(world, tenant, typeGuid)).toBe(1);
  });

  it("the tenant's ledger counts exactly its stored keys and bytes, under concurrent writes and after the sweep", async ({
    world,
  }) => {
    const { token, typeGuid, tenant } = await setup(world);
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        send(world.app, token, 'POST', '/entities', { type_guid: typeGuid, name: `e${i}` }, `key-${i}`),
      ),
    );
    const before = await ledgerOf(world, tenant);
    expect(before.records).toBe(40);
    expect([before.keys, before.bytes]).toEqual([before.records, before.recordBytes]);
    expect(before.bytes).toBeGreaterThan(40 * 100);
    await count(
      world,
      `MATCH (k:IdempotencyKey {tenant: $tenant}) WHERE k.key ENDS WITH '1' OR k.key ENDS WITH '2'
       SET k.expires_at = datetime() - duration({hours: 1}) RETURN count(k)`,
      { tenant },
    );
    await world.app.services.purger.sweepExpiredKeys();
    const after = await ledgerOf(world, tenant);
    expect(after.records).toBe(32);
    expect([after.keys, after.bytes]).toEqual([after.records, after.recordBytes]);
  });
});

describe('per-tenant caps on Idempotency-Keys', () => {
  // A world of its own (the file's `world` has the default caps).
  const capped = base.extend<{ cappedWorld: TestWorld }>({
    cappedWorld: instance({ IDEMPOTENCY_TENANT_MAX_KEYS: '3', IDEMPOTENCY_TENANT_MAX_MB: '1' }),
  });

  capped(
    'past the keys a tenant may hold, a new key is refused (429 idempotency_keys_exhausted, Retry-After); its stored keys still replay; another tenant is not affected; expired keys free room',
    async ({ cappedWorld: world }) => {
      const { token, typeGuid, tenant } = await setup(world);
      const make = (name: string, key?: string) =>
        send(world.app, token, 'POST', '/entities', { type_guid: typeGuid, name }, key);
      const first = await make('a', 'k1');
      await make('b', 'k2');
      await make('c', 'k3');
      const over = await world.app.inject({
        method: 'POST',
        url: '/entities',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'idempotency-key': 'k4',
        },
        payload: JSON.stringify({ type_guid: typeGuid, name: 'd' }),
      });
      expect([over.statusCode, over.json().DATA.reason]).toEqual([429, 'idempotency_keys_exhausted']);
      expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
      expect(await entitiesOf(world, tenant, typeGuid)).toBe(3);
      const replay = await make('a', 'k1');
      expect([replay.status, replay.body, replay.replayed]).toEqual([201, first.body, 'true']);
      expect((await make('d')).status).toBe(201);
      const other = await setup(world);
      expect(
        (
          await send(
            world.app,
            other.token,
            'POST',
            '/entities',
            { type_guid: other.typeGuid, name: 'x' },
            'k4',
          )
        ).status,
      ).toBe(201);
      await count(
        world,
        `MATCH (k:IdempotencyKey {tenant: $tenant, key: 'k1'}) SET k.expires_at = datetime() - duration({hours: 1}) RETURN count(k)`,
        { tenant },
      );
      await world.app.services.purger.sweepExpiredKeys();
      expect((await make('e', 'k5')).status).toBe(201);
    },
  );

  capped(
    'past the stored answer bytes a tenant may hold, a new key is refused',
    async ({ cappedWorld: world }) => {
      const { token, typeGuid } = await setup(world);
      const declare = (n: number) =>
        send(
          world.app,
          token,
          'POST',
          `/entities/types/${typeGuid}/attributes`,
          {
            name: `big${n}`,
            value_type: 'string',
            cardinality: 'single',
            allowed_values: Array.from({ length: 1000 }, (_, i) => `${i}-${'x'.repeat(700)}`),
          },
          `big-${n}`,
        );
      expect((await declare(1)).status).toBe(201);
      expect((await declare(2)).status).toBe(201);
      const over = await declare(3);
      expect([over.status, over.json.DATA.reason]).toEqual([429, 'idempotency_keys_exhausted']);
    },
  );
});
