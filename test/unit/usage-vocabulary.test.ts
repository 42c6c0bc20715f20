// One word for a usage counter: the fields of every usage object the REST contract documents (the OpenAPI document)
// are the fields the GraphQL schema offers on its usage objects, former names (deprecated) aside.
import { getNamedType, isObjectType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { openApi } from '../../src/app/operations.js';
import { schema } from '../../src/schema/index.js';

type Json = Record<string, unknown>;

/** Whether a field names a usage counter object: `usage`, `attribute_usage`, `attributeUsage`, … */
const isUsage = (name: string) => /(^|_)usage$|Usage$/.test(name);

/** Field names of every usage object under the OpenAPI document's schemas, by where each was found. */
function restUsages(doc: Json): Map<string, string[]> {
  const found = new Map<string, string[]>();
  const resolve = (node: Json): Json => {
    const ref = node.$ref;
    if (typeof ref !== 'string') return node;
    return ref
      .replace(/^#\//, '')
      .split('/')
      .reduce<Json>((at, key) => at[key] as Json, doc);
  };
  const walk = (node: unknown, at: string) => {
    if (node === null || typeof node !== 'object') return;
    const properties = (node as Json).properties as Record<string, Json> | undefined;
    for (const [name, value] of Object.entries(properties ?? {})) {
      const usage = resolve(value);
      if (isUsage(name)) found.set(`${at}.${name}`, Object.keys((usage.properties as Json) ?? {}).sort());
    }
    for (const [key, value] of Object.entries(node)) walk(value, `${at}/${key}`);
  };
  walk((doc.components as Json).schemas, '#/components/schemas');
  return found;
}

/** Field names offered (not deprecated) by the type of every GraphQL usage field, by Type.field. */
function graphqlUsages(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      const target = getNamedType(field.type);
      if (!isUsage(field.name) || !isObjectType(target)) continue;
      const offered = Object.values(target.getFields()).filter((f) => f.deprecationReason == null);
      found.set(`${type.name}.${field.name}`, offered.map((f) => f.name).sort());
    }
  }
  return found;
}

describe('usage counters: the same field names over REST and GraphQL', () => {
  it('every usage object of either API has the fields declared and limit', () => {
    const rest = restUsages(openApi() as Json);
    const graphql = graphqlUsages();
    // Where they are: the declaration's answer over both, and GraphQL's type and enumeration usage.
    expect([...rest.keys()].some((at) => at.includes('DeclareAttributeResponse201'))).toBe(true);
    expect([...graphql.keys()].sort()).toEqual([
      'AttributeDefinition.allowedValuesUsage',
      'DeclareAttributePayload.usage',
      'EntityType.attributeUsage',
    ]);
    const names = (m: Map<string, string[]>) => [
      ...new Set([...m.values()].map((fields) => fields.join(','))),
    ];
    expect(names(rest)).toEqual(['declared,limit']);
    expect(names(graphql)).toEqual(names(rest));
  });

  it('GraphQL keeps the former name, used, deprecated in favour of declared', () => {
    const usage = schema.getType('Usage');
    if (!isObjectType(usage)) throw new Error('Usage is not an object type');
    expect(usage.getFields().used?.deprecationReason).toMatch(/declared/);
  });
});
