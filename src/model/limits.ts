// The spec's numeric limits on definitions, read by the rules (resolvers/), the reads they bound (context.ts loaders)
// and the documents that state them (OpenAPI, GraphQL descriptions).

/** Most live attribute definitions a type may have (the spec's 200). */
export const MAX_ATTRIBUTE_DEFS = 200;

/**
 * Most instances one count of a withdrawal's impact reads (a withdrawal's dry run, a plan's withdrawal steps): a
 * count over more says it is incomplete (`complete: false`) rather than reading on.
 */
export const IMPACT_SCAN_MAX = 50_000;
