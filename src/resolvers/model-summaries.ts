// What a plan step says about a stored definition: a summary of it (no enumeration, no long default) and how the
// document's specification differs from it, with examples of the values added and removed, bounded per step and
// for the whole plan. A plan's answer grows with the document it was sent, not with what the tenant stores.

import type { ModelAttributeSpec } from '../contract/model-document.js';
import { type DefinitionSummary, type FieldChange, PLAN_SUMMARY } from '../contract/wire.js';
import type { StoredAttribute } from '../db/attributes.js';
import { canonicalJson } from './values.js';

const parseJson = (text: string | null) => (text === null ? null : (JSON.parse(text) as unknown));

/** A definition's fields, as a declaration is checked (declaration.ts) and a stored one is read. */
export interface SpecFields {
  name: string;
  valueType: ModelAttributeSpec['value_type'];
  cardinality: ModelAttributeSpec['cardinality'];
  allowedValues: unknown[] | null;
  allowedRefType: string | null;
  required: boolean;
  defaultValue: unknown;
  filterable: boolean;
  description: string | null;
  displayName: string | null;
}

/**
 * A definition's specification as export writes it and a plan step carries it: the fields in this order, those at
 * their default left out. Built field by field (an object spread per field cost a plan of 50,000 definitions
 * megabytes of short-lived objects).
 */
export function specOf(d: SpecFields): ModelAttributeSpec {
  const spec: ModelAttributeSpec = { name: d.name, value_type: d.valueType, cardinality: d.cardinality };
  if (d.allowedValues !== null) spec.allowed_values = d.allowedValues;
  if (d.allowedRefType !== null) spec.allowed_ref_type = d.allowedRefType;
  if (d.required) spec.required = true;
  if (d.defaultValue !== null) spec.default_value = d.defaultValue;
  if (d.filterable) spec.filterable = true;
  if (d.description !== null) spec.description = d.description;
  if (d.displayName !== null) spec.display_name = d.displayName;
  return spec;
}

/** A stored definition's specification as a document states it, its referenced type named by `refName`. */
export function attributeSpec(a: StoredAttribute, refName: (guid: string) => string): ModelAttributeSpec {
  return specOf({
    name: a.name,
    valueType: a.value_type,
    cardinality: a.cardinality,
    allowedValues: parseJson(a.allowed_values_json) as unknown[] | null,
    allowedRefType: a.allowed_ref_type ? refName(a.allowed_ref_type) : null,
    required: a.required,
    defaultValue: parseJson(a.default_value_json),
    filterable: a.filterable,
    description: a.description ?? null,
    displayName: a.display_name ?? null,
  });
}

/** A default as a summary shows it: itself when short, else its length. */
function shownDefault(value: unknown, key: 'default_value' | 'from' | 'to'): Record<string, unknown> {
  if (value === undefined) return {};
  const text = canonicalJson(value);
  if (text.length <= PLAN_SUMMARY.maxDefaultChars) return { [key]: value };
  return { [key === 'default_value' ? 'default_value_chars' : `${key}_chars`]: text.length };
}

/** A specification summarised for a plan step. */
export function summarise(spec: ModelAttributeSpec): DefinitionSummary {
  return {
    name: spec.name,
    value_type: spec.value_type,
    cardinality: spec.cardinality,
    ...(spec.allowed_values ? { allowed_values_count: spec.allowed_values.length } : {}),
    ...(spec.allowed_ref_type !== undefined ? { allowed_ref_type: spec.allowed_ref_type } : {}),
    ...(spec.required ? { required: true as const } : {}),
    ...shownDefault(spec.default_value, 'default_value'),
    ...(spec.filterable ? { filterable: true as const } : {}),
  } as DefinitionSummary;
}

/** The examples budget of one plan: what its steps may still show of the values they add and remove. */
export class SampleBudget {
  private left: number = PLAN_SUMMARY.maxSampleChars;

  /** The first values of `values` the budget still allows (at most PLAN_SUMMARY.sampleValues), charged to it. */
  take(values: readonly unknown[]): unknown[] {
    const out: unknown[] = [];
    for (const v of values) {
      if (out.length >= PLAN_SUMMARY.sampleValues) break;
      const chars = canonicalJson(v).length;
      if (chars > this.left) break;
      this.left -= chars;
      out.push(v);
    }
    return out;
  }
}

/**
 * How `to` (the document's specification) differs from `from` (the tenant's), field by field; the referenced type
 * compared by what each names (`sameRef`).
 */
export function differences(
  from: ModelAttributeSpec,
  to: ModelAttributeSpec,
  sameRef: boolean,
  samples: SampleBudget,
): FieldChange[] {
  const changes: FieldChange[] = [];
  const plain = (field: 'value_type' | 'cardinality', a: string, b: string) => {
    if (a !== b) changes.push({ field, from: a, to: b });
  };
  plain('value_type', from.value_type, to.value_type);
  plain('cardinality', from.cardinality, to.cardinality);
  const keysOf = (values: readonly unknown[] | undefined) =>
    new Map((values ?? []).map((v) => [canonicalJson(v), v]));
  const before = keysOf(from.allowed_values);
  const after = keysOf(to.allowed_values);
  const added = [...after].filter(([k]) => !before.has(k)).map(([, v]) => v);
  const removed = [...before].filter(([k]) => !after.has(k)).map(([, v]) => v);
  const order = (m: Map<string, unknown>) => [...m.keys()].join('\u0000');
  const listed = (from.allowed_values === undefined) !== (to.allowed_values === undefined);
  if (added.length > 0 || removed.length > 0 || listed || order(before) !== order(after)) {
    changes.push({
      field: 'allowed_values',
      added_count: added.length,
      removed_count: removed.length,
      added: samples.take(added),
      removed: samples.take(removed),
      ...(added.length === 0 && removed.length === 0 && !listed ? { reordered: true as const } : {}),
    });
  }
  if (!sameRef)
    changes.push({ field: 'allowed_ref_type', from: from.allowed_ref_type, to: to.allowed_ref_type });
  if ((from.required === true) !== (to.required === true)) {
    changes.push({ field: 'required', from: from.required === true, to: to.required === true });
  }
  const fromDefault = from.default_value === undefined ? null : canonicalJson(from.default_value);
  const toDefault = to.default_value === undefined ? null : canonicalJson(to.default_value);
  if (fromDefault !== toDefault) {
    changes.push({
      field: 'default_value',
      ...shownDefault(from.default_value, 'from'),
      ...shownDefault(to.default_value, 'to'),
    });
  }
  if ((from.filterable === true) !== (to.filterable === true)) {
    changes.push({ field: 'filterable', from: from.filterable === true, to: to.filterable === true });
  }
  for (const field of ['description', 'display_name'] as const) {
    if ((from[field] ?? null) !== (to[field] ?? null)) {
      changes.push({ field, from: from[field] ?? null, to: to[field] ?? null });
    }
  }
  return changes;
}
