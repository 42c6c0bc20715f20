// A type's former names (docs/api.md#decisions-where-the-specification-is-silent, Rename): listed on its row and in
// GraphQL, most recent first, with when each was left; a name taken back leaves the list; a change of spelling
// adds nothing.
import { describe, expect } from 'vitest';
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
});
