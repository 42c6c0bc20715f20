// Schema migrations: the constraints and indexes that make the invariants hold in the database itself.
// Every statement is idempotent (IF NOT EXISTS), so start-up applies them on every boot.
import type { Executor } from './executor.js';

export const MIGRATIONS: readonly string[] = [
  // One type per tenant and normalised name; guids are globally unique (they embed the tenant).
  'CREATE CONSTRAINT entity_type_name IF NOT EXISTS FOR (t:EntityType) REQUIRE (t.tenant, t.name_key) IS UNIQUE',
  'CREATE CONSTRAINT entity_type_guid IF NOT EXISTS FOR (t:EntityType) REQUIRE t.guid IS UNIQUE',
  // One live-or-withdrawn attribute definition per type and name.
  'CREATE CONSTRAINT attribute_def_name IF NOT EXISTS FOR (a:AttributeDefinition) REQUIRE (a.tenant, a.owner_guid, a.name_key) IS UNIQUE',
  'CREATE CONSTRAINT attribute_def_guid IF NOT EXISTS FOR (a:AttributeDefinition) REQUIRE a.guid IS UNIQUE',
  'CREATE CONSTRAINT entity_guid IF NOT EXISTS FOR (e:Entity) REQUIRE e.guid IS UNIQUE',
  // Rows written by a managed feature (dashboards) are idempotent by their managed key.
  'CREATE CONSTRAINT entity_managed_key IF NOT EXISTS FOR (e:Entity) REQUIRE (e.tenant, e.managed_key) IS UNIQUE',
  'CREATE CONSTRAINT tenant_id IF NOT EXISTS FOR (t:Tenant) REQUIRE t.id IS UNIQUE',
  // The guid a deleted (renamed) type held under its last name, so recreating that name gives it back.
  'CREATE CONSTRAINT type_tombstone IF NOT EXISTS FOR (x:TypeTombstone) REQUIRE (x.tenant, x.name_key) IS UNIQUE',
  'CREATE INDEX type_tombstone_guid IF NOT EXISTS FOR (x:TypeTombstone) ON (x.tenant, x.guid)',
  // Instances of a type in guid order: the purge walks them in batches with a cursor.
  'CREATE INDEX entity_type_of IF NOT EXISTS FOR (e:Entity) ON (e.tenant, e.type_guid, e.guid)',
  // A type's definitions (all of them, live or withdrawn): declarations, listings and the engine cache read these.
  'CREATE INDEX attribute_def_owner IF NOT EXISTS FOR (a:AttributeDefinition) ON (a.tenant, a.owner_guid)',
  // Withdrawn definitions across tenants, for the purge.
  'CREATE INDEX attribute_def_state IF NOT EXISTS FOR (a:AttributeDefinition) ON (a.state)',
  'CREATE CONSTRAINT job_lease IF NOT EXISTS FOR (l:JobLease) REQUIRE l.name IS UNIQUE',
  // A tenant's model version, in shards (db/model-version.ts): one per tenant and shard, found by an index seek.
  'CREATE CONSTRAINT model_version_shard IF NOT EXISTS FOR (v:ModelVersion) REQUIRE (v.tenant, v.shard) IS UNIQUE',
  // The metamodel's change records (db/changes.ts): one per tenant, version shard and sequence number (the change
  // feed reads a shard's records in sequence order), and a type's history newest first by record key.
  'CREATE CONSTRAINT model_change_seq IF NOT EXISTS FOR (c:ModelChange) REQUIRE (c.tenant, c.shard, c.seq) IS UNIQUE',
  'CREATE INDEX model_change_type IF NOT EXISTS FOR (c:ModelChange) ON (c.tenant, c.type_guid, c.key)',
  // One record per tenant and Idempotency-Key (db/idempotency.ts); expired ones found by time for the daily job.
  'CREATE CONSTRAINT idempotency_key IF NOT EXISTS FOR (k:IdempotencyKey) REQUIRE (k.tenant, k.key) IS UNIQUE',
  'CREATE INDEX idempotency_expiry IF NOT EXISTS FOR (k:IdempotencyKey) ON (k.expires_at)',
];

export async function migrate(db: Executor): Promise<void> {
  for (const statement of MIGRATIONS) {
    await db.write((run) => run(statement));
  }
  await db.write((run) => run('CALL db.awaitIndexes(60)'));
}
