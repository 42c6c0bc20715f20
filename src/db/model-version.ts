// The per-tenant model version: a property of the tenant's node that every transaction changing what a metamodel
// read can return (types, their level links, attribute definitions) sets to a fresh value, in the same transaction.
// Instances serve metamodel reads from memory only while the version they read for the request is the one their
// copy was loaded at (see src/cache/model-cache.ts).
import type { Run } from './run.js';

/**
 * The version is kept in MODEL_VERSION_SHARDS nodes per tenant, `(:ModelVersion {tenant, shard, version})`, made with
 * the tenant (tenants.ts); the tenant's version is the list of the shards' values. A write changes one shard, picked
 * at random: the version changes all the same, and writes of one tenant lock one node in eight, not all the same
 * one (with a single node, creates of one tenant at 16 connections lost a quarter of their throughput and doubled
 * their p99, each holding the node's lock through its commit).
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
