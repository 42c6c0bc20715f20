// A type's former names (docs/api.md#decisions-where-the-specification-is-silent, Rename): listed on its row and in
// GraphQL, most recent first, with when each was left; a name taken back leaves the list; a change of spelling
// adds nothing.
import { describe, expect } from 'vitest';
import { MAX_FORMER_NAMES, MAX_FORMER_NAMES_JSON_BYTES } from '../../src/model/limits.js';
import { it } from '../fixtures.js';
import { graphqlClient, newTenant, restClient, tokenFor } from '../helpers.js';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('former names', () => {
  it('a type lists the names it had, most recent first, with when each was left', async ({ world }) => {
    const token = await tokenFor(newTenant());
    const api = restClient(world.app, token);
    const created = (await api.post('/entities/types', { name: 'Orders' })).body.DATA.entity_type;
    expect(created).not.toHaveProperty('former_names');
    const t0 = Date.now();
    await api.patch(`/entities/types/${created.guid}`, { name: 'Purchases' });
    await api.patch(`/entities/types/${created.guid}`, { name: 'Sales' });
    // a change of spelling only: the same name, nothing left
    await api.patch(`/entities/types/${created.guid}`, { name: 'SALES' });
    const row = (await api.get(`/entities/types/${created.guid}`)).body.DATA.entity_type;
    expect(row.name).toBe('SALES');
    expect(row.former_names.map((f: { name: string }) => f.name)).toEqual(['Purchases', 'Orders']);
    for (const f of row.former_names) {
      expect(f.left_at).toMatch(ISO);
      expect(Date.parse(f.left_at)).toBeGreaterThanOrEqual(t0 - 1000);
    }
    expect(Date.parse(row.former_names[0].left_at)).toBeGreaterThanOrEqual(
      Date.parse(row.former_names[1].left_at),
    );

    // taking a former name back removes it from the list; the name left is first
    await api.patch(`/entities/types/${created.guid}`, { name: 'orders' });
    const back = (await api.get(`/entities/types/${created.guid}`)).body.DATA.entity_type;
    expect(back.former_names.map((f: { name: string }) => f.name)).toEqual(['SALES', 'Purchases']);

    // the listing and GraphQL (through the typed client) say the same
    const listed = (await api.get('/entities/types?page_size=500')).body.DATA.entity_types.find(
      (t: { guid: string }) => t.guid === created.guid,
    );
    expect(listed.former_names).toEqual(back.former_names);
    const gql = await graphqlClient(world.app, token).entityType(created.guid);
    expect(gql!.formerNames).toEqual(
      back.former_names.map((f: { name: string; left_at: string }) => ({
        name: f.name,
        leftAt: f.left_at,
        releasedAt: null,
      })),
    );
  });

  it(`a row keeps the most recent former names within ${MAX_FORMER_NAMES} and ${MAX_FORMER_NAMES_JSON_BYTES.toLocaleString('en-US')} bytes; a page of such rows stays within its bound`, async ({
    world,
  }) => {
    const tenant = newTenant();
    const token = await tokenFor(tenant);
    const api = restClient(world.app, token);
    // names of 256 characters, four bytes each: about a kilobyte of JSON a former name
    const wide = (i: number) => `${String.fromCodePoint(0x20000 + i)}${'😀'.repeat(255)}`;
    const created = (await api.post('/entities/types', { name: wide(0) })).body.DATA.entity_type;
    for (let i = 1; i <= 6; i += 1) {
      expect((await api.patch(`/entities/types/${created.guid}`, { name: wide(i) })).status).toBe(200);
    }
    const row = (await api.get(`/entities/types/${created.guid}`)).body.DATA.entity_type;
    const kept = row.former_names.map((f: { name: string }) => f.name);
    // the most recent first, as many as fit: three of about 1,070 bytes each
    expect(kept).toEqual([wide(5), wide(4), wide(3)]);
    expect(Buffer.byteLength(JSON.stringify(row.former_names))).toBeLessThanOrEqual(
      MAX_FORMER_NAMES_JSON_BYTES,
    );
    // short names: the count is the bound
    const short = (await api.post('/entities/types', { name: 'n0' })).body.DATA.entity_type;
    for (let i = 1; i <= MAX_FORMER_NAMES + 2; i += 1) {
      await api.patch(`/entities/types/${short.guid}`, { name: `n${i}` });
    }
    const shortRow = (await api.get(`/entities/types/${short.guid}`)).body.DATA.entity_type;
    expect(shortRow.former_names).toHaveLength(MAX_FORMER_NAMES);
    expect(shortRow.former_names[0].name).toBe(`n${MAX_FORMER_NAMES + 1}`);
    // a list stored longer (by an earlier release) is brought within the bound, on the row and in pages
    await world.driver.executeQuery(
      'MATCH (t:EntityType {guid: $guid}) WHERE t.tenant = $tenant SET t.former_names_json = $json',
      {
        tenant,
        guid: created.guid,
        json: JSON.stringify(
          Array.from({ length: MAX_FORMER_NAMES }, (_, i) => ({
            name: wide(100 + i),
            left_at: new Date().toISOString(),
          })),
        ),
      },
    );
    await api.patch(`/entities/types/${created.guid}`, { name: 'plain' });
    const page = await api.get('/entities/types?page_size=500');
    const listed = page.body.DATA.entity_types.find((t: { guid: string }) => t.guid === created.guid);
    expect(listed.former_names[0].name).toBe(wide(6));
    expect(Buffer.byteLength(JSON.stringify(listed.former_names))).toBeLessThanOrEqual(
      MAX_FORMER_NAMES_JSON_BYTES,
    );
    expect(listed.former_names.length).toBeLessThan(5);
  });
});
