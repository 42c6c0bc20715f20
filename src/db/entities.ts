// Cypher for entities (instances of a type) as far as this service writes them.
import { randomUUID } from 'node:crypto';
import type { Run } from './executor.js';

export interface StoredEntity {
  guid: string;
  name: string;
  type_guid: string;
}

/** Writes a managed feature's catalog row, idempotent by its managed key. */
export async function mergeManagedEntity(
  run: Run,
  tenant: string,
  typeGuid: string,
  managedKey: string,
  name: string,
  nameKey: string,
) {
  const rows = await run(
    `MERGE (e:Entity {tenant: $tenant, managed_key: $managedKey})
       ON CREATE SET e.guid = randomUUID(), e.name = $name, e.name_key = $nameKey, e.type_guid = $typeGuid,
                     e.created_at = datetime(), e.created_by = $token
     RETURN e {.guid, .name, .type_guid} AS entity, e.created_by = $token AS created`,
    { tenant, typeGuid, managedKey, name, nameKey, token: randomUUID() },
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
                       type_guid: $entity.type_guid, created_at: datetime()})
     SET e += $entity.properties
     WITH e
     CALL {
       WITH e
       UNWIND $entity.refs AS r
       MATCH (x:Entity {guid: r.target}) WHERE x.tenant = $tenant
       CREATE (e)-[:REFERS_TO {attr: r.attr, pos: r.pos}]->(x)
       RETURN count(*) AS linked
     }
     RETURN e.guid AS guid, linked`,
    { tenant, version, entity },
  );
  const row = rows[0];
  return row ? { guid: row.guid as string, linked: Number(row.linked) } : null;
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
