// The per-tenant model version: a property of the tenant's node that every transaction changing what a metamodel
// read can return (types, their level links, attribute definitions) sets to a fresh value, in the same transaction.
// Instances serve metamodel reads from memory only while the version they read for the request is the one their
// copy was loaded at (see src/cache/model-cache.ts).
import type { Run } from './executor.js';

/**
 * The version is kept in MODEL_VERSION_SHARDS nodes per tenant, `(:ModelVersion {tenant, shard, version})`, made with
 * the tenant (tenants.ts); the tenant's version is the list of the shards' values. A write changes one shard, picked
 * at random: the version changes all the same, and writes of one tenant lock one node in eight, not all the same
 * one (with a single node, creates of one tenant at 16 connections lost a quarter of their throughput and doubled
 * their p99, each holding the node's lock through its commit).
 */
export const MODEL_VERSION_SHARDS = 8;

/**
 * A Cypher clause that gives the tenant's model a new version; it runs once per row reaching it, so it goes where
 * the statement has exactly one row when (and only when) it changed something. Last in its transaction's writes:
 * the shard is then locked only from there to the commit. MATCH, not MERGE: the shards exist before any request of
 * the tenant is served, and a MERGE on a unique key may take a shared lock it must then upgrade, which lets two
 * concurrent writes deadlock each other. The shard is picked before the MATCH, so the seek is on one value.
 */
export const bumpModelVersion = (tenantVariable?: string) => {
  const tenant = tenantVariable ?? '$tenant';
  const imported = tenantVariable === undefined ? '' : `WITH ${tenantVariable} `;
  return `CALL { ${imported}UNWIND [toInteger(rand() * ${MODEL_VERSION_SHARDS})] AS mvShard
     MATCH (mv:ModelVersion {tenant: ${tenant}, shard: mvShard}) SET mv.version = randomUUID() }`;
};

/** The same as a statement of its own, for a transaction whose statements cannot carry it. */
export async function changeModelVersion(run: Run, tenant: string) {
  await run(bumpModelVersion(), { tenant });
}

/** Makes a tenant's version shards (idempotent): part of setting the tenant up. */
export async function createModelVersionShards(run: Run, tenant: string) {
  await run(
    `UNWIND range(0, ${MODEL_VERSION_SHARDS - 1}) AS shard
     MERGE (v:ModelVersion {tenant: $tenant, shard: shard})
     SET v.version = randomUUID()`,
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
