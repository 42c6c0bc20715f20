// A type's fields are declared once, in its wire row (src/contract/wire.ts): the GraphQL object, its origin enum and
// the OpenAPI document say what the row says, word for word; and `created_at`, added there, appears in REST rows,
// GraphQL and the typed client.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLEnumType,
  type GraphQLObjectType,
  isNonNullType,
  Kind,
  parse,
} from 'graphql';
import { describe, expect } from 'vitest';
import type { z } from 'zod';
import { openApi } from '../../src/app/operations.js';
import { EntityTypeRow } from '../../src/contract/wire.js';
import { TYPE_ORIGINS } from '../../src/model/origins.js';
import { schema } from '../../src/schema/index.js';
import { graphqlName, isOptional, rowDescription } from '../../src/schema/row-fields.js';
import { it } from '../fixtures.js';
import { graphqlClient, newTenant, restClient, tokenFor } from '../helpers.js';

const ROW = EntityTypeRow.shape as Record<string, z.ZodType>;
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe('one declaration per field of a type', () => {
  it('every row field is a GraphQL field of EntityType, described as the row describes it, nullable when optional', () => {
    const object = schema.getType('EntityType') as GraphQLObjectType;
    const fields = object.getFields();
    for (const [key, field] of Object.entries(ROW)) {
      const gql = fields[graphqlName(key)];
      expect(gql, key).toBeDefined();
      expect([key, gql!.description]).toEqual([key, rowDescription(field)]);
      expect([key, !isNonNullType(gql!.type)]).toEqual([key, isOptional(field)]);
    }
    const origins = schema.getType('EntityTypeOrigin') as GraphQLEnumType;
    expect(Object.fromEntries(origins.getValues().map((v) => [v.name, v.description]))).toEqual(TYPE_ORIGINS);
  });

  it("the typed client's type fragment selects every field of the row", () => {
    const text = readFileSync(path.join(ROOT, 'client/operations/entity-types.graphql'), 'utf8');
    const fragment = parse(text).definitions.find(
      (d): d is FragmentDefinitionNode =>
        d.kind === Kind.FRAGMENT_DEFINITION && d.name.value === 'EntityTypeFields',
    );
    const selected = fragment!.selectionSet.selections.map((s) => (s as FieldNode).name.value);
    expect(selected.sort()).toEqual(Object.keys(ROW).map(graphqlName).sort());
  });

  it('the OpenAPI row states the same fields, descriptions and optionality', () => {
    const doc = openApi() as {
      components: {
        schemas: Record<
          string,
          { properties: Record<string, { description?: string }>; required?: string[] }
        >;
      };
    };
    const row = doc.components.schemas.EntityTypeRow!;
    expect(Object.keys(row.properties).sort()).toEqual(Object.keys(ROW).sort());
    for (const [key, field] of Object.entries(ROW)) {
      expect([key, row.properties[key]?.description]).toEqual([key, rowDescription(field)]);
      expect([key, (row.required ?? []).includes(key)]).toEqual([key, !isOptional(field)]);
    }
  });
});

describe('created_at', () => {
  it('a created type carries when it was created, in REST rows (create, read, list) and in GraphQL', async ({
    world,
  }) => {
    const token = await tokenFor(newTenant());
    const api = restClient(world.app, token);
    const before = Date.now();
    const created = await api.post('/entities/types', { name: 'Metric' });
    const after = Date.now();
    expect(created.status).toBe(201);
    const row = created.body.DATA.entity_type;
    expect(row.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    const at = Date.parse(row.created_at);
    expect(at).toBeGreaterThanOrEqual(before - 1000);
    expect(at).toBeLessThanOrEqual(after + 1000);

    const read = await api.get(`/entities/types/${row.guid}`);
    expect(read.body.DATA.entity_type.created_at).toBe(row.created_at);
    const listed = await api.get('/entities/types?page_size=500');
    const rows = listed.body.DATA.entity_types as { name: string; created_at?: string }[];
    expect(rows.find((r) => r.name === 'Metric')?.created_at).toBe(row.created_at);
    // the types every tenant has were created with it too
    expect(rows.find((r) => r.name === 'table')?.created_at).toMatch(/^\d{4}-/);

    // GraphQL, through the typed client (its fragment selects every field of the row)
    const client = graphqlClient(world.app, token);
    expect((await client.entityType(row.guid))?.createdAt).toBe(row.created_at);

    // a create-or-get of the same name answers the same row, time included; a rename keeps it
    const again = await api.post('/entities/types', { name: 'metric' });
    expect(again.body.DATA.entity_type.created_at).toBe(row.created_at);
    const renamed = await api.patch(`/entities/types/${row.guid}`, { name: 'KPI' });
    expect(renamed.body.DATA.entity_type.created_at).toBe(row.created_at);
  });
});
