// Schema migrations: the constraints and indexes that make the invariants hold in the database itself.
// Every statement is idempotent (IF NOT EXISTS), so start-up may apply them on every boot; a database marked as
// migrated by this release's migrations is trusted at start (one read) and checked in full after ready.
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { TEXT_LENGTHS } from './attributes.js';
import { LIST_KEY_SEPARATOR } from './entities.js';
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
  // A name released on purpose by the type it was created under: the guid the name now resolves to in its stead.
  'CREATE CONSTRAINT type_name_release IF NOT EXISTS FOR (r:TypeNameRelease) REQUIRE (r.tenant, r.name_key) IS UNIQUE',
  // Instances of a type in guid order: the purge walks them in batches with a cursor.
  'CREATE INDEX entity_type_of IF NOT EXISTS FOR (e:Entity) ON (e.tenant, e.type_guid, e.guid)',
  // A type's entities in listing order (name, then guid), and the entities of a type referring to an entity through
  // an attribute, in the same order (db/entities.ts, listKey): a page of either is one ordered index seek.
  'CREATE INDEX entity_list IF NOT EXISTS FOR (e:Entity) ON (e.tenant, e.type_guid, e.list_key)',
  'CREATE INDEX refers_to_filter IF NOT EXISTS FOR ()-[r:REFERS_TO]-() ON (r.tgt, r.attr, r.src_type, r.src_key)',
  // A type's definitions (all of them, live or withdrawn): declarations, listings and the engine cache read these.
  'CREATE INDEX attribute_def_owner IF NOT EXISTS FOR (a:AttributeDefinition) ON (a.tenant, a.owner_guid)',
  // Withdrawn definitions across tenants, for the purge.
  'CREATE INDEX attribute_def_state IF NOT EXISTS FOR (a:AttributeDefinition) ON (a.state)',
  // Redeclarations carrying their values (db/carry.ts), found apart from the withdrawals the purge works through.
  'CREATE INDEX attribute_def_carrying IF NOT EXISTS FOR (a:AttributeDefinition) ON (a.carrying)',
  'CREATE CONSTRAINT job_lease IF NOT EXISTS FOR (l:JobLease) REQUIRE l.name IS UNIQUE',
  // A tenant's model version, in shards (db/model-version.ts): one per tenant and shard, found by an index seek.
  'CREATE CONSTRAINT model_version_shard IF NOT EXISTS FOR (v:ModelVersion) REQUIRE (v.tenant, v.shard) IS UNIQUE',
  // The metamodel's change records (db/changes.ts): one per tenant, version shard and sequence number (the change
  // feed reads a shard's records in sequence order), and a type's history newest first by record key.
  'CREATE CONSTRAINT model_change_seq IF NOT EXISTS FOR (c:ModelChange) REQUIRE (c.tenant, c.shard, c.seq) IS UNIQUE',
  'CREATE INDEX model_change_type IF NOT EXISTS FOR (c:ModelChange) ON (c.tenant, c.type_guid, c.key)',
  // A type's changes of one kind newest first (its last rename: the former name an export writes).
  'CREATE INDEX model_change_type_kind IF NOT EXISTS FOR (c:ModelChange) ON (c.tenant, c.type_guid, c.kind, c.key)',
  // One record per tenant, subject and Idempotency-Key (db/idempotency-records.ts); expired ones found by time for the
  // sweep. Keys were once per tenant only: that constraint goes (the records it covered are removed below).
  'DROP CONSTRAINT idempotency_key IF EXISTS',
  'CREATE CONSTRAINT idempotency_owner_key IF NOT EXISTS FOR (k:IdempotencyKey) REQUIRE (k.tenant, k.subject, k.key) IS UNIQUE',
  'CREATE INDEX idempotency_expiry IF NOT EXISTS FOR (k:IdempotencyKey) ON (k.expires_at)',
  // What each tenant's keys hold, in a few shards (db/idempotency-records.ts).
  'CREATE CONSTRAINT idempotency_ledger IF NOT EXISTS FOR (l:IdempotencyLedger) REQUIRE (l.tenant, l.shard) IS UNIQUE',
  // The mark of a database migrated in full (SCHEMA_DIGEST): one node, found by its id.
  'CREATE CONSTRAINT schema_mark IF NOT EXISTS FOR (m:SchemaMark) REQUIRE m.id IS UNIQUE',
];

/**
 * Data written before a release gains what the release reads, once per database: each step runs in batches until
 * nothing is left to change, then leaves a marker so later starts skip it with one lookup. Steps are idempotent,
 * so instances starting together may both run one.
 */
export const BACKFILLS: readonly { id: string; batch: string }[] = [
  {
    // Issue #14: listing keys on entities, then on the references they start (db/entities.ts, listKey).
    id: 'entity-list-keys',
    batch: `CALL {
              MATCH (e:Entity) WHERE e.list_key IS NULL
              WITH e LIMIT 5000
              SET e.list_key = e.name_key + $separator + e.guid
              RETURN count(*) AS entities
            }
            CALL {
              MATCH (e:Entity)-[r:REFERS_TO]->(x:Entity) WHERE r.tgt IS NULL AND e.list_key IS NOT NULL
              WITH e, r, x LIMIT 5000
              SET r.tgt = x.guid, r.src_type = e.type_guid, r.src_key = e.list_key
              RETURN count(*) AS references
            }
            RETURN entities + references AS changed`,
  },
  {
    // Idempotency records from before keys were scoped to their subject: no caller can be told apart by them, and
    // the ledger does not count them, so they go (a request retried across the upgrade runs again).
    id: 'idempotency-unscoped-keys',
    batch: `MATCH (k:IdempotencyKey) WHERE k.subject IS NULL
            WITH k LIMIT 5000
            DELETE k
            RETURN count(*) AS changed`,
  },
  {
    // Definitions stored when a type's budgets counted characters (json_bytes, default_bytes): their lengths in the
    // budgets' unit, UTF-8 bytes, bounded from their texts (exact for ASCII, four bytes a character otherwise).
    id: 'definition-lengths-utf8',
    batch: `MATCH (a:AttributeDefinition) WHERE a.json_utf8 IS NULL
            WITH a LIMIT 100
            WITH a, ${TEXT_LENGTHS.json} AS json, ${TEXT_LENGTHS.default} AS dflt
            SET a.json_utf8 = json, a.default_utf8 = dflt
            REMOVE a.json_bytes, a.default_bytes
            RETURN count(*) AS changed`,
  },
];

/** The schema object a statement creates or drops, by name; null for a statement of another kind. */
export function schemaObjectOf(statement: string): { name: string; creates: boolean } | null {
  const found = /^(CREATE|DROP) (?:CONSTRAINT|INDEX) (\w+) IF (?:NOT )?EXISTS/.exec(statement);
  return found ? { name: found[2] as string, creates: found[1] === 'CREATE' } : null;
}

/**
 * What this release migrates, as one digest: a database whose SchemaMark holds it was migrated in full by a release
 * with the same statements and backfills (the mark is written after them, so it never stands for a half-done
 * migration). Another release's mark (older or newer) makes the start migrate in full and mark it again.
 */
export const SCHEMA_DIGEST = createHash('sha256')
  .update(JSON.stringify({ migrations: MIGRATIONS, backfills: BACKFILLS }))
  .digest('hex');
const SCHEMA_MARK_ID = 'metamodel';

export interface MigrationOutcome {
  /** `marked`: the database held this release's mark, nothing else was read; `full`: the schema was read. */
  checked: 'marked' | 'full';
  /** The constraints and indexes created (or dropped) because the database lacked (or still had) them. */
  changed: string[];
}

/**
 * Brings the database to this release's schema. At start (`trustMark`, the default) a database marked with
 * SCHEMA_DIGEST costs one read: after a crash every statement is planned on a cold JVM, and the schema's three reads
 * cost a restart more than the mark's one. The server checks in full once ready
 * (`trustMark: false`), so a constraint or index dropped by hand since is created again within seconds.
 */
export async function migrate(
  db: Executor,
  options: { trustMark?: boolean } = {},
): Promise<MigrationOutcome> {
  if (options.trustMark !== false) {
    const rows = await db.read((run) =>
      run('MATCH (m:SchemaMark {id: $id}) RETURN m.digest AS digest', { id: SCHEMA_MARK_ID }),
    );
    if (rows[0]?.digest === SCHEMA_DIGEST) return { checked: 'marked', changed: [] };
  }
  const changed = await migrateInFull(db);
  await db.write((run) =>
    run('MERGE (m:SchemaMark {id: $id}) SET m.digest = $digest, m.at = datetime()', {
      id: SCHEMA_MARK_ID,
      digest: SCHEMA_DIGEST,
    }),
  );
  return { checked: 'full', changed };
}

/**
 * The schema checked in full (the server's, once ready: its start trusted the mark): what was missing, or left over,
 * is migrated again and named in a warning. Never rejects: a failure is a warning, and the next start checks again.
 */
export async function checkSchemaInFull(
  db: Executor,
  logger: Pick<Logger, 'warn'>,
): Promise<MigrationOutcome | undefined> {
  try {
    const outcome = await migrate(db, { trustMark: false });
    if (outcome.changed.length > 0) {
      logger.warn({ changed: outcome.changed }, 'schema objects were missing or left over: migrated again');
    }
    return outcome;
  } catch (error) {
    logger.warn({ err: error }, 'the schema check after ready failed; the next start checks again');
    return undefined;
  }
}

/**
 * Applies what the database lacks: the constraints and indexes it does not have yet (by name, which is what `IF NOT
 * EXISTS` compares too), the drops of those it still has, and the backfills not yet marked done. A database already
 * migrated costs three reads (its constraints, its indexes, its backfill markers).
 */
async function migrateInFull(db: Executor): Promise<string[]> {
  const present = await db.read(async (run) => {
    const constraints = await run('SHOW CONSTRAINTS YIELD name RETURN collect(name) AS names');
    const indexes = await run('SHOW INDEXES YIELD name RETURN collect(name) AS names');
    const names = (rows: Record<string, unknown>[]) => (rows[0]?.names as string[] | undefined) ?? [];
    return new Set([...names(constraints), ...names(indexes)]);
  });
  let created = false;
  const changed: string[] = [];
  for (const statement of MIGRATIONS) {
    const object = schemaObjectOf(statement);
    if (object && object.creates === present.has(object.name)) continue;
    await db.write((run) => run(statement));
    if (object) changed.push(object.name);
    if (object?.creates !== false) created = true;
  }
  if (created) await db.write((run) => run('CALL db.awaitIndexes(60)'));
  const marked = await db.read((run) =>
    run('MATCH (m:Backfill) WHERE m.id IN $ids RETURN collect(m.id) AS ids', {
      ids: BACKFILLS.map((step) => step.id),
    }),
  );
  const done = new Set((marked[0]?.ids as string[] | undefined) ?? []);
  for (const step of BACKFILLS) {
    if (done.has(step.id)) continue;
    for (;;) {
      const rows = await db.write((run) => run(step.batch, { separator: LIST_KEY_SEPARATOR }));
      if (Number(rows[0]?.changed ?? 0) === 0) break;
    }
    await db.write((run) =>
      run('MERGE (m:Backfill {id: $id}) ON CREATE SET m.at = datetime()', { id: step.id }),
    );
  }
  return changed;
}
