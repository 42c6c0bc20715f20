// Idempotency-Key (issue #17, src/http/idempotency.ts): a write sent again with its key gets the first answer and
// is not applied twice; another request with the key is refused; requests with one key at once run once; the
// answer is committed with the write; keys are per tenant and expire.
import type { FastifyInstance } from 'fastify';
import { describe, expect } from 'vitest';
import { removeExpiredIdempotencyRecords } from '../../src/db/idempotency.js';
import { it } from '../fixtures.js';
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
