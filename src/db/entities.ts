// Cypher for entities (instances of a type) as far as this service writes them.

import { randomUUID } from 'node:crypto';
import neo4j from 'neo4j-driver';
import type { Run } from './run.js';

export interface StoredEntity {
  guid: string;
  name: string;
  type_guid: string;
}

/**
 * An entity's place in its type's listing: its name's key, then its guid (names need not be unique). Names hold no
 * control character (cleanName), so U+0000 sorts the key as the pair (name_key, guid). The entity keeps it as
 * `list_key`, and each REFERS_TO relationship it starts keeps it as `src_key` with `src_type` (its type) and `tgt`
 * (the referenced guid): the relationship index on (tgt, attr, src_type, src_key) hands a filter's matches in
 * listing order, a page at a time, whatever else refers to the same entity.
 */
export const LIST_KEY_SEPARATOR = '\u0000';
export const listKey = (nameKey: string, guid: string) => `${nameKey}${LIST_KEY_SEPARATOR}${guid}`;

/** Writes a managed feature's catalog row, idempotent by its managed key. */
export async function mergeManagedEntity(
  run: Run,
  tenant: string,
  typeGuid: string,
  managedKey: string,
  name: string,
  nameKey: string,
) {
  const guid = randomUUID();
  const rows = await run(
    `MERGE (e:Entity {tenant: $tenant, managed_key: $managedKey})
       ON CREATE SET e.guid = $guid, e.name = $name, e.name_key = $nameKey, e.type_guid = $typeGuid,
                     e.list_key = $listKey, e.created_at = datetime(), e.created_by = $token
     RETURN e {.guid, .name, .type_guid} AS entity, e.created_by = $token AS created`,
    {
      tenant,
      typeGuid,
      managedKey,
      name,
      nameKey,
      guid,
      listKey: listKey(nameKey, guid),
      token: randomUUID(),
    },
  );
  return { entity: rows[0]?.entity as StoredEntity, created: rows[0]?.created === true };
}

/**
 * The type an entity is written against, with its definitions version, and the types of the candidate referenced
 * entities, in one statement (read inside the writing transaction).
 */
export async function readTypeForWrite(
  run: Run,
  tenant: string,
  typeGuid: string,
  candidates: readonly string[],
) {
  const rows = await run(
    `MATCH (t:EntityType {guid: $typeGuid}) WHERE t.tenant = $tenant
     CALL {
       UNWIND $candidates AS g
       MATCH (e:Entity {guid: g}) WHERE e.tenant = $tenant
       RETURN collect([e.guid, e.type_guid]) AS referents
     }
     RETURN coalesce(t.definitions_version, '') AS version, t.creatable AS creatable, t.name_key AS nameKey,
            referents`,
    { tenant, typeGuid, candidates },
  );
  const row = rows[0];
  return row
    ? {
        version: row.version as string,
        creatable: row.creatable as boolean | null,
        nameKey: row.nameKey as string,
        referents: new Map(row.referents as [string, string][]),
      }
    : null;
}

/** Types of the given entities in the tenant; an absent guid is missing from the map. */
export async function findEntityTypesOf(run: Run, tenant: string, guids: readonly string[]) {
  if (guids.length === 0) return new Map<string, string>();
  const rows = await run(
    `UNWIND $guids AS g MATCH (e:Entity {guid: g}) WHERE e.tenant = $tenant RETURN e.guid AS guid, e.type_guid AS type`,
    { tenant, guids },
  );
  return new Map(rows.map((r) => [r.guid as string, r.type as string]));
}

export interface NewEntity {
  guid: string;
  name: string;
  name_key: string;
  type_guid: string;
  /** Scalar values by property name. */
  properties: Record<string, unknown>;
  refs: { attr: string; pos: number; target: string }[];
}

/**
 * Creates an entity with its values, only while the type's definitions are at `version`: a declaration or
 * withdrawal committed since the caller validated makes this return null, and the caller validates again.
 * (One committed after this check is ordered after this write; a withdrawal's purge allows for that, see
 * PURGE_GRACE_SECONDS.) Reference values become REFERS_TO relationships.
 */
export async function createEntity(run: Run, tenant: string, version: string, entity: NewEntity) {
  const rows = await run(
    `MATCH (t:EntityType {guid: $entity.type_guid})
     WHERE t.tenant = $tenant AND coalesce(t.definitions_version, '') = $version
     CREATE (e:Entity {tenant: $tenant, guid: $entity.guid, name: $entity.name, name_key: $entity.name_key,
                       type_guid: $entity.type_guid, list_key: $listKey, created_at: datetime()})
     SET e += $entity.properties
     WITH e
     CALL {
       WITH e
       UNWIND $entity.refs AS r
       MATCH (x:Entity {guid: r.target}) WHERE x.tenant = $tenant
       CREATE (e)-[:REFERS_TO {attr: r.attr, pos: r.pos, tgt: x.guid, src_type: e.type_guid, src_key: e.list_key}]->(x)
       RETURN count(*) AS linked
     }
     RETURN e.guid AS guid, linked`,
    { tenant, version, entity, listKey: listKey(entity.name_key, entity.guid) },
  );
  const row = rows[0];
  return row ? { guid: row.guid as string, linked: Number(row.linked) } : null;
}

/**
 * Writes entities as createEntity does (listing keys, REFERS_TO relationships with their filter keys), without
 * checking them against any definition or version: for bulk loaders (the benchmark's catalog) and tests that need
 * more rows than a request writes. Referenced entities must exist in the tenant (earlier rows of the same call
 * included).
 */
export async function insertEntities(run: Run, tenant: string, entities: readonly NewEntity[]) {
  await run(
    `UNWIND $entities AS n
     CREATE (e:Entity {tenant: $tenant, guid: n.guid, name: n.name, name_key: n.name_key, type_guid: n.type_guid,
                       list_key: n.list_key, created_at: datetime()})
     SET e += n.properties
     WITH e, n
     CALL {
       WITH e, n
       UNWIND n.refs AS r
       MATCH (x:Entity {guid: r.target}) WHERE x.tenant = $tenant
       CREATE (e)-[:REFERS_TO {attr: r.attr, pos: r.pos, tgt: x.guid, src_type: e.type_guid, src_key: e.list_key}]->(x)
     }`,
    { tenant, entities: entities.map((e) => ({ ...e, list_key: listKey(e.name_key, e.guid) })) },
  );
}

export interface StoredEntityWithValues extends StoredEntity {
  properties: Record<string, unknown>;
  refs: { attr: string; pos: number; target: string }[];
  version: string | null;
}

export async function findEntity(run: Run, tenant: string, guid: string) {
  const rows = await run(
    `MATCH (e:Entity {guid: $guid}) WHERE e.tenant = $tenant
     OPTIONAL MATCH (t:EntityType {guid: e.type_guid}) WHERE t.tenant = $tenant
     RETURN e {.guid, .name, .type_guid} AS entity, properties(e) AS properties,
            [(e)-[r:REFERS_TO]->(x:Entity) | {attr: r.attr, pos: r.pos, target: x.guid}] AS refs,
            CASE WHEN t IS NULL THEN null ELSE coalesce(t.definitions_version, '') END AS version`,
    { tenant, guid },
  );
  const row = rows[0];
  if (!row) return null;
  return {
    ...(row.entity as StoredEntity),
    properties: row.properties as Record<string, unknown>,
    refs: row.refs as StoredEntityWithValues['refs'],
    version: (row.version as string | null) ?? null,
  } satisfies StoredEntityWithValues;
}

/** Resolves many entity guids of the tenant in one statement. */
export async function lookupEntities(run: Run, tenant: string, identifiers: readonly string[]) {
  const rows = await run(
    `UNWIND range(0, size($ids) - 1) AS i
     OPTIONAL MATCH (e:Entity {guid: $ids[i]}) WHERE e.tenant = $tenant
     RETURN i, e {.guid, .name, .type_guid} AS entity ORDER BY i`,
    { tenant, ids: identifiers },
  );
  return rows.map((r) => (r.entity as StoredEntity | null) ?? null);
}

/** One condition of a filter: the entity refers, through attribute `attr` (a name key), to any of `guids`. */
export interface RefCondition {
  attr: string;
  guids: string[];
}

export interface EntityPageRead {
  /** The type was there and every definition the conditions name still live when the page was read. */
  current: boolean;
  /** Entities of the scanned window that meet every condition, in listing order, with their listing keys. */
  hits: { key: string; entity: StoredEntity }[];
  /** Rows of the window scanned (at most `window`), and the listing key of its last row. */
  scanned: number;
  lastScanned: string | null;
}

/**
 * Entities of a type after listing key `after`, in listing order, that meet every condition. A window of at most
 * `window` rows is read from an index in listing order (the type's entities, or the matches of the `drive`
 * condition: one seek of the relationship index per guid, each stopped at `window`, merged), then the other
 * conditions are checked on each row (its own references, by attribute). At most `limit` hits are returned; with no
 * other condition the window is the page. The type and `definitions` (the guids of the definitions the conditions
 * name) are checked in the same statement (`current`): the caller may have read them from memory, at an older
 * model version, and a type deleted or a definition withdrawn since is not missed.
 */
export async function readEntityPage(
  run: Run,
  args: {
    tenant: string;
    typeGuid: string;
    after: string;
    drive: RefCondition | null;
    others: RefCondition[];
    definitions: string[];
    window: number;
    limit: number;
  },
): Promise<EntityPageRead> {
  // The window, in listing order: the type's entities (one seek in index order), or the matches of the driving
  // condition (one seek in index order per guid, each stopped at the window, merged).
  const window = args.drive
    ? `UNWIND $drive.guids AS g
       CALL {
         WITH g
         MATCH (e:Entity)-[r:REFERS_TO]->()
         WHERE r.tgt = g AND r.attr = $drive.attr AND r.src_type = $typeGuid AND r.src_key > $after
         WITH r, e ORDER BY r.tgt, r.attr, r.src_type, r.src_key LIMIT $window
         RETURN r.src_key AS key, e
       }
       WITH DISTINCT key, e
       WITH key, e ORDER BY key LIMIT $window`
    : `MATCH (e:Entity) USING INDEX e:Entity(tenant, type_guid, list_key)
       WHERE e.tenant = $tenant AND e.type_guid = $typeGuid AND e.list_key > $after
       WITH e ORDER BY e.tenant, e.type_guid, e.list_key LIMIT $window
       WITH e.list_key AS key, e`;
  const meets = args.others.map(
    (_, i) =>
      `EXISTS { MATCH (e)-[o:REFERS_TO]->() WHERE o.attr = $others[${i}].attr AND o.tgt IN $others[${i}].guids }`,
  );
  // Aggregated in the window's order (collect keeps the order of the rows it is given).
  const rows = await run(
    `${window}
     WITH collect(key) AS scanned,
          collect(CASE WHEN e.tenant = $tenant ${meets.map((m) => `AND ${m}`).join(' ')}
                  THEN {key: key, entity: e {.guid, .name, .type_guid}} END) AS hits
     CALL {
       UNWIND $definitions AS d
       OPTIONAL MATCH (a:AttributeDefinition {guid: d}) WHERE a.tenant = $tenant AND a.state = 'live'
       RETURN count(a) = size($definitions) AS live
     }
     CALL {
       OPTIONAL MATCH (t:EntityType {guid: $typeGuid}) WHERE t.tenant = $tenant
       RETURN t IS NOT NULL AS typeFound
     }
     RETURN live AND typeFound AS current, size(scanned) AS scanned, scanned[-1] AS lastScanned, hits[0..$limit] AS hits`,
    { ...args, window: neo4j.int(args.window), limit: neo4j.int(args.limit) },
  );
  const row = rows[0];
  if (!row) throw new Error('readEntityPage: no row');
  return {
    current: row.current === true,
    hits: row.hits as EntityPageRead['hits'],
    scanned: Number(row.scanned),
    lastScanned: (row.lastScanned as string | null) ?? null,
  };
}
