// Entity type rows, POST /entities/types, GET /entities/types (docs/api.md#entity-types), rename and delete
// (docs/api.md#decisions-where-the-specification-is-silent).

import { describe, expect } from 'vitest';
import { typeGuid } from '../../src/model/names.js';
import { it } from '../fixtures.js';
import { createType, newTenant, restClient, type TestWorld, tokenFor } from '../helpers.js';

async function clientFor(world: TestWorld, tenant = newTenant()) {
  return { tenant, api: restClient(world.app, await tokenFor(tenant)) };
}

async function listAll(api: ReturnType<typeof restClient>, pageSize?: number) {
  const rows: Record<string, any>[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 1000; i++) {
    const params = new URLSearchParams();
    if (cursor) params.set('cursor', cursor);
    if (pageSize) params.set('page_size', String(pageSize));
    const res = await api.get(`/entities/types?${params}`);
    expect(res.status).toBe(200);
    rows.push(...res.body.DATA.entity_types);
    cursor = res.body.DATA.next_cursor;
    if (cursor === null) break;
  }
  return rows;
}

const OPTIONAL = [
  'catalog_level',
  'vocabulary',
  'label',
  'icon',
  'parent_type',
  'creatable',
  'name_locked_hint',
  'created_at',
];

describe('Entity type row', () => {
  it('built-in levels from datasource to column, each parent_type the guid of the level above', async ({
    world,
  }) => {
    const { api } = await clientFor(world);
    const rows = await listAll(api);
    const byName = new Map(rows.map((r) => [r.name, r]));
    const levels = ['datasource', 'database', 'schema', 'table', 'column'];
    for (const [i, name] of levels.entries()) {
      const row = byName.get(name)!;
      expect(row).toMatchObject({ origin: 'system', catalog_level: true });
      expect(typeof row.label).toBe('string');
      expect(typeof row.icon).toBe('string');
      if (i === 0) expect(row).not.toHaveProperty('parent_type');
      else expect(row.parent_type).toBe(byName.get(levels[i - 1]!)!.guid);
      expect(row).not.toHaveProperty('vocabulary');
      expect(row).not.toHaveProperty('creatable');
    }
  });

  it('vocabulary types carry vocabulary: true and nothing else optional; the root entity carries nothing', async ({
    world,
  }) => {
    const { api } = await clientFor(world);
    const byName = new Map((await listAll(api)).map((r) => [r.name, r]));
    for (const name of ['domain', 'env', 'tag', 'classification', 'group']) {
      const row = byName.get(name)!;
      expect(Object.keys(row).sort()).toEqual([
        'created_at',
        'guid',
        'name',
        'origin',
        'version',
        'vocabulary',
      ]);
      expect(row).toMatchObject({ origin: 'system', vocabulary: true });
    }
    expect(Object.keys(byName.get('entity')!).sort()).toEqual([
      'created_at',
      'guid',
      'name',
      'origin',
      'version',
    ]);
    expect(byName.has('dashboard')).toBe(false);
  });

  it('every type a caller creates is a user_defined catalog level with no other optional field', async ({
    world,
  }) => {
    const { api } = await clientFor(world);
    const res = await api.post('/entities/types', { name: 'Report' });
    expect(res.status).toBe(201);
    const row = res.body.DATA.entity_type;
    expect(Object.keys(row).sort()).toEqual([
      'catalog_level',
      'created_at',
      'guid',
      'name',
      'origin',
      'version',
    ]);
    expect(row).toMatchObject({ name: 'Report', origin: 'user_defined', catalog_level: true });
  });

  it('a connector type carries none of the optional fields (never false or null)', async ({ world }) => {
    const { tenant, api } = await clientFor(world);
    await api.get('/entities/types'); // tenant seen
    const guid = typeGuid(tenant, 'kafka topic');
    // A connector writing types into the graph changes the tenant's model version with them, as every writer of
    // metamodel rows must (ARCHITECTURE.md#reads-from-memory); the types listed before were cached at the old one.
    await world.driver.executeQuery(
      `CREATE (:EntityType {tenant: $tenant, guid: $guid, name: 'Kafka Topic', name_key: 'kafka topic', origin: 'connector'})
       WITH 1 AS one MATCH (v:ModelVersion {tenant: $tenant, shard: 0}) SET v.version = randomUUID()`,
      { tenant, guid },
    );
    // ... and, as the service's own writes do, waits out the replicas' read leases before anyone relies on it.
    await new Promise((r) => setTimeout(r, world.app.services.model.versions.writeWaitMs));
    const row = (await listAll(api)).find((r) => r.guid === guid)!;
    expect(row).toEqual({ guid, name: 'Kafka Topic', origin: 'connector', version: '0-0' });
    for (const field of OPTIONAL) expect(row).not.toHaveProperty(field);
    const again = await api.post('/entities/types', { name: 'kafka TOPIC' });
    expect(again.status).toBe(200);
    expect(again.body.DATA).toEqual({ entity_type: row, created: false });
  });

  it('the guid is a UUID derived from (tenant, normalised name): the same name in two tenants differs', async ({
    world,
  }) => {
    const a = await clientFor(world);
    const b = await clientFor(world);
    const ra = await a.api.post('/entities/types', { name: 'Invoice' });
    const rb = await b.api.post('/entities/types', { name: 'Invoice' });
    expect(ra.body.DATA.entity_type.guid).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(ra.body.DATA.entity_type.guid).not.toBe(rb.body.DATA.entity_type.guid);
    expect(ra.body.DATA.entity_type.guid).toBe(typeGuid(a.tenant, 'invoice'));
  });
});

describe('POST /entities/types', () => {
  it('create-or-get; trimmed, case-insensitive; 201 then 200 with created false, nothing written', async ({
    world,
  }) => {
    const { tenant, api } = await clientFor(world);
    const first = await api.post('/entities/types', { name: '  Data Product ' });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ STATUS: 'SUCCESS', MESSAGE: '', DATA: { created: true } });
    expect(first.body.DATA.entity_type.name).toBe('Data Product');
    for (const variant of ['data product', 'DATA PRODUCT', '\tData Product\n']) {
      const again = await api.post('/entities/types', { name: variant });
      expect(again.status).toBe(200);
      expect(again.body.DATA).toEqual({ entity_type: first.body.DATA.entity_type, created: false });
    }
    const count = await world.driver.executeQuery(
      'MATCH (t:EntityType {tenant: $tenant, name_key: $key}) RETURN count(t) AS n',
      { tenant, key: 'data product' },
    );
    expect(count.records[0]!.get('n')).toBe(1);
  });

  it('letter case is ignored the Unicode way (ß and SS, Greek final sigma, accented capitals)', async ({
    world,
  }) => {
    const { api } = await clientFor(world);
    const created = await api.post('/entities/types', { name: 'Straße' });
    expect(created.status).toBe(201);
    expect((await api.post('/entities/types', { name: 'STRASSE' })).body.DATA.created).toBe(false);
    const greek = await api.post('/entities/types', { name: 'ΟΔΟΣ' });
    expect(greek.status).toBe(201);
    expect((await api.post('/entities/types', { name: 'οδος' })).body.DATA.created).toBe(false);
    expect((await api.post('/entities/types', { name: 'οδoς' })).status).toBe(201); // latin o is another letter
    const composed = await api.post('/entities/types', { name: 'Édition' });
    expect((await api.post('/entities/types', { name: 'E\u0301DITION' })).body.DATA.entity_type.guid).toBe(
      composed.body.DATA.entity_type.guid,
    );
  });

  it('a system type name resolves to the system type', async ({ world }) => {
    const { api } = await clientFor(world);
    const res = await api.post('/entities/types', { name: ' TABLE ' });
    expect(res.status).toBe(200);
    expect(res.body.DATA.created).toBe(false);
    expect(res.body.DATA.entity_type).toMatchObject({ name: 'table', origin: 'system', catalog_level: true });
  });

  it('a name empty after trimming is refused with empty_value (400), as is a missing or null name', async ({
    world,
  }) => {
    const { api } = await clientFor(world);
    for (const body of [{ name: '' }, { name: '   ' }, { name: '\t\n' }, {}, { name: null }]) {
      const res = await api.post('/entities/types', body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ STATUS: 'FAIL', DATA: { reason: 'empty_value' } });
    }
  });

  it('a name that is not a string is refused with invalid_field; a body that is not an object with invalid_body', async ({
    world,
  }) => {
    const { api } = await clientFor(world);
    for (const name of [42, true, ['a'], { a: 1 }]) {
      const res = await api.post('/entities/types', { name });
      expect(res.status).toBe(400);
      expect(res.body.DATA.reason).toBe('invalid_field');
    }
    for (const body of ['[1]', '"x"', '7']) {
      const res = await api.post('/entities/types', body);
      expect(res.status).toBe(400);
      expect(res.body.DATA.reason).toBe('invalid_body');
    }
  });

  it('a name that is not well-formed Unicode (invalid_unicode, as any string of a body) or holds control, invisible or direction-changing characters (invalid_field) is refused', async ({
    world,
  }) => {
    const { tenant, api } = await clientFor(world);
    for (const name of ['x\uD800', '\uDC00y']) {
      const res = await api.post('/entities/types', { name });
      expect([res.status, res.body.DATA.reason], JSON.stringify(name)).toEqual([400, 'invalid_unicode']);
    }
    for (const name of [
      'a\u0000b',
      'line\nbreak',
      'bell\u0007',
      'c1\u0085',
      'ltr\u200fmark',
      'zero\u200bwidth',
      'soft\u00adhyphen',
      'over\u202eride',
    ]) {
      const res = await api.post('/entities/types', { name });
      expect([res.status, res.body.DATA.reason], JSON.stringify(name)).toEqual([400, 'invalid_field']);
    }
    expect((await api.post('/entities/types', { name: '  עברית مرحبا 😀 e\u0301 ' })).status).toBe(201);
    // no look-alike of a system type: "table" with a zero-width joiner is refused, not a second "table"
    const lookAlike = await api.post('/entities/types', { name: 'table\u200d' });
    expect([lookAlike.status, lookAlike.body.DATA.reason]).toEqual([400, 'invalid_field']);
    const mine = await createType(api, 'Mine');
    const renamed = await api.patch(`/entities/types/${mine}`, { name: 'ta\u200cble' });
    expect([renamed.status, renamed.body.DATA.reason]).toEqual([400, 'invalid_field']);
    const tables = await world.driver.executeQuery(
      'MATCH (t:EntityType {tenant: $tenant}) WHERE t.name CONTAINS "able" RETURN collect(t.name) AS names',
      { tenant },
    );
    expect(tables.records[0]?.get('names')).toEqual(['table']);
  });
  it('a name longer than 256 characters is refused with name_too_long', async ({ world }) => {
    const { api } = await clientFor(world);
    expect((await api.post('/entities/types', { name: 'x'.repeat(256) })).status).toBe(201);
    const res = await api.post('/entities/types', { name: 'y'.repeat(257) });
    expect(res.status).toBe(400);
    expect(res.body.DATA.reason).toBe('name_too_long');
  });

  it('50 concurrent creates of one name converge on exactly one type', async ({ world }) => {
    const { tenant, api } = await clientFor(world);
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        api.post('/entities/types', { name: i % 2 ? 'Pipeline' : ' PIPELINE ' }),
      ),
    );
    expect(results.map((r) => r.status).sort((x, y) => x - y)).toEqual([...Array(49).fill(200), 201]);
    expect(results.filter((r) => r.body.DATA.created === true)).toHaveLength(1);
    expect(new Set(results.map((r) => r.body.DATA.entity_type.guid)).size).toBe(1);
    const count = await world.driver.executeQuery(
      'MATCH (t:EntityType {tenant: $tenant}) WHERE t.name_key = "pipeline" RETURN count(t) AS n',
      { tenant },
    );
    expect(count.records[0]!.get('n')).toBe(1);
  });
});

describe('GET /entities/types', () => {
  it('lists system and user types together in a stable name order', async ({ world }) => {
    const { api } = await clientFor(world);
    for (const name of ['zeta', 'Alpha', 'mid']) await api.post('/entities/types', { name });
    const rows = await listAll(api);
    const names = rows.map((r) => r.name);
    expect(names).toEqual([...names].sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase(), 'en')));
    expect(names).toEqual(expect.arrayContaining(['Alpha', 'mid', 'zeta', 'entity', 'table', 'tag']));
    expect(rows).toHaveLength(14);
    expect(await listAll(api)).toEqual(rows);
  });

  it('pages with next_cursor until null; every row once; the default page size is 100', async ({ world }) => {
    const { api } = await clientFor(world);
    await Promise.all(
      Array.from({ length: 110 }, (_, i) =>
        api.post('/entities/types', { name: `type-${String(i).padStart(3, '0')}` }),
      ),
    );
    const first = await api.get('/entities/types');
    expect(first.body.DATA.entity_types).toHaveLength(100);
    expect(typeof first.body.DATA.next_cursor).toBe('string');
    const paged = await listAll(api, 7);
    expect(paged).toHaveLength(110 + 11); // 11 system types
    expect(new Set(paged.map((r) => r.guid)).size).toBe(121);
    expect(paged).toEqual(await listAll(api, 500));
  });

  it('page_size outside 1..500 or not an integer is refused with invalid_page_size', async ({ world }) => {
    const { api } = await clientFor(world);
    for (const bad of ['0', '501', '-1', '1.5', 'abc', '', '1e2', '99999999999']) {
      const res = await api.get(`/entities/types?page_size=${encodeURIComponent(bad)}`);
      expect(res.status, bad).toBe(400);
      expect(res.body.DATA.reason).toBe('invalid_page_size');
      // the range in words, never the pattern that checks it
      expect(res.body.MESSAGE, bad).toBe(
        'Query parameter "page_size": must be a whole number from 1 to 500.',
      );
    }
    expect((await api.get('/entities/types?page_size=1&page_size=2')).body.DATA.reason).toBe(
      'invalid_page_size',
    );
    for (const ok of ['1', '500'])
      expect((await api.get(`/entities/types?page_size=${ok}`)).status).toBe(200);
  });

  it('a cursor not issued by this API, tampered with, or issued to another tenant is refused with invalid_cursor', async ({
    world,
  }) => {
    const { api } = await clientFor(world);
    const other = await clientFor(world);
    const page = await api.get('/entities/types?page_size=2');
    const cursor: string = page.body.DATA.next_cursor;
    const [payload, sig] = cursor.split('.');
    const forged = Buffer.from(JSON.stringify({ v: 1, p: 'a' })).toString('base64url');
    const bad = [
      'garbage',
      '',
      `${payload}`,
      `${payload}.${sig}x`,
      `${forged}.${sig}`,
      `${cursor}.extra`,
      'a'.repeat(5000),
    ];
    for (const c of bad) {
      const res = await api.get(`/entities/types?cursor=${encodeURIComponent(c)}`);
      expect(res.status).toBe(400);
      expect(res.body.DATA.reason).toBe('invalid_cursor');
    }
    const foreign = await other.api.get(`/entities/types?cursor=${encodeURIComponent(cursor)}`);
    expect(foreign.status).toBe(400);
    expect(foreign.body.DATA.reason).toBe('invalid_cursor');
    expect((await api.get(`/entities/types?cursor=${encodeURIComponent(cursor)}`)).status).toBe(200);
  });
});

describe('GET /entities/types/by-name/{name}', () => {
  const byName = (api: ReturnType<typeof restClient>, name: string) =>
    api.get(`/entities/types/by-name/${encodeURIComponent(name)}`);

  it('resolves a name as create-or-get compares it (trimmed, letter case ignored), and creates nothing', async ({
    world,
  }) => {
    const { api } = await clientFor(world);
    const created = (await api.post('/entities/types', { name: 'Data Product' })).body.DATA.entity_type;
    for (const spelling of ['Data Product', '  data PRODUCT ', 'DATA PRODUCT']) {
      const res = await byName(api, spelling);
      expect([spelling, res.status, res.body.DATA.entity_type]).toEqual([spelling, 200, created]);
    }
    const unknown = await byName(api, 'Never Created');
    expect([unknown.status, unknown.body.DATA.reason]).toEqual([404, 'unknown_entity_type']);
    expect((await byName(api, 'Never Created')).status).toBe(404);
    // system types too, and a name holding a slash (percent-encoded in the path)
    expect((await byName(api, 'table')).body.DATA.entity_type.origin).toBe('system');
    const slashed = (await api.post('/entities/types', { name: 'a/b' })).body.DATA.entity_type;
    expect((await byName(api, 'A/B')).body.DATA.entity_type.guid).toBe(slashed.guid);
  });

  it('a renamed type by its new name and by the name it was created under', async ({ world }) => {
    const { api } = await clientFor(world);
    const created = (await api.post('/entities/types', { name: 'Orders' })).body.DATA.entity_type;
    expect((await api.patch(`/entities/types/${created.guid}`, { name: 'Purchase Orders' })).status).toBe(
      200,
    );
    expect((await byName(api, 'purchase orders')).body.DATA.entity_type.guid).toBe(created.guid);
    const former = await byName(api, 'Orders');
    expect([former.status, former.body.DATA.entity_type.name]).toEqual([200, 'Purchase Orders']);
  });

  it("another tenant's type is unknown; names that are no names are refused with their reason", async ({
    world,
  }) => {
    const a = await clientFor(world);
    const b = await clientFor(world);
    await a.api.post('/entities/types', { name: 'Secret Type' });
    const other = await byName(b.api, 'Secret Type');
    expect([other.status, other.body.DATA.reason]).toEqual([404, 'unknown_entity_type']);
    const blank = await byName(a.api, '   ');
    expect([blank.status, blank.body.DATA.reason]).toEqual([400, 'empty_value']);
    // at the name limit a name is looked up (and found, or not); one character over, refused before any read
    const longest = 'x'.repeat(256);
    const absent = await byName(a.api, longest);
    expect([absent.status, absent.body.DATA.reason]).toEqual([404, 'unknown_entity_type']);
    const created = (await a.api.post('/entities/types', { name: longest })).body.DATA.entity_type;
    expect((await byName(a.api, longest.toUpperCase())).body.DATA.entity_type.guid).toBe(created.guid);
    const long = await byName(a.api, 'x'.repeat(257));
    expect([long.status, long.body.DATA.reason]).toEqual([400, 'name_too_long']);
  });
});

describe('Tenant isolation', () => {
  it('one tenant never sees, resolves, renames or deletes another tenant’s types', async ({ world }) => {
    const a = await clientFor(world);
    const b = await clientFor(world);
    const created = await a.api.post('/entities/types', { name: 'Secret' });
    const guid = created.body.DATA.entity_type.guid;
    expect((await listAll(b.api)).some((r) => r.name === 'Secret')).toBe(false);
    expect((await b.api.get(`/entities/types/${guid}`)).body.DATA.reason).toBe('unknown_entity_type');
    expect((await b.api.patch(`/entities/types/${guid}`, { name: 'Mine' })).status).toBe(404);
    expect((await b.api.delete(`/entities/types/${guid}`)).status).toBe(404);
    const mine = await b.api.post('/entities/types', { name: 'secret' });
    expect(mine.status).toBe(201);
    expect(mine.body.DATA.entity_type.guid).not.toBe(guid);
    expect((await a.api.get(`/entities/types/${guid}`)).body.DATA.entity_type.name).toBe('Secret');
  });
});

describe('PATCH and DELETE /entities/types/{guid}', () => {
  it('renames a user-defined type keeping its guid; the original name still resolves to it', async ({
    world,
  }) => {
    const { api } = await clientFor(world);
    const created = (await api.post('/entities/types', { name: 'Orders' })).body.DATA.entity_type;
    const renamed = await api.patch(`/entities/types/${created.guid}`, { name: ' Purchase Orders ' });
    expect(renamed.status).toBe(200);
    expect(renamed.body.DATA.entity_type).toEqual({
      ...created,
      name: 'Purchase Orders',
      version: created.version.replace(/^0-/, '1-'),
      former_names: [{ name: created.name, left_at: expect.stringMatching(/^\d{4}-/) }],
    });
    const byOld = await api.post('/entities/types', { name: 'orders' });
    expect(byOld.status).toBe(200);
    expect(byOld.body.DATA.entity_type.guid).toBe(created.guid);
    const byNew = await api.post('/entities/types', { name: 'purchase orders' });
    expect(byNew.body.DATA).toMatchObject({ created: false, entity_type: { guid: created.guid } });
    expect(
      (await api.patch(`/entities/types/${created.guid}`, { name: 'PURCHASE orders' })).body.DATA.entity_type
        .name,
    ).toBe('PURCHASE orders');
  });

  it('refuses renaming onto a name that resolves to another type (naming the holder), and onto a managed name', async ({
    world,
  }) => {
    const tenant = newTenant();
    const token = await tokenFor(tenant);
    const { api } = await clientFor(world, tenant);
    const a = (await api.post('/entities/types', { name: 'A' })).body.DATA.entity_type;
    const b = (await api.post('/entities/types', { name: 'B' })).body.DATA.entity_type;
    for (const name of ['b', 'table']) {
      const res = await api.patch(`/entities/types/${a.guid}`, { name });
      expect(res.status).toBe(409);
      expect(res.body.DATA.reason).toBe('type_name_taken');
    }
    // the refusal names the holder: its guid, its name, and that the name is its current one
    const current = await api.patch(`/entities/types/${a.guid}`, { name: ' b ' });
    expect(current.body.DATA).toEqual({
      reason: 'type_name_taken',
      holder: { guid: b.guid, name: 'B', held_as: 'current_name' },
    });
    expect(current.body.MESSAGE).toContain(b.guid);
    await api.patch(`/entities/types/${b.guid}`, { name: 'B2' });
    // "b" still resolves to B2 (its guid was derived from it), so it stays taken: a former name of B2
    const former = await api.patch(`/entities/types/${a.guid}`, { name: 'B' });
    expect(former.status).toBe(409);
    expect(former.body.DATA).toEqual({
      reason: 'type_name_taken',
      holder: { guid: b.guid, name: 'B2', held_as: 'former_name' },
    });
    expect(former.body.MESSAGE).toBe(
      `The name "B" is a former name of the type "B2" (${b.guid}): it was created under it, and the name still resolves to it.`,
    );
    // GraphQL says the same in the error's extensions
    const gql = await world.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: JSON.stringify({
        query: 'mutation($g: ID!) { renameEntityType(guid: $g, name: "b") { name } }',
        variables: { g: a.guid },
      }),
    });
    expect(gql.json().errors[0].extensions).toMatchObject({
      reason: 'type_name_taken',
      holder: { guid: b.guid, name: 'B2', held_as: 'former_name' },
    });
    const managed = await api.patch(`/entities/types/${a.guid}`, { name: 'Dashboard' });
    expect(managed.status).toBe(409);
    expect(managed.body.DATA.reason).toBe('type_instances_managed');
    expect((await api.patch(`/entities/types/${a.guid}`, { name: '  ' })).body.DATA.reason).toBe(
      'empty_value',
    );
  });

  it('system types cannot be renamed or deleted', async ({ world }) => {
    const { api } = await clientFor(world);
    const table = (await api.post('/entities/types', { name: 'table' })).body.DATA.entity_type;
    const renamed = await api.patch(`/entities/types/${table.guid}`, { name: 'tables' });
    expect(renamed.status).toBe(409);
    expect(renamed.body).toMatchObject({ STATUS: 'FAIL', DATA: { reason: 'type_not_user_defined' } });
    const deleted = await api.delete(`/entities/types/${table.guid}`);
    expect(deleted.status).toBe(409);
    expect(deleted.body.DATA.reason).toBe('type_not_user_defined');
    expect((await api.get(`/entities/types/${table.guid}`)).body.DATA.entity_type.name).toBe('table');
  });

  it('delete then recreate under the same name gives the same guid back', async ({ world }) => {
    const { api } = await clientFor(world);
    const created = (await api.post('/entities/types', { name: 'Feature' })).body.DATA.entity_type;
    const deleted = await api.delete(`/entities/types/${created.guid}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body.DATA).toEqual({ guid: created.guid, deleted: true });
    expect((await api.get(`/entities/types/${created.guid}`)).status).toBe(404);
    expect((await api.delete(`/entities/types/${created.guid}`)).body.DATA.reason).toBe(
      'unknown_entity_type',
    );
    const again = await api.post('/entities/types', { name: 'FEATURE' });
    expect(again.status).toBe(201);
    expect(again.body.DATA.entity_type.guid).toBe(created.guid);
  });

  it('a renamed type deleted and recreated under its last name gets its guid back, and its entities with it', async ({
    world,
  }) => {
    const { api } = await clientFor(world);
    const guid = (await api.post('/entities/types', { name: 'Foo' })).body.DATA.entity_type.guid;
    await api.post(`/entities/types/${guid}/attributes`, {
      name: 'note',
      value_type: 'string',
      cardinality: 'single',
    });
    const entity = (await api.post('/entities', { type_guid: guid, name: 'kept' })).body.DATA.entity.guid;
    await api.patch(`/entities/types/${guid}`, { name: 'Bar' });
    expect((await api.delete(`/entities/types/${guid}`)).status).toBe(200);
    const again = await api.post('/entities/types', { name: 'bar' });
    expect([again.status, again.body.DATA.entity_type.guid]).toEqual([201, guid]);
    expect((await api.get(`/entities/${entity}`)).body.DATA.entity).toMatchObject({
      name: 'kept',
      type_guid: guid,
    });
    // the guid is live again, and the name it was derived from resolves to it
    expect((await api.post('/entities/types', { name: 'foo' })).body.DATA).toMatchObject({
      created: false,
      entity_type: { guid },
    });
  });
  it('unknown guids give unknown_entity_type (404)', async ({ world }) => {
    const { api } = await clientFor(world);
    for (const guid of ['nope', '00000000-0000-0000-0000-000000000000']) {
      expect((await api.get(`/entities/types/${guid}`)).body.DATA.reason).toBe('unknown_entity_type');
      expect((await api.patch(`/entities/types/${guid}`, { name: 'x' })).status).toBe(404);
    }
  });
});
