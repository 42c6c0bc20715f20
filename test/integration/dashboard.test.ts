// The managed `dashboard` type (docs/api.md#decisions-where-the-specification-is-silent): its row, and
// POST /entities/types beside POST /platform/dashboards.
import { describe, expect } from 'vitest';
import { typeGuid } from '../../src/model/names.js';
import { it } from '../fixtures.js';
import { newTenant, restClient, type TestWorld, tokenFor } from '../helpers.js';

async function tenantClients(world: TestWorld) {
  const tenant = newTenant();
  return {
    tenant,
    user: restClient(world.app, await tokenFor(tenant)),
    platform: restClient(world.app, await tokenFor(tenant, { roles: ['platform'] })),
  };
}

const countDashboardTypes = async (world: TestWorld, tenant: string) =>
  (
    await world.driver.executeQuery(
      `MATCH (t:EntityType {tenant: $tenant}) WHERE t.name_key = 'dashboard' RETURN count(t) AS n`,
      { tenant },
    )
  ).records[0]!.get('n');

describe('managed type dashboard, not yet set up', () => {
  it('creating it is refused with type_instances_managed (409), whatever the case and spacing', async ({
    world,
  }) => {
    const { tenant, user } = await tenantClients(world);
    for (const name of ['dashboard', ' Dashboard ', 'DASHBOARD']) {
      const res = await user.post('/entities/types', { name });
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ STATUS: 'FAIL', DATA: { reason: 'type_instances_managed' } });
    }
    expect(await countDashboardTypes(world, tenant)).toBe(0);
    const list = await user.get('/entities/types?page_size=500');
    expect(list.body.DATA.entity_types.some((t: any) => t.name === 'dashboard')).toBe(false);
  });

  it('only the platform role may write dashboard rows (403 not_authorized otherwise)', async ({ world }) => {
    const { tenant, user } = await tenantClients(world);
    const res = await user.post('/platform/dashboards', { name: 'Revenue' });
    expect(res.status).toBe(403);
    expect(res.body.DATA.reason).toBe('not_authorized');
    expect(await countDashboardTypes(world, tenant)).toBe(0);
  });
});

describe('managed type dashboard, set up by the first dashboard row', () => {
  it('the first row sets the type up; the row has exactly the managed fields; later rows reuse it', async ({
    world,
  }) => {
    const { tenant, user, platform } = await tenantClients(world);
    const first = await platform.post('/platform/dashboards', { name: 'Revenue' });
    expect(first.status).toBe(201);
    expect(first.body.DATA).toMatchObject({ created: true, type_set_up: true, entity: { name: 'Revenue' } });
    const row = first.body.DATA.entity_type;
    expect(Object.keys(row).sort()).toEqual(
      [
        'catalog_level',
        'created_at',
        'creatable',
        'guid',
        'icon',
        'label',
        'name',
        'name_locked_hint',
        'origin',
        'version',
      ].sort(),
    );
    expect(row).toMatchObject({ name: 'dashboard', origin: 'system', catalog_level: true, creatable: false });
    expect(row.guid).toBe(typeGuid(tenant, 'dashboard'));
    expect(first.body.DATA.entity.type_guid).toBe(row.guid);

    const same = await platform.post('/platform/dashboards', { name: ' revenue ' });
    expect(same.status).toBe(200);
    expect(same.body.DATA).toMatchObject({
      created: false,
      type_set_up: false,
      entity: first.body.DATA.entity,
    });
    const second = await platform.post('/platform/dashboards', { name: 'Churn' });
    expect(second.status).toBe(201);
    expect(second.body.DATA.type_set_up).toBe(false);

    const byCaller = await user.post('/entities/types', { name: 'Dashboard' });
    expect(byCaller.status).toBe(200);
    expect(byCaller.body.DATA).toEqual({ entity_type: row, created: false });
    const listed = (await user.get('/entities/types?page_size=500')).body.DATA.entity_types;
    expect(listed.filter((t: any) => t.name === 'dashboard')).toEqual([row]);
    expect(await countDashboardTypes(world, tenant)).toBe(1);
  });

  it('the platform keeps the managed type in step: a drifted row is brought back by the next dashboard write', async ({
    world,
  }) => {
    const { tenant, platform } = await tenantClients(world);
    const row = (await platform.post('/platform/dashboards', { name: 'One' })).body.DATA.entity_type;
    await world.driver.executeQuery(
      "MATCH (t:EntityType {tenant: $tenant, name_key: 'dashboard'}) SET t.label = 'Old label', t.creatable = true",
      { tenant },
    );
    const next = await platform.post('/platform/dashboards', { name: 'Two' });
    expect(next.body.DATA.entity_type).toEqual(row);
  });
  it('the managed type cannot be renamed or deleted', async ({ world }) => {
    const { user, platform } = await tenantClients(world);
    const guid = (await platform.post('/platform/dashboards', { name: 'Ops' })).body.DATA.entity_type.guid;
    expect((await user.patch(`/entities/types/${guid}`, { name: 'boards' })).body.DATA.reason).toBe(
      'type_not_user_defined',
    );
    expect((await user.delete(`/entities/types/${guid}`)).body.DATA.reason).toBe('type_not_user_defined');
  });

  it('20 concurrent first rows set the type up exactly once', async ({ world }) => {
    const { tenant, platform } = await tenantClients(world);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => platform.post('/platform/dashboards', { name: `Board ${i % 5}` })),
    );
    expect(results.every((r) => r.status === 200 || r.status === 201)).toBe(true);
    expect(results.filter((r) => r.body.DATA.type_set_up === true)).toHaveLength(1);
    expect(results.filter((r) => r.body.DATA.created === true)).toHaveLength(5);
    expect(await countDashboardTypes(world, tenant)).toBe(1);
    const rows = await world.driver.executeQuery(
      'MATCH (e:Entity {tenant: $tenant}) WHERE e.managed_key STARTS WITH "dashboard:" RETURN count(e) AS n',
      { tenant },
    );
    expect(rows.records[0]!.get('n')).toBe(5);
  });

  it('the managed type is per tenant: setting it up in one tenant does not set it up in another', async ({
    world,
  }) => {
    const a = await tenantClients(world);
    const b = await tenantClients(world);
    await a.platform.post('/platform/dashboards', { name: 'X' });
    expect((await b.user.post('/entities/types', { name: 'dashboard' })).body.DATA.reason).toBe(
      'type_instances_managed',
    );
  });
});

describe('a user-defined dashboard type from before the managed-type release', () => {
  /** The state a migration of pre-release data finds: a caller's own `dashboard` type. */
  async function legacyTenant(world: TestWorld) {
    const clients = await tenantClients(world);
    await clients.user.get('/entities/types'); // the tenant is seen (system types exist)
    const guid = typeGuid(clients.tenant, 'dashboard');
    await world.driver.executeQuery(
      `CREATE (:EntityType {tenant: $tenant, guid: $guid, name: 'Dashboard', name_key: 'dashboard',
                            origin: 'user_defined', catalog_level: true, created_at: datetime('2024-01-01T00:00:00Z')})`,
      { tenant: clients.tenant, guid },
    );
    return { ...clients, guid };
  }

  it('stays user_defined, is returned by create-or-get, and is listed as a user-defined catalog level', async ({
    world,
  }) => {
    const { user, guid } = await legacyTenant(world);
    const res = await user.post('/entities/types', { name: 'dashboard' });
    expect(res.status).toBe(200);
    expect(res.body.DATA).toEqual({
      created: false,
      entity_type: {
        guid,
        name: 'Dashboard',
        origin: 'user_defined',
        catalog_level: true,
        // stored as a Neo4j datetime, answered as ISO 8601 to the millisecond
        created_at: '2024-01-01T00:00:00.000Z',
        // never changed since: its change count 0, and when it was created
        version: `0-${Date.parse('2024-01-01T00:00:00Z')}`,
      },
    });
    const listed = (await user.get('/entities/types?page_size=500')).body.DATA.entity_types;
    expect(listed.filter((t: any) => t.guid === guid)).toEqual([res.body.DATA.entity_type]);
  });

  it('blocks the platform from adding dashboards while it exists (409 managed_type_blocked, nothing written)', async ({
    world,
  }) => {
    const { tenant, platform } = await legacyTenant(world);
    const res = await platform.post('/platform/dashboards', { name: 'Revenue' });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ STATUS: 'FAIL', DATA: { reason: 'managed_type_blocked' } });
    expect(await countDashboardTypes(world, tenant)).toBe(1);
    const entities = await world.driver.executeQuery(
      'MATCH (e:Entity {tenant: $tenant}) RETURN count(e) AS n',
      { tenant },
    );
    expect(entities.records[0]!.get('n')).toBe(0);
  });

  it('still blocks after being renamed (its guid keeps the name), and unblocks once deleted', async ({
    world,
  }) => {
    const { user, platform, guid } = await legacyTenant(world);
    await user.patch(`/entities/types/${guid}`, { name: 'Old Boards' });
    expect((await platform.post('/platform/dashboards', { name: 'Revenue' })).body.DATA.reason).toBe(
      'managed_type_blocked',
    );
    expect((await user.delete(`/entities/types/${guid}`)).status).toBe(200);
    const res = await platform.post('/platform/dashboards', { name: 'Revenue' });
    expect(res.status).toBe(201);
    expect(res.body.DATA.entity_type).toMatchObject({ origin: 'system', creatable: false, guid });
  });
});
