// Every type, field, argument, input field and enum value of the GraphQL schema carries a description: the
// schema is the API's reference (GraphiQL, schema.graphql, the generated client's doc comments).
import {
  buildSchema,
  type GraphQLSchema,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  isSpecifiedScalarType,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema } from '../../src/schema/index.js';

/** Shortest description that says anything (a word or two is not enough for a reader of the reference). */
const MIN_LENGTH = 8;

/** Coordinates (Type, Type.field, Type.field(arg:), Enum.VALUE) whose description is missing or too short. */
function undescribed(s: GraphQLSchema): string[] {
  const missing: string[] = [];
  const check = (coordinate: string, description: string | null | undefined) => {
    if ((description ?? '').trim().length < MIN_LENGTH) missing.push(coordinate);
  };
  for (const type of Object.values(s.getTypeMap())) {
    if (type.name.startsWith('__') || isSpecifiedScalarType(type)) continue;
    check(type.name, type.description);
    if (isObjectType(type) || isInterfaceType(type)) {
      for (const field of Object.values(type.getFields())) {
        check(`${type.name}.${field.name}`, field.description);
        for (const arg of field.args) check(`${type.name}.${field.name}(${arg.name}:)`, arg.description);
      }
    } else if (isInputObjectType(type)) {
      for (const field of Object.values(type.getFields()))
        check(`${type.name}.${field.name}`, field.description);
    } else if (isEnumType(type)) {
      for (const value of type.getValues()) check(`${type.name}.${value.name}`, value.description);
    }
  }
  return missing.sort();
}

describe('schema descriptions', () => {
  it('every type, field, argument, input field and enum value of the schema has a description', () => {
    expect(undescribed(schema)).toEqual([]);
  });

  it('the check names each undescribed element (and skips introspection and built-in scalars)', () => {
    const bare = buildSchema(`
      """Reads of the fixture."""
      type Query {
        """A described field."""
        described(
          """A described argument."""
          a: Int
          b: String
        ): Thing
        bare: Int
      }
      type Thing { x: ID }
      input Filter { y: Boolean }
      """Kinds of the fixture."""
      enum Kind {
        """The first kind."""
        ONE
        TWO
      }
      scalar Blob
      interface Shape { z: Float }
    `);
    expect(undescribed(bare)).toEqual(
      [
        'Blob',
        'Filter',
        'Filter.y',
        'Kind.TWO',
        'Query.bare',
        'Query.described(b:)',
        'Shape',
        'Shape.z',
        'Thing',
        'Thing.x',
      ].sort(),
    );
  });

  it('a description of a word or two does not count', () => {
    const terse = buildSchema('"""Reads."""\ntype Query {\n  """Items of the fixture."""\n  n: Int\n}');
    expect(undescribed(terse)).toEqual(['Query']);
  });
});
