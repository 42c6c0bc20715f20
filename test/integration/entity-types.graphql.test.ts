// GraphQL for entity types: same rules as REST through the same resolvers, refusals in extensions.reason.
import { readFileSync } from 'node:fs';
import { lexicographicSortSchema, printSchema } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRAPHQL_CONCURRENCY } from '../../src/app.js';
import { schema } from '../../src/schema/index.js';
import {
  CreateEntityTypeDocument,
  DeleteEntityTypeDocument,
  EntityTypeByGuidDocument,
  EntityTypeByNameDocument,
  EntityTypesPageDocument,
  RenameEntityTypeDocument,
} from '../generated/graphql.js';
import { createWorld, gql, newTenant, restClient, type TestWorld, tokenFor } from '../helpers.js';

let world: TestWorld;
beforeAll(async () => {
  world = await createWorld();
});
afterAll(async () => {
  await world?.close();
});

const reasonOf = (res: { errors?: { extensions?: { reason?: string } }[] }) =>
  res.errors?.[0]?.extensions?.reason;

describe('GraphQL schema', () => {
  it('the committed schema.graphql is the printed schema (run npm run schema:print)', () => {
    expect(readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8')).toBe(
      `${printSchema(lexicographicSortSchema(schema))}\n`,
    );
  });
});

describe('createEntityType', () => {
  it('create-or-get: created true then false for the same name in another case', async () => {
    const token = await tokenFor(newTenant());
    const first = await gql(world.app, token, CreateEntityTypeDocument, { name: ' Metric ' });
    expect(first.errors).toBeUndefined();
    expect(first.data!.createEntityType).toMatchObject({
      created: true,
      entityType: {
        name: 'Metric',
        origin: 'user_defined',
        catalogLevel: true,
        vocabulary: null,
        parentType: null,
      },
    });
    const again = await gql(world.app, token, CreateEntityTypeDocument, { name: 'METRIC' });
    expect(again.data!.createEntityType.created).toBe(false);
    expect(again.data!.createEntityType.entityType.guid).toBe(first.data!.createEntityType.entityType.guid);
  });

  it('refusals carry the same reasons as REST in extensions.reason', async () => {
    const token = await tokenFor(newTenant());
    expect(reasonOf(await gql(world.app, token, CreateEntityTypeDocument, { name: '   ' }))).toBe(
      'empty_value',
    );
    expect(reasonOf(await gql(world.app, token, CreateEntityTypeDocument, { name: 'dashboard' }))).toBe(
      'type_instances_managed',
    );
    expect(reasonOf(await gql(world.app, token, CreateEntityTypeDocument, { name: 'n'.repeat(300) }))).toBe(
      'name_too_long',
    );
  });

  it('a type created over GraphQL is the one REST resolves', async () => {
    const tenant = newTenant();
    const token = await tokenFor(tenant);
    const created = await gql(world.app, token, CreateEntityTypeDocument, { name: 'Shared' });
    const rest = await restClient(world.app, token).post('/entities/types', { name: 'shared' });
    expect(rest.body.DATA).toMatchObject({
      created: false,
      entity_type: { guid: created.data!.createEntityType.entityType.guid },
    });
  });
});

describe('concurrency', () => {
  it(`more operations than run at once (${GRAPHQL_CONCURRENCY}) all complete, each with its own answer`, async () => {
    const token = await tokenFor(newTenant());
    const names = Array.from({ length: GRAPHQL_CONCURRENCY * 3 }, (_, i) => `Concurrent ${i}`);
    const answers = await Promise.all(
      names.map((name) => gql(world.app, token, CreateEntityTypeDocument, { name })),
    );
    expect(answers.map((a) => a.data?.createEntityType.entityType.name)).toEqual(names);
  });
});

describe('entityType and entityTypeByName', () => {
  it('resolve parentType to the level above', async () => {
    const token = await tokenFor(newTenant());
    const column = await gql(world.app, token, EntityTypeByNameDocument, { name: 'COLUMN' });
    expect(column.data!.entityTypeByName).toMatchObject({
      name: 'column',
      catalogLevel: true,
      parentType: { name: 'table' },
    });
    const byGuid = await gql(world.app, token, EntityTypeByGuidDocument, {
      guid: column.data!.entityTypeByName!.guid,
    });
    expect(byGuid.data!.entityType).toEqual(column.data!.entityTypeByName);
    const datasource = await gql(world.app, token, EntityTypeByNameDocument, { name: 'datasource' });
    expect(datasource.data!.entityTypeByName!.parentType).toBeNull();
  });

  it('a guid or name of another tenant resolves to null', async () => {
    const a = await tokenFor(newTenant());
    const b = await tokenFor(newTenant());
    const guid = (await gql(world.app, a, CreateEntityTypeDocument, { name: 'Private' })).data!
      .createEntityType.entityType.guid;
    expect((await gql(world.app, b, EntityTypeByGuidDocument, { guid })).data!.entityType).toBeNull();
    expect(
      (await gql(world.app, b, EntityTypeByNameDocument, { name: 'Private' })).data!.entityTypeByName,
    ).toBeNull();
  });
});

describe('entityTypes connection', () => {
  it('pages with first/after through every type once, in the same order as REST', async () => {
    const tenant = newTenant();
    const token = await tokenFor(tenant);
    for (let i = 0; i < 9; i++) await gql(world.app, token, CreateEntityTypeDocument, { name: `gq-${i}` });
    const seen: string[] = [];
    let after: string | null | undefined;
    for (;;) {
      const page = await gql(world.app, token, EntityTypesPageDocument, { first: 4, after });
      expect(page.errors).toBeUndefined();
      seen.push(...page.data!.entityTypes.edges.map((e) => e.node.name));
      if (!page.data!.entityTypes.pageInfo.hasNextPage) break;
      after = page.data!.entityTypes.pageInfo.endCursor;
    }
    const rest = await restClient(world.app, token).get('/entities/types?page_size=500');
    expect(seen).toEqual(rest.body.DATA.entity_types.map((t: any) => t.name));
    expect(seen).toHaveLength(20);
  });

  it('first outside 1..500 gives invalid_page_size; a foreign or forged cursor gives invalid_cursor', async () => {
    const token = await tokenFor(newTenant());
    for (const first of [0, 501, -3]) {
      expect(reasonOf(await gql(world.app, token, EntityTypesPageDocument, { first }))).toBe(
        'invalid_page_size',
      );
    }
    const other = await tokenFor(newTenant());
    const cursor = (await gql(world.app, other, EntityTypesPageDocument, { first: 1 })).data!.entityTypes
      .pageInfo.endCursor!;
    expect(reasonOf(await gql(world.app, token, EntityTypesPageDocument, { first: 1, after: cursor }))).toBe(
      'invalid_cursor',
    );
    expect(reasonOf(await gql(world.app, token, EntityTypesPageDocument, { after: 'forged' }))).toBe(
      'invalid_cursor',
    );
  });
});

describe('renameEntityType and deleteEntityType', () => {
  it('rename keeps the guid; delete and recreate gives the same guid back', async () => {
    const token = await tokenFor(newTenant());
    const guid = (await gql(world.app, token, CreateEntityTypeDocument, { name: 'Draft' })).data!
      .createEntityType.entityType.guid;
    const renamed = await gql(world.app, token, RenameEntityTypeDocument, { guid, name: 'Final' });
    expect(renamed.data!.renameEntityType).toMatchObject({ guid, name: 'Final' });
    const deleted = await gql(world.app, token, DeleteEntityTypeDocument, { guid });
    expect(deleted.data!.deleteEntityType).toEqual({ guid, deleted: true });
    const recreated = await gql(world.app, token, CreateEntityTypeDocument, { name: 'draft' });
    expect(recreated.data!.createEntityType).toMatchObject({ created: true, entityType: { guid } });
  });

  it('system types are refused with type_not_user_defined; unknown guids with unknown_entity_type', async () => {
    const token = await tokenFor(newTenant());
    const table = (await gql(world.app, token, EntityTypeByNameDocument, { name: 'table' })).data!
      .entityTypeByName!;
    expect(
      reasonOf(await gql(world.app, token, RenameEntityTypeDocument, { guid: table.guid, name: 'x' })),
    ).toBe('type_not_user_defined');
    expect(reasonOf(await gql(world.app, token, DeleteEntityTypeDocument, { guid: table.guid }))).toBe(
      'type_not_user_defined',
    );
    expect(reasonOf(await gql(world.app, token, DeleteEntityTypeDocument, { guid: 'missing' }))).toBe(
      'unknown_entity_type',
    );
  });
});

describe('GraphQL authentication', () => {
  it('requires the same bearer token as REST', async () => {
    const res = await world.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ query: '{ entityTypes { edges { node { name } } } }' }),
    });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ STATUS: 'FAIL', DATA: { reason: 'unauthenticated' } });
  });

  it('GraphQL validation errors pass through unmasked', async () => {
    const token = await tokenFor(newTenant());
    const res = await world.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ query: '{ nope }' }),
    });
    expect(res.json().errors[0].message).toContain('Cannot query field "nope"');
  });
});
