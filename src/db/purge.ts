// Cypher for the purge: leases, batched removal of a withdrawn definition's stored values, final removal.

import neo4j from 'neo4j-driver';
import { valueProperty } from './attributes.js';
import { type ChangeAuthor, type ChangeFacts, changeParams, recordChange } from './changes.js';
import type { Run } from './run.js';

/**
 * Takes (or renews) a named lease for `seconds`; false when another holder has it. With `firing` (a scheduled run's
 * time), also false when that firing was already claimed: instances whose schedules fire together run it once, even
 * when the first one's run is over before the next one asks.
 */
export async function acquireLease(
  run: Run,
  name: string,
  holder: string,
  seconds: number,
  firing: string | null = null,
) {
  const rows = await run(
    // The SET first takes the node's write lock, so the holder is read after any concurrent claim committed: two
    // instances cannot both see the lease free.
    `MERGE (l:JobLease {name: $name})
     SET l.checked_at = datetime()
     WITH l WHERE (l.holder IS NULL OR l.holder = $holder OR l.until < datetime())
              AND ($firing IS NULL OR coalesce(l.last_firing, '') < $firing)
     SET l.holder = $holder, l.until = datetime() + duration({seconds: $seconds}),
         l.last_firing = coalesce($firing, l.last_firing)
     RETURN true AS acquired`,
    { name, holder, seconds: neo4j.int(seconds), firing },
  );
  return rows.length > 0;
}

export async function releaseLease(run: Run, name: string, holder: string) {
  await run('MATCH (l:JobLease {name: $name}) WHERE l.holder = $holder SET l.holder = null, l.until = null', {
    name,
    holder,
  });
}

export interface WithdrawnDefinition {
  guid: string;
  tenant: string;
  owner_guid: string;
  name: string;
  name_key: string;
  multi: boolean;
  reference: boolean;
  cursor: string;
  /** The current pass began after the grace period following the withdrawal. */
  passIsFinal: boolean;
  passCompleted: boolean;
  /** A redeclaration carries its values (db/carry.ts): its one pass keeps or removes each, after the grace. */
  carrying: boolean;
  /** The grace period following the withdrawal is over. */
  graceOver: boolean;
  /** Milliseconds until it is (negative once it is). */
  graceLeftMs: number;
}

/** What findWithdrawn and findCarrying return of each definition. */
const WITHDRAWN_FIELDS = `a.guid AS guid, a.tenant AS tenant, a.owner_guid AS owner_guid, a.name AS name, a.name_key AS name_key,
            a.cardinality = 'multi' AS multi, a.value_type = 'entity_ref' AS reference,
            coalesce(a.purge_cursor, '') AS cursor,
            a.purge_pass_started_at IS NOT NULL
              AND a.purge_pass_started_at >= a.withdrawn_at + duration({seconds: $grace}) AS passIsFinal,
            a.purge_completed_at IS NOT NULL AS passCompleted,
            a.carry IS NOT NULL AS carrying,
            datetime() >= a.withdrawn_at + duration({seconds: $grace}) AS graceOver,
            duration.inSeconds(datetime(), a.withdrawn_at + duration({seconds: $grace})).milliseconds AS graceLeftMs`;

/** Withdrawn definitions, oldest first; `graceSeconds` is how long writes that began before a withdrawal may run. */
export async function findWithdrawn(
  run: Run,
  graceSeconds: number,
  tenant: string | null = null,
  limit = 1000,
) {
  const rows = await run(
    `MATCH (a:AttributeDefinition) WHERE a.state = 'withdrawn' AND ($tenant IS NULL OR a.tenant = $tenant)
     WITH a ORDER BY a.withdrawn_at LIMIT $limit
     RETURN ${WITHDRAWN_FIELDS}`,
    { grace: neo4j.int(graceSeconds), limit: neo4j.int(limit), tenant },
  );
  return rows as unknown as WithdrawnDefinition[];
}

/**
 * Redeclarations carrying their values, oldest first, found by their own index (attribute_def_carrying): a carry is
 * never kept waiting behind the backlog of ordinary withdrawals the purge works through.
 */
export async function findCarrying(run: Run, graceSeconds: number, limit = 100) {
  const rows = await run(
    `MATCH (a:AttributeDefinition) WHERE a.carrying = true AND a.state = 'withdrawn'
     WITH a ORDER BY a.withdrawn_at LIMIT $limit
     RETURN ${WITHDRAWN_FIELDS}`,
    { grace: neo4j.int(graceSeconds), limit: neo4j.int(limit) },
  );
  return rows as unknown as WithdrawnDefinition[];
}

/** Starts a new pass over the type's instances (cursor back to the start). */
export async function startPass(run: Run, guid: string) {
  await run(
    `MATCH (a:AttributeDefinition {guid: $guid}) WHERE a.state = 'withdrawn'
     SET a.purge_cursor = '', a.purge_pass_started_at = datetime(), a.purge_completed_at = null`,
    { guid },
  );
}

/**
 * Removes the attribute's values from the next `batch` instances after `cursor` and stores the new cursor, in one
 * transaction: a restart resumes where the last committed batch ended. The cursor is a parameter so that the
 * (tenant, type_guid, guid) index yields the instances in order: a batch costs the same at the end of a type with
 * a million instances as at its start.
 */
export async function purgeBatch(run: Run, def: WithdrawnDefinition, cursor: string, batch: number) {
  const rows = await run(
    `CALL {
       MATCH (e:Entity)
       WHERE e.tenant = $tenant AND e.type_guid = $ownerGuid AND e.guid > $cursor
       RETURN e ORDER BY e.tenant, e.type_guid, e.guid LIMIT $batch
     }
     WITH collect(e) AS batch
     MATCH (a:AttributeDefinition {guid: $guid}) WHERE a.state = 'withdrawn'
     CALL {
       WITH batch
       UNWIND batch AS e
       OPTIONAL MATCH (e)-[r:REFERS_TO {attr: $nameKey}]->()
       WITH e, collect(r) AS refs
       WITH e, refs, CASE WHEN e[$prop] IS NULL THEN 0 WHEN $multi THEN size(e[$prop]) ELSE 1 END AS scalars
       FOREACH (r IN refs | DELETE r)
       REMOVE e[$prop]
       RETURN sum(size(refs) + scalars) AS removed
     }
     WITH a, batch, coalesce(removed, 0) AS removed,
          CASE WHEN size(batch) = 0 THEN $cursor ELSE batch[-1].guid END AS next
     SET a.purge_cursor = next,
         a.values_removed = coalesce(a.values_removed, 0) + removed,
         a.purge_completed_at = CASE WHEN size(batch) < $batch THEN datetime() ELSE null END
     RETURN size(batch) AS scanned, removed, next`,
    {
      guid: def.guid,
      tenant: def.tenant,
      ownerGuid: def.owner_guid,
      nameKey: def.name_key,
      prop: valueProperty(def.name_key),
      multi: def.multi,
      cursor,
      batch: neo4j.int(batch),
    },
  );
  const row = rows[0];
  return {
    scanned: Number(row?.scanned ?? 0),
    removed: Number(row?.removed ?? 0),
    cursor: (row?.next as string | undefined) ?? cursor,
    found: row !== undefined,
  };
}

/**
 * Removes a withdrawn definition whose data is gone, recording the change (made by the purge: no actor, no request,
 * unless `author` says who ran it: an operator's purge, a carried redeclaration); the name can then be declared
 * afresh. Two statements: the first locks the definition and reads what the record says of it.
 */
export async function removeDefinition(
  run: Run,
  guid: string,
  author: ChangeAuthor = { actor: null, requestId: null },
) {
  const found = await run(
    `MATCH (a:AttributeDefinition {guid: $guid}) WHERE a.state = 'withdrawn' AND a.purge_completed_at IS NOT NULL
     SET a.removing = true
     RETURN a {.guid, .tenant, .owner_guid, .name, .values_removed} AS removed`,
    { guid },
  );
  const removed = found[0]?.removed as
    | { guid: string; tenant: string; owner_guid: string; name: string; values_removed: unknown }
    | undefined;
  if (!removed) return null;
  const values = Number(removed.values_removed ?? 0);
  const facts: ChangeFacts = {
    kind: 'attribute_removed',
    before: { name: removed.name, state: 'withdrawn', values_removed: values },
    after: null,
    internal: true,
  };
  await run(
    `MATCH (a:AttributeDefinition {guid: $guid})
     DETACH DELETE a
     WITH count(*) AS gone
     ${recordChange({ typeGuid: '$typeGuid', attributeGuid: '$guid' })}`,
    {
      guid,
      tenant: removed.tenant,
      typeGuid: removed.owner_guid,
      ...changeParams(author, facts),
    },
  );
  return { ...removed, values_removed: values };
}
