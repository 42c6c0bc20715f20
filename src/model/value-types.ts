// The value types and cardinalities (docs/api.md#declaration-rules, rule 6): the words a declaration, a listing and
// a value check share.

export const VALUE_TYPES = ['string', 'number', 'boolean', 'date', 'json', 'entity_ref'] as const;
export type ValueType = (typeof VALUE_TYPES)[number];
export type ScalarType = Exclude<ValueType, 'entity_ref'>;
export const CARDINALITIES = ['single', 'multi'] as const;
export type Cardinality = (typeof CARDINALITIES)[number];
