// The JSON scalar: any JSON value (enumerated values, defaults).
import { valueFromASTUntyped } from 'graphql';
import { builder } from './builder.js';

export const JSONScalar = builder.scalarType('JSON', {
  description:
    'Any JSON value (object, array, string, number, boolean or null), passed through as is: enumerated values and defaults of attribute definitions.',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: (ast) => valueFromASTUntyped(ast),
});
