// Which GraphQL requests may have their whole answer kept (src/schema/graphql-answers.ts): the fields admitted,
// pinned against the schema so that a new field is placed on purpose; documents; and the request key's bounds.
import { isObjectType, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import {
  ANSWER_CACHE_FIELDS,
  ANSWER_KEY_LIMITS,
  answerKey,
  isCacheableDocument,
} from '../../src/schema/graphql-answers.js';
import { schema } from '../../src/schema/index.js';

const fieldsOf = (name: string) => {
  const type = schema.getType(name);
  if (!isObjectType(type)) throw new Error(`${name} is not an object type`);
  return Object.keys(type.getFields()).sort();
};

describe('the fields whose answers may be kept', () => {
  it('are every field of the admitted types but the withdrawn definitions, and nothing of Mutation', () => {
    // A field added to one of these types fails this test until it is admitted (it reads only the model cache at
    // the request's version) or left out (anything else: a clock, the caller's role, an uncached read). The history
    // and the change feed are read from the database each time (they are not in the model cache), and so are
    // entities (instance data, which no model version covers).
    const left = Object.fromEntries(
      Object.entries(ANSWER_CACHE_FIELDS).map(([type, admitted]) => [
        type,
        fieldsOf(type).filter((f) => admitted !== '*' && !admitted.has(f)),
      ]),
    );
    expect(left).toEqual({
      Query: ['entities', 'model', 'modelChanges', 'modelPlan'],
      QueryEntityTypesConnection: [],
      QueryEntityTypesConnectionEdge: [],
      PageInfo: [],
      EntityType: ['history', 'withdrawnAttributes'],
      FormerName: [],
      AttributeDefinition: [],
      Usage: [],
    });
    expect(fieldsOf('AttributeDefinition')).toEqual([
      'allowedRefType',
      'allowedValues',
      'allowedValuesUsage',
      'cardinality',
      'defaultValue',
      'description',
      'displayName',
      'filterable',
      'guid',
      'name',
      'origin',
      'ownerType',
      'redeclaring',
      'required',
      'state',
      'valueType',
    ]);
    expect(fieldsOf('Query')).toEqual([
      'entities',
      'entityType',
      'entityTypeByName',
      'entityTypes',
      'model',
      'modelChanges',
      'modelPlan',
    ]);
    expect(ANSWER_CACHE_FIELDS.Mutation).toBeUndefined();
    expect(ANSWER_CACHE_FIELDS.WithdrawnAttribute).toBeUndefined();
  });

  it('decide per document: fragments and __typename count; mutations, withdrawn lists and introspection do not pass', () => {
    const yes = [
      '{ entityTypes { edges { node { name attributes { name ownerType { name } } } } } }',
      'query Q($g: ID!) { entityType(guid: $g) { ...T __typename } } fragment T on EntityType { guid parentType { name } }',
      '{ a: entityTypeByName(name: "x") { name } b: entityTypeByName(name: "y") { name } }',
    ];
    const no = [
      'mutation { createEntityType(name: "x") { created } }',
      '{ entityType(guid: "g") { withdrawnAttributes { definition { name } } } }',
      '{ entityType(guid: "g") { ...W } } fragment W on EntityType { withdrawnAttributes { purgedValues } }',
      '{ __schema { types { name } } }',
      '{ __type(name: "EntityType") { name } }',
      'query A { entityTypes { edges { cursor } } } mutation B { deleteEntityType(guid: "g") { deleted } }',
      'fragment T on EntityType { name }',
    ];
    for (const text of yes) expect([text, isCacheableDocument(schema, parse(text))]).toEqual([text, true]);
    for (const text of no) expect([text, isCacheableDocument(schema, parse(text))]).toEqual([text, false]);
  });
});

describe('the key of a request', () => {
  const base = { method: 'POST', accept: 'application/json' };
  it('differs with anything that makes the answer differ, and is the same for the same request', () => {
    const key = (params: Record<string, unknown>, over: Partial<typeof base> = {}) =>
      answerKey({ ...base, ...over, params });
    const q = { query: '{ entityTypes { edges { cursor } } }' };
    const keys = [
      key(q),
      key({ ...q, variables: { a: 1 } }),
      key({ ...q, variables: '{"a":1}' }),
      key({ ...q, operationName: 'X' }),
      key({ ...q, extensions: { x: 1 } }),
      key(q, { accept: 'application/graphql-response+json' }),
      key(q, { method: 'GET' }),
      key({ query: '{ entityTypes { edges { node { name } } } }' }),
    ];
    expect(keys.every((k) => typeof k === 'string')).toBe(true);
    // {"a":1} as an object and as a string are the same text: the same key
    expect(new Set(keys).size).toBe(keys.length - 1);
    expect(key(q)).toBe(key({ ...q }));
  });

  it('is null (executed every time) past its bounds or without a query', () => {
    const key = (params: unknown) => answerKey({ ...base, params });
    const n = ANSWER_KEY_LIMITS;
    expect(key({ query: 'x'.repeat(n.queryChars) })).not.toBeNull();
    expect(key({ query: 'x'.repeat(n.queryChars + 1) })).toBeNull();
    expect(key({ query: '{ a }', variables: { v: 'x'.repeat(n.variablesChars - 8) } })).not.toBeNull();
    expect(key({ query: '{ a }', variables: { v: 'x'.repeat(n.variablesChars) } })).toBeNull();
    expect(key({ query: '{ a }', operationName: 'x'.repeat(n.otherChars + 1) })).toBeNull();
    expect(
      answerKey({ ...base, accept: 'x'.repeat(n.otherChars + 1), params: { query: '{ a }' } }),
    ).toBeNull();
    expect(key({})).toBeNull();
    expect(key([{ query: '{ a }' }])).toBeNull();
    expect(key(null)).toBeNull();
  });
});
