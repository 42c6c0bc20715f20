// Cypher for entities (instances of a type) as far as this service writes them.
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
                     e.created_at = datetime.transaction()
     RETURN e {.guid, .name, .type_guid} AS entity, e.created_at = datetime.transaction() AS created`,
    { tenant, typeGuid, managedKey, name, nameKey },
  );
  return { entity: rows[0]?.entity as StoredEntity, created: rows[0]?.created === true };
}
