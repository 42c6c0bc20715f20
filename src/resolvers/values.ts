// What a value of each value type looks like, and how a value is checked against a definition's shape.
import { type Reason, refuse } from '../errors.js';
import {
  MAX_ALLOWED_VALUE_LENGTH,
  MAX_ALLOWED_VALUES,
  MAX_MULTI_VALUES,
  MAX_STRING_VALUE,
} from '../model/limits.js';
import {
  CARDINALITIES,
  type Cardinality,
  type ScalarType,
  VALUE_TYPES,
  type ValueType,
} from '../model/value-types.js';

export const isValueType = (v: unknown): v is ValueType => VALUE_TYPES.includes(v as ValueType);
export const isCardinality = (v: unknown): v is Cardinality => CARDINALITIES.includes(v as Cardinality);

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

/** A calendar date (YYYY-MM-DD) or an RFC 3339 date-time with offset. */
export function isDateValue(v: unknown): v is string {
  if (typeof v !== 'string') return false;
  const m = DATE.exec(v) ?? DATE_TIME.exec(v);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0 to 99 as 1900 to 1999.
  const day = new Date(0);
  day.setUTCFullYear(y, mo - 1, d);
  if (day.getUTCFullYear() !== y || day.getUTCMonth() !== mo - 1 || day.getUTCDate() !== d) return false;
  if (m[4] !== undefined && (Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6]) > 60)) return false;
  // An offset is at most 23:59 (RFC 3339's time-numoffset: time-hour ":" time-minute).
  if (m[8] !== undefined && (Number(m[8]) > 23 || Number(m[9]) > 59)) return false;
  return true;
}

/** Deepest nesting of arrays and objects in a client value (allowed values, defaults, entity values). */
export const MAX_VALUE_DEPTH = 32;

const isContainer = (v: unknown): v is object => v !== null && typeof v === 'object';

/** Nesting depth of a value (a scalar is 0, `[]` is 1), walked without recursion; stops counting past `limit`. */
export function jsonDepth(value: unknown, limit = MAX_VALUE_DEPTH): number {
  let deepest = 0;
  const stack: [object, number][] = isContainer(value) ? [[value, 1]] : [];
  while (stack.length > 0) {
    const [container, depth] = stack.pop() as [object, number];
    if (depth > deepest) deepest = depth;
    if (deepest > limit) return deepest;
    for (const child of Array.isArray(container) ? container : Object.values(container)) {
      if (isContainer(child)) stack.push([child, depth + 1]);
    }
  }
  return deepest;
}

/** Refuses a value nested deeper than MAX_VALUE_DEPTH, before anything walks it recursively. */
export function assertValueDepth(value: unknown, what: string, limit = MAX_VALUE_DEPTH) {
  if (jsonDepth(value, limit) > limit) {
    throw refuse(
      'json_too_deep',
      `${what} nests arrays and objects more than ${MAX_VALUE_DEPTH} levels deep.`,
    );
  }
}

/** Whether a value is JSON (finite numbers; no undefined, functions...), walked without recursion. */
function isJsonValue(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v === 'string' || typeof v === 'boolean') continue;
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return false;
      continue;
    }
    if (typeof v !== 'object') return false;
    for (const child of Array.isArray(v) ? v : Object.values(v as object)) stack.push(child);
  }
  return true;
}

/** Whether one (non-list) value fits a scalar value type. */
export function fitsScalar(valueType: ScalarType, v: unknown): boolean {
  switch (valueType) {
    case 'string':
      return typeof v === 'string' && v.length <= MAX_STRING_VALUE;
    case 'number':
      return typeof v === 'number' && Number.isFinite(v);
    case 'boolean':
      return typeof v === 'boolean';
    case 'date':
      return isDateValue(v);
    case 'json':
      return v !== null && isJsonValue(v);
  }
}

/** A stable text form of a JSON value (object keys sorted), so equal values compare equal. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const entries = Object.keys(v as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(v);
}

/** Checks `allowed_values` for a scalar type; returns the list, or null when none (absent, null or empty). */
export function checkAllowedValues(valueType: ScalarType, raw: unknown): unknown[] | null {
  if (raw === undefined || raw === null) return null;
  if (!Array.isArray(raw)) throw refuse('invalid_field', '"allowed_values" must be an array.');
  if (raw.length > MAX_ALLOWED_VALUES) {
    throw refuse(
      'too_many_allowed_values',
      `"allowed_values" has ${raw.length} entries; at most ${MAX_ALLOWED_VALUES} are allowed.`,
    );
  }
  if (raw.length === 0) return null;
  // The list itself is one level: its entries may nest as deep as any value.
  assertValueDepth(raw, 'allowed_values', MAX_VALUE_DEPTH + 1);
  const seen = new Set<string>();
  for (const [i, entry] of raw.entries()) {
    if (!fitsScalar(valueType, entry)) {
      throw refuse('invalid_allowed_value', `allowed_values[${i}] is not a ${valueType} value.`);
    }
    const key = canonicalJson(entry);
    if ((typeof entry === 'string' ? entry.length : key.length) > MAX_ALLOWED_VALUE_LENGTH) {
      throw refuse(
        'invalid_allowed_value',
        `allowed_values[${i}] is longer than ${MAX_ALLOWED_VALUE_LENGTH} characters.`,
      );
    }
    if (seen.has(key)) throw refuse('duplicate_allowed_value', `allowed_values[${i}] is listed twice.`);
    seen.add(key);
  }
  return raw;
}

export interface ValueShape {
  name: string;
  value_type: ValueType;
  cardinality: Cardinality;
  allowed_values: unknown[] | null;
  /** The allowed values' canonical JSON, when already made (a cached definition keeps it across writes). */
  allowedKeys?: ReadonlySet<string>;
}

/** The canonical JSON of each allowed value, the set a value is looked up in. */
export const allowedKeysOf = (values: readonly unknown[]): ReadonlySet<string> =>
  new Set(values.map(canonicalJson));

export interface ValueReasons {
  invalid: Reason;
  notAllowed: Reason;
}

export const DEFAULT_VALUE_REASONS: ValueReasons = {
  invalid: 'invalid_default_value',
  notAllowed: 'default_value_not_allowed',
};
export const ENTITY_VALUE_REASONS: ValueReasons = {
  invalid: 'invalid_value',
  notAllowed: 'value_not_allowed',
};

/**
 * Checks a value against a definition's shape (type, cardinality, enumeration) and returns it normalised as a
 * list of entries. For references the entries are the referenced entity guids, still to be resolved.
 */
export function checkValue(def: ValueShape, value: unknown, reasons: ValueReasons, what: string): unknown[] {
  assertValueDepth(
    value,
    `${what} of "${def.name}"`,
    def.cardinality === 'multi' ? MAX_VALUE_DEPTH + 1 : MAX_VALUE_DEPTH,
  );
  const entries = def.cardinality === 'multi' ? value : [value];
  if (!Array.isArray(entries)) {
    throw refuse(reasons.invalid, `${what} of "${def.name}" must be a list (cardinality multi).`);
  }
  if (entries.length > MAX_MULTI_VALUES) {
    throw refuse(reasons.invalid, `${what} of "${def.name}" has more than ${MAX_MULTI_VALUES} entries.`);
  }
  const allowed = def.allowedKeys ?? (def.allowed_values ? allowedKeysOf(def.allowed_values) : null);
  for (const entry of entries) {
    if (def.value_type === 'entity_ref') {
      if (typeof entry !== 'string' || entry.length === 0 || entry.length > 256) {
        throw refuse(
          reasons.invalid,
          `${what} of "${def.name}" must be entity guid${def.cardinality === 'multi' ? 's' : ''}.`,
        );
      }
      continue;
    }
    if (!fitsScalar(def.value_type, entry)) {
      throw refuse(reasons.invalid, `${what} of "${def.name}" is not a ${def.value_type} value.`);
    }
  }
  // Membership after every entry's shape: a list refused for its shape is refused so, whatever its order (the
  // OpenAPI document states the shape; the enumeration is judged after it).
  if (allowed && def.value_type !== 'entity_ref') {
    for (const entry of entries) {
      if (!allowed.has(canonicalJson(entry))) {
        throw refuse(reasons.notAllowed, `${what} of "${def.name}" is not one of its allowed_values.`);
      }
    }
  }
  if (def.value_type === 'entity_ref' && new Set(entries).size !== entries.length) {
    throw refuse(reasons.invalid, `${what} of "${def.name}" names an entity twice.`);
  }
  return entries;
}

/**
 * Whether `value` holds a string longer than `limit` (walked without recursion). A GraphQL variable refused by
 * GraphQL itself (of the wrong type) is quoted whole in the refusal's making, before its message is cut, which holds
 * the thread for as long as the string is long, every other tenant waiting.
 * No field takes a string longer than MAX_STRING_VALUE, so such a request is refused before GraphQL reads it.
 */
export function holdsStringLongerThan(value: unknown, limit: number): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (v.length > limit) return true;
    } else if (v !== null && typeof v === 'object') {
      for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push(child);
    }
  }
  return false;
}
