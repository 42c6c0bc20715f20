// GraphQL for attribute definitions: same resolvers and reasons as REST; nested reads batched by DataLoaders.
import { describe, expect } from 'vitest';
import {
  CatalogWithAttributesDocument,
  DeclareAttributeDocument,
  TypeAttributesDocument,
  WithdrawAttributeDocument,
} from '../../client/src/index.js';
import { itWith } from '../fixtures.js';
import {
  createType,
  graphqlClient,
  graphqlCountingParses,
  newTenant,
  refusalOf,
  restClient,
  type TestWorld,
  tokenFor,
} from '../helpers.js';

// (version reads counted one by one: without read leases, which read-leases.test.ts holds)
const it = itWith({ MODEL_READ_LEASE_MS: '0' });

async function setup(world: TestWorld) {
  const tenant = newTenant();
  const token = await tokenFor(tenant);
  const api = restClient(world.app, token);
  return { tenant, client: graphqlClient(world.app, token), api, type: await createType(api, 'Model') };
}

describe('declareAttribute and EntityType.attributes', () => {
  it('declares through the shared resolver; REST lists what GraphQL declared, with the same fields', async ({
    world,
  }) => {
    const { client, api, type } = await setup(world);
    const target = await createType(api, 'Feature');
    const res = await client.request(DeclareAttributeDocument, {
      typeGuid: type,
      input: {
        name: 'Inputs',
        valueType: 'entity_ref',
        cardinality: 'multi',
        allowedRefType: target,
        filterable: true,
      },
    });
    const attr = res.declareAttribute.attribute;
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
    expect(res.declareAttribute.usage).toEqual({ declared: 1, limit: 200 });
    const rest = (await api.get(`/entities/types/${type}/attributes`)).body.DATA.attributes;
    expect(rest.at(-1)).toMatchObject({
      guid: attr.guid,
      name: 'Inputs',
      owner_type: type,
      allowed_ref_type: target,
    });

    const listed = await client.request(TypeAttributesDocument, { guid: type });
    expect(listed.entityType!.attributes.map((a) => a.name)).toEqual(rest.map((a: any) => a.name));
    expect(listed.entityType!.attributes[0]!.ownerType).toBeNull();
    expect(listed.entityType!.attributeUsage).toEqual({ declared: 1, limit: 200 });
    expect(await client.typeAttributes(type)).toEqual(listed.entityType);
  });

  it('refusals carry the REST reasons in extensions.reason, including for valueType and cardinality', async ({
    world,
  }) => {
    const { client, type } = await setup(world);
    const declare = (input: any) =>
      refusalOf(client.request(DeclareAttributeDocument, { typeGuid: type, input }));
    expect(await declare({ name: 'x', valueType: 'text', cardinality: 'single' })).toBe('unknown_value_type');
    expect(await declare({ name: 'x', valueType: 'string', cardinality: 'many' })).toBe(
      'invalid_cardinality',
    );
    expect(await declare({ name: 'x', valueType: 'string', cardinality: 'single', filterable: true })).toBe(
      'filterable_not_supported',
    );
    expect(await declare({ name: 'x', valueType: 'entity_ref', cardinality: 'single' })).toBe(
      'allowed_ref_type_required',
    );
    expect(await declare({ name: ' ', valueType: 'string', cardinality: 'single' })).toBe('empty_value');
    const tooMany = Array.from({ length: 1001 }, (_, i) => i);
    expect(
      await declare({ name: 'n', valueType: 'number', cardinality: 'single', allowedValues: tooMany }),
    ).toBe('too_many_allowed_values');
    expect(
      await refusalOf(
        client.declareAttribute('nope', { name: 'x', valueType: 'string', cardinality: 'single' }),
      ),
    ).toBe('unknown_entity_type');
  });

  it('allowedValuesUsage reports the enumeration against its 1,000 limit; dryRun writes nothing', async ({
    world,
  }) => {
    const { client, type } = await setup(world);
    const dry = await client.request(DeclareAttributeDocument, {
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
    expect(dry.declareAttribute).toMatchObject({
      dryRun: true,
      attribute: { allowedValuesUsage: { declared: 2, limit: 1000 } },
    });
    const listed = await client.request(TypeAttributesDocument, { guid: type });
    expect(listed.entityType!.attributes.some((a) => a.name === 'level')).toBe(false);
  });
  it('an operation selecting definitions several times (aliases) answers each with its own enumeration and default', async ({
    world,
  }) => {
    const { tenant, api, type } = await setup(world);
    const declare = (name: string, allowed: string[], dflt: string) =>
      api.post(`/entities/types/${type}/attributes`, {
        name,
        value_type: 'string',
        cardinality: 'single',
        allowed_values: allowed,
        default_value: dflt,
      });
    expect((await declare('tier', ['gold', 'silver'], 'silver')).status).toBe(201);
    expect((await declare('size', ['s', 'm', 'l'], 'm')).status).toBe(201);
    const query = `{ a: entityType(guid: "${type}") { attributes { name allowedValues defaultValue } }
      b: entityType(guid: "${type}") { attributes { name defaultValue allowedValues } } }`;
    const res = await world.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { authorization: `Bearer ${await tokenFor(tenant)}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ query }),
    });
    type Row = { name: string; allowedValues: string[] | null; defaultValue: unknown };
    const data = res.json().data as Record<'a' | 'b', { attributes: Row[] }>;
    for (const alias of ['a', 'b'] as const) {
      const byName = new Map(data[alias].attributes.map((r) => [r.name, r]));
      expect(byName.get('tier')).toMatchObject({ allowedValues: ['gold', 'silver'], defaultValue: 'silver' });
      expect(byName.get('size')).toMatchObject({ allowedValues: ['s', 'm', 'l'], defaultValue: 'm' });
    }
  });

  it('usage counts under the name REST gives it, declared; the former name, used, still answers the same count', async ({
    world,
  }) => {
    const { tenant, api, type } = await setup(world);
    const rest = await api.post(`/entities/types/${type}/attributes`, {
      name: 'level',
      value_type: 'string',
      cardinality: 'single',
      allowed_values: ['low', 'mid', 'high'],
    });
    expect(rest.body.DATA.usage).toEqual({ declared: 1, limit: 200 });
    const query = `{ entityType(guid: "${type}") { attributeUsage { declared used limit }
      attributes { name allowedValuesUsage { declared used limit } } } }`;
    const res = await world.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { authorization: `Bearer ${await tokenFor(tenant)}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ query }),
    });
    const { entityType } = res.json().data;
    expect(entityType.attributeUsage).toEqual({ ...rest.body.DATA.usage, used: 1 });
    expect(
      entityType.attributes.find((a: { name: string }) => a.name === 'level').allowedValuesUsage,
    ).toEqual({
      declared: 3,
      used: 3,
      limit: 1000,
    });
  });
});

describe('enumerations and defaults of megabytes', () => {
  it('are answered as stored, never parsed: the same values as REST in every alias, usage counted from the text', async ({
    world,
  }) => {
    const { tenant, api, type } = await setup(world);
    // 1,000 values of 1,024 characters (the longest allowed) with quotes and backslashes: a megabyte of enumeration,
    // and a default longer than the texts that are parsed rather than spliced.
    const allowed = Array.from(
      { length: 1000 },
      (_, i) => `${String(i).padStart(4, '0')}"\\${'v'.repeat(1018)}`,
    );
    const declared = await api.post(`/entities/types/${type}/attributes`, {
      name: 'grade',
      value_type: 'string',
      cardinality: 'single',
      allowed_values: allowed,
      default_value: allowed[7],
    });
    expect(declared.status).toBe(201);
    const field = `entityType(guid: "${type}") { attributes { name allowedValues defaultValue allowedValuesUsage { declared limit } } }`;
    const { res, parses } = await graphqlCountingParses(
      world.app,
      await tokenFor(tenant),
      `{ a: ${field} b: ${field} }`,
      1024,
    );
    expect(res.statusCode).toBe(200);
    // No stored text of the definition is parsed on the way to the answer (neither the enumeration nor the default).
    expect(parses).toBe(0);
    const text = res.body;
    type Row = {
      name: string;
      allowedValues: string[] | null;
      defaultValue: unknown;
      allowedValuesUsage: unknown;
    };
    const data = JSON.parse(text).data as Record<'a' | 'b', { attributes: Row[] }>;
    const listed = (await api.get(`/entities/types/${type}/attributes`)).body.DATA.attributes as {
      name: string;
      allowed_values: unknown;
      default_value: unknown;
    }[];
    const rest = listed.find((a) => a.name === 'grade');
    expect(rest?.allowed_values).toEqual(allowed);
    for (const alias of ['a', 'b'] as const) {
      expect(data[alias].attributes.find((r) => r.name === 'grade')).toEqual({
        name: 'grade',
        allowedValues: rest?.allowed_values,
        defaultValue: allowed[7],
        allowedValuesUsage: { declared: 1000, limit: 1000 },
      });
    }
  });
});

describe('withdrawAttribute and withdrawn definitions', () => {
  it('reports the impact on a dry run, then shows the withdrawn definition with its purge state', async ({
    world,
  }) => {
    const { client, api, type } = await setup(world);
    await api.post(`/entities/types/${type}/attributes`, {
      name: 'notes',
      value_type: 'string',
      cardinality: 'single',
    });
    await api.post('/entities', { type_guid: type, name: 'm1', values: { notes: 'a' } });
    await api.post('/entities', { type_guid: type, name: 'm2', values: { notes: 'b' } });
    const dry = await client.request(WithdrawAttributeDocument, {
      typeGuid: type,
      name: 'notes',
      dryRun: true,
    });
    expect(dry.withdrawAttribute).toMatchObject({ dryRun: true, impact: { instances: 2, values: 2 } });
    expect(await client.withdrawAttribute(type, 'notes', { dryRun: true })).toEqual(dry.withdrawAttribute);
    const done = await client.request(WithdrawAttributeDocument, { typeGuid: type, name: 'NOTES' });
    expect(done.withdrawAttribute).toMatchObject({ dryRun: false, attribute: { state: 'withdrawn' } });
    await world.app.services.purger.idle();
    const view = await client.request(TypeAttributesDocument, { guid: type });
    expect(view.entityType!.attributes.some((a) => a.name === 'notes')).toBe(false);
    expect(view.entityType!.withdrawnAttributes).toEqual([
      {
        state: 'withdrawn',
        withdrawnAt: expect.any(String),
        valuesRemoved: 2,
        valuesRemaining: 0,
        purgeLastRanAt: expect.any(String),
        definition: { name: 'notes' },
      },
    ]);
    expect(await refusalOf(client.withdrawAttribute(type, 'notes'))).toBe('attribute_def_withdrawn');
  });
});

describe('round trips', () => {
  it('every type with every attribute and its referenced type costs at most 4 queries, whatever the page size', async ({
    world,
  }) => {
    const { client, api } = await setup(world);
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
    await client.request(CatalogWithAttributesDocument, { first: 5 });
    const smallQueries = client.lastQueries();
    const large = await client.request(CatalogWithAttributesDocument, { first: 60 });
    const largeQueries = client.lastQueries();
    expect(large.entityTypes.edges).toHaveLength(52);
    const k00 = large.entityTypes.edges.find((e) => e.node.name === 'k00')!.node;
    expect(k00.attributes.find((a) => a.name === 'next')).toEqual({
      name: 'next',
      ownerType: { name: 'k00' },
      allowedRefType: { name: 'k01' },
    });
    // The tenant's model version (read alone here, so a whole statement), then on a cold model cache: page, own
    // definitions, platform definitions (with the types they reference), and one batch for referenced types outside
    // the page (none when the page holds them all): never more, whatever the page size.
    expect(smallQueries).toBe(5);
    // The larger page: version, page, and the own definitions of the types the small page did not cache.
    expect(largeQueries).toBe(3);
    // The same question again is answered from memory: the version read only.
    await client.request(CatalogWithAttributesDocument, { first: 60 });
    expect(client.lastQueries()).toBe(1);
  });
});
