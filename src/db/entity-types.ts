// Cypher for entity types. Every statement is scoped by tenant and parameterised.
// Over 300 lines: one file per feature (house style): create-or-get, pages, rename, delete, system types, bulk load.

import { randomUUID } from 'node:crypto';
import neo4j from 'neo4j-driver';
import { z } from 'zod';
import { EntityTypeRow, type FormerNameRow } from '../contract/wire.js';
import { keptFormerNames } from '../model/limits.js';
import type { TypeProps } from '../model/system-types.js';
import { type ChangeRecord, recordChange } from './changes.js';
import { createModelVersionShards } from './model-version.js';
import { objectFromList, type Run } from './run.js';

/**
 * A type as stored: the fields of its row (EntityTypeRow, where each is declared once), absent ones null, its parent
 * level's guid, and its name key.
 */
export type StoredType = {
  [K in keyof EntityTypeRow]-?: undefined extends EntityTypeRow[K]
    ? Exclude<EntityTypeRow[K], undefined> | null
    : EntityTypeRow[K];
} & { name_key: string };

/** A type travels as a list in TYPE_FIELDS order, not a map (see objectFromList): its row's fields and its key. */
const TYPE_FIELDS = [
  ...(Object.keys(EntityTypeRow.shape) as (keyof EntityTypeRow)[]),
  'name_key',
] as const satisfies readonly (keyof StoredType)[];

/** What the row declares a field to be, under its optionality. */
const declared = (field: string) => {
  let type = (EntityTypeRow.shape as Record<string, z.ZodType>)[field];
  while (type instanceof z.ZodOptional) type = type.unwrap() as z.ZodType;
  return type;
};

/** Fields the row declares as date-times: stored as Neo4j datetimes, read as ISO 8601 text. */
const TIMES = new Set<string>(TYPE_FIELDS.filter((f) => declared(f) instanceof z.ZodISODateTime));
/** Fields the row declares as lists of objects: stored as JSON text in `<field>_json`, read back as the list. */
const LISTS = new Set<string>(TYPE_FIELDS.filter((f) => declared(f) instanceof z.ZodArray));

/**
 * A type's version (EntityTypeRow.version): its change count (`version`, raised by a rename and by every change of
 * its live definitions) and when it was created, so that a type deleted and created again under its name (the same
 * guid) never repeats a version the one before had.
 */
export const versionOf = (v: string) =>
  `toString(coalesce(${v}.version, 0)) + '-' + toString(coalesce(${v}.created_at.epochMillis, 0))`;

/**
 * Raises a type's change count, in the statement that changes its row or its live definitions: a clause of its own
 * after the one that locks the node (reading the count before the node is locked lets two writers deadlock).
 */
export const raiseVersion = (v: string) => `WITH ${v} SET ${v}.version = coalesce(${v}.version, 0) + 1`;

/** How a field is read from the node `v`: the parent by its relationship, a time in epoch ms, else as stored. */
const read = (v: string, field: keyof StoredType) => {
  if (field === 'parent_type') return `head([(${v})-[:PARENT_TYPE]->(p:EntityType) | p.guid])`;
  if (field === 'version') return versionOf(v);
  if (TIMES.has(field)) return `${v}.${field}.epochMillis`;
  if (LISTS.has(field)) return `${v}.${field}_json`;
  return `${v}.${field}`;
};

export const typeProjection = (v: string) => `[${TYPE_FIELDS.map((f) => read(v, f)).join(', ')}]`;

const PROJECTION = `${typeProjection('t')} AS type`;

/** A type from its typeProjection list; its times as ISO 8601 text to the millisecond (`2026-11-26T01:30:00.000Z`). */
export const toStoredType = (values: unknown) => {
  const type = objectFromList<StoredType>(TYPE_FIELDS, values);
  const fields = type as Record<string, unknown>;
  for (const field of TIMES) {
    if (typeof fields[field] === 'number') fields[field] = new Date(fields[field]).toISOString();
  }
  for (const field of LISTS) {
    // An empty list is left out of the row, as an absent field. Former names stored before a row's bound on them
    // are answered within it.
    const stored = typeof fields[field] === 'string' ? (JSON.parse(fields[field]) as unknown[]) : [];
    const list = field === 'former_names' ? keptFormerNames(stored) : stored;
    fields[field] = list.length > 0 ? list : null;
  }
  return type;
};

const first = (rows: Record<string, unknown>[]) => (rows[0] ? toStoredType(rows[0].type) : null);

/**
 * The branches of a CALL that find the type a normalised name `key` resolves to, as rows (t, rank): the type currently
 * holding that name (rank 0), else the type whose guid the name resolves to (rank 1). That guid is the one derived
 * from the name (`derived`: a type keeps the guid of the name it was created under, so that name still resolves to
 * it), unless the name was released: then it is the guid its release named, which a type created under the name
 * again takes. `imports` are the variables the CALL brings in.
 */
export const namedTypeBranches = (key: string, derived: string, imports = '') => {
  const withImports = imports === '' ? '' : `WITH ${imports}\n`;
  return `${withImports}MATCH (t:EntityType {tenant: $tenant, name_key: ${key}}) RETURN t, 0 AS rank
       UNION
       ${withImports}OPTIONAL MATCH (r:TypeNameRelease {tenant: $tenant, name_key: ${key}})
       WITH coalesce(r.guid, ${derived}) AS g
       MATCH (t:EntityType {guid: g}) WHERE t.tenant = $tenant RETURN t, 1 AS rank`;
};

/** The type a normalised name resolves to (see namedTypeBranches). */
export async function findTypeByName(run: Run, tenant: string, key: string, derivedGuid: string) {
  const rows = await run(
    `CALL {
       ${namedTypeBranches('$key', '$guid')}
     }
     WITH t ORDER BY rank LIMIT 1
     RETURN ${PROJECTION}`,
    { tenant, key, guid: derivedGuid },
  );
  return first(rows);
}

export async function findTypeByGuid(run: Run, tenant: string, guid: string) {
  const rows = await run(`MATCH (t:EntityType {guid: $guid}) WHERE t.tenant = $tenant RETURN ${PROJECTION}`, {
    tenant,
    guid,
  });
  return first(rows);
}

export async function findTypesByGuids(run: Run, tenant: string, guids: readonly string[]) {
  const rows = await run(
    `UNWIND $guids AS guid
     MATCH (t:EntityType {guid: guid}) WHERE t.tenant = $tenant
     RETURN ${PROJECTION}`,
    { tenant, guids },
  );
  return rows.map((r) => toStoredType(r.type));
}

/** A user-defined type node `t` of the tenant, from the expressions given: one shape for a create and a bulk load. */
const newUserType = (guid: string, name: string, key: string) =>
  `(t:EntityType {tenant: $tenant, guid: ${guid}, name: ${name}, name_key: ${key},
                  origin: 'user_defined', catalog_level: true, created_at: datetime()})`;
const CREATED_TYPE = newUserType('guid', '$name', '$key');
const LOADED_TYPE = newUserType('n.guid', 'n.name', 'n.name_key');

/**
 * The guid a type created under a name takes, as `guid` (after `WITH` the variables in `imports`): the one a type
 * deleted under it held (its tombstone), else the one its release named, else the one derived from it.
 */
export const createdGuid = (key: string, derived: string, imports = '') =>
  `OPTIONAL MATCH (x:TypeTombstone {tenant: $tenant, name_key: ${key}})
     OPTIONAL MATCH (r:TypeNameRelease {tenant: $tenant, name_key: ${key}})
     WITH ${imports === '' ? '' : `${imports}, `}coalesce(x.guid, r.guid, ${derived}) AS guid`;

/**
 * Creates a user-defined type. Its guid is the one a deleted type last held under this name (its tombstone), else
 * the one the name's release named (when it was released), else the one derived from the name; tombstones pointing
 * at the guid taken are cleared.
 */
export async function createUserType(
  run: Run,
  tenant: string,
  derivedGuid: string,
  name: string,
  key: string,
  change: ChangeRecord,
) {
  const rows = await run(
    `${createdGuid('$key', '$guid')}
     CREATE ${CREATED_TYPE}
     WITH t
     CALL {
       WITH t
       MATCH (y:TypeTombstone {tenant: $tenant, guid: t.guid})
       DELETE y
     }
     ${recordChange({ typeGuid: 't.guid', imports: ['t'] })}
     RETURN ${PROJECTION}`,
    { tenant, guid: derivedGuid, name, key, ...change },
  );
  return first(rows) as StoredType;
}

/**
 * Many user-defined types of one tenant at once, each as createUserType writes it, for loading a catalog into a
 * tenant that has none of these names (no tombstone to honour, no change record): the bench's catalog.
 */
export async function insertUserTypes(
  run: Run,
  tenant: string,
  types: readonly { guid: string; name: string; name_key: string }[],
) {
  await run(
    `UNWIND $types AS n
     CREATE ${LOADED_TYPE}`,
    { tenant, types },
  );
}

/**
 * One page in name order after `afterKey`. Ordering by both index properties lets the (tenant, name_key) index
 * provide the order, so the page is a seek plus a limit: the same cost at row 100,000 as at row 0.
 */
export const LIST_TYPES_CYPHER = `MATCH (t:EntityType) WHERE t.tenant = $tenant AND t.name_key > $after
     WITH t ORDER BY t.tenant ASC, t.name_key ASC LIMIT $limit
     RETURN ${PROJECTION}`;

export async function listTypes(run: Run, tenant: string, afterKey: string, limit: number) {
  const rows = await run(LIST_TYPES_CYPHER, { tenant, after: afterKey, limit: neo4j.int(limit) });
  return rows.map((r) => toStoredType(r.type));
}

export async function renameType(
  run: Run,
  tenant: string,
  guid: string,
  name: string,
  key: string,
  formerNames: readonly FormerNameRow[],
  change: ChangeRecord,
) {
  const rows = await run(
    `MATCH (t:EntityType {guid: $guid}) WHERE t.tenant = $tenant
     SET t.name = $name, t.name_key = $key, t.updated_at = datetime(), t.former_names_json = $formerJson
     ${raiseVersion('t')}
     WITH t
     ${recordChange({ typeGuid: 't.guid', imports: ['t'] })}
     RETURN ${PROJECTION}`,
    { tenant, guid, name, key, formerJson: JSON.stringify(formerNames), ...change },
  );
  return first(rows);
}

/** Sets a type's texts for people (null removes one), raises its version and records the change, in one statement. */
export async function describeType(
  run: Run,
  tenant: string,
  guid: string,
  texts: { description: string | null; display_name: string | null },
  change: ChangeRecord,
) {
  const rows = await run(
    `MATCH (t:EntityType {guid: $guid}) WHERE t.tenant = $tenant
     SET t.description = $description, t.display_name = $displayName, t.updated_at = datetime()
     ${raiseVersion('t')}
     WITH t
     ${recordChange({ typeGuid: 't.guid', imports: ['t'] })}
     RETURN ${PROJECTION}`,
    { tenant, guid, description: texts.description, displayName: texts.display_name, ...change },
  );
  return first(rows);
}

/**
 * Releases the name `key`, which resolves to the type `guid` as a former name: from now on it resolves to `next`, the
 * guid a type created under the name will take (none holds it yet). The type's former names (with the release marked)
 * are stored, its version raised and the change recorded, in one statement.
 */
export async function releaseTypeName(
  run: Run,
  tenant: string,
  guid: string,
  key: string,
  next: string,
  formerNames: readonly FormerNameRow[],
  change: ChangeRecord,
) {
  const rows = await run(
    `MATCH (t:EntityType {guid: $guid}) WHERE t.tenant = $tenant
     MERGE (r:TypeNameRelease {tenant: $tenant, name_key: $key})
     SET r.guid = $next, r.released_by = t.guid, r.released_at = datetime(),
         t.former_names_json = $formerJson, t.updated_at = datetime()
     ${raiseVersion('t')}
     WITH t
     ${recordChange({ typeGuid: 't.guid', imports: ['t'] })}
     RETURN ${PROJECTION}`,
    { tenant, guid, key, next, formerJson: JSON.stringify(formerNames), ...change },
  );
  return first(rows);
}

/**
 * A type's version, for a write's precondition: with `lock`, the type is locked first (in a write transaction), so
 * that no other write changes it before this transaction ends. null: no such type in the tenant.
 */
export async function readTypeVersion(run: Run, tenant: string, guid: string, lock: boolean) {
  const rows = await run(
    `MATCH (t:EntityType {guid: $guid}) WHERE t.tenant = $tenant
     ${lock ? 'SET t._lock = true REMOVE t._lock' : ''}
     RETURN ${versionOf('t')} AS version`,
    { tenant, guid },
  );
  return (rows[0]?.version as string | undefined) ?? null;
}

/** Names of live attribute definitions on other types whose references point at this type. */
export async function findReferencingAttributes(run: Run, tenant: string, guid: string) {
  const rows = await run(
    `MATCH (t:EntityType {guid: $guid})<-[:ALLOWED_REF_TYPE]-(a:AttributeDefinition)
     WHERE t.tenant = $tenant AND a.state = 'live' AND a.owner_guid <> $guid
     RETURN a.owner_guid AS owner, a.name AS name LIMIT 10`,
    { tenant, guid },
  );
  return rows as { owner: string; name: string }[];
}

/** Deletes the type node; its definitions are withdrawn first (their data is purged), its entities stay. */
export async function deleteType(
  run: Run,
  tenant: string,
  guid: string,
  derivedFromCurrentName: string,
  change: ChangeRecord,
) {
  const rows = await run(
    `MATCH (t:EntityType {guid: $guid}) WHERE t.tenant = $tenant
     // A renamed type's guid is not derived from its current name: remember it, so recreating that name gets it back.
     FOREACH (_ IN CASE WHEN t.guid <> $derived THEN [1] ELSE [] END |
       MERGE (x:TypeTombstone {tenant: $tenant, name_key: t.name_key})
       SET x.guid = t.guid)
     DETACH DELETE t
     WITH count(*) AS deleted WHERE deleted > 0
     ${recordChange({ typeGuid: '$guid' })}
     RETURN deleted`,
    { tenant, guid, derived: derivedFromCurrentName, ...change },
  );
  return Number(rows[0]?.deleted ?? 0) > 0;
}

export async function readTenantVersion(run: Run, tenant: string): Promise<number | null> {
  const rows = await run('MATCH (x:Tenant {id: $tenant}) RETURN x.system_version AS v', { tenant });
  const v = rows[0]?.v;
  return typeof v === 'number' ? v : null;
}

export interface SystemTypeSpec {
  key: string;
  guid: string;
  props: TypeProps;
}

/** Creates or brings in step the tenant's system types and their level links; idempotent. */
export interface PlatformAttributeSpec {
  guid: string;
  name: string;
  cardinality: string;
  value_type: string;
  required: boolean;
  filterable: boolean;
  refKey: string;
}

export async function upsertSystemTypes(
  run: Run,
  tenant: string,
  types: readonly SystemTypeSpec[],
  links: readonly { child: string; parent: string }[],
  rootKey: string,
  attributes: readonly PlatformAttributeSpec[],
  version: number,
) {
  await run(
    `UNWIND $types AS st
     MERGE (t:EntityType {tenant: $tenant, name_key: st.key})
       ON CREATE SET t.guid = st.guid, t.created_at = datetime()
     WITH t, st WHERE coalesce(t.origin, 'system') = 'system'
     SET t.name = st.props.name, t.origin = 'system', t.catalog_level = st.props.catalog_level,
         t.vocabulary = st.props.vocabulary, t.label = st.props.label, t.icon = st.props.icon,
         t.creatable = st.props.creatable, t.name_locked_hint = st.props.name_locked_hint`,
    { tenant, types },
  );
  await run(
    `UNWIND $links AS l
     MATCH (c:EntityType {tenant: $tenant, name_key: l.child}), (p:EntityType {tenant: $tenant, name_key: l.parent})
     MERGE (c)-[:PARENT_TYPE]->(p)`,
    { tenant, links },
  );
  await run(
    `MATCH (root:EntityType {tenant: $tenant, name_key: $rootKey})
     UNWIND $attributes AS pa
     MERGE (a:AttributeDefinition {tenant: $tenant, owner_guid: root.guid, name_key: pa.name})
       ON CREATE SET a.guid = pa.guid, a.created_at = datetime()
     SET a.name = pa.name, a.origin = 'system', a.value_type = pa.value_type, a.cardinality = pa.cardinality,
         a.required = pa.required, a.filterable = pa.filterable, a.state = 'live', a.json_utf8 = 0, a.default_utf8 = 0
     MERGE (root)-[:HAS_ATTRIBUTE]->(a)
     WITH a, pa
     MATCH (r:EntityType {tenant: $tenant, name_key: pa.refKey})
     SET a.allowed_ref_type = r.guid
     MERGE (a)-[:ALLOWED_REF_TYPE]->(r)`,
    { tenant, rootKey, attributes },
  );
  // The model version's shards, each with a new value: the system types just written may have changed.
  await createModelVersionShards(run, tenant);
  await run('MERGE (x:Tenant {id: $tenant}) SET x.system_version = $version', {
    tenant,
    version: neo4j.int(version),
  });
}

/** A type of another origin holding the managed name (or its derived guid) blocks the managed feature. */
export async function findNonSystemTypeForName(run: Run, tenant: string, key: string, derivedGuid: string) {
  const rows = await run(
    `MATCH (t:EntityType) WHERE t.tenant = $tenant AND (t.name_key = $key OR t.guid = $guid) AND t.origin <> 'system'
     RETURN t.guid AS guid LIMIT 1`,
    { tenant, key, guid: derivedGuid },
  );
  return (rows[0]?.guid as string | undefined) ?? null;
}

const MANAGED_FIELDS = ['name', 'catalog_level', 'label', 'icon', 'creatable', 'name_locked_hint'] as const;

/** Sets up a managed type (idempotent) and returns it, with its fields before and after (before: null if new). */
export async function mergeManagedType(run: Run, tenant: string, spec: SystemTypeSpec) {
  const rows = await run(
    `MERGE (t:EntityType {tenant: $tenant, name_key: $key})
       ON CREATE SET t.guid = $guid, t.created_at = datetime(), t.created_by = $token, t.origin = 'system'
     WITH t, [t.name, t.catalog_level, t.label, t.icon, t.creatable, t.name_locked_hint] AS before
     // Kept in step with the feature's current definition every time the feature writes (only a system type).
     FOREACH (_ IN CASE WHEN t.origin = 'system' THEN [1] ELSE [] END |
       SET t.name = $props.name, t.catalog_level = $props.catalog_level, t.label = $props.label,
           t.icon = $props.icon, t.creatable = $props.creatable, t.name_locked_hint = $props.name_locked_hint)
     RETURN ${PROJECTION}, t.created_by = $token AS created, before,
            [t.name, t.catalog_level, t.label, t.icon, t.creatable, t.name_locked_hint] AS after`,
    { tenant, key: spec.key, guid: spec.guid, props: spec.props, token: randomUUID() },
  );
  const row = rows[0];
  const created = row?.created === true;
  // Whether the type as metamodel reads return it changed: set up now, or brought in step with a new definition.
  const changed = created || JSON.stringify(row?.before) !== JSON.stringify(row?.after);
  const props = (values: unknown) =>
    created && values === row?.before
      ? null
      : objectFromList<Record<string, unknown>>(MANAGED_FIELDS, values);
  return {
    type: toStoredType(row?.type),
    created,
    changed,
    before: props(row?.before),
    after: props(row?.after),
  };
}
