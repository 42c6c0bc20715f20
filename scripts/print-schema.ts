// Prints the GraphQL schema to schema.graphql (committed; CI checks it is current).
import { writeFileSync } from 'node:fs';
import { lexicographicSortSchema, printSchema } from 'graphql';
import { schema } from '../src/schema/index.js';

writeFileSync(
  new URL('../schema.graphql', import.meta.url),
  `${printSchema(lexicographicSortSchema(schema))}\n`,
);
console.log('wrote schema.graphql');
