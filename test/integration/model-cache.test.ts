// Reads from memory, exact across instances (issue #12): two service instances on one database, each with its own
// model cache. For every kind of metamodel change, the reads of the second instance are first served from its cache
// (proven by its hit counters), then the change is made through the first instance, and the very next read on the
// second one shows it: no TTL, no staleness window.
import { describe, expect } from 'vitest';
import type { ModelCacheKind } from '../../src/cache/model-cache.js';
import { readModelVersion } from '../../src/db/model-version.js';
import { it as baseIt, instance } from '../fixtures.js';
import {
  createType,
  graphqlClient,
  newTenant,
  operatorToken,
  restClient,
  type TestWorld,
  tokenFor,
} from '../helpers.js';

const it = baseIt.extend<{ first: TestWorld }>({ first: instance() });

/**
 * A field alias new on every call: each GraphQL read is another document, so it is executed (through the row
 * caches tested here) rather than answered whole from memory (graphql-answers.test.ts tests that).
 */
let asked = 0;
const fresh = () => `a${++asked}`;

const hitsOf = (w: TestWorld, kind: ModelCacheKind) => w.app.services.model.cache.stats().byKind[kind].hits;

async function setup(first: TestWorld, second: TestWorld, roles: string[] = []) {
  const tenant = newTenant('mc');
  const token = await tokenFor(tenant, { roles });
  return { tenant, token, onFirst: restClient(first.app, token), onSecond: restClient(second.app, token) };
}

const pageNames = async (api: ReturnType<typeof restClient>) => {
  const res = await api.get('/entities/types?page_size=500');
  expect(res.status).toBe(200);
  return (res.body.DATA.entity_types as { name: string }[]).map((t) => t.name);
};

/** Reads `read` twice on the second instance; the second time must be a hit of `kind` there. */
async function warm<T>(second: TestWorld, kind: ModelCacheKind, read: () => Promise<T>): Promise<T> {
  await read();
  const before = hitsOf(second, kind);
  const value = await read();
  expect(hitsOf(second, kind)).toBeGreaterThan(before);
  return value;
}

describe('a metamodel write on one instance is seen by the next read on another', () => {
  it('creating a type: pages and lookups by name', async ({ first, second }) => {
    const { onFirst, onSecond, token } = await setup(first, second);
    const byName = () =>
      graphqlClient(second.app, token).request<
        { entityTypeByName: { guid: string } | null },
        Record<string, unknown>
      >(`query($n: String!) { entityTypeByName(name: $n) { guid } ${fresh()}: __typename }`, { n: 'Orders' });
    expect(await warm(second, 'type_page', () => pageNames(onSecond))).not.toContain('Orders');
    expect((await warm(second, 'type_name', byName)).entityTypeByName).toBeNull();
    const guid = await createType(onFirst, 'Orders');
    expect(await pageNames(onSecond)).toContain('Orders');
    expect((await byName()).entityTypeByName?.guid).toBe(guid);
    // create-or-get of the name through the second instance now gets it
    const again = await onSecond.post('/entities/types', { name: 'orders' });
    expect([again.status, again.body.DATA.entity_type.guid]).toEqual([200, guid]);
  });

  it('renaming a type: by guid and in pages', async ({ first, second }) => {
    const { onFirst, onSecond } = await setup(first, second);
    const guid = await createType(onFirst, 'Before');
    const get = async () => (await onSecond.get(`/entities/types/${guid}`)).body.DATA.entity_type.name;
    expect(await warm(second, 'type', get)).toBe('Before');
    await warm(second, 'type_page', () => pageNames(onSecond));
    expect((await onFirst.patch(`/entities/types/${guid}`, { name: 'After' })).status).toBe(200);
    expect(await get()).toBe('After');
    const names = await pageNames(onSecond);
    expect(names).toContain('After');
    expect(names).not.toContain('Before');
  });

  it('deleting a type: by guid, in pages, and in the GraphQL catalog', async ({ first, second }) => {
    const { onFirst, onSecond, token } = await setup(first, second);
    const guid = await createType(onFirst, 'Doomed');
    const gql = () =>
      graphqlClient(second.app, token).request<
        { entityType: { name: string } | null },
        Record<string, unknown>
      >(`query($g: ID!) { entityType(guid: $g) { name } ${fresh()}: __typename }`, { g: guid });
    expect((await warm(second, 'type', gql)).entityType?.name).toBe('Doomed');
    await warm(second, 'type_page', () => pageNames(onSecond));
    expect((await onFirst.delete(`/entities/types/${guid}`)).status).toBe(200);
    expect((await onSecond.get(`/entities/types/${guid}`)).status).toBe(404);
    expect((await gql()).entityType).toBeNull();
    expect(await pageNames(onSecond)).not.toContain('Doomed');
  });

  it('setting up the managed dashboard type', async ({ first, second }) => {
    const { onFirst, onSecond } = await setup(first, second, ['platform']);
    expect(await warm(second, 'type_page', () => pageNames(onSecond))).not.toContain('dashboard');
    expect((await onFirst.post('/platform/dashboards', { name: 'Sales' })).status).toBe(201);
    expect(await pageNames(onSecond)).toContain('dashboard');
  });

  it('declaring and withdrawing: attribute listings, the GraphQL catalog and curation writes', async ({
    first,
    second,
  }) => {
    const { onFirst, onSecond, token } = await setup(first, second);
    const guid = await createType(onFirst, 'Tables');
    const listed = async () =>
      (
        (await onSecond.get(`/entities/types/${guid}/attributes`)).body.DATA.attributes as { name: string }[]
      ).map((a) => a.name);
    const catalog = async () =>
      (
        await graphqlClient(second.app, token).request<
          {
            entityType: { attributes: { name: string }[] };
          },
          Record<string, unknown>
        >(`query($g: ID!) { entityType(guid: $g) { attributes { name } } ${fresh()}: __typename }`, {
          g: guid,
        })
      ).entityType.attributes.map((a) => a.name);
    expect(await warm(second, 'attributes', listed)).not.toContain('rows');
    expect(await warm(second, 'own_attributes', catalog)).not.toContain('rows');

    const declared = await onFirst.post(`/entities/types/${guid}/attributes`, {
      name: 'rows',
      value_type: 'number',
      cardinality: 'single',
    });
    expect(declared.status).toBe(201);
    expect(await listed()).toContain('rows');
    expect(await catalog()).toContain('rows');
    const write = (name: string) =>
      onSecond.post('/entities', { type_guid: guid, name, values: { rows: 1 } });
    expect((await write('a')).status).toBe(201);

    expect((await onFirst.delete(`/entities/attributes/${guid}/rows`)).status).toBe(200);
    expect(await listed()).not.toContain('rows');
    expect(await catalog()).not.toContain('rows');
    const refused = await write('b');
    expect([refused.status, refused.body.DATA.reason]).toEqual([400, 'unknown_attribute']);
  });

  it('the purge removing a withdrawn definition: the withdrawn list, and the name free again', async ({
    first,
    second,
  }) => {
    const { tenant, onFirst, onSecond, token } = await setup(first, second);
    const guid = await createType(onFirst, 'Purged');
    const body = { name: 'gone', value_type: 'string', cardinality: 'single' };
    expect((await onFirst.post(`/entities/types/${guid}/attributes`, body)).status).toBe(201);
    expect((await onFirst.delete(`/entities/attributes/${guid}/gone`)).status).toBe(200);
    const withdrawn = async () =>
      (
        await graphqlClient(second.app, token).request<
          {
            entityType: { withdrawnAttributes: { definition: { name: string } }[] };
          },
          Record<string, unknown>
        >('query($g: ID!) { entityType(guid: $g) { withdrawnAttributes { definition { name } } } }', {
          g: guid,
        })
      ).entityType.withdrawnAttributes.map((a) => a.definition.name);
    expect(await withdrawn()).toEqual(['gone']);
    await warm(
      second,
      'attributes',
      async () => (await onSecond.get(`/entities/types/${guid}/attributes`)).status,
    );
    const versionBefore = await modelVersion(first, tenant);

    const purge = await restClient(first.app, await operatorToken()).post('/admin/jobs/purge', { tenant });
    expect(purge.status).toBe(200);
    expect(purge.body.DATA.removed).toHaveLength(1);
    expect(await modelVersion(first, tenant)).not.toBe(versionBefore);
    expect(await withdrawn()).toEqual([]);
    expect((await onSecond.post(`/entities/types/${guid}/attributes`, body)).status).toBe(201);
  });
});

async function modelVersion(first: TestWorld, tenant: string) {
  const session = first.driver.session();
  try {
    return await session.executeRead((tx) =>
      readModelVersion(
        async (cypher, params) => (await tx.run(cypher, params)).records.map((r) => r.toObject()),
        tenant,
      ),
    );
  } finally {
    await session.close();
  }
}

describe('what each instance serves from memory', () => {
  it('a cached read costs no statement of its own: at most a share of the version read, none under a read lease', async ({
    first,
    second,
  }) => {
    const { onSecond } = await setup(first, second);
    await onSecond.get('/entities/types?page_size=10');
    const leased = second.app.services.model.versions.stats().leased;
    const again = await onSecond.get('/entities/types?page_size=10');
    // (read within 25 ms of the first request's version read: answered from its lease, no statement at all)
    expect(Number(again.headers['x-db-queries'])).toBeLessThanOrEqual(1);
    const held = second.app.services.model.versions.stats().leased > leased;
    expect(Number(again.headers['x-db-queries']) === 0).toBe(held);
  });

  it('create-or-get reads the model version only for a name the cache holds: a new name costs its lookup and its create', async ({
    first,
    second,
  }) => {
    const { onSecond } = await setup(first, second);
    const queries = (res: { headers: Record<string, unknown> }) => Number(res.headers['x-db-queries']);
    const misses = () => second.app.services.model.cache.stats().byKind.type_name.misses;
    const before = misses();
    const created = await onSecond.post('/entities/types', { name: 'Fresh Name' });
    expect(created.status).toBe(201);
    expect(queries(created)).toBe(2); // the lookup and the create: no share of a version read
    // An existing name: looked up straight away the first time (a placeholder is kept), then read at the model
    // version and kept, then served from memory.
    const firstGet = await onSecond.post('/entities/types', { name: 'fresh name' });
    expect([firstGet.status, queries(firstGet)]).toEqual([200, 1]);
    const hits = hitsOf(second, 'type_name');
    const secondGet = await onSecond.post('/entities/types', { name: 'Fresh Name' });
    expect(secondGet.status).toBe(200);
    expect(queries(secondGet)).toBeGreaterThan(1); // its share of the version read, and the load
    expect(hitsOf(second, 'type_name')).toBe(hits);
    const thirdGet = await onSecond.post('/entities/types', { name: 'Fresh Name' });
    expect(thirdGet.status).toBe(200);
    expect(queries(thirdGet)).toBeLessThanOrEqual(1);
    expect(hitsOf(second, 'type_name')).toBe(hits + 1);
    expect(misses() - before).toBe(3);
    expect(thirdGet.body.DATA.entity_type.guid).toBe(created.body.DATA.entity_type.guid);
  });

  it('concurrent writes through one instance and reads through the other: every acknowledged write is read back', async ({
    first,
    second,
  }) => {
    const { onFirst, onSecond } = await setup(first, second);
    const results = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        await onSecond.get('/entities/types?page_size=500'); // keep the second instance's page cached and busy
        const guid = await createType(onFirst, `Burst ${i}`);
        const [byGuid, names] = await Promise.all([
          onSecond.get(`/entities/types/${guid}`),
          pageNames(onSecond),
        ]);
        return byGuid.status === 200 && names.includes(`Burst ${i}`);
      }),
    );
    expect(results).toEqual(Array(12).fill(true));
  });
});
