// Attribute definitions: declare, list, withdraw. The rules that need the database live here (the 200 limit, names
// taken or withdrawn, the referenced type), those that do not in declaration.ts.
// Over 300 lines: declare and withdraw share the type's lock, its facts and the model version change.

import { randomUUID } from 'node:crypto';
import type { RequestContext } from '../context.js';
import type { VersionCondition } from '../contract/type-version.js';
import type { AttributeRow } from '../contract/wire.js';
import {
  countAttributeData,
  createAttribute,
  type DeclareFacts,
  findAttribute,
  findAttributesApplyingTo,
  lockTypeDefinitions,
  markWithdrawn,
  readDeclareFacts,
  type StoredAttribute,
} from '../db/attributes.js';
import { markCarry } from '../db/carry.js';
import { findTypeByGuid, type StoredType } from '../db/entity-types.js';
import { ConstraintViolation } from '../db/executor.js';
import type { Run } from '../db/run.js';
import { isAppError, refuse } from '../errors.js';
import {
  IMPACT_SCAN_MAX,
  MAX_ATTRIBUTE_DEFS,
  MAX_TYPE_DEFAULTS_JSON_BYTES,
  MAX_TYPE_DEFINITIONS_JSON_BYTES,
  utf8Bytes,
} from '../model/limits.js';
import { cleanName, nameKey } from '../model/names.js';
import { PLATFORM_ATTRIBUTE_NAMES, PLATFORM_ATTRIBUTES, ROOT_KEY } from '../model/system-types.js';
import { authorOf, changeBy } from './change-author.js';
import { type CheckedDeclaration, checkDeclaration } from './declaration.js';
import { GUID_SHAPE } from './feed-filter.js';
import { asTheyWillBe } from './redeclaring.js';
import { withTypeSuggestions } from './type-suggestions.js';
import { requireTypeVersion } from './type-version.js';

/** Most attributes listed for a type: its own live definitions and the platform's. */
export const MAX_LISTED_ATTRIBUTES = MAX_ATTRIBUTE_DEFS + PLATFORM_ATTRIBUTES.length;

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
    description: a.description ?? null,
    display_name: a.display_name ?? null,
    redeclaring: a.redeclaring ?? null,
  };
}

/**
 * The JSON text of `toAttributeRow(a)`, with the enumeration and the default spliced in as stored (they are JSON
 * text already): a 4 MB listing is written out without parsing and serialising its enumerations again.
 */
export function attributeRowJson(a: StoredAttribute): string {
  const text = (v: unknown) => JSON.stringify(v);
  return `{"guid":${text(a.guid)},"name":${text(a.name)},"owner_type":${text(ownerTypeOf(a))},"value_type":${text(a.value_type)},"cardinality":${text(a.cardinality)},"allowed_values":${a.allowed_values_json ?? 'null'},"allowed_ref_type":${text(a.allowed_ref_type ?? null)},"required":${a.required === true},"default_value":${a.default_value_json ?? 'null'},"filterable":${a.filterable === true},"origin":${text(a.origin)},"description":${text(a.description ?? null)},"display_name":${text(a.display_name ?? null)},"redeclaring":${text(a.redeclaring ?? null)}}`;
}

/**
 * Approximate memory of a listing held in the model cache, from the lengths its rows carry (no serialising): its
 * texts at two bytes a character and the copy of its REST answer (approximateBytesServed's rule, without its cost).
 */
export function listingBytes(listing: AttributeListing | null): number {
  let chars = 64;
  for (const a of listing?.attributes ?? []) {
    chars +=
      300 +
      a.name.length +
      (a.allowed_values_size ?? 0) +
      (a.default_value_size ?? 0) +
      (a.description?.length ?? 0) +
      (a.display_name?.length ?? 0);
  }
  return 128 + 3 * chars;
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
  return orderAttributes(platform, asTheyWillBe(own, ctx.services.config.PURGE_GRACE_SECONDS), type.name_key);
}

/** Live definitions declared on the type, against the 200 limit. */
export async function attributeUsageOf(ctx: RequestContext, type: StoredType) {
  const own = type.name_key === ROOT_KEY ? [] : await ctx.loaders.ownAttributesByType.load(type.guid);
  return { declared: own.length, limit: MAX_ATTRIBUTE_DEFS };
}

/** Stored values of a definition not yet removed by the purge (one statement, counted when asked). */
export async function valuesRemainingOf(ctx: RequestContext, a: StoredAttribute): Promise<number> {
  const counted = await ctx.db.read((run) =>
    countAttributeData(run, {
      tenant: ctx.viewer.tenant,
      typeGuid: a.owner_guid,
      nameKey: a.name_key,
      multi: a.cardinality === 'multi',
      reference: a.value_type === 'entity_ref',
    }),
  );
  return counted.values;
}

const unknownType = () => refuse('unknown_entity_type', 'No entity type has this guid.');
const REF_TYPE_UNRESOLVED = 'allowed_ref_type does not resolve to an entity type.';

export interface DeclareResult {
  attribute: StoredAttribute;
  dryRun: boolean;
  declared: number;
  /** The type's version after the declaration (its new ETag); absent on a dry run. */
  typeVersion?: string;
}

export async function declareAttribute(
  ctx: RequestContext,
  typeGuid: string,
  input: unknown,
  options: { dryRun?: boolean; ifVersion?: VersionCondition } = {},
): Promise<DeclareResult> {
  const tenant = ctx.viewer.tenant;
  const d = checkDeclaration(input);
  const dryRun = options.dryRun === true;
  const work = async (run: Run) => {
    await requireTypeVersion(run, tenant, typeGuid, options.ifVersion, !dryRun);
    return declareIn(ctx, run, typeGuid, d, { dryRun });
  };
  try {
    const result = dryRun ? await ctx.db.read(work) : await ctx.db.write(work);
    if (!dryRun) ctx.db.afterCommit(() => ctx.services.engineCache.invalidate(tenant, typeGuid));
    return result;
  } catch (e) {
    if (e instanceof ConstraintViolation) {
      throw refuse('attribute_def_already_exists', `An attribute named "${d.name}" exists on this type.`);
    }
    // A type's name where its guid goes is the usual slip: the refusal names the caller's closest types, with guids.
    if (
      isAppError(e) &&
      e.message === REF_TYPE_UNRESOLVED &&
      d.allowedRefType &&
      !GUID_SHAPE.test(d.allowedRefType)
    ) {
      throw await withTypeSuggestions(ctx, e, d.allowedRefType, { withGuids: true });
    }
    throw e;
  }
}

/** What a definition takes of its type's budgets: its enumeration's and default's JSON text together, its default's. */
export interface Room {
  jsonBytes: number;
  defaultBytes: number;
}

/**
 * The JSON text of a definition's texts for people (description, display name), in UTF-8 bytes: they count in the
 * type's budget of enumerations and defaults, so a listing, an export and a GraphQL answer keep their bounds.
 */
export const peopleTextBytes = (t: { description: string | null; display_name: string | null }) =>
  (t.description === null ? 0 : utf8Bytes(JSON.stringify(t.description))) +
  (t.display_name === null ? 0 : utf8Bytes(JSON.stringify(t.display_name)));

/** What a declaration would take of its type's budgets (textBytes: its description's and display name's share). */
export function roomOf(d: CheckedDeclaration): Room & { textBytes: number } {
  const defaultBytes = utf8Bytes(d.defaultValueJson);
  const textBytes = peopleTextBytes({ description: d.description, display_name: d.displayName });
  return { jsonBytes: utf8Bytes(d.allowedValuesJson) + defaultBytes + textBytes, defaultBytes, textBytes };
}

/**
 * What a stored definition takes of its type's budgets: the lengths stored with it (roomOf's count when it was
 * declared; a definition of an earlier release, counted again at start: db/attributes.ts, TEXT_LENGTHS), as the
 * declare endpoint sums them, so a plan judges a type's budgets as the declaration it shows unblocked will be.
 */
export function definitionRoom(a: StoredAttribute): Room {
  const defaultBytes = a.default_value_size ?? 0;
  const textBytes = peopleTextBytes({
    description: a.description ?? null,
    display_name: a.display_name ?? null,
  });
  return { jsonBytes: (a.allowed_values_size ?? 0) + defaultBytes + textBytes, defaultBytes };
}

/**
 * A declaration's rules against what its type holds (facts read by readDeclareFacts): the type's budgets of
 * enumerations and defaults, the referenced type, the default's referents. `freed`: what a definition withdrawn for
 * this one releases (a redeclaration is checked as if its predecessor were gone).
 */
function checkAgainstType(
  facts: Awaited<ReturnType<typeof readDeclareFacts>>,
  d: CheckedDeclaration,
  freed: Room = { jsonBytes: 0, defaultBytes: 0 },
  options: { refTypeComing?: boolean } = {},
) {
  const { jsonBytes, defaultBytes } = roomOf(d);
  const liveJson = facts.liveJsonBytes - freed.jsonBytes;
  const liveDefaults = facts.liveDefaultBytes - freed.defaultBytes;
  if (liveJson + jsonBytes > MAX_TYPE_DEFINITIONS_JSON_BYTES) {
    throw refuse(
      'attribute_defs_too_large',
      `The type's definitions would hold ${(liveJson + jsonBytes).toLocaleString('en-US')} bytes (UTF-8) of enumerations and defaults; at most ${MAX_TYPE_DEFINITIONS_JSON_BYTES.toLocaleString('en-US')} are allowed.`,
    );
  }
  if (defaultBytes > 0 && liveDefaults + defaultBytes > MAX_TYPE_DEFAULTS_JSON_BYTES) {
    throw refuse(
      'defaults_too_large',
      `The type's defaults would hold ${(liveDefaults + defaultBytes).toLocaleString('en-US')} bytes (UTF-8) of JSON; at most ${MAX_TYPE_DEFAULTS_JSON_BYTES.toLocaleString('en-US')} are allowed (each applies to every entity created without that value).`,
    );
  }
  if (d.allowedRefType !== null && !facts.refTypeFound && !options.refTypeComing) {
    throw refuse('unknown_entity_type', REF_TYPE_UNRESOLVED);
  }
  for (const referent of facts.referents) {
    if (referent.type_guid === null) {
      throw refuse('referent_not_found', `default_value names no entity (${referent.guid}).`);
    }
    if (referent.type_guid !== d.allowedRefType) {
      throw refuse('ref_type_mismatch', `default_value names an entity of another type (${referent.guid}).`);
    }
  }
}

/**
 * A new declaration's rules against its type, as `facts` say it stands (readDeclareFacts reads them; a plan gives them
 * as its earlier steps would leave the type): the root type owns no declared definition, a platform attribute's name
 * and a live or withdrawn one's are taken, the 200 limit, then the type's budgets, the referenced type and the
 * default's referents (checkAgainstType). Throws the refusal the declaration gets.
 */
export function checkNewDeclaration(
  facts: DeclareFacts,
  d: CheckedDeclaration,
  options: { refTypeComing?: boolean } = {},
) {
  if (facts.typeNameKey === ROOT_KEY) {
    throw refuse('base_type_not_owner', 'The platform attribute owner cannot own declared attributes.');
  }
  if (PLATFORM_ATTRIBUTE_NAMES.has(d.key)) {
    throw refuse(
      'attribute_def_already_exists',
      `"${d.name}" is a platform attribute: every type has it (${[...PLATFORM_ATTRIBUTE_NAMES].join(', ')}); choose another name.`,
    );
  }
  if (facts.existingState === 'live') {
    throw refuse('attribute_def_already_exists', `An attribute named "${d.name}" is live on this type.`);
  }
  // (one message wherever the name is met: a declaration, a plan's step, an apply's wait)
  if (facts.existingState === 'withdrawn' && facts.existingCarrying) {
    throw refuse(
      'attribute_def_withdrawn',
      `"${d.name}" is being redeclared, its values carried: the service declares it anew once the purge's grace has passed and its values are carried (see its redeclaring.ends_after); declare nothing meanwhile.`,
    );
  }
  if (facts.existingState === 'withdrawn') {
    throw refuse(
      'attribute_def_withdrawn',
      `"${d.name}" was withdrawn and its data is still being removed: the name is free once the purge has removed it (a pass that begins the purge's grace after the withdrawal: the daily purge, or \`metamodel purge\` now).`,
    );
  }
  // A redeclaration carrying values holds its room until it ends (its definition is declared then).
  if (facts.liveCount + facts.carryingCount >= MAX_ATTRIBUTE_DEFS) {
    throw refuse(
      'too_many_attribute_defs',
      facts.carryingCount === 0
        ? `The type has ${MAX_ATTRIBUTE_DEFS} attributes, the limit.`
        : `The type has ${facts.liveCount} attributes and ${facts.carryingCount} being redeclared (their values carried), ${MAX_ATTRIBUTE_DEFS} in all, the limit.`,
    );
  }
  checkAgainstType(facts, d, undefined, options);
}

/**
 * Whether `declaration` could be declared on the type in place of the live definition `old` (a redeclaration): its
 * rules, and its rules against the type with `old` gone. Throws the refusal the declaration would get. Checked before
 * a redeclaration withdraws anything (and by a plan), so that no definition is withdrawn, and no value dropped, for a
 * declaration that cannot succeed. `refTypeComing`: the referenced type is one a plan creates first.
 */
export async function checkRedeclaration(
  run: Run,
  tenant: string,
  typeGuid: string,
  declaration: Record<string, unknown>,
  old: StoredAttribute,
  options: { refTypeComing?: boolean } = {},
) {
  const d = checkDeclaration(declaration);
  const facts = await declareFactsOf(run, tenant, typeGuid, d);
  if (!facts.typeFound) throw unknownType();
  checkRedeclarationAgainst(facts, d, old, options);
}

/** A redeclaration's rules against its type as `facts` say it stands, with `old` (the definition it replaces) gone. */
export function checkRedeclarationAgainst(
  facts: DeclareFacts,
  d: CheckedDeclaration,
  old: StoredAttribute,
  options: { refTypeComing?: boolean } = {},
) {
  checkAgainstType(facts, d, definitionRoom(old), options);
}

/** What the type holds that a declaration's rules read (db/attributes.ts readDeclareFacts), for declaration `d`. */
const declareFactsOf = (run: Run, tenant: string, typeGuid: string, d: CheckedDeclaration) =>
  readDeclareFacts(run, {
    tenant,
    typeGuid,
    nameKey: d.key,
    refType: d.allowedRefType,
    referents: d.referents,
  });

/**
 * A declaration's rules that need the database, and its write, in the caller's transaction: a declaration's own, or
 * the one that ends a redeclaration carrying values (resolvers/carry.ts), whose record says what it carried.
 */
export async function declareIn(
  ctx: RequestContext,
  run: Run,
  typeGuid: string,
  d: CheckedDeclaration,
  options: { dryRun?: boolean; carried?: Record<string, unknown> } = {},
): Promise<DeclareResult> {
  const tenant = ctx.viewer.tenant;
  const dryRun = options.dryRun === true;
  // The lock makes declarations on one type take turns, so the count and the name check below are exact.
  const locked = dryRun ? null : await lockTypeDefinitions(run, tenant, typeGuid);
  if (!dryRun && !locked) throw unknownType();
  const facts = await declareFactsOf(run, tenant, typeGuid, d);
  if (!facts.typeFound) throw unknownType();
  checkNewDeclaration(facts, d);
  const { jsonBytes, defaultBytes, textBytes } = roomOf(d);
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
    // (the enumeration's and default's bytes; the texts for people are counted apart, and summed with them)
    json_utf8: jsonBytes - textBytes,
    default_utf8: defaultBytes,
    description: d.description,
    display_name: d.displayName,
    text_utf8: textBytes,
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
      allowed_values_size: jsonBytes - textBytes - defaultBytes,
      default_value_size: defaultBytes,
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
      ...(d.description !== null ? { description: d.description } : {}),
      ...(d.displayName !== null ? { display_name: d.displayName } : {}),
      ...(options.carried ? { carried: options.carried } : {}),
    },
    internal: options.carried !== undefined,
  });
  const created = await createAttribute(run, tenant, typeGuid, attr, d.allowedRefType, change);
  return {
    attribute: created,
    dryRun,
    declared: facts.liveCount + 1,
    ...(locked ? { typeVersion: locked.typeVersion } : {}),
  };
}

/** Loads what listAttributes answers: null for a guid that is no type of the tenant. */
const listingLoader =
  (ctx: RequestContext, typeGuid: string) =>
  async (run: Run): Promise<AttributeListing | null> => {
    const found = await findAttributesApplyingTo(run, ctx.viewer.tenant, typeGuid, ROOT_KEY);
    if (!found) return null;
    return {
      attributes: orderAttributes(
        found.platform,
        asTheyWillBe(found.listed, ctx.services.config.PURGE_GRACE_SECONDS),
        found.nameKey,
      ),
      declared: found.listed.length,
      typeVersion: found.typeVersion,
    };
  };

/** Every attribute applying to a type: the platform five (owner_type null) and its own live definitions. */
export async function listAttributes(ctx: RequestContext, typeGuid: string): Promise<AttributeListing> {
  const listing = await ctx.services.model.read(
    ctx.modelScope,
    'attributes',
    typeGuid,
    listingLoader(ctx, typeGuid),
    listingBytes,
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
    listingBytes,
  );
}

/** The attributes applying to a type, as the model cache keeps them; `restBody` (the REST answer) made on first use. */
export interface AttributeListing {
  attributes: StoredAttribute[];
  declared: number;
  /** The type's version (the listing's ETag). */
  typeVersion: string;
  restBody?: Buffer;
}

export interface WithdrawResult {
  attribute: StoredAttribute;
  dryRun: boolean;
  impact?: { instances: number; values: number; complete: boolean };
  /** The type's version after the withdrawal (its new ETag); absent on a dry run. */
  typeVersion?: string;
}

/**
 * Moves a live definition to withdrawn; its stored values start being removed in the background. With `carry`, a
 * redeclaration: the definition stated anew (the same name), to which its values are carried (resolvers/carry.ts)
 * once the purge's grace has passed.
 */
export async function withdrawAttribute(
  ctx: RequestContext,
  typeGuid: string,
  rawName: string,
  options: { dryRun?: boolean; carry?: Record<string, unknown>; ifVersion?: VersionCondition } = {},
): Promise<WithdrawResult> {
  const tenant = ctx.viewer.tenant;
  const name = cleanName(rawName);
  const key = nameKey(name);
  const dryRun = options.dryRun === true;
  // A redeclaration's new definition passes the declaration's own rules before anything is withdrawn for it.
  if (options.carry) checkDeclaration(options.carry);
  const platformOwned = () =>
    refuse('base_type_not_owner', `"${name}" is a platform attribute; the platform owns it.`);
  const work = async (run: Run): Promise<WithdrawResult> => {
    await requireTypeVersion(run, tenant, typeGuid, options.ifVersion, !dryRun);
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
    // A redeclaration withdraws only for a declaration that can succeed (its values would be dropped otherwise).
    if (options.carry) await checkRedeclaration(run, tenant, typeGuid, options.carry, attr);
    if (dryRun) {
      const impact = await countAttributeData(
        run,
        {
          tenant,
          typeGuid,
          nameKey: key,
          multi: attr.cardinality === 'multi',
          reference: attr.value_type === 'entity_ref',
        },
        IMPACT_SCAN_MAX,
      );
      return { attribute: attr, dryRun, impact };
    }
    const change = changeBy(ctx, {
      kind: 'attribute_withdrawn',
      before: { name: attr.name, state: 'live' },
      after: { name: attr.name, state: 'withdrawn', ...(options.carry ? { carrying_values: true } : {}) },
    });
    const withdrawn = await markWithdrawn(run, tenant, attr.guid, change);
    if (!withdrawn) throw refuse('attribute_def_withdrawn', `"${name}" is already withdrawn.`);
    if (options.carry) {
      const author = authorOf(ctx);
      await markCarry(
        run,
        tenant,
        attr.guid,
        {
          declaration: options.carry,
          actor: author.actor,
          requestId: author.requestId,
          reason: author.reason ?? null,
        },
        roomOf(checkDeclaration(options.carry)),
      );
    }
    return { attribute: withdrawn, dryRun, ...(locked ? { typeVersion: locked.typeVersion } : {}) };
  };
  const result = dryRun ? await ctx.db.read(work) : await ctx.db.write(work);
  if (!dryRun) {
    ctx.db.afterCommit(() => {
      ctx.services.engineCache.invalidate(tenant, typeGuid);
      // A carry's pass waits for the grace: the purger, kicked, sets itself a wake-up for when it is over.
      ctx.services.purger.kick();
    });
  }
  return result;
}
