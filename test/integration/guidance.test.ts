// Refusals that point the way (docs/api.md#messages-that-point-the-way): a path segment that is not a guid, a type
// name one slip away from the caller's own, a misspelt GraphQL field. The reasons and statuses are the spec's.

import { describe, expect } from 'vitest';
import { MODEL_FORMAT } from '../../src/model/plans.js';
import { guidParameters } from '../../src/rest/route-table/fields.js';
import { ROUTES } from '../../src/rest/schemas.js';
import { it } from '../fixtures.js';
import { createType, newTenant, restClient, type TestWorld, tokenFor } from '../helpers.js';

async function clientFor(world: TestWorld, tenant = newTenant()) {
  return restClient(world.app, await tokenFor(tenant));
}

const graphql = async (world: TestWorld, token: string | undefined, query: string) => {
  const res = await world.app.inject({
    method: 'POST',
    url: '/graphql',
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      'content-type': 'application/json',
    },
    payload: JSON.stringify({ query }),
  });
  return { status: res.statusCode, text: res.body, body: res.json() };
};

describe('a path segment that is not a guid', () => {
  it('keeps the unknown guid refusal (404 unknown_entity_type) and says what to send instead', async ({
    world,
  }) => {
    const api = await clientFor(world);
    for (const path of ['/entities/types/Report/attributes', '/entities/types/Report']) {
      const res = await api.get(path);
      expect([res.status, res.body.STATUS, res.body.DATA.reason]).toEqual([
        404,
        'FAIL',
        'unknown_entity_type',
      ]);
      expect(res.body.MESSAGE).toBe(
        `"Report" is not a guid: this path takes an entity type's guid. Read the type by its name with GET /entities/types/by-name/Report, and use its guid.`,
      );
    }
  });

  it('a path one letter off that /entities/{guid} caught keeps 404 not_found, and says so', async ({
    world,
  }) => {
    const api = await clientFor(world);
    const res = await api.get('/entities/typez');
    expect([res.status, res.body.DATA.reason]).toEqual([404, 'not_found']);
    expect(res.body.MESSAGE).toContain('"typez" is not a guid');
    expect(res.body.MESSAGE).toContain('/entities/types');
  });

  it('a guid-shaped guid that resolves nothing is refused as before', async ({ world }) => {
    const api = await clientFor(world);
    const unknown = '00000000-0000-0000-0000-000000000000';
    const type = await api.get(`/entities/types/${unknown}/attributes`);
    expect([type.status, type.body.DATA.reason, type.body.MESSAGE]).toEqual([
      404,
      'unknown_entity_type',
      'No entity type has this guid.',
    ]);
    const entity = await api.get(`/entities/${unknown}`);
    expect([entity.status, entity.body.DATA.reason, entity.body.MESSAGE]).toEqual([
      404,
      'not_found',
      'No entity has this guid.',
    ]);
  });

  it('every guid the route table declares in a path is held to it, with that route’s reason', async ({
    world,
  }) => {
    const token = await tokenFor(newTenant());
    let checked = 0;
    for (const doc of Object.values(ROUTES)) {
      const shape = (doc as { params?: { shape: Record<string, any> } }).params?.shape ?? {};
      const guids = Object.entries(shape).filter(([, schema]) => guidParameters.has(schema));
      if (guids.length === 0) continue;
      const path = doc.path.replace(/:(\w+)/g, (_, param: string) =>
        guids.some(([name]) => name === param) ? 'Report' : 'x',
      );
      const res = await world.app.inject({
        method: doc.method,
        url: path,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(doc.method === 'GET' || doc.method === 'DELETE' ? {} : { payload: '{}' }),
      });
      const reason = guidParameters.get(guids[0]![1])!.unknown;
      expect([doc.operationId, res.statusCode, res.json().DATA.reason]).toEqual([
        doc.operationId,
        404,
        reason,
      ]);
      expect(res.json().MESSAGE).toContain('"Report" is not a guid');
      checked += 1;
    }
    expect(checked).toBeGreaterThanOrEqual(9);
  });

  it('a long segment is quoted in part', async ({ world }) => {
    const api = await clientFor(world);
    const res = await api.get(`/entities/types/${'r'.repeat(300)}`);
    expect(res.body.DATA.reason).toBe('unknown_entity_type');
    expect(res.body.MESSAGE).toContain(`"${'r'.repeat(64)}…" is not a guid`);
    expect(res.body.MESSAGE).toContain('/entities/types/by-name/{name}');
  });
});

describe('a type name that resolves nothing suggests the caller’s closest names', () => {
  it('by name: the same tenant’s close names, in the message only', async ({ world }) => {
    const api = await clientFor(world);
    await createType(api, 'Report');
    await createType(api, 'Reports');
    await createType(api, 'Customer');
    const res = await api.get('/entities/types/by-name/raport');
    expect([res.status, res.body.DATA]).toEqual([404, { reason: 'unknown_entity_type' }]);
    expect(res.body.MESSAGE).toBe('No entity type has this name. Did you mean "Report" or "Reports"?');
  });

  it('never another tenant’s names', async ({ world }) => {
    const theirs = await clientFor(world);
    await createType(theirs, 'Invoice');
    const mine = await clientFor(world);
    const res = await mine.get('/entities/types/by-name/Invoise');
    expect([res.status, res.body.DATA.reason]).toEqual([404, 'unknown_entity_type']);
    expect(res.body.MESSAGE).toBe('No entity type has this name.');
    // (the name is close enough: its own tenant is told)
    expect((await theirs.get('/entities/types/by-name/Invoise')).body.MESSAGE).toContain(
      'Did you mean "Invoice"?',
    );
  });

  it('allowed_ref_type given a type’s name: its guid is suggested; another tenant’s is not', async ({
    world,
  }) => {
    const api = await clientFor(world);
    const report = await createType(api, 'Report');
    const owner = await createType(api, 'Owner');
    const declare = (client: typeof api, on: string) =>
      client.post(`/entities/types/${on}/attributes`, {
        name: 'r',
        value_type: 'entity_ref',
        cardinality: 'single',
        allowed_ref_type: 'report',
      });
    const res = await declare(api, owner);
    expect([res.status, res.body.DATA.reason]).toEqual([404, 'unknown_entity_type']);
    expect(res.body.MESSAGE).toBe(
      `allowed_ref_type does not resolve to an entity type. Did you mean "Report" (guid ${report})?`,
    );
    const other = await clientFor(world);
    const refused = await declare(other, await createType(other, 'Owner'));
    expect([refused.status, refused.body.MESSAGE]).toEqual([
      404,
      'allowed_ref_type does not resolve to an entity type.',
    ]);
  });
});

describe('a model document’s allowed_ref_type that names no type', () => {
  const plan = (api: ReturnType<typeof restClient>, ref: string) =>
    api.post('/entities/model/plan', {
      format: MODEL_FORMAT,
      types: [
        {
          name: 'Quarterly Report',
          attributes: [
            { name: 'owner', value_type: 'entity_ref', cardinality: 'single', allowed_ref_type: ref },
          ],
        },
      ],
    });

  it('suggests the tenant’s close names (and the document’s), never another tenant’s', async ({ world }) => {
    const api = await clientFor(world);
    await createType(api, 'Person');
    const res = await plan(api, 'Persn');
    expect(res.status).toBe(200);
    expect(res.body.DATA.steps.find((s: any) => s.action === 'declare_attribute').blocked).toEqual({
      reason: 'unknown_entity_type',
      message: 'allowed_ref_type "Persn" names no type of the tenant or the document. Did you mean "Person"?',
    });
    const documents = await plan(api, 'Quarterly Reprot');
    expect(
      documents.body.DATA.steps.find((s: any) => s.action === 'declare_attribute').blocked.message,
    ).toContain('Did you mean "Quarterly Report"?');
    const other = await clientFor(world);
    const theirs = await plan(other, 'Persn');
    expect(theirs.body.DATA.steps.find((s: any) => s.action === 'declare_attribute').blocked).toEqual({
      reason: 'unknown_entity_type',
      message: 'allowed_ref_type "Persn" names no type of the tenant or the document.',
    });
  });
});

describe('GraphQL field suggestions', () => {
  it('shown to a caller with a verified token', async ({ world }) => {
    const token = await tokenFor(newTenant());
    const res = await graphql(world, token, '{ entityTypeByName(name: "table") { nmae } }');
    expect(res.body.errors[0].message).toContain('Did you mean "name"?');
  });

  it('never shown without one', async ({ world }) => {
    for (const token of [undefined, 'not-a-token']) {
      const res = await graphql(world, token, '{ entityTypeByName(name: "table") { nmae } }');
      expect(res.status).toBe(401);
      expect(res.text).not.toContain('Did you mean');
      expect(res.text).not.toContain('"name"');
    }
  });
});
