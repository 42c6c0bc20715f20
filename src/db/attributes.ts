// Cypher for attribute definitions: declare under a per-type lock, list, withdraw, and the data they own.
// Over 300 lines: one file per feature (house style); each statement carries the measurement that shaped it.

import neo4j from 'neo4j-driver';
import type { Cardinality, ValueType } from '../model/value-types.js';
import { type ChangeRecord, recordChange } from './changes.js';
import { raiseVersion, toStoredType, typeProjection, versionOf } from './entity-types.js';
import { objectFromList, type Run } from './run.js';

/** A definition as stored; JSON-valued fields are kept as JSON text. */
export interface StoredAttribute {
  guid: string;
  name: string;
  name_key: string;
  owner_guid: string;
  origin: 'user_defined' | 'system';
  value_type: ValueType;
  cardinality: Cardinality;
  allowed_values_json: string | null;
  allowed_ref_type: string | null;
  required: boolean;
  default_value_json: string | null;
  filterable: boolean;
  /** For people: what it is for, and a label (null: none). */
  description: string | null;
  display_name: string | null;
  /**
   * A withdrawn definition carrying its values to the one stated anew: that declaration (db/carry.ts CarrySpec, as
   * JSON text); null otherwise. The reads of live definitions return these too, shown as they will be.
   */
  carry?: string | null;
  /** A definition shown as it will be once its carried redeclaration ends (resolvers/redeclaring.ts). */
  redeclaring?: { since: string | null; ends_after: string | null } | null;
  state: 'live' | 'withdrawn';
  created_at: string;
  withdrawn_at: string | null;
  values_removed: number | null;
  purge_completed_at: string | null;
  /** Length of the JSON texts; a light row (LIGHT_ATTR_PROJECTION) has these but not the texts. */
  allowed_values_size: number;
  default_value_size: number;
}

/**
 * Lookups of a type's definitions name the (tenant, owner_guid) index explicitly: left to itself the planner
 * picks the `state` index and scans every live definition of every tenant.
 *
 * A definition travels as a list in ATTR_FIELDS order, not a map (see objectFromList): a page of maps takes much
 * longer to return. `allowed_ref_type` is the property
 * set with the ALLOWED_REF_TYPE relationship in the same statement (cheaper than following it per row).
 */
const ATTR_FIELDS = [
  'guid',
  'name',
  'name_key',
  'owner_guid',
  'origin',
  'value_type',
  'cardinality',
  'allowed_values_json',
  'required',
  'default_value_json',
  'filterable',
  'state',
  'values_removed',
  'created_at',
  'withdrawn_at',
  'purge_completed_at',
  'allowed_ref_type',
  'allowed_values_size',
  'default_value_size',
  'description',
  'display_name',
  'carry',
] as const satisfies readonly (keyof StoredAttribute)[];

const TEMPORAL = new Set<string>(['created_at', 'withdrawn_at', 'purge_completed_at']);
/**
 * Cypher: the UTF-8 bytes of `text` at most (ASCII: its length; otherwise four bytes a character, UTF-8's most).
 * The regular expression's backslash is escaped once for this template and once for Cypher's string.
 */
export const utf8BytesAtMost = (text: string) =>
  `CASE WHEN ${text} =~ '\\\\p{ASCII}*' THEN size(${text}) ELSE 4 * size(${text}) END`;

/**
 * Cypher for the bytes (UTF-8, the budgets' unit: model/limits.ts) of a definition's JSON texts (`a`), from the
 * lengths stored beside them (json_utf8: enumeration and default; default_utf8: the default), bounded from the texts
 * only for a definition stored without them (none once the backfill `definition-lengths-utf8` has run). As a CASE, not
 * coalesce: Neo4j's slotted runtime reads every property a coalesce names before it evaluates it, so
 * `coalesce(a.json_utf8, size(a.allowed_values_json))` reads each megabyte text although its length is stored (and
 * the other tenants' statements wait behind it); a branch not taken is not read.
 */
export const TEXT_LENGTHS = {
  // (with the JSON text of its description and display name, stored as text_utf8: they count in the same budgets)
  json: `CASE WHEN a.json_utf8 IS NOT NULL THEN a.json_utf8
        ELSE ${utf8BytesAtMost("coalesce(a.allowed_values_json, '')")} + ${utf8BytesAtMost("coalesce(a.default_value_json, '')")} END
        + CASE WHEN a.text_utf8 IS NULL THEN 0 ELSE a.text_utf8 END`,
  default: `CASE WHEN a.default_utf8 IS NOT NULL THEN a.default_utf8 ELSE ${utf8BytesAtMost("coalesce(a.default_value_json, '')")} END`,
  allowed: `CASE WHEN a.json_utf8 IS NOT NULL AND a.default_utf8 IS NOT NULL THEN a.json_utf8 - a.default_utf8
        ELSE ${utf8BytesAtMost("coalesce(a.allowed_values_json, '')")} END`,
} as const;
const SIZES: Record<string, string> = {
  allowed_values_size: TEXT_LENGTHS.allowed,
  default_value_size: TEXT_LENGTHS.default,
};
/** Fields a light row leaves out: enumerations and defaults, up to megabytes per type, loaded only when asked for. */
const HEAVY = new Set<string>(['allowed_values_json', 'default_value_json']);

const projection = (light: boolean) =>
  `[${ATTR_FIELDS.map((f) => {
    if (light && HEAVY.has(f)) return 'null';
    if (TEMPORAL.has(f)) return `toString(a.${f})`;
    if (f === 'carry') return 'CASE WHEN a.carrying = true THEN a.carry ELSE null END';
    return SIZES[f] ?? `a.${f}`;
  }).join(', ')}]`;

export const ATTR_PROJECTION = projection(false);
/** The same row without the JSON texts (their sizes are there): what GraphQL lists load. */
export const LIGHT_ATTR_PROJECTION = projection(true);

/** Whether a row carries its enumeration and default (a light row carries only their sizes). */
export const hasJsonTexts = (a: StoredAttribute) =>
  (a.allowed_values_size === 0 || a.allowed_values_json !== null) &&
  (a.default_value_size === 0 || a.default_value_json !== null);

/** A definition from its ATTR_PROJECTION list. */
export const toStoredAttribute = (values: unknown) => objectFromList<StoredAttribute>(ATTR_FIELDS, values);

const toStoredAttributes = (values: unknown) => (values as unknown[]).map(toStoredAttribute);

/** The property of an entity that holds a scalar value of the attribute with this normalised name. */
export const valueProperty = (nameKey: string) => `attr.${nameKey}`;

/**
 * Takes the type's write lock (by changing its definitions version) so that declarations and withdrawals on one
 * type run one at a time, and raises the type's version (they change its listing); returns the new definitions
 * version and type version, or null when the type does not resolve.
 */
export async function lockTypeDefinitions(run: Run, tenant: string, typeGuid: string) {
  const rows = await run(
    `MATCH (t:EntityType {guid: $typeGuid}) WHERE t.tenant = $tenant
     SET t.definitions_version = randomUUID()
     ${raiseVersion('t')}
     RETURN t.definitions_version AS version, ${versionOf('t')} AS typeVersion, t.name_key AS nameKey`,
    { tenant, typeGuid },
  );
  const row = rows[0];
  return row
    ? {
        version: row.version as string,
        typeVersion: row.typeVersion as string,
        nameKey: row.nameKey as string,
      }
    : null;
}

export interface DeclareFacts {
  typeFound: boolean;
  typeNameKey: string | null;
  existingState: 'live' | 'withdrawn' | null;
  /** The withdrawn definition of that name is being redeclared, its values carried (it is declared anew by the service). */
  existingCarrying?: boolean;
  liveCount: number;
  /** Redeclarations carrying values on the type: each will declare a definition, so each holds its room. */
  carryingCount: number;
  /**
   * JSON text (enumerations and defaults) the type's live definitions hold; a redeclaration carrying values counts,
   * until it ends, as the definition it will declare (its room is kept for it).
   */
  liveJsonBytes: number;
  /** JSON text of the type's live defaults. */
  liveDefaultBytes: number;
  refTypeFound: boolean;
  referents: { guid: string; type_guid: string | null }[];
}

/** Everything a declaration is judged on, read in one statement (after the lock, inside the same transaction). */
export async function readDeclareFacts(
  run: Run,
  p: { tenant: string; typeGuid: string; nameKey: string; refType: string | null; referents: string[] },
): Promise<DeclareFacts> {
  const rows = await run(
    `OPTIONAL MATCH (t:EntityType {guid: $typeGuid}) WHERE t.tenant = $tenant
     OPTIONAL MATCH (x:AttributeDefinition {tenant: $tenant, owner_guid: $typeGuid, name_key: $nameKey})
     CALL {
       MATCH (a:AttributeDefinition {tenant: $tenant, owner_guid: $typeGuid}) USING INDEX a:AttributeDefinition(tenant, owner_guid)
       WHERE a.state = 'live' OR a.carrying = true
       WITH a, a.state = 'live' AS isLive
       RETURN sum(CASE WHEN isLive THEN 1 ELSE 0 END) AS live, sum(CASE WHEN isLive THEN 0 ELSE 1 END) AS carrying,
              sum(CASE WHEN isLive THEN ${TEXT_LENGTHS.json} ELSE coalesce(a.carry_json_bytes, 0) END) AS jsonBytes,
              sum(CASE WHEN isLive THEN ${TEXT_LENGTHS.default} ELSE coalesce(a.carry_default_bytes, 0) END) AS defaultBytes
     }
     OPTIONAL MATCH (r:EntityType {guid: $refType}) WHERE r.tenant = $tenant
     CALL {
       UNWIND $referents AS g
       OPTIONAL MATCH (e:Entity {guid: g}) WHERE e.tenant = $tenant
       RETURN collect({guid: g, type_guid: e.type_guid}) AS referents
     }
     RETURN t IS NOT NULL AS typeFound, t.name_key AS typeNameKey, x.state AS existingState,
            x.carrying = true AS existingCarrying, live, carrying, jsonBytes,
            defaultBytes,
            r IS NOT NULL AS refTypeFound, referents`,
    { ...p, refType: p.refType ?? '' },
  );
  const row = rows[0]!;
  return {
    typeFound: row.typeFound === true,
    typeNameKey: (row.typeNameKey as string | null) ?? null,
    existingState: (row.existingState as 'live' | 'withdrawn' | null) ?? null,
    existingCarrying: row.existingCarrying === true,
    liveCount: Number(row.live ?? 0),
    carryingCount: Number(row.carrying ?? 0),
    liveJsonBytes: Number(row.jsonBytes ?? 0),
    liveDefaultBytes: Number(row.defaultBytes ?? 0),
    refTypeFound: row.refTypeFound === true,
    referents: row.referents as DeclareFacts['referents'],
  };
}

export interface NewAttribute {
  guid: string;
  name: string;
  name_key: string;
  value_type: string;
  cardinality: string;
  allowed_values_json: string | null;
  required: boolean;
  default_value_json: string | null;
  filterable: boolean;
  /** UTF-8 bytes of both JSON texts, summed against the type's budget without reading them. */
  json_utf8: number;
  /** UTF-8 bytes of the default's JSON text, summed against the type's defaults budget the same way. */
  default_utf8: number;
  description?: string | null;
  display_name?: string | null;
  /** UTF-8 bytes of the description's and display name's JSON texts, summed with json_utf8 (TEXT_LENGTHS.json). */
  text_utf8?: number;
}

/**
 * Creates a live user-defined definition on the type bound to `t` from the expressions given (its properties, owner
 * and referenced type) and links it to the referenced type: one shape for a declaration and for a bulk load.
 * `carry` names variables the statement still needs after it (a bulk load's row).
 */
const createDefinition = (e: { attr: string; typeGuid: string; refType: string; carry?: string }) =>
  `CREATE (t)-[:HAS_ATTRIBUTE]->(a:AttributeDefinition)
     SET a = ${e.attr}, a.tenant = $tenant, a.owner_guid = ${e.typeGuid}, a.origin = 'user_defined', a.state = 'live',
         a.allowed_ref_type = ${e.refType}, a.created_at = datetime()
     WITH a${e.carry ?? ''}
     CALL {
       WITH a${e.carry ?? ''}
       MATCH (x:EntityType {guid: ${e.refType}}) WHERE x.tenant = $tenant
       CREATE (a)-[:ALLOWED_REF_TYPE]->(x)
     }`;
const DECLARED_DEFINITION = createDefinition({ attr: '$attr', typeGuid: '$typeGuid', refType: '$refType' });
const LOADED_DEFINITION = createDefinition({
  attr: 'r.attr',
  typeGuid: 'r.typeGuid',
  refType: 'r.refType',
  carry: ', r',
});

export async function createAttribute(
  run: Run,
  tenant: string,
  typeGuid: string,
  attr: NewAttribute,
  refType: string | null,
  change: ChangeRecord,
): Promise<StoredAttribute> {
  const rows = await run(
    `MATCH (t:EntityType {guid: $typeGuid}) WHERE t.tenant = $tenant
     ${DECLARED_DEFINITION}
     ${recordChange({ typeGuid: '$typeGuid', attributeGuid: 'a.guid', imports: ['a'] })}
     RETURN ${ATTR_PROJECTION} AS attr`,
    { tenant, typeGuid, attr, refType, ...change },
  );
  return toStoredAttribute(rows[0]!.attr);
}

/**
 * Many live definitions of one tenant at once, each as createAttribute writes it, and a new definitions version for
 * each owner (as a declaration's lock gives it), without change records: for loading a catalog (the bench's).
 */
export async function insertAttributes(
  run: Run,
  tenant: string,
  rows: readonly { typeGuid: string; attr: NewAttribute; refType: string | null }[],
) {
  await run(
    `UNWIND $rows AS r
     MATCH (t:EntityType {guid: r.typeGuid}) WHERE t.tenant = $tenant
     ${LOADED_DEFINITION}`,
    { tenant, rows },
  );
  await run(
    `UNWIND $owners AS g
     MATCH (t:EntityType {guid: g}) WHERE t.tenant = $tenant
     SET t.definitions_version = randomUUID()
     ${raiseVersion('t')}`,
    { tenant, owners: [...new Set(rows.map((r) => r.typeGuid))] },
  );
}

/**
 * Definitions in one state declared on each of the given types (platform attributes excluded), by name, as light
 * rows (no enumeration or default text), at most `limit` per type; `live` includes the redeclarations carrying values
 * (with their carry: they are shown as they will be).
 */
export async function findAttributesOfTypes(
  run: Run,
  tenant: string,
  typeGuids: readonly string[],
  state: 'live' | 'withdrawn',
  limit: number,
) {
  const rows = await run(
    `UNWIND $typeGuids AS g
     CALL {
       WITH g
       MATCH (a:AttributeDefinition {tenant: $tenant, owner_guid: g}) USING INDEX a:AttributeDefinition(tenant, owner_guid)
       WHERE (a.state = $state OR ($state = 'live' AND a.carrying = true)) AND a.origin = 'user_defined'
       WITH a ORDER BY a.name_key LIMIT $limit
       RETURN collect(${LIGHT_ATTR_PROJECTION}) AS attrs
     }
     RETURN g AS typeGuid, attrs`,
    { tenant, typeGuids, state, limit: neo4j.int(limit) },
  );
  return new Map(rows.map((r) => [r.typeGuid as string, toStoredAttributes(r.attrs)]));
}

/** The enumeration and default JSON texts of definitions of the tenant, by guid. */
export async function findAttributeJson(run: Run, tenant: string, guids: readonly string[]) {
  const rows = await run(
    `UNWIND $guids AS g
     MATCH (a:AttributeDefinition {guid: g}) WHERE a.tenant = $tenant
     RETURN a.guid AS guid, a.allowed_values_json AS allowed, a.default_value_json AS dflt`,
    { tenant, guids },
  );
  return new Map(
    rows.map((r) => [
      r.guid as string,
      { allowed_values_json: r.allowed as string | null, default_value_json: r.dflt as string | null },
    ]),
  );
}

/** A type's own live definitions and the platform's, in one statement; null when the type does not resolve. */
export async function findAttributesApplyingTo(run: Run, tenant: string, typeGuid: string, rootKey: string) {
  const rows = await run(
    `MATCH (t:EntityType {guid: $typeGuid}) WHERE t.tenant = $tenant
     CALL {
       WITH t
       OPTIONAL MATCH (a:AttributeDefinition {tenant: $tenant, owner_guid: t.guid}) USING INDEX a:AttributeDefinition(tenant, owner_guid)
       WHERE (a.state = 'live' OR a.carrying = true) AND a.origin = 'user_defined'
       WITH a ORDER BY a.name_key
       RETURN [x IN collect(${ATTR_PROJECTION}) WHERE x[0] IS NOT NULL] AS own
     }
     CALL {
       OPTIONAL MATCH (root:EntityType {tenant: $tenant, name_key: $rootKey})
       OPTIONAL MATCH (a:AttributeDefinition {tenant: $tenant, owner_guid: root.guid}) USING INDEX a:AttributeDefinition(tenant, owner_guid) WHERE a.origin = 'system'
       RETURN [x IN collect(${ATTR_PROJECTION}) WHERE x[0] IS NOT NULL] AS platform
     }
     RETURN t.definitions_version AS version, ${versionOf('t')} AS typeVersion, t.creatable AS creatable,
            t.name_key AS nameKey, own, platform`,
    { tenant, typeGuid, rootKey },
  );
  const row = rows[0];
  if (!row) return null;
  const declared = toStoredAttributes(row.own);
  return {
    version: (row.version as string | null) ?? '',
    typeVersion: row.typeVersion as string,
    creatable: row.creatable as boolean | null,
    nameKey: row.nameKey as string,
    /** Its own live definitions: what entity writes and reads apply. */
    own: declared.filter((a) => a.state === 'live'),
    /** Its own definitions, with those being redeclared (carrying values), in name order: what a listing shows. */
    listed: declared,
    platform: toStoredAttributes(row.platform),
  };
}

/** The platform attributes (owned by the root type) and the types they reference, in one statement. */
export async function findPlatformAttributes(run: Run, tenant: string, rootKey: string) {
  const rows = await run(
    `MATCH (root:EntityType {tenant: $tenant, name_key: $rootKey})
     MATCH (a:AttributeDefinition {tenant: $tenant, owner_guid: root.guid}) USING INDEX a:AttributeDefinition(tenant, owner_guid) WHERE a.origin = 'system'
     OPTIONAL MATCH (r:EntityType {guid: a.allowed_ref_type}) WHERE r.tenant = $tenant
     RETURN ${ATTR_PROJECTION} AS attr, CASE WHEN r IS NULL THEN null ELSE ${typeProjection('r')} END AS ref`,
    { tenant, rootKey },
  );
  return {
    attributes: rows.map((r) => toStoredAttribute(r.attr)),
    referencedTypes: rows.flatMap((r) => (r.ref ? [toStoredType(r.ref)] : [])),
  };
}

export async function findAttribute(run: Run, tenant: string, typeGuid: string, nameKey: string) {
  const rows = await run(
    `MATCH (a:AttributeDefinition {tenant: $tenant, owner_guid: $typeGuid, name_key: $nameKey})
     RETURN ${ATTR_PROJECTION} AS attr`,
    { tenant, typeGuid, nameKey },
  );
  return rows[0] ? toStoredAttribute(rows[0].attr) : null;
}

export async function markWithdrawn(run: Run, tenant: string, guid: string, change: ChangeRecord) {
  const rows = await run(
    `MATCH (a:AttributeDefinition {guid: $guid}) WHERE a.tenant = $tenant AND a.state = 'live'
     SET a.state = 'withdrawn', a.withdrawn_at = datetime(), a.purge_cursor = '', a.values_removed = 0
     WITH a
     ${recordChange({ typeGuid: 'a.owner_guid', attributeGuid: 'a.guid', imports: ['a'] })}
     RETURN ${ATTR_PROJECTION} AS attr`,
    { tenant, guid, ...change },
  );
  return rows[0] ? toStoredAttribute(rows[0].attr) : null;
}

/** The fields a definition may change in place (resolvers/evolution.ts decides which changes qualify). */
export interface EvolvedFields {
  allowed_values_json: string | null;
  required: boolean;
  default_value_json: string | null;
  filterable: boolean;
  json_utf8: number;
  default_utf8: number;
  description: string | null;
  display_name: string | null;
  text_utf8: number;
}

/**
 * Changes a live definition in place (its guid, name, kind and stored values untouched) and records the change, in
 * one statement; null when it is no longer live. Setting a property to null removes it, as a declaration leaves it.
 */
export async function evolveDefinition(
  run: Run,
  tenant: string,
  guid: string,
  fields: EvolvedFields,
  change: ChangeRecord,
) {
  const rows = await run(
    `MATCH (a:AttributeDefinition {guid: $guid}) WHERE a.tenant = $tenant AND a.state = 'live'
     SET a += $fields, a.evolved_at = datetime()
     WITH a
     ${recordChange({ typeGuid: 'a.owner_guid', attributeGuid: 'a.guid', imports: ['a'] })}
     RETURN ${ATTR_PROJECTION} AS attr`,
    { tenant, guid, fields, ...change },
  );
  return rows[0] ? toStoredAttribute(rows[0].attr) : null;
}

/** Withdraws every live definition declared on a type (used when the type is deleted); returns them, by name. */
export async function withdrawAllOfType(run: Run, tenant: string, typeGuid: string) {
  const rows = await run(
    `MATCH (a:AttributeDefinition {tenant: $tenant, owner_guid: $typeGuid}) USING INDEX a:AttributeDefinition(tenant, owner_guid) WHERE a.state = 'live'
     SET a.state = 'withdrawn', a.withdrawn_at = datetime(), a.purge_cursor = '', a.values_removed = 0
     WITH a ORDER BY a.name_key
     RETURN a.guid AS guid, a.name AS name`,
    { tenant, typeGuid },
  );
  return rows as { guid: string; name: string }[];
}

/**
 * Stored values of one attribute on the instances of its type: what a withdrawal would remove. With `scanLimit`,
 * only the first that many instances (in guid order) are read: `complete` says whether that was all of them (when
 * not, the counts are those of the instances read, a lower bound).
 */
export async function countAttributeData(
  run: Run,
  p: { tenant: string; typeGuid: string; nameKey: string; multi: boolean; reference: boolean },
  scanLimit?: number,
) {
  const limited = scanLimit === undefined ? '' : 'WITH e LIMIT $limit';
  const rows = await run(
    p.reference
      ? `MATCH (e:Entity {tenant: $tenant, type_guid: $typeGuid}) USING INDEX e:Entity(tenant, type_guid, guid)
         WHERE e.guid > ''
         ${limited}
         OPTIONAL MATCH (e)-[r:REFERS_TO {attr: $nameKey}]->()
         WITH e, count(r) AS refs
         RETURN count(e) AS scanned, count(CASE WHEN refs > 0 THEN 1 END) AS instances, sum(refs) AS values`
      : `MATCH (e:Entity {tenant: $tenant, type_guid: $typeGuid}) USING INDEX e:Entity(tenant, type_guid, guid)
         WHERE e.guid > ''
         ${limited}
         RETURN count(e) AS scanned, count(e[$prop]) AS instances,
                sum(CASE WHEN e[$prop] IS NULL THEN 0 WHEN $multi THEN size(e[$prop]) ELSE 1 END) AS values`,
    { ...p, prop: valueProperty(p.nameKey), limit: neo4j.int(scanLimit ?? 0) },
  );
  const scanned = Number(rows[0]?.scanned ?? 0);
  return {
    instances: Number(rows[0]?.instances ?? 0),
    values: Number(rows[0]?.values ?? 0),
    complete: scanLimit === undefined || scanned < scanLimit,
  };
}
