// The per-tenant model version: a property of the tenant's node that every transaction changing what a metamodel
// read can return (types, their level links, attribute definitions) sets to a fresh value, in the same transaction.
// Instances serve metamodel reads from memory only while the version they read for the request is the one their
// copy was loaded at (see src/cache/model-cache.ts).
import type { Run } from './executor.js';

/**
 * A Cypher clause that gives the tenant's model a new version; it runs once per row reaching it, so it goes where
 * the statement has exactly one row when (and only when) it changed something. Last in its transaction's writes:
 * the tenant node is then locked only from there to the commit, so writes to different types of one tenant wait
 * for each other only that long. MATCH, not MERGE: the node exists before any request of the tenant is served
 * (tenants.ts), and a MERGE on the unique id may take a shared lock it must then upgrade, which lets two
 * concurrent writes of one tenant deadlock each other (the driver then retries one).
 */
export const bumpModelVersion = (tenantVariable?: string) =>
  tenantVariable === undefined
    ? 'CALL { MATCH (mv:Tenant {id: $tenant}) SET mv.model_version = randomUUID() }'
    : `CALL { WITH ${tenantVariable} MATCH (mv:Tenant {id: ${tenantVariable}}) SET mv.model_version = randomUUID() }`;

/** The same as a statement of its own, for a transaction whose statements cannot carry it. */
export async function changeModelVersion(run: Run, tenant: string) {
  await run(bumpModelVersion(), { tenant });
}

/** Version of a tenant without one yet (nothing changed since the version was introduced). */
export const INITIAL_MODEL_VERSION = '';

/** The model version of each tenant asked for, in one index seek per tenant (the tenant_id constraint). */
export async function readModelVersions(run: Run, tenants: readonly string[]) {
  const rows = await run(
    `UNWIND $tenants AS id
     OPTIONAL MATCH (x:Tenant {id: id})
     RETURN id, coalesce(x.model_version, '') AS version`,
    { tenants },
  );
  return new Map(rows.map((r) => [r.id as string, r.version as string]));
}

export async function readModelVersion(run: Run, tenant: string): Promise<string> {
  const rows = await run(
    `OPTIONAL MATCH (x:Tenant {id: $tenant}) RETURN coalesce(x.model_version, '') AS version`,
    { tenant },
  );
  return (rows[0]?.version as string | undefined) ?? INITIAL_MODEL_VERSION;
}
