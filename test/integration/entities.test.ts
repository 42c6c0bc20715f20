// Curation points (docs/api.md#entities): POST /entities, GET /entities/{guid}, POST /entities/lookup, and the engine
// cache.
import { randomUUID } from 'node:crypto';
import { describe, expect } from 'vitest';
import { createContext } from '../../src/context.js';
import { createAttribute, lockTypeDefinitions } from '../../src/db/attributes.js';
import { changeParams } from '../../src/db/changes.js';
import { getEntity } from '../../src/resolvers/entities.js';
import { it } from '../fixtures.js';
import {
  createType,
  newTenant,
  operatorToken,
  restClient,
  type TestWorld,
  tokenFor,
  typeGuidByName,
} from '../helpers.js';

async function setup(world: TestWorld) {
  const tenant = newTenant();
  const token = await tokenFor(tenant);
  const api = restClient(world.app, token);
  const type = await createType(api, 'Table Asset');
  const person = await createType(api, 'Person');
  const declare = (body: Record<string, unknown>) => api.post(`/entities/types/${type}/attributes`, body);
  const create = (values?: unknown, name = 'e') => api.post('/entities', { type_guid: type, name, values });
  return { tenant, token, api, type, person, declare, create };
}

describe('POST /entities', () => {
  it('creates an entity with values of every type, applying defaults; GET returns them by attribute name', async ({
    world,
  }) => {
    const { api, person, declare, create } = await setup(world);
    await declare({
      name: 'Tier',
      value_type: 'string',
      cardinality: 'single',
      allowed_values: ['gold', 'silver'],
      default_value: 'silver',
    });
    await declare({ name: 'rows', value_type: 'number', cardinality: 'single' });
    await declare({ name: 'pii', value_type: 'boolean', cardinality: 'single' });
    await declare({ name: 'refreshed', value_type: 'date', cardinality: 'multi' });
    await declare({ name: 'meta', value_type: 'json', cardinality: 'single' });
    await declare({
      name: 'owners',
      value_type: 'entity_ref',
      cardinality: 'multi',
      allowed_ref_type: person,
    });
    const ann = (await api.post('/entities', { type_guid: person, name: 'Ann' })).body.DATA.entity.guid;
    const bob = (await api.post('/entities', { type_guid: person, name: 'Bob' })).body.DATA.entity.guid;
    const res = await create(
      {
        rows: 42,
        PII: true,
        refreshed: ['2024-01-01', '2024-06-30T12:00:00Z'],
        meta: { a: [1, { b: null }] },
        owners: [bob, ann],
      },
      ' orders ',
    );
    expect(res.status).toBe(201);
    const entity = res.body.DATA.entity;
    expect(entity).toMatchObject({ name: 'orders', guid: expect.any(String) });
    expect(entity.values).toEqual({
      Tier: 'silver',
      rows: 42,
      pii: true,
      refreshed: ['2024-01-01', '2024-06-30T12:00:00Z'],
      meta: { a: [1, { b: null }] },
      owners: [bob, ann],
    });
    expect((await api.get(`/entities/${entity.guid}`)).body.DATA.entity).toEqual(entity);
  });

  it('a write with values and references costs two queries on a warm engine cache; its answer equals a fresh read', async ({
    world,
  }) => {
    const { api, person, declare, create } = await setup(world);
    await declare({
      name: 'steward',
      value_type: 'entity_ref',
      cardinality: 'multi',
      allowed_ref_type: person,
    });
    await declare({ name: 'size', value_type: 'number', cardinality: 'single', default_value: 1 });
    const ann = (await api.post('/entities', { type_guid: person, name: 'Ann' })).body.DATA.entity.guid;
    await create({ steward: [ann] }); // warms the cache
    const res = await create({ steward: [ann] });
    expect(res.status).toBe(201);
    expect(res.headers['x-db-queries']).toBe('2'); // type + referents, then the create
    expect((await api.get(`/entities/${res.body.DATA.entity.guid}`)).body.DATA.entity).toEqual(
      res.body.DATA.entity,
    );
  });
  it('reference values are REFERS_TO relationships between entity nodes', async ({ world }) => {
    const { tenant, api, person, declare, create } = await setup(world);
    await declare({
      name: 'steward',
      value_type: 'entity_ref',
      cardinality: 'single',
      allowed_ref_type: person,
    });
    const ann = (await api.post('/entities', { type_guid: person, name: 'Ann' })).body.DATA.entity.guid;
    const guid = (await create({ steward: ann })).body.DATA.entity.guid;
    const rel = await world.driver.executeQuery(
      `MATCH (e:Entity {guid: $guid})-[r:REFERS_TO]->(x:Entity) WHERE e.tenant = $tenant RETURN r.attr AS attr, x.guid AS target`,
      { guid, tenant },
    );
    expect(rel.records.map((r) => r.toObject())).toEqual([{ attr: 'steward', target: ann }]);
  });

  it('platform attributes take vocabulary entities (tags are multi references to tag entities)', async ({
    world,
  }) => {
    const { api, create } = await setup(world);
    const tagType = await typeGuidByName(api, 'tag');
    const pii = (await api.post('/entities', { type_guid: tagType, name: 'pii' })).body.DATA.entity.guid;
    const res = await create({ tags: [pii] });
    expect(res.body.DATA.entity.values).toEqual({ tags: [pii] });
    const wrong = await create({ tags: [res.body.DATA.entity.guid] });
    expect([wrong.status, wrong.body.DATA.reason]).toEqual([400, 'ref_type_mismatch']);
  });

  it('refuses values that do not fit the live definitions, each with its reason, writing nothing', async ({
    world,
  }) => {
    const { tenant, api, person, declare, create } = await setup(world);
    await declare({ name: 'tier', value_type: 'string', cardinality: 'single', allowed_values: ['gold'] });
    await declare({ name: 'rows', value_type: 'number', cardinality: 'multi' });
    await declare({
      name: 'steward',
      value_type: 'entity_ref',
      cardinality: 'single',
      allowed_ref_type: person,
    });
    await declare({ name: 'must', value_type: 'boolean', cardinality: 'single', required: true });
    const other = await createType(api, 'Other');
    const stranger = (await api.post('/entities', { type_guid: other, name: 'x' })).body.DATA.entity.guid;
    const foreignApi = restClient(world.app, await tokenFor(newTenant()));
    const foreignPerson = await createType(foreignApi, 'Person');
    const foreign = (await foreignApi.post('/entities', { type_guid: foreignPerson, name: 'y' })).body.DATA
      .entity.guid;
    const cases: [unknown, number, string][] = [
      [{ must: true, nope: 1 }, 400, 'unknown_attribute'],
      [{ must: true, rows: 5 }, 400, 'invalid_value'],
      [{ must: true, rows: ['5'] }, 400, 'invalid_value'],
      [{ must: true, tier: 'silver' }, 400, 'value_not_allowed'],
      [{ tier: 'gold' }, 400, 'required_value_missing'],
      [{ must: true, steward: '00000000-0000-4000-8000-000000000000' }, 404, 'referent_not_found'],
      [{ must: true, steward: foreign }, 404, 'referent_not_found'],
      [{ must: true, steward: stranger }, 400, 'ref_type_mismatch'],
      ['not-an-object', 400, 'invalid_field'],
    ];
    for (const [values, status, reason] of cases) {
      const res = await create(values);
      expect([res.status, res.body.DATA.reason], JSON.stringify(values)).toEqual([status, reason]);
    }
    const count = await world.driver.executeQuery(
      'MATCH (e:Entity {tenant: $tenant, type_guid: $t}) RETURN count(e) AS n',
      {
        tenant,
        t: (await api.post('/entities/types', { name: 'Table Asset' })).body.DATA.entity_type.guid,
      },
    );
    expect(count.records[0]!.get('n')).toBe(0);
  });

  it('refuses unknown types (404), managed non-creatable types (409 type_not_creatable) and empty names', async ({
    world,
  }) => {
    const { tenant, api, type } = await setup(world);
    expect((await api.post('/entities', { type_guid: 'missing', name: 'x' })).body.DATA.reason).toBe(
      'unknown_entity_type',
    );
    expect((await api.post('/entities', { type_guid: type, name: ' ' })).body.DATA.reason).toBe(
      'empty_value',
    );
    const platform = restClient(world.app, await tokenFor(tenant, { roles: ['platform'] }));
    const dashboardType = (await platform.post('/platform/dashboards', { name: 'Board' })).body.DATA
      .entity_type.guid;
    const res = await api.post('/entities', { type_guid: dashboardType, name: 'Mine' });
    expect([res.status, res.body.DATA.reason]).toEqual([409, 'type_not_creatable']);
  });

  it('GET /entities/{guid} of another tenant is not found', async ({ world }) => {
    const { create } = await setup(world);
    const guid = (await create()).body.DATA.entity.guid;
    const other = restClient(world.app, await tokenFor(newTenant()));
    const res = await other.get(`/entities/${guid}`);
    expect([res.status, res.body.DATA.reason]).toEqual([404, 'not_found']);
  });

  it('GET /entities/{guid} of an entity whose type is deleted answers it without values, even mid-read', async ({
    world,
  }) => {
    const { tenant, api, type, declare, create } = await setup(world);
    await declare({ name: 'rows', value_type: 'number', cardinality: 'single' });
    const guid = (await create({ rows: 3 })).body.DATA.entity.guid;
    // The type is deleted between the read's two statements (the entity's, then its type's definitions): each
    // statement sees what is committed when it runs, so the second no longer finds the type.
    const ctx = createContext(
      world.app.services,
      { subject: 'tester', tenant, roles: new Set(), crossTenant: false },
      { requestId: randomUUID(), operation: 'GET /entities/:guid' },
    );
    world.app.services.engineCache.invalidate(tenant, type);
    const read = ctx.db.read.bind(ctx.db);
    let statements = 0;
    (ctx.db as { read: typeof ctx.db.read }).read = (work) =>
      read((run) =>
        work(async (cypher, params) => {
          const rows = await run(cypher, params);
          if (++statements === 1) expect((await api.delete(`/entities/types/${type}`)).status).toBe(200);
          return rows;
        }),
      );
    expect(await getEntity(ctx, guid)).toEqual({ guid, name: 'e', type_guid: type, values: {} });
    expect(statements).toBe(2);
    const after = await api.get(`/entities/${guid}`);
    expect([after.status, after.body.DATA.entity.values]).toEqual([200, {}]);
  });
});

describe('POST /entities/lookup', () => {
  it('resolves many identifiers in one database round trip; unknown and foreign ones resolve to null', async ({
    world,
  }) => {
    const { api, create } = await setup(world);
    const guids: string[] = [];
    for (let i = 0; i < 5; i++) guids.push((await create(undefined, `n${i}`)).body.DATA.entity.guid);
    const other = restClient(world.app, await tokenFor(newTenant()));
    const foreign = (await other.post('/entities', { type_guid: await createType(other, 'X'), name: 'f' }))
      .body.DATA.entity.guid;
    const res = await api.post('/entities/lookup', { identifiers: [...guids, 'missing', foreign] });
    expect(res.status).toBe(200);
    expect(res.headers['x-db-queries']).toBe('1');
    const entries = res.body.DATA.entries;
    expect(entries.map((e: any) => e.identifier)).toEqual([...guids, 'missing', foreign]);
    expect(entries.slice(0, 5).map((e: any) => e.entity.name)).toEqual(['n0', 'n1', 'n2', 'n3', 'n4']);
    expect(entries.slice(5).map((e: any) => e.entity)).toEqual([null, null]);
  });

  it('refuses a non-list and more than 1,000 identifiers', async ({ world }) => {
    const { api } = await setup(world);
    expect((await api.post('/entities/lookup', { identifiers: 'x' })).body.DATA.reason).toBe('invalid_field');
    const many = Array.from({ length: 1001 }, (_, i) => `g${i}`);
    expect((await api.post('/entities/lookup', { identifiers: many })).body.DATA.reason).toBe(
      'too_many_identifiers',
    );
  });
});

describe('engine cache', () => {
  const cacheStats = async (w: TestWorld) =>
    (await restClient(w.app, await operatorToken()).get('/admin/engine-cache')).body.DATA as Record<
      string,
      any
    >;

  it('serves the definitions of repeated writes from memory and is invalidated by declare and withdraw', async ({
    world,
  }) => {
    const { api, declare, create, type } = await setup(world);
    await declare({ name: 'a', value_type: 'string', cardinality: 'single' });
    const before = await cacheStats(world);
    const first = await create({ a: 'x' });
    const second_ = await create({ a: 'y' });
    const after = await cacheStats(world);
    expect(after.misses - before.misses).toBe(1);
    expect(after.hits - before.hits).toBe(1); // the second write
    expect(Number(second_.headers['x-db-queries'])).toBeLessThan(Number(first.headers['x-db-queries']));

    await declare({ name: 'b', value_type: 'number', cardinality: 'single', required: true });
    expect((await create({ a: 'z' })).body.DATA.reason).toBe('required_value_missing');
    expect((await create({ a: 'z', b: 1 })).status).toBe(201);
    await api.delete(`/entities/attributes/${type}/b`);
    expect((await create({ a: 'z', b: 1 })).body.DATA.reason).toBe('unknown_attribute');
    expect((await create({ a: 'z' })).status).toBe(201);
  });

  it('an entity write validates against the definitions in force when it writes, not those it cached', async ({
    world,
  }) => {
    const { tenant, type, declare, create } = await setup(world);
    await declare({ name: 'a', value_type: 'string', cardinality: 'single' });
    expect((await create({ a: 'warm' })).status).toBe(201); // definitions cached at this version
    // a declaration committed by another writer straight in the database (this instance's cache is not told)
    const session = world.driver.session();
    await session.executeWrite(async (tx) => {
      const run = async (cypher: string, params?: Record<string, unknown>) =>
        (await tx.run(cypher, params)).records.map((r) => r.toObject());
      await lockTypeDefinitions(run, tenant, type);
      await createAttribute(
        run,
        tenant,
        type,
        {
          guid: randomUUID(),
          name: 'b',
          name_key: 'b',
          value_type: 'string',
          cardinality: 'single',
          allowed_values_json: null,
          required: true,
          default_value_json: null,
          json_utf8: 0,
          default_utf8: 0,
          filterable: false,
        },
        null,
        changeParams(
          { actor: 'another writer', requestId: null },
          { kind: 'attribute_declared', before: null, after: { name: 'b' } },
        ),
      );
    });
    await session.close();
    const res = await create({ a: 'after' });
    expect([res.status, res.body.DATA.reason]).toEqual([400, 'required_value_missing']);
  });

  it('stays correct with two service instances on one database', async ({ world, second }) => {
    const { token, type, declare } = await setup(world);
    const onSecond = restClient(second.app, token);
    await declare({ name: 'a', value_type: 'string', cardinality: 'single' });
    expect(
      (await onSecond.post('/entities', { type_guid: type, name: 'x', values: { a: 'v' } })).status,
    ).toBe(201); // cached there
    // declared through the first instance: the second one's cache entry is now stale by version
    await declare({ name: 'b', value_type: 'string', cardinality: 'single', required: true });
    const stale = await onSecond.post('/entities', { type_guid: type, name: 'y', values: { a: 'v' } });
    expect([stale.status, stale.body.DATA.reason]).toEqual([400, 'required_value_missing']);
    expect(
      (await onSecond.post('/entities', { type_guid: type, name: 'y', values: { a: 'v', b: 'w' } })).status,
    ).toBe(201);
  });

  it('GET /admin/engine-cache reports what is cached, hits, misses, evictions and size; operators only', async ({
    world,
  }) => {
    const { create } = await setup(world);
    await create();
    const stats = await cacheStats(world);
    expect(stats).toMatchObject({
      entries: expect.any(Number),
      maxEntries: 10000,
      hits: expect.any(Number),
      misses: expect.any(Number),
      evictions: expect.any(Number),
    });
    expect(stats.entries).toBeGreaterThan(0);
    expect(stats.cached[0]).toMatchObject({ type_guid: expect.any(String), attributes: expect.any(Number) });
    const other = await tokenFor(newTenant(), { roles: ['admin'] });
    const refused = await restClient(world.app, other).get('/admin/engine-cache');
    expect([refused.status, refused.body.DATA.reason]).toEqual([403, 'not_authorized']);
  });
});
