// A declaration's rules that need no database, for every door (REST, GraphQL, a model document's definitions):
// its fields, shapes and combinations, each refused with its own reason, in the order the reasons win.

import type { DeclareBody } from '../contract/model-document.js';
import { bodyObject, refuse } from '../errors.js';
import {
  MAX_DEFAULT_VALUE_LENGTH,
  MAX_DESCRIPTION_LENGTH,
  MAX_DISPLAY_NAME_LENGTH,
} from '../model/limits.js';
import { cleanName, nameKey } from '../model/names.js';
import { displayProblem } from '../model/text.js';
import type { Cardinality, ValueType } from '../model/value-types.js';
import {
  assertValueDepth,
  checkAllowedValues,
  checkValue,
  DEFAULT_VALUE_REASONS,
  isCardinality,
  isValueType,
  MAX_VALUE_DEPTH,
} from './values.js';

/** Names a JSON body parser drops or a JavaScript object cannot hold as a plain key. */
const RESERVED_ATTRIBUTE_NAMES = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * The fields of a declaration (declared in contract/model-document.ts, DeclareBody): REST sends them under these
 * names, GraphQL under the camelCase ones, the model document (plan, apply) as REST does. The compiler holds this
 * list to the body's fields and the GraphQL input to this list, and GraphQL's fields are mapped back through it.
 */
export const DECLARATION_FIELDS = {
  name: 'name',
  value_type: 'valueType',
  cardinality: 'cardinality',
  allowed_values: 'allowedValues',
  allowed_ref_type: 'allowedRefType',
  required: 'required',
  default_value: 'defaultValue',
  filterable: 'filterable',
  description: 'description',
  display_name: 'displayName',
} as const satisfies Record<keyof typeof DeclareBody.shape, string>;
export type DeclarationField = keyof typeof DECLARATION_FIELDS;
export type GraphQLDeclarationField = (typeof DECLARATION_FIELDS)[DeclarationField];

const isDeclarationField = (field: string): field is DeclarationField =>
  Object.hasOwn(DECLARATION_FIELDS, field);

/** A declaration as sent: fields are unchecked JSON values, whichever API they came through. */
export type DeclareInput = Record<string, unknown>;

/** A declaration sent through GraphQL (camelCase fields), under the names the rules read. */
export function declarationFromGraphQL(
  input: Partial<Record<GraphQLDeclarationField, unknown>>,
): DeclareInput {
  const out: DeclareInput = {};
  for (const [field, graphqlField] of Object.entries(DECLARATION_FIELDS)) {
    const value = input[graphqlField];
    if (value !== undefined) out[field] = value;
  }
  return out;
}

export interface CheckedDeclaration {
  name: string;
  key: string;
  valueType: ValueType;
  cardinality: Cardinality;
  allowedValues: unknown[] | null;
  allowedRefType: string | null;
  required: boolean;
  filterable: boolean;
  defaultValue: unknown;
  /** Entity guids a reference default names, still to be resolved. */
  referents: string[];
  /** The enumeration and default as stored (JSON text), null when none. */
  allowedValuesJson: string | null;
  defaultValueJson: string | null;
  /** For people: what it is for, and a label; null when none (or empty once trimmed). */
  description: string | null;
  displayName: string | null;
}

const present = (v: unknown) => v !== undefined && v !== null;

/**
 * A text for people (`description`, `display_name`): trimmed, null when absent or empty, at most `max` characters,
 * well-formed (a body's strings are), no control or invisible character but, where `lines`, line breaks and tabs.
 */
export function optionalText(input: DeclareInput, field: string, max: number, lines: boolean): string | null {
  const v = input[field];
  if (!present(v)) return null;
  if (typeof v !== 'string') throw refuse('invalid_field', `"${field}" must be a string.`);
  const text = v.trim();
  if (text.length === 0) return null;
  if (text.length > 2 * max || [...text].length > max) {
    throw refuse('invalid_field', `"${field}" is at most ${max.toLocaleString('en-US')} characters.`);
  }
  const problem = displayProblem(lines ? text.replace(/[\n\t]|\r\n?/g, ' ') : text);
  if (problem) throw refuse('invalid_field', `"${field}" ${problem}.`);
  return text;
}

function optionalBoolean(input: DeclareInput, field: string): boolean | undefined {
  const v = input[field];
  if (!present(v)) return undefined;
  if (typeof v !== 'boolean') throw refuse('invalid_field', `"${field}" must be a boolean.`);
  return v;
}

/** The rules that need no database: shapes and combinations, each refused with its own reason. */
export function checkDeclaration(sent: unknown): CheckedDeclaration {
  const input = bodyObject(sent);
  for (const field of Object.keys(input)) {
    if (!isDeclarationField(field)) throw refuse('unknown_field', `Unknown field "${field}".`);
  }
  const rawName = input.name;
  if (present(rawName) && typeof rawName !== 'string') {
    throw refuse('invalid_field', '"name" must be a string.');
  }
  const name = cleanName((rawName as string | undefined) ?? '');
  const key = nameKey(name);
  if (RESERVED_ATTRIBUTE_NAMES.has(key)) {
    throw refuse('invalid_field', `"${name}" is reserved: values are sent and listed under attribute names.`);
  }

  const valueType = input.value_type;
  if (!isValueType(valueType)) {
    throw refuse(
      'unknown_value_type',
      'value_type must be string, number, boolean, date, json or entity_ref.',
    );
  }
  const cardinality = input.cardinality;
  if (!isCardinality(cardinality))
    throw refuse('invalid_cardinality', 'cardinality must be single or multi.');
  const reference = valueType === 'entity_ref';

  let allowedValues: unknown[] | null = null;
  if (present(input.allowed_values)) {
    if (reference) {
      throw refuse(
        'allowed_values_not_supported',
        'allowed_values is for scalar types only; a reference is constrained by allowed_ref_type.',
      );
    }
    allowedValues = checkAllowedValues(valueType, input.allowed_values);
  }

  let allowedRefType: string | null = null;
  if (present(input.allowed_ref_type)) {
    if (!reference) {
      throw refuse('allowed_ref_type_not_supported', 'allowed_ref_type is for entity_ref attributes only.');
    }
    if (typeof input.allowed_ref_type !== 'string') {
      throw refuse('invalid_field', '"allowed_ref_type" must be a type guid.');
    }
    allowedRefType = input.allowed_ref_type;
  } else if (reference) {
    throw refuse('allowed_ref_type_required', 'An entity_ref attribute needs allowed_ref_type.');
  }

  const filterable = optionalBoolean(input, 'filterable');
  if (filterable !== undefined && !reference) {
    throw refuse('filterable_not_supported', 'filterable applies to entity_ref attributes only.');
  }
  const required = optionalBoolean(input, 'required') ?? false;

  let referents: string[] = [];
  const defaultValue = present(input.default_value) ? input.default_value : null;
  if (defaultValue !== null) {
    // A list default (multi) is one level more than each of its entries.
    assertValueDepth(
      defaultValue,
      'default_value',
      cardinality === 'multi' ? MAX_VALUE_DEPTH + 1 : MAX_VALUE_DEPTH,
    );
    if (JSON.stringify(defaultValue).length > MAX_DEFAULT_VALUE_LENGTH) {
      throw refuse(
        'invalid_default_value',
        `default_value is larger than ${MAX_DEFAULT_VALUE_LENGTH} characters.`,
      );
    }
    const entries = checkValue(
      { name, value_type: valueType, cardinality, allowed_values: allowedValues },
      defaultValue,
      DEFAULT_VALUE_REASONS,
      'default_value',
    );
    if (reference) referents = entries as string[];
  }

  return {
    name,
    key,
    valueType,
    cardinality,
    allowedValues,
    allowedRefType,
    required,
    filterable: filterable ?? false,
    defaultValue,
    referents,
    allowedValuesJson: allowedValues === null ? null : JSON.stringify(allowedValues),
    defaultValueJson: defaultValue === null ? null : JSON.stringify(defaultValue),
    description: optionalText(input, 'description', MAX_DESCRIPTION_LENGTH, true),
    displayName: optionalText(input, 'display_name', MAX_DISPLAY_NAME_LENGTH, false),
  };
}
