// The bounds of one GraphQL operation (schema/armor.ts, schema/limits.ts and schema/guard.ts apply them): stated
// here, below both doors, so that the REST contract's budget of /graphql and the documents can say them too.

import { MAX_TYPE_DEFINITIONS_JSON_BYTES } from './limits.js';

export const GRAPHQL_LIMITS = {
  maxDepth: 10,
  maxAliases: 15,
  maxTokens: 2_000,
  maxDirectives: 20,
  /** Static cost: each field 1, plus its selection; a list field multiplies that by its bound. */
  maxCost: 1_000_000,
  /** Selections the cost visits, fragments expanded where they are spread: past it, query_too_costly too. */
  maxSelections: 5_000,
  /** Objects (types, definitions, edges...) one operation may put in its answer. */
  maxObjects: 100_000,
  /**
   * Bytes of the answer, measured before it is serialised; and of enumerations and defaults loaded for it: room for
   * the largest type's definitions (their enumerations and defaults at MAX_TYPE_DEFINITIONS_JSON_BYTES) with a MiB
   * for the rest of the answer, not for several copies of them. With its parsed values and its text an operation
   * then holds about three times this: GRAPHQL_CONCURRENCY operations at once stay within the request memory
   * (REQUEST_MEMORY_MB) of the production heap.
   */
  maxAnswerBytes: MAX_TYPE_DEFINITIONS_JSON_BYTES + 1024 * 1024,
  /** `__schema` selections one operation may make (introspection is outside the static cost). */
  maxSchemaIntrospections: 1,
} as const;

/** The memory one operation reserves at admission (the /graphql route's budget): its answer, parsed and in text. */
export const GRAPHQL_OPERATION_MEMORY = 3 * GRAPHQL_LIMITS.maxAnswerBytes;
