// A type's, a definition's and a change record's fields are declared once, in their wire rows (src/contract/wire.ts),
// and a plan's in the model document's (src/contract/model-document.ts): the GraphQL objects, the enums and the
// OpenAPI document say what the rows say, word for word, and the typed client's fragments select every field;
// `created_at`, added to the type's row, appears in REST rows, GraphQL and the client.
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
import { ZodOptional, type z } from 'zod';
import { openApi } from '../../src/app/operations.js';
import { ModelPlan, PlanBlocked, PlanStep } from '../../src/contract/model-document.js';
import {
  AttributeRow,
  ChangeRow,
  EntityTypeRow,
  PlanCarry,
  WithdrawImpact,
} from '../../src/contract/wire.js';
import { TYPE_ORIGINS } from '../../src/model/origins.js';
import { PLAN_ACTION_DESCRIPTIONS } from '../../src/model/plans.js';
import { schema } from '../../src/schema/index.js';
import { graphqlName, isOptional, rowDescription } from '../../src/schema/row-fields.js';
import { it } from '../fixtures.js';
import { graphqlClient, newTenant, restClient, tokenFor } from '../helpers.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Each wire row, the GraphQL object and OpenAPI component it is, and the typed client's fragment of it. */
const ROWS = [
  {
    shape: EntityTypeRow.shape as Record<string, z.ZodType>,
    object: 'EntityType',
    component: 'EntityTypeRow',
    fragment: ['client/operations/entity-types.graphql', 'EntityTypeFields'],
  },
  {
    shape: AttributeRow.shape as Record<string, z.ZodType>,
    object: 'AttributeDefinition',
    component: 'AttributeDefinition',
    fragment: ['client/operations/attributes.graphql', 'AttributeFields'],
  },
  {
    shape: ChangeRow.shape as Record<string, z.ZodType>,
    object: 'ModelChange',
    component: 'ChangeRow',
    fragment: ['client/operations/history.graphql', 'ModelChangeFields'],
  },
] as const;

/**
 * Every row field is a GraphQL field of the object, described as the row describes it, nullable when the row may leave
 * it out or null.
 */
function expectGraphQLAsRow(object: string, shape: Record<string, z.ZodType>) {
  const fields = (schema.getType(object) as GraphQLObjectType).getFields();
  for (const [key, field] of Object.entries(shape)) {
    const gql = fields[graphqlName(key)];
    expect(gql, key).toBeDefined();
    // A field GraphQL carries as JSON may add, in brackets, what the JSON holds.
    const described = gql!.description?.replace(/ \((\w+): .*\)$/s, '');
    expect([key, gql!.type.toString() === 'JSON' ? described : gql!.description]).toEqual([
      key,
      rowDescription(field),
    ]);
    expect([key, !isNonNullType(gql!.type)]).toEqual([key, isOptional(field)]);
  }
}

/** The OpenAPI component states the same fields, descriptions and optionality as the row. */
function expectOpenApiAsRow(component: string, shape: Record<string, z.ZodType>) {
  const doc = openApi() as {
    components: {
      schemas: Record<string, { properties: Record<string, { description?: string }>; required?: string[] }>;
    };
  };
  const row = doc.components.schemas[component]!;
  expect(Object.keys(row.properties).sort()).toEqual(Object.keys(shape).sort());
  for (const [key, field] of Object.entries(shape)) {
    expect([key, row.properties[key]?.description]).toEqual([key, rowDescription(field)]);
    // A row leaves out only what it declares optional (a nullable field is always sent, null when empty).
    expect([key, (row.required ?? []).includes(key)]).toEqual([key, !(field instanceof ZodOptional)]);
  }
}

describe.each(ROWS)('one declaration per field of $object', ({ shape, object, component, fragment }) => {
  it('every row field is a GraphQL field of the object, described as the row describes it, nullable when the row may leave it out or null', () => {
    expectGraphQLAsRow(object, shape);
  });

  it("the typed client's fragment selects every field of the row", () => {
    const text = readFileSync(path.join(ROOT, fragment[0]), 'utf8');
    const definition = parse(text).definitions.find(
      (d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION && d.name.value === fragment[1],
    );
    const selected = definition!.selectionSet.selections.map((s) => (s as FieldNode).name.value);
    expect(selected).toEqual(expect.arrayContaining(Object.keys(shape).map(graphqlName)));
  });

  it('the OpenAPI row states the same fields, descriptions and optionality', () => {
    expectOpenApiAsRow(component, shape);
  });
});

/** A plan's rows (the model document's contract) and the GraphQL objects and OpenAPI components they are. */
const PLAN_ROWS = [
  { shape: PlanStep.shape, object: 'ModelPlanStep', component: 'ModelPlanStep' },
  { shape: ModelPlan.shape, object: 'ModelPlan', component: null },
  { shape: ModelPlan.shape.unchanged.shape, object: 'ModelPlanUnchanged', component: null },
  { shape: PlanBlocked.shape, object: 'ModelPlanBlocked', component: null },
  { shape: WithdrawImpact.shape, object: 'ModelPlanImpact', component: 'WithdrawImpact' },
  { shape: PlanCarry.shape, object: 'ModelPlanCarry', component: 'ModelPlanCarry' },
] as { shape: Record<string, z.ZodType>; object: string; component: string | null }[];

describe.each(PLAN_ROWS)('one declaration per field of $object', ({ shape, object }) => {
  it('GraphQL says what the row says, and has no field the row does not declare', () => {
    expectGraphQLAsRow(object, shape);
    const fields = (schema.getType(object) as GraphQLObjectType).getFields();
    expect(Object.keys(fields).sort()).toEqual(Object.keys(shape).map(graphqlName).sort());
  });
});

describe.each(PLAN_ROWS.filter((r) => r.component !== null))(
  'one declaration per field of $component',
  ({ shape, component }) => {
    it('the OpenAPI component says what the row says', () => {
      expectOpenApiAsRow(component as string, shape);
    });
  },
);

describe('the actions of a plan step', () => {
  it('are the GraphQL enum, described as model/plans.ts says, and the row lists each', () => {
    const actions = schema.getType('ModelPlanAction') as GraphQLEnumType;
    expect(Object.fromEntries(actions.getValues().map((v) => [v.name, v.description]))).toEqual(
      PLAN_ACTION_DESCRIPTIONS,
    );
    for (const [action, what] of Object.entries(PLAN_ACTION_DESCRIPTIONS)) {
      expect(rowDescription(PlanStep.shape.action)).toContain(`\`${action}\`: ${what}`);
    }
  });
});

describe('the origins of a type', () => {
  it('are the GraphQL enum, described as model/origins.ts says', () => {
    const origins = schema.getType('EntityTypeOrigin') as GraphQLEnumType;
    expect(Object.fromEntries(origins.getValues().map((v) => [v.name, v.description]))).toEqual(TYPE_ORIGINS);
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
