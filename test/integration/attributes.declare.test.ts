// Declaring attribute definitions (docs/api.md#attribute-definitions): POST /entities/types/{guid}/attributes, its
// refusals (docs/api.md#refusal-reasons) and limits (docs/api.md#limits-budgets-and-fairness).
import { describe, expect } from 'vitest';
import { it } from '../fixtures.js';
import { createType, newTenant, restClient, type TestWorld, tokenFor, typeGuidByName } from '../helpers.js';

async function setup(world: TestWorld) {
  const tenant = newTenant();
  const api = restClient(world.app, await tokenFor(tenant));
  const type = await createType(api, 'Report');
  const declare = (body: unknown, query = '') => api.post(`/entities/types/${type}/attributes${query}`, body);
  const list = async () =>
    (await api.get(`/entities/types/${type}/attributes`)).body.DATA.attributes as any[];
  return { tenant, api, type, declare, list };
}

const str = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  value_type: 'string',
  cardinality: 'single',
  ...extra,
});

async function expectRefused(res: { status: number; body: any }, status: number, reason: string) {
  expect(res.body).toMatchObject({ STATUS: 'FAIL', DATA: { reason } });
  expect(res.status).toBe(status);
}

describe('declare: success and defaults', () => {
  it('201 with every listed field; required and filterable default to false; origin user_defined', async ({
    world,
  }) => {
    const { type, declare, list } = await setup(world);
    const res = await declare(str(' Owner Email '));
    expect(res.status).toBe(201);
    const row = res.body.DATA.attribute;
    expect(row).toEqual({
      guid: expect.any(String),
      name: 'Owner Email',
      owner_type: type,
      value_type: 'string',
      cardinality: 'single',
      allowed_values: null,
      allowed_ref_type: null,
      required: false,
      default_value: null,
      filterable: false,
      origin: 'user_defined',
      description: null,
      display_name: null,
      redeclaring: null,
    });
    expect(res.body.DATA.usage).toEqual({ declared: 1, limit: 200 });
    expect((await list()).find((a) => a.guid === row.guid)).toEqual(row);
  });

  it('every value type and both cardinalities can be declared, with enumerations and defaults that fit', async ({
    world,
  }) => {
    const { declare } = await setup(world);
    const cases = [
      str('s', { allowed_values: ['a', 'b'], default_value: 'a', required: true }),
      {
        name: 'n',
        value_type: 'number',
        cardinality: 'multi',
        allowed_values: [1, 2.5],
        default_value: [2.5, 1],
      },
      { name: 'b', value_type: 'boolean', cardinality: 'single', default_value: false },
      { name: 'd', value_type: 'date', cardinality: 'single', default_value: '2024-02-29' },
      { name: 'dt', value_type: 'date', cardinality: 'multi', default_value: ['2024-02-29T10:00:00Z'] },
      {
        name: 'j',
        value_type: 'json',
        cardinality: 'single',
        allowed_values: [{ a: 1 }, [1, 2]],
        default_value: { a: 1 },
      },
    ];
    for (const body of cases) {
      const res = await declare(body);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.DATA.attribute).toMatchObject({
        value_type: body.value_type,
        cardinality: body.cardinality,
        default_value: (body as any).default_value,
        allowed_values: (body as any).allowed_values ?? null,
      });
    }
  });

  it('an entity_ref attribute is linked to its allowed_ref_type by a Neo4j relationship', async ({
    world,
  }) => {
    const { tenant, api, declare } = await setup(world);
    const owner = await createType(api, 'Person');
    const res = await declare({
      name: 'owner',
      value_type: 'entity_ref',
      cardinality: 'single',
      allowed_ref_type: owner,
      filterable: true,
    });
    expect(res.status).toBe(201);
    expect(res.body.DATA.attribute).toMatchObject({
      allowed_ref_type: owner,
      filterable: true,
      allowed_values: null,
    });
    const rel = await world.driver.executeQuery(
      `MATCH (a:AttributeDefinition {guid: $guid})-[:ALLOWED_REF_TYPE]->(t:EntityType) WHERE a.tenant = $tenant RETURN t.guid AS g`,
      { guid: res.body.DATA.attribute.guid, tenant },
    );
    expect(rel.records.map((r) => r.get('g'))).toEqual([owner]);
  });

  it('?dry_run=true validates everything and writes nothing', async ({ world }) => {
    const { declare, list } = await setup(world);
    const dry = await declare(str('preview'), '?dry_run=true');
    expect(dry.status).toBe(200);
    expect(dry.body.DATA).toMatchObject({
      dry_run: true,
      attribute: { name: 'preview' },
      usage: { declared: 0, limit: 200 },
    });
    expect((await list()).some((a) => a.name === 'preview')).toBe(false);
    await expectRefused(
      await declare(str('x', { filterable: true }), '?dry_run=true'),
      400,
      'filterable_not_supported',
    );
    expect((await declare(str('preview'))).status).toBe(201);
    await expectRefused(await declare(str('PREVIEW'), '?dry_run=true'), 409, 'attribute_def_already_exists');
  });
});

describe('declare: each malformed combination is refused with its own reason', () => {
  it('declaration rule 1 (docs/api.md): allowed_values on an entity_ref attribute → allowed_values_not_supported', async ({
    world,
  }) => {
    const { api, declare } = await setup(world);
    const ref = await createType(api, 'Target');
    await expectRefused(
      await declare({
        name: 'r',
        value_type: 'entity_ref',
        cardinality: 'single',
        allowed_ref_type: ref,
        allowed_values: [],
      }),
      400,
      'allowed_values_not_supported',
    );
  });

  it('declaration rule 2 (docs/api.md): allowed_ref_type on a non-reference attribute → allowed_ref_type_not_supported', async ({
    world,
  }) => {
    const { api, declare } = await setup(world);
    const ref = await createType(api, 'Target');
    await expectRefused(
      await declare(str('s', { allowed_ref_type: ref })),
      400,
      'allowed_ref_type_not_supported',
    );
  });

  it('declaration rule 3 (docs/api.md): entity_ref without allowed_ref_type → allowed_ref_type_required', async ({
    world,
  }) => {
    const { declare } = await setup(world);
    await expectRefused(
      await declare({ name: 'r', value_type: 'entity_ref', cardinality: 'multi' }),
      400,
      'allowed_ref_type_required',
    );
  });

  it('declaration rule 4 (docs/api.md): filterable on a non-reference attribute (true or false) → filterable_not_supported', async ({
    world,
  }) => {
    const { declare } = await setup(world);
    await expectRefused(await declare(str('s', { filterable: true })), 400, 'filterable_not_supported');
    await expectRefused(await declare(str('s', { filterable: false })), 400, 'filterable_not_supported');
  });

  it('declaration rule 5 (docs/api.md): a reference default that resolves to no entity → referent_not_found (404); wrong type → ref_type_mismatch', async ({
    world,
  }) => {
    const { api, declare } = await setup(world);
    const person = await createType(api, 'Person');
    const team = await createType(api, 'Team');
    const alice = (await api.post('/entities', { type_guid: person, name: 'Alice' })).body.DATA.entity.guid;
    const core = (await api.post('/entities', { type_guid: team, name: 'Core' })).body.DATA.entity.guid;
    const ref = (default_value: unknown, cardinality = 'single') => ({
      name: 'owner',
      value_type: 'entity_ref',
      cardinality,
      allowed_ref_type: person,
      default_value,
    });
    await expectRefused(
      await declare(ref('3f2b1c4e-0000-4000-8000-000000000000')),
      404,
      'referent_not_found',
    );
    await expectRefused(await declare(ref('no-such-entity')), 404, 'referent_not_found');
    await expectRefused(await declare(ref(42)), 400, 'invalid_default_value');
    await expectRefused(await declare(ref(core)), 400, 'ref_type_mismatch');
    await expectRefused(await declare(ref([alice, core], 'multi')), 400, 'ref_type_mismatch');
    // an entity of another tenant does not resolve
    const other = restClient(world.app, await tokenFor(newTenant()));
    const otherPerson = await createType(other, 'Person');
    const foreign = (await other.post('/entities', { type_guid: otherPerson, name: 'Eve' })).body.DATA.entity
      .guid;
    await expectRefused(await declare(ref(foreign)), 404, 'referent_not_found');
    const ok = await declare(ref(alice));
    expect(ok.status).toBe(201);
    expect(ok.body.DATA.attribute.default_value).toBe(alice);
  });

  it('declaration rule 6 (docs/api.md): value_type outside the six → unknown_value_type; cardinality → invalid_cardinality', async ({
    world,
  }) => {
    const { declare } = await setup(world);
    for (const value_type of ['text', 'STRING', '', 5, null, undefined]) {
      await expectRefused(
        await declare({ name: 'x', value_type, cardinality: 'single' }),
        400,
        'unknown_value_type',
      );
    }
    for (const cardinality of ['many', 'Single', '', 2, null]) {
      await expectRefused(
        await declare({ name: 'x', value_type: 'string', cardinality }),
        400,
        'invalid_cardinality',
      );
    }
  });

  it('declaration rule 7 (docs/api.md): declaring on the root type → base_type_not_owner; an unknown or foreign type guid → unknown_entity_type (404)', async ({
    world,
  }) => {
    const { api } = await setup(world);
    const root = await typeGuidByName(api, 'entity');
    await expectRefused(
      await api.post(`/entities/types/${root}/attributes`, str('x')),
      400,
      'base_type_not_owner',
    );
    await expectRefused(
      await api.post('/entities/types/no-such-guid/attributes', str('x')),
      404,
      'unknown_entity_type',
    );
    const foreignType = await createType(restClient(world.app, await tokenFor(newTenant())), 'Theirs');
    await expectRefused(
      await api.post(`/entities/types/${foreignType}/attributes`, str('x')),
      404,
      'unknown_entity_type',
    );
  });

  it('an allowed_ref_type that does not resolve in the tenant → unknown_entity_type', async ({ world }) => {
    const { declare } = await setup(world);
    await expectRefused(
      await declare({ name: 'r', value_type: 'entity_ref', cardinality: 'single', allowed_ref_type: 'nope' }),
      404,
      'unknown_entity_type',
    );
  });

  it('declaration rule 9 (docs/api.md): a name empty after trimming → empty_value (also missing or null)', async ({
    world,
  }) => {
    const { declare } = await setup(world);
    for (const name of ['', '   ', null, undefined]) {
      await expectRefused(
        await declare({ name, value_type: 'string', cardinality: 'single' }),
        400,
        'empty_value',
      );
    }
  });

  it('values of the wrong JSON type get documented reasons', async ({ world }) => {
    const { declare } = await setup(world);
    await expectRefused(await declare(str('s', { allowed_values: ['a', 1] })), 400, 'invalid_allowed_value');
    await expectRefused(
      await declare(str('s', { allowed_values: ['a', 'a'] })),
      400,
      'duplicate_allowed_value',
    );
    await expectRefused(await declare(str('s', { allowed_values: 'a' })), 400, 'invalid_field');
    await expectRefused(
      await declare({ name: 'd', value_type: 'date', cardinality: 'single', allowed_values: ['2023-02-30'] }),
      400,
      'invalid_allowed_value',
    );
    await expectRefused(
      await declare({ name: 'n', value_type: 'number', cardinality: 'single', default_value: '5' }),
      400,
      'invalid_default_value',
    );
    await expectRefused(
      await declare({ name: 'n', value_type: 'number', cardinality: 'multi', default_value: 5 }),
      400,
      'invalid_default_value',
    );
    await expectRefused(
      await declare(str('s', { allowed_values: ['a', 'b'], default_value: 'c' })),
      400,
      'default_value_not_allowed',
    );
    await expectRefused(await declare(str('s', { required: 'yes' })), 400, 'invalid_field');
    await expectRefused(await declare(str('s', { allowedValues: ['a'] })), 400, 'unknown_field');
    await expectRefused(await declare(str('s', { name: 7 })), 400, 'invalid_field');
    await expectRefused(
      await declare(str('s', { allowed_values: ['ok', 'x'.repeat(1025)] })),
      400,
      'invalid_allowed_value',
    );
    await expectRefused(
      await declare(str('s', { default_value: 'x'.repeat(70_000) })),
      400,
      'invalid_default_value',
    );
    for (const reserved of ['__proto__', 'constructor', 'Prototype']) {
      await expectRefused(await declare(str(reserved)), 400, 'invalid_field');
    }
  });

  it('allowed_values: 1,000 entries are accepted, 1,001 refused with too_many_allowed_values', async ({
    world,
  }) => {
    const { declare } = await setup(world);
    const values = Array.from({ length: 1001 }, (_, i) => `v${i}`);
    await expectRefused(
      await declare(str('big', { allowed_values: values })),
      400,
      'too_many_allowed_values',
    );
    const ok = await declare(str('big', { allowed_values: values.slice(0, 1000) }));
    expect(ok.status).toBe(201);
    expect(ok.body.DATA.attribute.allowed_values).toHaveLength(1000);
  });

  it('a refused declaration writes nothing', async ({ world }) => {
    const { tenant, declare, list } = await setup(world);
    const before = await list();
    await declare(str('s', { filterable: true }));
    await declare(str('s', { allowed_values: ['a', 'a'] }));
    await declare({ name: 'r', value_type: 'entity_ref', cardinality: 'single', allowed_ref_type: 'nope' });
    expect(await list()).toEqual(before);
    const nodes = await world.driver.executeQuery(
      "MATCH (a:AttributeDefinition {tenant: $tenant}) WHERE a.origin = 'user_defined' RETURN count(a) AS n",
      { tenant },
    );
    expect(nodes.records[0]!.get('n')).toBe(0);
  });
});

describe('declare: names and states', () => {
  it('a live name (any case or spacing) → attribute_def_already_exists (409), not a no-op', async ({
    world,
  }) => {
    const { declare } = await setup(world);
    expect((await declare(str('Status'))).status).toBe(201);
    await expectRefused(await declare(str(' status ')), 409, 'attribute_def_already_exists');
    await expectRefused(
      await declare({ name: 'STATUS', value_type: 'number', cardinality: 'multi' }),
      409,
      'attribute_def_already_exists',
    );
  });

  it('the names of the platform attributes are taken on every type', async ({ world }) => {
    const { declare } = await setup(world);
    for (const name of ['tags', 'Domain', 'ENV', 'classification', 'groups']) {
      const res = await declare(str(name));
      await expectRefused(res, 409, 'attribute_def_already_exists');
      // said as what it is: a platform attribute, not some earlier declaration
      expect(res.body.MESSAGE).toContain(`"${name}" is a platform attribute: every type has it`);
    }
  });

  it('the same name on another type is independent', async ({ world }) => {
    const { api, declare } = await setup(world);
    const other = await createType(api, 'Other');
    expect((await declare(str('shared'))).status).toBe(201);
    expect((await api.post(`/entities/types/${other}/attributes`, str('shared'))).status).toBe(201);
  });

  it('while withdrawn with data being removed, redeclaring → attribute_def_withdrawn (409)', async ({
    world,
  }) => {
    const { api, type, declare } = await setup(world);
    await declare(str('legacy'));
    expect((await api.delete(`/entities/attributes/${type}/legacy`)).status).toBe(200);
    await expectRefused(await declare(str('Legacy')), 409, 'attribute_def_withdrawn');
  });
});

describe('limits under concurrency', () => {
  it('200 definitions per type: the 201st is refused with too_many_attribute_defs', async ({ world }) => {
    const { declare, list } = await setup(world);
    for (let i = 0; i < 200; i += 20) {
      const batch = await Promise.all(Array.from({ length: 20 }, (_, j) => declare(str(`a${i + j}`))));
      expect(batch.every((r) => r.status === 201)).toBe(true);
    }
    await expectRefused(await declare(str('one-too-many')), 400, 'too_many_attribute_defs');
    expect(await list()).toHaveLength(205);
  });

  it('230 simultaneous declarations of distinct names create exactly 200', async ({ world }) => {
    const { tenant, type, declare } = await setup(world);
    const results = await Promise.all(Array.from({ length: 230 }, (_, i) => declare(str(`c${i}`))));
    expect(results.filter((r) => r.status === 201)).toHaveLength(200);
    const refused = results.filter((r) => r.status !== 201);
    expect(refused).toHaveLength(30);
    expect(refused.map((r) => r.body.DATA.reason).filter((r) => r !== 'too_many_attribute_defs')).toEqual([]);
    const stored = await world.driver.executeQuery(
      "MATCH (a:AttributeDefinition {tenant: $tenant, owner_guid: $type}) WHERE a.state = 'live' RETURN count(a) AS n",
      { tenant, type },
    );
    expect(stored.records[0]!.get('n')).toBe(200);
  });

  it('20 simultaneous declarations of one name create exactly one', async ({ world }) => {
    const { tenant, type, declare } = await setup(world);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => declare(str(i % 2 ? 'dup' : ' DUP '))),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(
      results.filter((r) => r.status === 409 && r.body.DATA.reason === 'attribute_def_already_exists'),
    ).toHaveLength(19);
    const stored = await world.driver.executeQuery(
      'MATCH (a:AttributeDefinition {tenant: $tenant, owner_guid: $type, name_key: "dup"}) RETURN count(a) AS n',
      { tenant, type },
    );
    expect(stored.records[0]!.get('n')).toBe(1);
  });
});
