// No door without a budget: every route the router serves states what one request may cost (model/doors.ts), every
// GraphQL field with work of its own states its cost (schema/field-budgets.ts), and the hostile storm has a shape
// attacking each (bench/door-shapes.ts). A door added without either fails here, as a planted one shows.
import { extendSchema, type GraphQLSchema, isObjectType, parse } from 'graphql';
import pino from 'pino';
import { describe, expect } from 'vitest';
import { DOOR_SHAPES } from '../../bench/door-shapes.js';
import type { RegisteredRoute } from '../../src/app/build.js';
import { ROUTES } from '../../src/rest/schemas.js';
import { FIELD_BUDGETS } from '../../src/schema/field-budgets.js';
import { schema } from '../../src/schema/index.js';
import { it } from '../fixtures.js';
import { testApp } from '../helpers.js';

/** The door a registered route is: its route key in the REST table, or `page <url>`. */
function doorOf(route: RegisteredRoute): string {
  const key = Object.entries(ROUTES).find(
    ([, doc]) => doc.method === route.method && doc.path === route.url,
  )?.[0];
  if (key) return key;
  if (route.url === '/graphql') return route.method === 'GET' ? 'graphqlGet' : 'graphqlPost';
  return `page ${route.url}`;
}

/** Routes served without a budget, as `METHOD url`. */
const routesWithoutBudget = (routes: readonly RegisteredRoute[]) =>
  routes.filter((r) => r.budget === undefined).map((r) => `${r.method} ${r.url}`);

/** Fields with a resolver of their own (not an exposed field of their parent) and no budget, as `Type.field`. */
function fieldsWithoutBudget(s: GraphQLSchema) {
  const missing: string[] = [];
  for (const type of Object.values(s.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      const exposed = (field.extensions as { pothosExposedField?: unknown }).pothosExposedField !== undefined;
      if (!exposed && FIELD_BUDGETS[`${type.name}.${field.name}`] === undefined) {
        missing.push(`${type.name}.${field.name}`);
      }
    }
  }
  return missing;
}

const attacked = new Set(DOOR_SHAPES.flatMap((s) => s.doors));

describe('no door without a budget', () => {
  it('every route the router serves states its budget, and the storm attacks each', async ({ world }) => {
    const routes = world.app.registeredRoutes.filter((r) => r.method !== 'HEAD');
    expect(routes.length).toBeGreaterThan(30);
    expect(routesWithoutBudget(world.app.registeredRoutes)).toEqual([]);
    const unattacked = [...new Set(routes.map(doorOf))].filter((door) => !attacked.has(door));
    expect(unattacked).toEqual([]);
    // and every budget is a finite bound
    for (const r of routes) {
      const b = r.budget;
      expect(
        [b?.statements, b?.answerBytes, b?.memoryBytes].every(
          (n) => Number.isFinite(n) && (n as number) >= 0,
        ),
        `${r.method} ${r.url}`,
      ).toBe(true);
    }
  });

  it('every GraphQL field states its cost (or is its parent row), and the storm attacks each that reads or lists', () => {
    expect(fieldsWithoutBudget(schema)).toEqual([]);
    const fields = new Set(
      Object.values(schema.getTypeMap()).flatMap((t) =>
        isObjectType(t) ? Object.keys(t.getFields()).map((f) => `${t.name}.${f}`) : [],
      ),
    );
    expect(Object.keys(FIELD_BUDGETS).filter((f) => !fields.has(f))).toEqual([]);
    const working = Object.entries(FIELD_BUDGETS)
      .filter(([, b]) => b.kind !== 'parent')
      .map(([f]) => f);
    expect(working.length).toBeGreaterThan(15);
    expect(working.filter((f) => !attacked.has(f))).toEqual([]);
  });

  it('the storm names only doors that exist', async ({ world }) => {
    const doors = new Set([...world.app.registeredRoutes.map(doorOf), ...Object.keys(FIELD_BUDGETS)]);
    expect([...attacked].filter((d) => !doors.has(d))).toEqual([]);
  });

  it('a planted route without a budget, and a planted field without a cost, are found', async ({ world }) => {
    const app = await testApp({
      config: world.app.services.config,
      driver: world.driver,
      logger: pino({ level: 'silent' }),
    });
    app.get('/planted', async () => ({ planted: true }));
    await app.ready();
    try {
      expect(routesWithoutBudget(app.registeredRoutes)).toEqual(['GET /planted', 'HEAD /planted']);
      expect([...attacked].includes(doorOf({ method: 'GET', url: '/planted' }))).toBe(false);
    } finally {
      await app.close();
    }
    const planted = extendSchema(schema, parse('extend type EntityType { planted(first: Int): [String!]! }'));
    expect(fieldsWithoutBudget(planted)).toEqual(['EntityType.planted']);
  });
});
