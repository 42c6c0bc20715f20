// GraphQL for entity types: same rules as REST through the same resolvers, refusals in extensions.reason.
import { readFileSync } from 'node:fs';
import { lexicographicSortSchema, printSchema } from 'graphql';
import { describe, expect } from 'vitest';
import {
  CreateEntityTypeDocument,
  DeleteEntityTypeDocument,
  EntityTypeByGuidDocument,
  EntityTypeByNameDocument,
  EntityTypesPageDocument,
  MetamodelGraphQLError,
  RenameEntityTypeDocument,
} from '../../client/src/index.js';
import { schema } from '../../src/schema/index.js';
import { it } from '../fixtures.js';
import { graphqlClient, newTenant, refusalOf, restClient, type TestWorld, tokenFor } from '../helpers.js';

/** A client of a fresh tenant. */
const newClient = async (world: TestWorld) => graphqlClient(world.app, await tokenFor(newTenant()));

describe('GraphQL schema', () => {
  it('the committed schema.graphql is the printed schema (run npm run schema:print)', () => {
    expect(readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8')).toBe(
      `${printSchema(lexicographicSortSchema(schema))}\n`,
    );
  });
});

describe('createEntityType', () => {
  it('create-or-get: created true then false for the same name in another case', async ({ world }) => {
    const client = await newClient(world);
    const first = await client.request(CreateEntityTypeDocument, { name: ' Metric ' });
    expect(first.createEntityType).toMatchObject({
      created: true,
      entityType: {
        name: 'Metric',
        origin: 'user_defined',
        catalogLevel: true,
        vocabulary: null,
        parentType: null,
      },
    });
    const again = await client.createEntityType('METRIC');
    expect(again.created).toBe(false);
    expect(again.entityType.guid).toBe(first.createEntityType.entityType.guid);
  });

  it('refusals carry the same reasons as REST in extensions.reason', async ({ world }) => {
    const client = await newClient(world);
    expect(await refusalOf(client.request(CreateEntityTypeDocument, { name: '   ' }))).toBe('empty_value');
    expect(await refusalOf(client.request(CreateEntityTypeDocument, { name: 'dashboard' }))).toBe(
      'type_instances_managed',
    );
    expect(await refusalOf(client.createEntityType('n'.repeat(300)))).toBe('name_too_long');
  });

  it('refusals carry the standard GraphQL code beside the reason (BAD_USER_INPUT, GRAPHQL_VALIDATION_FAILED)', async ({
    world,
  }) => {
    const token = await tokenFor(newTenant());
    const post = (query: string) =>
      world.app.inject({
        method: 'POST',
        url: '/graphql',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        payload: { query },
      });
    const refused = (await post('mutation { createEntityType(name: " ") { created } }')).json();
    expect(refused.errors[0]).toMatchObject({
      path: ['createEntityType'],
      extensions: { reason: 'empty_value', code: 'BAD_USER_INPUT' },
    });
    const unknown = (await post('mutation { deleteEntityType(guid: "no-such-type") { guid } }')).json();
    expect(unknown.errors[0].extensions).toEqual({ reason: 'unknown_entity_type', code: 'BAD_USER_INPUT' });
    const costly = (
      await post(
        '{ entityTypes(first: 500) { edges { node { attributes { allowedRefType { attributes { name } } } } } } }',
      )
    ).json();
    expect(costly).toMatchObject({
      errors: [{ extensions: { reason: 'query_too_costly', code: 'GRAPHQL_VALIDATION_FAILED' } }],
    });
    expect(costly.data).toBeUndefined();
  });

  it('a type created over GraphQL is the one REST resolves', async ({ world }) => {
    const tenant = newTenant();
    const token = await tokenFor(tenant);
    const created = await graphqlClient(world.app, token).createEntityType('Shared');
    const rest = await restClient(world.app, token).post('/entities/types', { name: 'shared' });
    expect(rest.body.DATA).toMatchObject({ created: false, entity_type: { guid: created.entityType.guid } });
  });
});

describe('concurrency', () => {
  it('more operations than run at once (GRAPHQL_CONCURRENCY) all complete, each with its own answer', async ({
    world,
  }) => {
    const client = await newClient(world);
    const concurrency = world.app.services.config.GRAPHQL_CONCURRENCY;
    const names = Array.from({ length: concurrency * 3 }, (_, i) => `Concurrent ${i}`);
    const answers = await Promise.all(
      names.map((name) => client.request(CreateEntityTypeDocument, { name })),
    );
    expect(answers.map((a) => a.createEntityType.entityType.name)).toEqual(names);
  });
});

describe('entityType and entityTypeByName', () => {
  it('resolve parentType to the level above', async ({ world }) => {
    const client = await newClient(world);
    const column = await client.request(EntityTypeByNameDocument, { name: 'COLUMN' });
    expect(column.entityTypeByName).toMatchObject({
      name: 'column',
      catalogLevel: true,
      parentType: { name: 'table' },
    });
    const byGuid = await client.request(EntityTypeByGuidDocument, { guid: column.entityTypeByName!.guid });
    expect(byGuid.entityType).toEqual(column.entityTypeByName);
    expect(await client.entityType(column.entityTypeByName!.guid)).toEqual(column.entityTypeByName);
    const datasource = await client.entityTypeByName('datasource');
    expect(datasource!.parentType).toBeNull();
  });

  it('a guid or name of another tenant resolves to null', async ({ world }) => {
    const a = await newClient(world);
    const b = await newClient(world);
    const guid = (await a.createEntityType('Private')).entityType.guid;
    expect((await b.request(EntityTypeByGuidDocument, { guid })).entityType).toBeNull();
    expect((await b.request(EntityTypeByNameDocument, { name: 'Private' })).entityTypeByName).toBeNull();
  });
});

describe('entityTypes connection', () => {
  it('pages with first/after through every type once, in the same order as REST', async ({ world }) => {
    const tenant = newTenant();
    const token = await tokenFor(tenant);
    const client = graphqlClient(world.app, token);
    for (let i = 0; i < 9; i++) await client.request(CreateEntityTypeDocument, { name: `gq-${i}` });
    const seen: string[] = [];
    let after: string | null | undefined;
    for (;;) {
      const page = await client.request(EntityTypesPageDocument, { first: 4, after });
      seen.push(...page.entityTypes.edges.map((e) => e.node.name));
      if (!page.entityTypes.pageInfo.hasNextPage) break;
      after = page.entityTypes.pageInfo.endCursor;
    }
    const rest = await restClient(world.app, token).get('/entities/types?page_size=500');
    expect(seen).toEqual(rest.body.DATA.entity_types.map((t: any) => t.name));
    expect(seen).toHaveLength(20);
    // The client's own paging follows the same cursors to the same list.
    const all: string[] = [];
    for await (const type of client.allEntityTypes(3)) all.push(type.name);
    expect(all).toEqual(seen);
  });

  it('first outside 1..500 gives invalid_page_size; a foreign or forged cursor gives invalid_cursor', async ({
    world,
  }) => {
    const client = await newClient(world);
    for (const first of [0, 501, -3]) {
      expect(await refusalOf(client.request(EntityTypesPageDocument, { first }))).toBe('invalid_page_size');
    }
    const other = await newClient(world);
    const cursor = (await other.entityTypes({ first: 1 })).pageInfo.endCursor!;
    expect(await refusalOf(client.request(EntityTypesPageDocument, { first: 1, after: cursor }))).toBe(
      'invalid_cursor',
    );
    expect(await refusalOf(client.entityTypes({ after: 'forged' }))).toBe('invalid_cursor');
  });
});

describe('renameEntityType and deleteEntityType', () => {
  it('rename keeps the guid; delete and recreate gives the same guid back', async ({ world }) => {
    const client = await newClient(world);
    const guid = (await client.createEntityType('Draft')).entityType.guid;
    const renamed = await client.request(RenameEntityTypeDocument, { guid, name: 'Final' });
    expect(renamed.renameEntityType).toMatchObject({ guid, name: 'Final' });
    expect(await client.renameEntityType(guid, 'Final 2')).toMatchObject({ guid, name: 'Final 2' });
    const deleted = await client.request(DeleteEntityTypeDocument, { guid });
    expect(deleted.deleteEntityType).toEqual({ guid, deleted: true });
    const recreated = await client.request(CreateEntityTypeDocument, { name: 'draft' });
    expect(recreated.createEntityType).toMatchObject({ created: true, entityType: { guid } });
    expect(await client.deleteEntityType(guid)).toEqual({ guid, deleted: true });
  });

  it('system types are refused with type_not_user_defined; unknown guids with unknown_entity_type', async ({
    world,
  }) => {
    const client = await newClient(world);
    const table = (await client.request(EntityTypeByNameDocument, { name: 'table' })).entityTypeByName!;
    expect(await refusalOf(client.request(RenameEntityTypeDocument, { guid: table.guid, name: 'x' }))).toBe(
      'type_not_user_defined',
    );
    expect(await refusalOf(client.request(DeleteEntityTypeDocument, { guid: table.guid }))).toBe(
      'type_not_user_defined',
    );
    expect(await refusalOf(client.deleteEntityType('missing'))).toBe('unknown_entity_type');
  });
});

describe('GraphQL authentication', () => {
  it('requires the same bearer token as REST', async ({ world }) => {
    const res = await world.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ query: '{ entityTypes { edges { node { name } } } }' }),
    });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ STATUS: 'FAIL', DATA: { reason: 'unauthenticated' } });
  });

  it('the client reports the 401 envelope as a MetamodelGraphQLError with reason unauthenticated', async ({
    world,
  }) => {
    const client = graphqlClient(world.app, 'not-a-token');
    const error = await client.entityTypes().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MetamodelGraphQLError);
    expect(error).toMatchObject({ status: 401, reason: 'unauthenticated', data: null });
  });

  it('GraphQL validation errors pass through unmasked', async ({ world }) => {
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
