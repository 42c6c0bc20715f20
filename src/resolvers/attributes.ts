// Attribute definitions: declare, list, withdraw. Every rule of the spec for definitions lives here once.

import { randomUUID } from 'node:crypto';
import { approximateBytesServed } from '../cache/model-cache.js';
import type { RequestContext } from '../context.js';
import type { AttributeRow } from '../contract/wire.js';
import {
  countAttributeData,
  createAttribute,
  findAttribute,
  findAttributesApplyingTo,
  lockTypeDefinitions,
  markWithdrawn,
  readDeclareFacts,
  type StoredAttribute,
} from '../db/attributes.js';
import { findTypeByGuid, type StoredType } from '../db/entity-types.js';
import { ConstraintViolation } from '../db/executor.js';
import type { Run } from '../db/run.js';
import { bodyObject, refuse } from '../errors.js';
import { MAX_ATTRIBUTE_DEFS } from '../model/limits.js';
import { cleanName, nameKey } from '../model/names.js';
import { PLATFORM_ATTRIBUTE_NAMES, PLATFORM_ATTRIBUTES, ROOT_KEY } from '../model/system-types.js';
import type { Cardinality, ValueType } from '../model/value-types.js';
import { changeBy } from './change-author.js';
import {
  assertValueDepth,
  checkAllowedValues,
  checkValue,
  DEFAULT_VALUE_REASONS,
  isCardinality,
  isValueType,
  MAX_DEFAULT_VALUE_LENGTH,
  MAX_VALUE_DEPTH,
} from './values.js';

/**
 * Most JSON text (enumerations and defaults) a type's live definitions may hold together. Every curation write
 * against the type reads them, and the attribute listing returns them: this bounds both, as the 200 limit bounds
 * their number.
 */
export const MAX_TYPE_DEFINITIONS_JSON_BYTES = 4 * 1024 * 1024;
/** Most attributes listed for a type: its own live definitions and the platform's. */
export const MAX_LISTED_ATTRIBUTES = MAX_ATTRIBUTE_DEFS + PLATFORM_ATTRIBUTES.length;
/** Names a JSON body parser drops or a JavaScript object cannot hold as a plain key. */
const RESERVED_ATTRIBUTE_NAMES = new Set(['__proto__', 'constructor', 'prototype']);

const parseJson = (text: string | null): unknown =>
  text === null || text === undefined ? null : JSON.parse(text);

/** Platform attributes belong to the framework, not to a type: their owner is listed as null. */
export const ownerTypeOf = (a: StoredAttribute): string | null =>
  a.origin === 'system' ? null : a.owner_guid;

export function toAttributeRow(a: StoredAttribute): AttributeRow {
  return {
    guid: a.guid,
    name: a.name,
    owner_type: ownerTypeOf(a),
    value_type: a.value_type,
    cardinality: a.cardinality,
    allowed_values: parseJson(a.allowed_values_json) as unknown[] | null,
    allowed_ref_type: a.allowed_ref_type ?? null,
    required: a.required === true,
    default_value: parseJson(a.default_value_json),
    filterable: a.filterable === true,
    origin: a.origin,
  };
}

const PLATFORM_ORDER = new Map(PLATFORM_ATTRIBUTES.map((a, i) => [a.name, i]));

/**
 * The attributes applying to a type: the platform's first (in their fixed order), then the type's own in name
 * order. The root type owns the platform attributes and declares nothing else.
 */
export function orderAttributes(platform: StoredAttribute[], own: StoredAttribute[], typeNameKey?: string) {
  const sortedPlatform = [...platform].sort(
    (x, y) => (PLATFORM_ORDER.get(x.name_key) ?? 99) - (PLATFORM_ORDER.get(y.name_key) ?? 99),
  );
  return typeNameKey === ROOT_KEY
    ? sortedPlatform
    : [...sortedPlatform, ...own.filter((a) => a.origin !== 'system')];
}

/** The same, for a type already loaded (GraphQL), through the request's DataLoaders. */
export async function attributesOf(ctx: RequestContext, type: StoredType) {
  const [platform, own] = await Promise.all([
    ctx.loaders.platformAttributes(),
    ctx.loaders.ownAttributesByType.load(type.guid),
  ]);
  return orderAttributes(platform, own, type.name_key);
}

/** Live definitions declared on the type, against the 200 limit. */
export async function attributeUsageOf(ctx: RequestContext, type: StoredType) {
  const own = type.name_key === ROOT_KEY ? [] : await ctx.loaders.ownAttributesByType.load(type.guid);
  return { used: own.length, limit: MAX_ATTRIBUTE_DEFS };
}

/**
 * The fields of a declaration: REST sends them under these names, GraphQL under the camelCase ones, the model
 * document (plan, apply) as REST does. The REST body schema and the GraphQL input are checked against this list by
 * the compiler, and GraphQL's fields are mapped back through it: one list, two doors.
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
} as const;
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

interface CheckedDeclaration {
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
}

const present = (v: unknown) => v !== undefined && v !== null;

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
  };
}

const unknownType = () => refuse('unknown_entity_type', 'No entity type has this guid.');

export interface DeclareResult {
  attribute: StoredAttribute;
  dryRun: boolean;
  declared: number;
}

export async function declareAttribute(
  ctx: RequestContext,
  typeGuid: string,
  input: unknown,
  options: { dryRun?: boolean } = {},
): Promise<DeclareResult> {
  const tenant = ctx.viewer.tenant;
  const d = checkDeclaration(input);
  const dryRun = options.dryRun === true;

  const work = async (run: Run): Promise<DeclareResult> => {
    // The lock makes declarations on one type take turns, so the count and the name check below are exact.
    if (!dryRun && !(await lockTypeDefinitions(run, tenant, typeGuid))) throw unknownType();
    const facts = await readDeclareFacts(run, {
      tenant,
      typeGuid,
      nameKey: d.key,
      refType: d.allowedRefType,
      referents: d.referents,
    });
    if (!facts.typeFound) throw unknownType();
    if (facts.typeNameKey === ROOT_KEY) {
      throw refuse('base_type_not_owner', 'The platform attribute owner cannot own declared attributes.');
    }
    if (facts.existingState === 'live' || PLATFORM_ATTRIBUTE_NAMES.has(d.key)) {
      throw refuse('attribute_def_already_exists', `An attribute named "${d.name}" is live on this type.`);
    }
    if (facts.existingState === 'withdrawn') {
      throw refuse(
        'attribute_def_withdrawn',
        `"${d.name}" was withdrawn and its data is still being removed; it can be declared again after the daily purge.`,
      );
    }
    if (facts.liveCount >= MAX_ATTRIBUTE_DEFS) {
      throw refuse('too_many_attribute_defs', `The type has ${MAX_ATTRIBUTE_DEFS} attributes, the limit.`);
    }
    const jsonBytes = (d.allowedValuesJson?.length ?? 0) + (d.defaultValueJson?.length ?? 0);
    if (facts.liveJsonBytes + jsonBytes > MAX_TYPE_DEFINITIONS_JSON_BYTES) {
      throw refuse(
        'attribute_defs_too_large',
        `The type's definitions would hold ${(facts.liveJsonBytes + jsonBytes).toLocaleString('en-US')} characters of enumerations and defaults; at most ${MAX_TYPE_DEFINITIONS_JSON_BYTES.toLocaleString('en-US')} are allowed.`,
      );
    }
    if (d.allowedRefType !== null && !facts.refTypeFound) {
      throw refuse('unknown_entity_type', 'allowed_ref_type does not resolve to an entity type.');
    }
    for (const referent of facts.referents) {
      if (referent.type_guid === null) {
        throw refuse('referent_not_found', `default_value names no entity (${referent.guid}).`);
      }
      if (referent.type_guid !== d.allowedRefType) {
        throw refuse(
          'ref_type_mismatch',
          `default_value names an entity of another type (${referent.guid}).`,
        );
      }
    }
    const attr = {
      guid: randomUUID(),
      name: d.name,
      name_key: d.key,
      value_type: d.valueType,
      cardinality: d.cardinality,
      allowed_values_json: d.allowedValuesJson,
      required: d.required,
      default_value_json: d.defaultValueJson,
      filterable: d.filterable,
      json_bytes: jsonBytes,
    };
    if (dryRun) {
      const wouldBe: StoredAttribute = {
        ...attr,
        owner_guid: typeGuid,
        origin: 'user_defined',
        allowed_ref_type: d.allowedRefType,
        state: 'live',
        created_at: new Date().toISOString(),
        withdrawn_at: null,
        values_removed: null,
        purge_completed_at: null,
        allowed_values_size: attr.allowed_values_json?.length ?? 0,
        default_value_size: attr.default_value_json?.length ?? 0,
      };
      return { attribute: wouldBe, dryRun, declared: facts.liveCount };
    }
    const change = changeBy(ctx, {
      kind: 'attribute_declared',
      before: null,
      after: {
        name: d.name,
        value_type: d.valueType,
        cardinality: d.cardinality,
        allowed_values: d.allowedValues,
        allowed_ref_type: d.allowedRefType,
        required: d.required,
        default_value: d.defaultValue,
        filterable: d.filterable,
      },
    });
    const created = await createAttribute(run, tenant, typeGuid, attr, d.allowedRefType, change);
    return { attribute: created, dryRun, declared: facts.liveCount + 1 };
  };

  try {
    const result = dryRun ? await ctx.db.read(work) : await ctx.db.write(work);
    if (!dryRun) ctx.db.afterCommit(() => ctx.services.engineCache.invalidate(tenant, typeGuid));
    return result;
  } catch (e) {
    if (e instanceof ConstraintViolation) {
      throw refuse('attribute_def_already_exists', `An attribute named "${d.name}" exists on this type.`);
    }
    throw e;
  }
}

/** Loads what listAttributes answers: null for a guid that is no type of the tenant. */
const listingLoader =
  (ctx: RequestContext, typeGuid: string) =>
  async (run: Run): Promise<AttributeListing | null> => {
    const found = await findAttributesApplyingTo(run, ctx.viewer.tenant, typeGuid, ROOT_KEY);
    if (!found) return null;
    return {
      attributes: orderAttributes(found.platform, found.own, found.nameKey),
      declared: found.own.length,
    };
  };

/** Every attribute applying to a type: the platform five (owner_type null) and its own live definitions. */
export async function listAttributes(ctx: RequestContext, typeGuid: string): Promise<AttributeListing> {
  const listing = await ctx.services.model.read(
    ctx.modelScope,
    'attributes',
    typeGuid,
    listingLoader(ctx, typeGuid),
    approximateBytesServed,
  );
  if (!listing) throw unknownType();
  return listing;
}

/**
 * The same listing as last read, perhaps at an older model version (`exact` false), without a version read: for a
 * caller whose statement checks the type and the definitions it uses (the entity listing); null for no type.
 */
export async function lastKnownAttributes(ctx: RequestContext, typeGuid: string) {
  return ctx.services.model.readLastKnown(
    ctx.modelScope,
    'attributes',
    typeGuid,
    listingLoader(ctx, typeGuid),
    approximateBytesServed,
  );
}

/** The attributes applying to a type, as the model cache keeps them; `restData` is serialised on first use. */
export interface AttributeListing {
  attributes: StoredAttribute[];
  declared: number;
  restData?: string;
}

export interface WithdrawResult {
  attribute: StoredAttribute;
  dryRun: boolean;
  impact?: { instances: number; values: number };
}

/** Moves a live definition to withdrawn; its stored values start being removed in the background. */
export async function withdrawAttribute(
  ctx: RequestContext,
  typeGuid: string,
  rawName: string,
  options: { dryRun?: boolean } = {},
): Promise<WithdrawResult> {
  const tenant = ctx.viewer.tenant;
  const name = cleanName(rawName);
  const key = nameKey(name);
  const dryRun = options.dryRun === true;
  const platformOwned = () =>
    refuse('base_type_not_owner', `"${name}" is a platform attribute; the platform owns it.`);
  const work = async (run: Run): Promise<WithdrawResult> => {
    const locked = dryRun ? null : await lockTypeDefinitions(run, tenant, typeGuid);
    const attr = await findAttribute(run, tenant, typeGuid, key);
    if (!dryRun && !locked) throw unknownType();
    if (!attr) {
      // An unknown type first, as without dry_run (where the lock above has already found none).
      if (dryRun && !(await findTypeByGuid(run, tenant, typeGuid))) throw unknownType();
      if (PLATFORM_ATTRIBUTE_NAMES.has(key)) {
        throw platformOwned();
      }
      throw refuse('attribute_def_not_found', `No attribute named "${name}" is declared on this type.`);
    }
    if (attr.origin === 'system') {
      throw platformOwned();
    }
    if (attr.state === 'withdrawn') {
      throw refuse('attribute_def_withdrawn', `"${name}" is already withdrawn; its data is being removed.`);
    }
    if (dryRun) {
      const impact = await countAttributeData(run, {
        tenant,
        typeGuid,
        nameKey: key,
        multi: attr.cardinality === 'multi',
        reference: attr.value_type === 'entity_ref',
      });
      return { attribute: attr, dryRun, impact };
    }
    const change = changeBy(ctx, {
      kind: 'attribute_withdrawn',
      before: { name: attr.name, state: 'live' },
      after: { name: attr.name, state: 'withdrawn' },
    });
    const withdrawn = await markWithdrawn(run, tenant, attr.guid, change);
    if (!withdrawn) throw refuse('attribute_def_withdrawn', `"${name}" is already withdrawn.`);
    return { attribute: withdrawn, dryRun };
  };
  const result = dryRun ? await ctx.db.read(work) : await ctx.db.write(work);
  if (!dryRun) {
    ctx.db.afterCommit(() => {
      ctx.services.engineCache.invalidate(tenant, typeGuid);
      ctx.services.purger.kick();
    });
  }
  return result;
}
