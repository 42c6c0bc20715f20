// The curation points this service touches: create an entity with values validated against its type's live
// definitions (read through the engine cache), read it back, and resolve many identifiers at once.

import { randomUUID } from 'node:crypto';
import type { TypeDefinitions } from '../cache/engine-cache.js';
import { CURATION_TX_TIMEOUT_MS } from '../config.js';
import type { RequestContext } from '../context.js';
import { findAttributesApplyingTo, type StoredAttribute, valueProperty } from '../db/attributes.js';
import {
  createEntity,
  findEntity,
  findEntityTypesOf,
  lookupEntities,
  readTypeForWrite,
} from '../db/entities.js';
import type { Run } from '../db/run.js';
import { bodyObject, refuse } from '../errors.js';
import { cleanName, nameKey } from '../model/names.js';
import { ROOT_KEY } from '../model/system-types.js';
import { orderAttributes } from './attributes.js';
import { allowedKeysOf, checkValue, ENTITY_VALUE_REASONS, type ValueShape } from './values.js';

export const MAX_LOOKUP_IDENTIFIERS = 1000;
/**
 * The longest identifier a lookup takes, in characters: every identifier is answered back beside what it resolved
 * to, and an entity guid has 36 (with longer identifiers, a body at the 8 MB limit would be answered back whole).
 */
export const MAX_LOOKUP_IDENTIFIER_CHARS = 128;
/**
 * The largest lookup body, in bytes: a kibibyte per identifier (128 characters escaped as \uXXXX are 768 bytes, with
 * quotes, a comma and a pretty-printer's indent well under 1,024) and 24 KiB for the rest. Every valid lookup fits;
 * with the 8 MB limit, a body of over-long identifiers would be read and parsed in one piece only to be refused for
 * its content.
 */
export const LOOKUP_BODY_BYTES = 1024 * 1024;

/**
 * A definition's shape for value checks, made once per cached definition (its enumeration parsed and keyed once, not
 * once per write: a 1,000-entry enumeration cost a parse and a 1,000-key set for every value written).
 */
const shapes = new WeakMap<StoredAttribute, ValueShape>();
function shapeOf(a: StoredAttribute): ValueShape {
  let shape = shapes.get(a);
  if (!shape) {
    const allowed = a.allowed_values_json ? (JSON.parse(a.allowed_values_json) as unknown[]) : null;
    shape = {
      name: a.name,
      value_type: a.value_type as ValueShape['value_type'],
      cardinality: a.cardinality as ValueShape['cardinality'],
      allowed_values: allowed,
      ...(allowed ? { allowedKeys: allowedKeysOf(allowed) } : {}),
    };
    shapes.set(a, shape);
  }
  return shape;
}

/** The definitions applying to a type at `version`, from the engine cache or the database. */
async function definitionsAt(
  ctx: RequestContext,
  run: Run,
  typeGuid: string,
  version: string,
): Promise<TypeDefinitions> {
  const found = await definitionsIfTypeExists(ctx, run, typeGuid, version);
  if (!found) throw refuse('unknown_entity_type', 'No entity type has this guid.');
  return found;
}

/**
 * The same, or null when the type is gone. A read's statements each see what is committed when they run, so a type
 * deleted after the entity was read is gone by the time its definitions are.
 */
async function definitionsIfTypeExists(
  ctx: RequestContext,
  run: Run,
  typeGuid: string,
  version: string,
): Promise<TypeDefinitions | null> {
  const cache = ctx.services.engineCache;
  const cached = cache.get(ctx.viewer.tenant, typeGuid, version);
  if (cached) return cached;
  const found = await findAttributesApplyingTo(run, ctx.viewer.tenant, typeGuid, ROOT_KEY);
  if (!found) return null;
  const definitions: TypeDefinitions = {
    version: found.version,
    creatable: found.creatable,
    nameKey: found.nameKey,
    attributes: orderAttributes(found.platform, found.own, found.nameKey),
  };
  if (found.version === version) cache.set(ctx.viewer.tenant, typeGuid, definitions);
  return definitions;
}

/** Strings a body's values could reference (entity guids), read with the type in the first statement. */
function referenceCandidates(values: unknown): string[] {
  if (typeof values !== 'object' || values === null) return [];
  const found = new Set<string>();
  for (const value of Object.values(values as Record<string, unknown>)) {
    for (const entry of Array.isArray(value) ? value : [value]) {
      if (typeof entry === 'string' && entry.length > 0 && entry.length <= 256) found.add(entry);
      if (found.size >= 1000) return [...found];
    }
  }
  return [...found];
}

export interface CreateEntityInput {
  type_guid?: unknown;
  name?: unknown;
  values?: unknown;
}

/** The rules of an entity write that need no database, in the order their reasons win. */
export function checkEntityInput(sent: unknown) {
  const input: CreateEntityInput = bodyObject(sent);
  if (typeof input.type_guid !== 'string' || input.type_guid === '') {
    throw refuse('invalid_field', '"type_guid" must be an entity type guid.');
  }
  const typeGuid = input.type_guid;
  if (input.name !== undefined && input.name !== null && typeof input.name !== 'string') {
    throw refuse('invalid_field', '"name" must be a string.');
  }
  const name = cleanName((input.name as string | undefined) ?? '');
  const values = input.values ?? {};
  if (typeof values !== 'object' || values === null || Array.isArray(values)) {
    throw refuse('invalid_field', '"values" must be an object of attribute name to value.');
  }
  return { typeGuid, name, values: values as Record<string, unknown> };
}

export async function createEntityWithValues(ctx: RequestContext, input: unknown) {
  const tenant = ctx.viewer.tenant;
  const { typeGuid, name, values } = checkEntityInput(input);

  for (let attempt = 0; attempt < 3; attempt++) {
    const created = await ctx.db.write(
      async (run) => {
        const type = await readTypeForWrite(run, tenant, typeGuid, referenceCandidates(values));
        if (!type) throw refuse('unknown_entity_type', 'No entity type has this guid.');
        if (type.creatable === false) {
          throw refuse('type_not_creatable', 'Instances of this type are written by the platform only.');
        }
        const defs = await definitionsAt(ctx, run, typeGuid, type.version);
        const byKey = new Map(defs.attributes.map((a) => [a.name_key, a]));

        const given = new Map<string, unknown>();
        for (const [rawKey, value] of Object.entries(values as Record<string, unknown>)) {
          const key = nameKey(cleanName(rawKey));
          if (!byKey.has(key)) throw refuse('unknown_attribute', `The type has no attribute "${rawKey}".`);
          if (value !== null && value !== undefined) given.set(key, value);
        }

        const properties: Record<string, unknown> = {};
        const written: Record<string, unknown> = {};
        const refs: { attr: string; pos: number; target: string; expectedType: string }[] = [];
        for (const def of defs.attributes) {
          let value = given.get(def.name_key);
          if (
            value === undefined &&
            def.default_value_json !== null &&
            def.default_value_json !== undefined
          ) {
            value = JSON.parse(def.default_value_json);
          }
          if (value === undefined) {
            if (def.required) {
              throw refuse('required_value_missing', `"${def.name}" is required and has no default.`);
            }
            continue;
          }
          const entries = checkValue(shapeOf(def), value, ENTITY_VALUE_REASONS, 'The value');
          written[def.name] = def.cardinality === 'multi' ? entries : entries[0];
          if (def.value_type === 'entity_ref') {
            entries.forEach((target, pos) => {
              refs.push({
                attr: def.name_key,
                pos,
                target: target as string,
                expectedType: def.allowed_ref_type ?? '',
              });
            });
          } else {
            const stored = def.value_type === 'json' ? entries.map((v) => JSON.stringify(v)) : entries;
            properties[valueProperty(def.name_key)] = def.cardinality === 'multi' ? stored : stored[0];
          }
        }

        // Referents were read with the type when the body named them; only defaults can need another look.
        const unseen = [...new Set(refs.map((r) => r.target))].filter((g) => !type.referents.has(g));
        const targets = new Map([...type.referents, ...(await findEntityTypesOf(run, tenant, unseen))]);
        for (const ref of refs) {
          const actual = targets.get(ref.target);
          if (actual === undefined) throw refuse('referent_not_found', `No entity has guid ${ref.target}.`);
          if (actual !== ref.expectedType) {
            throw refuse('ref_type_mismatch', `Entity ${ref.target} is not of the referenced type.`);
          }
        }

        const guid = randomUUID();
        const result = await createEntity(run, tenant, type.version, {
          guid,
          name,
          name_key: nameKey(name),
          type_guid: typeGuid,
          properties,
          refs: refs.map(({ attr, pos, target }) => ({ attr, pos, target })),
        });
        // No row: the definitions changed since they were read; validate again against the new ones.
        return result ? { guid, name, type_guid: typeGuid, values: written } : null;
      },
      { timeoutMs: CURATION_TX_TIMEOUT_MS },
    );
    // What was validated is what was written: the answer needs no second read.
    if (created) return created;
    // The definitions changed between reading and writing: validate again against the new ones.
  }
  throw refuse('concurrent_change', 'The type’s definitions kept changing during the write; try again.');
}

/** An entity with the values of its type's live attributes, keyed by attribute name. */
export async function getEntity(ctx: RequestContext, guid: string) {
  const tenant = ctx.viewer.tenant;
  return ctx.db.read(async (run) => {
    const entity = await findEntity(run, tenant, guid);
    if (!entity) throw refuse('not_found', 'No entity has this guid.');
    const values: Record<string, unknown> = {};
    // An entity whose type was deleted (before this read, or between its two statements) carries no values.
    const defs =
      entity.version === null
        ? null
        : await definitionsIfTypeExists(ctx, run, entity.type_guid, entity.version);
    if (defs) {
      for (const def of defs.attributes) {
        if (def.value_type === 'entity_ref') {
          const targets = entity.refs
            .filter((r) => r.attr === def.name_key)
            .sort((a, b) => a.pos - b.pos)
            .map((r) => r.target);
          if (targets.length > 0) values[def.name] = def.cardinality === 'multi' ? targets : targets[0];
          continue;
        }
        const raw = entity.properties[valueProperty(def.name_key)];
        if (raw === undefined || raw === null) continue;
        const decode = (v: unknown) => (def.value_type === 'json' ? JSON.parse(v as string) : v);
        values[def.name] = Array.isArray(raw) ? raw.map(decode) : decode(raw);
      }
    }
    return { guid: entity.guid, name: entity.name, type_guid: entity.type_guid, values };
  });
}

/** Resolves entity guids of the caller's tenant in one round trip; unknown ones resolve to null. */
export async function lookupIdentifiers(ctx: RequestContext, identifiers: unknown) {
  const notStrings = () => refuse('invalid_field', '"identifiers" must be an array of strings.');
  if (!Array.isArray(identifiers)) throw notStrings();
  // The count first: a long list is refused without looking at its elements.
  if (identifiers.length > MAX_LOOKUP_IDENTIFIERS) {
    throw refuse('too_many_identifiers', `"identifiers" has more than ${MAX_LOOKUP_IDENTIFIERS} entries.`);
  }
  if (!identifiers.every((i) => typeof i === 'string')) throw notStrings();
  if (identifiers.some((i: string) => i.length > MAX_LOOKUP_IDENTIFIER_CHARS)) {
    throw refuse(
      'invalid_field',
      `An identifier in "identifiers" is longer than ${MAX_LOOKUP_IDENTIFIER_CHARS} characters (an entity guid has 36).`,
    );
  }
  const found = await ctx.db.readOne((run) =>
    lookupEntities(run, ctx.viewer.tenant, identifiers as string[]),
  );
  return (identifiers as string[]).map((identifier, i) => ({ identifier, entity: found[i] ?? null }));
}
