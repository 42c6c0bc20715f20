// Evolution in place: a live definition changed without a gap (its guid kept, its stored values untouched, one change
// record with the difference), for the changes under which every stored value stays valid. The one rule deciding
// which changes qualify (inPlaceBlockers) is read by the evolve endpoint (REST PATCH, GraphQL evolveAttribute) and by
// a plan, which chooses evolution over a carried redeclaration whenever it applies. Declaring a live name again is
// still refused (attribute_def_already_exists): evolution is its own operation, with its own reason.

import type { RequestContext } from '../context.js';
import type { VersionCondition } from '../contract/type-version.js';
import type { FieldChange } from '../contract/wire.js';
import {
  type EvolvedFields,
  evolveDefinition,
  findAttribute,
  lockTypeDefinitions,
  readDeclareFacts,
  type StoredAttribute,
} from '../db/attributes.js';
import { findTypeByGuid } from '../db/entity-types.js';
import type { Run } from '../db/run.js';
import { bodyObject, refuse } from '../errors.js';
import { cleanName, nameKey } from '../model/names.js';
import { PLATFORM_ATTRIBUTE_NAMES } from '../model/system-types.js';
import { checkRedeclarationAgainst, roomOf } from './attributes.js';
import { changeBy } from './change-author.js';
import { type CheckedDeclaration, checkDeclaration, DECLARATION_FIELDS } from './declaration.js';
import { differences, SampleBudget, specOf } from './model-summaries.js';
import { lockTypeAt, requireTypeVersion } from './type-version.js';
import { canonicalJson } from './values.js';

/** Fields a definition keeps for life: a change of one is a redeclaration, never an evolution. */
const FIXED_FIELDS = ['value_type', 'cardinality', 'allowed_ref_type'] as const;

const parseJson = (text: string | null): unknown => (text === null ? null : JSON.parse(text));

/**
 * Why changing the live definition `old` into `d` could invalidate a stored value (none: the change is made in
 * place). Kept: widening an enumeration (adding values, or dropping it), dropping `required`, turning `filterable`
 * on or off, another default (applied only to instances created later). Anything else is a carried redeclaration.
 */
export function inPlaceBlockers(old: StoredAttribute, d: CheckedDeclaration): string[] {
  const blockers: string[] = [];
  if (old.value_type !== d.valueType) blockers.push(`value_type ${old.value_type} → ${d.valueType}`);
  if (old.cardinality !== d.cardinality) blockers.push(`cardinality ${old.cardinality} → ${d.cardinality}`);
  if ((old.allowed_ref_type ?? null) !== (d.allowedRefType ?? null)) {
    blockers.push('allowed_ref_type changes: stored references may point at another type');
  }
  const before = parseJson(old.allowed_values_json) as unknown[] | null;
  if (d.allowedValues !== null) {
    if (before === null) blockers.push('allowed_values added: stored values may be outside them');
    else {
      const kept = new Set(d.allowedValues.map(canonicalJson));
      const removed = before.filter((v) => !kept.has(canonicalJson(v)));
      if (removed.length > 0) {
        blockers.push(`allowed_values removes ${removed.length} value(s): stored values may hold them`);
      }
    }
  }
  if (!old.required && d.required) blockers.push('required false → true: instances may carry no value');
  return blockers;
}

/** The declaration a definition states as stored (allowed_ref_type a guid): what a change is merged onto. */
function storedDeclaration(old: StoredAttribute): Record<string, unknown> {
  return {
    name: old.name,
    value_type: old.value_type,
    cardinality: old.cardinality,
    allowed_values: parseJson(old.allowed_values_json),
    allowed_ref_type: old.allowed_ref_type,
    required: old.required === true,
    default_value: parseJson(old.default_value_json),
    // (sent on a reference only: a declaration refuses `filterable` on any other value type)
    ...(old.value_type === 'entity_ref' ? { filterable: old.filterable === true } : {}),
    description: old.description ?? null,
    display_name: old.display_name ?? null,
  };
}

/**
 * `change` (fields of a declaration, without the name: those sent replace the stored ones, null resets one to its
 * default) merged onto the stored definition and checked by the declaration's rules. A fixed field sent with another
 * value is refused at once, with what to do instead.
 */
function evolvedDeclaration(old: StoredAttribute, sent: unknown): CheckedDeclaration {
  const change = bodyObject(sent);
  for (const field of Object.keys(change)) {
    if (field === 'name') {
      throw refuse(
        'unknown_field',
        'Unknown field "name": the name is in the path, and a definition keeps it.',
      );
    }
    if (!Object.hasOwn(DECLARATION_FIELDS, field)) throw refuse('unknown_field', `Unknown field "${field}".`);
  }
  const stored = storedDeclaration(old);
  for (const field of FIXED_FIELDS) {
    if (change[field] !== undefined && change[field] !== stored[field])
      throw notInPlace(old.name, [`${field} changes`]);
  }
  return checkDeclaration({ ...stored, ...change });
}

const notInPlace = (name: string, blockers: readonly string[]) =>
  refuse(
    'attribute_change_not_in_place',
    `"${name}" cannot change in place (${blockers.join('; ')}): stored values could become invalid. Redeclare it instead (apply a model document with --allow-withdraw: its values are carried to the new definition).`,
  ).with({ blockers });

/** The stored fields of an evolved definition, with the lengths a type's budgets sum. */
function fieldsOf(d: CheckedDeclaration): EvolvedFields {
  const room = roomOf(d);
  return {
    allowed_values_json: d.allowedValuesJson,
    required: d.required,
    default_value_json: d.defaultValueJson,
    filterable: d.filterable,
    json_utf8: room.jsonBytes - room.textBytes,
    default_utf8: room.defaultBytes,
    description: d.description,
    display_name: d.displayName,
    text_utf8: room.textBytes,
  };
}

/** The definition `old` as `fields` leave it (what a dry run answers). */
const asEvolved = (old: StoredAttribute, fields: EvolvedFields): StoredAttribute => ({
  ...old,
  allowed_values_json: fields.allowed_values_json,
  required: fields.required,
  default_value_json: fields.default_value_json,
  filterable: fields.filterable,
  description: fields.description,
  display_name: fields.display_name,
  allowed_values_size: fields.json_utf8 - fields.default_utf8,
  default_value_size: fields.default_utf8,
});

/** How `d` differs from `old`, field by field, as a plan step says it (every value shown up to the plan's bound). */
export function changesOf(old: StoredAttribute, d: CheckedDeclaration): FieldChange[] {
  const from = specOf({
    name: old.name,
    valueType: old.value_type,
    cardinality: old.cardinality,
    allowedValues: parseJson(old.allowed_values_json) as unknown[] | null,
    allowedRefType: old.allowed_ref_type ?? null,
    required: old.required === true,
    defaultValue: parseJson(old.default_value_json),
    filterable: old.filterable === true,
    description: old.description ?? null,
    displayName: old.display_name ?? null,
  });
  return differences(from, specOf(d), true, new SampleBudget());
}

/** A change record's before and after: the name, and the fields that changed, as they were and are. */
function recordSides(old: StoredAttribute, d: CheckedDeclaration, changes: readonly FieldChange[]) {
  const was = storedDeclaration(old);
  const now: Record<string, unknown> = { ...specOf(d), required: d.required, filterable: d.filterable };
  now.allowed_values = d.allowedValues;
  now.default_value = d.defaultValue;
  const before: Record<string, unknown> = { name: old.name };
  const after: Record<string, unknown> = { name: old.name };
  for (const c of changes) {
    before[c.field] = was[c.field] ?? (c.field === 'filterable' ? false : null);
    after[c.field] = now[c.field] ?? null;
  }
  return { before, after };
}

export interface EvolveResult {
  attribute: StoredAttribute;
  dryRun: boolean;
  /** False when the definition already is as asked: nothing was written. */
  changed: boolean;
  changes: FieldChange[];
  /** The type's version after the change (its new ETag); absent on a dry run and when nothing changed. */
  typeVersion?: string;
}

/** The live user-defined definition `key` of the type, or the refusal a change of it gets. */
async function liveDefinition(run: Run, tenant: string, typeGuid: string, name: string) {
  const key = nameKey(name);
  const attr = await findAttribute(run, tenant, typeGuid, key);
  if (!attr || attr.origin === 'system') {
    if (!(await findTypeByGuid(run, tenant, typeGuid))) {
      throw refuse('unknown_entity_type', 'No entity type has this guid.');
    }
    if (attr || PLATFORM_ATTRIBUTE_NAMES.has(key)) {
      throw refuse('base_type_not_owner', `"${name}" is a platform attribute; the platform owns it.`);
    }
    throw refuse('attribute_def_not_found', `No attribute named "${name}" is declared on this type.`);
  }
  if (attr.state !== 'live') {
    throw refuse(
      'attribute_def_withdrawn',
      `"${name}" is withdrawn (or being redeclared, its values carried): it cannot change until it is declared again.`,
    );
  }
  return attr;
}

/**
 * Changes a live definition in place: `change` holds the declaration fields to change (see evolvedDeclaration). A
 * change that could invalidate a stored value is refused (attribute_change_not_in_place); one that changes nothing
 * writes nothing. Checked against the type's budgets, its referenced type and its default's entity as a
 * declaration is, with the definition's own room freed.
 */
export async function evolveAttribute(
  ctx: RequestContext,
  typeGuid: string,
  rawName: string,
  change: unknown,
  options: { dryRun?: boolean; ifVersion?: VersionCondition } = {},
): Promise<EvolveResult> {
  const tenant = ctx.viewer.tenant;
  const name = cleanName(rawName);
  const dryRun = options.dryRun === true;
  const work = async (run: Run): Promise<EvolveResult> => {
    // Locked (without changing the type's version) before anything is read, so the judgement below stays true.
    if (dryRun) await requireTypeVersion(run, tenant, typeGuid, options.ifVersion, false);
    else await lockTypeAt(run, tenant, typeGuid, options.ifVersion);
    const old = await liveDefinition(run, tenant, typeGuid, name);
    const d = evolvedDeclaration(old, change);
    const blockers = inPlaceBlockers(old, d);
    if (blockers.length > 0) throw notInPlace(old.name, blockers);
    const changes = changesOf(old, d);
    const fields = fieldsOf(d);
    if (changes.length === 0) return { attribute: old, dryRun, changed: false, changes };
    const locked = dryRun ? null : await lockTypeDefinitions(run, tenant, typeGuid);
    const facts = await readDeclareFacts(run, {
      tenant,
      typeGuid,
      nameKey: old.name_key,
      refType: d.allowedRefType,
      referents: d.referents,
    });
    checkRedeclarationAgainst(facts, d, old);
    if (dryRun) return { attribute: asEvolved(old, fields), dryRun, changed: true, changes };
    const record = changeBy(ctx, { kind: 'attribute_evolved', ...recordSides(old, d, changes) });
    const evolved = await evolveDefinition(run, tenant, old.guid, fields, record);
    if (!evolved) throw refuse('attribute_def_withdrawn', `"${name}" was withdrawn meanwhile.`);
    return { attribute: evolved, dryRun, changed: true, changes, typeVersion: locked?.typeVersion };
  };
  const result = dryRun ? await ctx.db.read(work) : await ctx.db.write(work);
  if (!dryRun && result.changed) {
    ctx.db.afterCommit(() => ctx.services.engineCache.invalidate(tenant, typeGuid));
  }
  return result;
}
