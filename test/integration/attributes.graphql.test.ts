// GraphQL for attribute definitions: same resolvers and reasons as REST; nested reads batched by DataLoaders.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CatalogWithAttributesDocument,
  DeclareAttributeDocument,
  TypeAttributesDocument,
  WithdrawAttributeDocument,
} from '../generated/graphql.js';
import { createType, createWorld, gql, newTenant, restClient, type TestWorld, tokenFor } from '../helpers.js';

let world: TestWorld;
beforeAll(async () => {
  world = await createWorld();
});
afterAll(async () => {
  await world?.close();
});

const reasonOf = (res: { errors?: { extensions?: { reason?: string } }[] }) =>
  res.errors?.[0]?.extensions?.reason;

async function setup() {
  const tenant = newTenant();
  const token = await tokenFor(tenant);
  const api = restClient(world.app, token);
  return { tenant, token, api, type: await createType(api, 'Model') };
}

describe('declareAttribute and EntityType.attributes', () => {
  it('declares through the shared resolver; REST lists what GraphQL declared, with the same fields', async () => {
    const { token, api, type } = await setup();
    const target = await createType(api, 'Feature');
    const res = await gql(world.app, token, DeclareAttributeDocument, {
      typeGuid: type,
      input: {
        name: 'Inputs',
        valueType: 'entity_ref',
        cardinality: 'multi',
        allowedRefType: target,
        filterable: true,
      },
    });
    expect(res.errors).toBeUndefined();
    const attr = res.data!.declareAttribute.attribute;
    expect(attr).toMatchObject({
      name: 'Inputs',
      valueType: 'entity_ref',
      cardinality: 'multi',
      filterable: true,
      required: false,
      origin: 'user_defined',
      state: 'live',
      ownerType: { guid: type },
      allowedRefType: { guid: target, name: 'Feature' },
      allowedValues: null,
      allowedValuesUsage: null,
    });
    expect(res.data!.declareAttribute.usage).toEqual({ used: 1, limit: 200 });
    const rest = (await api.get(`/entities/types/${type}/attributes`)).body.DATA.attributes;
    expect(rest.at(-1)).toMatchObject({
      guid: attr.guid,
      name: 'Inputs',
      owner_type: type,
      allowed_ref_type: target,
    });

    const listed = await gql(world.app, token, TypeAttributesDocument, { guid: type });
    expect(listed.data!.entityType!.attributes.map((a) => a.name)).toEqual(rest.map((a: any) => a.name));
    expect(listed.data!.entityType!.attributes[0]!.ownerType).toBeNull();
    expect(listed.data!.entityType!.attributeUsage).toEqual({ used: 1, limit: 200 });
  });

  it('refusals carry the REST reasons in extensions.reason, including for valueType and cardinality', async () => {
    const { token, type } = await setup();
    const declare = (input: any) =>
      gql(world.app, token, DeclareAttributeDocument, { typeGuid: type, input });
    expect(reasonOf(await declare({ name: 'x', valueType: 'text', cardinality: 'single' }))).toBe(
      'unknown_value_type',
    );
    expect(reasonOf(await declare({ name: 'x', valueType: 'string', cardinality: 'many' }))).toBe(
      'invalid_cardinality',
    );
    expect(
      reasonOf(await declare({ name: 'x', valueType: 'string', cardinality: 'single', filterable: true })),
    ).toBe('filterable_not_supported');
    expect(reasonOf(await declare({ name: 'x', valueType: 'entity_ref', cardinality: 'single' }))).toBe(
      'allowed_ref_type_required',
    );
    expect(reasonOf(await declare({ name: ' ', valueType: 'string', cardinality: 'single' }))).toBe(
      'empty_value',
    );
    const tooMany = Array.from({ length: 1001 }, (_, i) => i);
    expect(
      reasonOf(
        await declare({ name: 'n', valueType: 'number', cardinality: 'single', allowedValues: tooMany }),
      ),
    ).toBe('too_many_allowed_values');
    expect(
      reasonOf(
        await gql(world.app, token, DeclareAttributeDocument, {
          typeGuid: 'nope',
          input: { name: 'x', valueType: 'string', cardinality: 'single' },
        }),
      ),
    ).toBe('unknown_entity_type');
  });

  it('allowedValuesUsage reports the enumeration against its 1,000 limit; dryRun writes nothing', async () => {
    const { token, type } = await setup();
    const dry = await gql(world.app, token, DeclareAttributeDocument, {
      typeGuid: type,
      input: {
        name: 'level',
        valueType: 'string',
        cardinality: 'single',
        allowedValues: ['low', 'high'],
        defaultValue: 'low',
      },
      dryRun: true,
    });
    expect(dry.data!.declareAttribute).toMatchObject({
      dryRun: true,
      attribute: { allowedValuesUsage: { used: 2, limit: 1000 } },
    });
    const listed = await gql(world.app, token, TypeAttributesDocument, { guid: type });
    expect(listed.data!.entityType!.attributes.some((a) => a.name === 'level')).toBe(false);
  });
});

describe('withdrawAttribute and withdrawn definitions', () => {
  it('reports the impact on a dry run, then shows the withdrawn definition with its purge state', async () => {
    const { token, api, type } = await setup();
    await api.post(`/entities/types/${type}/attributes`, {
      name: 'notes',
      value_type: 'string',
      cardinality: 'single',
    });
    await api.post('/entities', { type_guid: type, name: 'm1', values: { notes: 'a' } });
    await api.post('/entities', { type_guid: type, name: 'm2', values: { notes: 'b' } });
    const dry = await gql(world.app, token, WithdrawAttributeDocument, {
      typeGuid: type,
      name: 'notes',
      dryRun: true,
    });
    expect(dry.data!.withdrawAttribute).toMatchObject({ dryRun: true, impact: { instances: 2, values: 2 } });
    const done = await gql(world.app, token, WithdrawAttributeDocument, { typeGuid: type, name: 'NOTES' });
    expect(done.data!.withdrawAttribute).toMatchObject({ dryRun: false, attribute: { state: 'withdrawn' } });
    await world.app.services.purger.idle();
    const view = await gql(world.app, token, TypeAttributesDocument, { guid: type });
    expect(view.data!.entityType!.attributes.some((a) => a.name === 'notes')).toBe(false);
    expect(view.data!.entityType!.withdrawnAttributes).toEqual([
      {
        state: 'withdrawn',
        withdrawnAt: expect.any(String),
        valuesRemoved: 2,
        valuesRemaining: 0,
        purgeLastRanAt: expect.any(String),
        definition: { name: 'notes' },
      },
    ]);
    expect(
      reasonOf(await gql(world.app, token, WithdrawAttributeDocument, { typeGuid: type, name: 'notes' })),
    ).toBe('attribute_def_withdrawn');
  });
});

describe('round trips', () => {
  it('every type with every attribute and its referenced type costs at most 4 queries, whatever the page size', async () => {
    const { token, api } = await setup();
    const types: string[] = [];
    for (let i = 0; i < 40; i++) types.push(await createType(api, `k${String(i).padStart(2, '0')}`));
    for (let i = 0; i < types.length; i++) {
      await api.post(`/entities/types/${types[i]}/attributes`, {
        name: 'next',
        value_type: 'entity_ref',
        cardinality: 'single',
        allowed_ref_type: types[(i + 1) % types.length],
      });
      await api.post(`/entities/types/${types[i]}/attributes`, {
        name: 'size',
        value_type: 'number',
        cardinality: 'single',
      });
    }
    const small = await gql(world.app, token, CatalogWithAttributesDocument, { first: 5 });
    const large = await gql(world.app, token, CatalogWithAttributesDocument, { first: 60 });
    expect(small.errors).toBeUndefined();
    expect(large.data!.entityTypes.edges).toHaveLength(52);
    const k00 = large.data!.entityTypes.edges.find((e) => e.node.name === 'k00')!.node;
    expect(k00.attributes.find((a) => a.name === 'next')).toEqual({
      name: 'next',
      ownerType: { name: 'k00' },
      allowedRefType: { name: 'k01' },
    });
    // Page, own definitions, platform definitions (with the types they reference), and one batch for referenced
    // types outside the page (none when the page holds them all): never more, whatever the page size.
    expect(small.queries).toBe(4);
    expect(large.queries).toBe(3);
  });
});
