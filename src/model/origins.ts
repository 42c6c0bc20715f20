// Where a type comes from, each with what it means: the one statement the REST row, the GraphQL enum and the stored
// type read (no import, so that the command-line tool's bundle can read it). Only user_defined types can be renamed
// or deleted.

export const TYPE_ORIGINS = {
  user_defined: 'Created by a caller (createEntityType); a catalog level under its own name.',
  system:
    'Shipped with the service (entity, the catalog levels, the vocabularies) or managed by the platform (dashboard).',
  connector: 'Reported by a connector; carries none of the optional fields.',
} as const;
export type TypeOrigin = keyof typeof TYPE_ORIGINS;
/** The origins as a list, for an enum (`user_defined` first: the one a caller makes). */
export const TYPE_ORIGIN_NAMES = Object.keys(TYPE_ORIGINS) as [TypeOrigin, ...TypeOrigin[]];
