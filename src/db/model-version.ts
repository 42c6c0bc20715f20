// The per-tenant model version: a property of the tenant's node that every transaction changing what a metamodel
// read can return (types, their level links, attribute definitions) sets to a fresh value, in the same transaction.
// Instances serve metamodel reads from memory only while the version they read for the request is the one their
// copy was loaded at (see src/cache/model-cache.ts).
import { createHash } from 'node:crypto';
import neo4j from 'neo4j-driver';
import type { Run } from './run.js';

/**
 * The version is kept in MODEL_VERSION_SHARDS nodes per tenant, `(:ModelVersion {tenant, shard, version})`, made with
 * the tenant (tenants.ts); the tenant's version is the list of the shards' values. A write changes one shard, picked
 * at random: the version changes all the same, and writes of one tenant lock one node in eight, not all the same
 * one (with a single node, a tenant's concurrent writes would queue on it, each holding its lock through its commit).
 */
export const MODEL_VERSION_SHARDS = 8;

/** Makes a tenant's version shards (idempotent): part of setting the tenant up. */
export async function createModelVersionShards(run: Run, tenant: string) {
  await run(
    `UNWIND range(0, ${MODEL_VERSION_SHARDS - 1}) AS shard
     MERGE (v:ModelVersion {tenant: $tenant, shard: shard})
     SET v.version = randomUUID(), v.seq = coalesce(v.seq, 0)`,
    { tenant },
  );
}

/** Version of a tenant without shards yet (not set up). */
export const INITIAL_MODEL_VERSION = '';

/** The model version of each tenant asked for: one index seek per shard (the model_version_shard constraint). */
export async function readModelVersions(run: Run, tenants: readonly string[]) {
  const rows = await run(
    `UNWIND $tenants AS id
     UNWIND range(0, ${MODEL_VERSION_SHARDS - 1}) AS shard
     OPTIONAL MATCH (v:ModelVersion {tenant: id, shard: shard})
     WITH id, shard, coalesce(v.version, '') AS part ORDER BY id, shard
     RETURN id, collect(part) AS parts`,
    { tenants },
  );
  return new Map(rows.map((r) => [r.id as string, (r.parts as string[]).join('.')]));
}

export async function readModelVersion(run: Run, tenant: string): Promise<string> {
  return (await readModelVersions(run, [tenant])).get(tenant) ?? INITIAL_MODEL_VERSION;
}

/**
 * Where a tenant's model stands: its version, and each shard's last change sequence number (db/changes.ts), from
 * which the changes made since can be read. With `lock`, the shards are locked until the transaction ends: no other
 * metamodel write of the tenant commits meanwhile (each locks a shard), so what the caller checks holds until it
 * commits.
 */
export interface ModelMark {
  version: string;
  seqs: number[];
}

export async function readModelMark(run: Run, tenant: string, lock = false): Promise<ModelMark> {
  const rows = await run(
    `MATCH (v:ModelVersion {tenant: $tenant}) WHERE v.shard >= 0
     ${lock ? 'SET v.locked_at = datetime()' : ''}
     WITH v ORDER BY v.shard
     RETURN collect(v.version) AS parts, collect(coalesce(v.seq, 0)) AS seqs`,
    { tenant },
  );
  const parts = (rows[0]?.parts as string[] | undefined) ?? [];
  if (parts.length !== MODEL_VERSION_SHARDS) return { version: INITIAL_MODEL_VERSION, seqs: [] };
  return { version: parts.join('.'), seqs: ((rows[0]?.seqs as unknown[]) ?? []).map(Number) };
}

/**
 * Changes of the tenant's model made since `mark` by callers (not the service's own, see ChangeFacts.internal),
 * read up to `limit` per shard (each shard's records after the mark's sequence number, an index range); a shard with
 * more counts as one more such change.
 */
export async function callerChangesSince(run: Run, tenant: string, mark: ModelMark, limit = 100) {
  const rows = await run(
    `UNWIND range(0, ${MODEL_VERSION_SHARDS - 1}) AS s
     CALL {
       WITH s
       MATCH (c:ModelChange) WHERE c.tenant = $tenant AND c.shard = s AND c.seq > $seqs[s]
       WITH c ORDER BY c.tenant, c.shard, c.seq LIMIT $limit
       RETURN count(CASE WHEN c.internal = true THEN null ELSE c END) AS n, count(c) AS read
     }
     RETURN sum(n) AS n, max(read) >= $limit AS more`,
    { tenant, seqs: mark.seqs.map((n) => neo4j.int(n)), limit: neo4j.int(limit) },
  );
  // Past the limit, what came after is unknown: counted as a caller's change.
  return Number(rows[0]?.n ?? 0) + (rows[0]?.more === true ? 1 : 0);
}

/**
 * A model version as a client holds it (a plan's `based_on`, an apply's `model_version`): 16 hex characters of its
 * SHA-256, short enough to pass on a command line; equal versions give equal tags.
 */
export const versionTag = (version: string) =>
  createHash('sha256').update(version).digest('hex').slice(0, 16);
