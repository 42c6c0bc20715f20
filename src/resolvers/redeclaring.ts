// A redeclaration carrying its values, shown as it will be: while the service carries the values of a definition
// stated anew, the old definition is withdrawn and the new one not yet declared. Listings, GraphQL and the export show
// the definition the carry will declare, marked `redeclaring` with when the carry began and the earliest it can end
// (the purge's grace after it), so that nothing disappears from them meanwhile, and an export made in the window
// applies later as a no-op.

import type { StoredAttribute } from '../db/attributes.js';
import type { CarrySpec } from '../db/carry.js';
import { utf8Bytes } from '../model/limits.js';
import { checkDeclaration } from './declaration.js';

/** An ISO time `seconds` after `iso` (Neo4j's nanoseconds read to the millisecond); null when there is none. */
function after(iso: string | null, seconds: number): string | null {
  if (iso === null) return null;
  const ms = Date.parse(iso.replace(/(\.\d{3})\d+/, '$1'));
  return Number.isNaN(ms) ? null : new Date(ms + seconds * 1000).toISOString();
}

/** `a` as it will be once its carried redeclaration ends (`a` itself when it carries nothing). */
export function asItWillBe(a: StoredAttribute, graceSeconds: number): StoredAttribute {
  if (!a.carry) return a;
  const spec = JSON.parse(a.carry) as CarrySpec;
  // (checked when the redeclaration began: this reads it as a declaration is read)
  const d = checkDeclaration(spec.declaration);
  return {
    ...a,
    value_type: d.valueType,
    cardinality: d.cardinality,
    allowed_values_json: d.allowedValuesJson,
    allowed_ref_type: d.allowedRefType,
    required: d.required,
    default_value_json: d.defaultValueJson,
    filterable: d.filterable,
    description: d.description,
    display_name: d.displayName,
    allowed_values_size: utf8Bytes(d.allowedValuesJson),
    default_value_size: utf8Bytes(d.defaultValueJson),
    state: 'live',
    carry: null,
    redeclaring: { since: a.withdrawn_at, ends_after: after(a.withdrawn_at, graceSeconds) },
  };
}

/** Definitions as they will be (see asItWillBe). */
export const asTheyWillBe = (definitions: readonly StoredAttribute[], graceSeconds: number) =>
  definitions.map((a) => asItWillBe(a, graceSeconds));
