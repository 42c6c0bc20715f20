// Cypher for a redeclaration that carries its values: the withdrawn definition's values are read in batches, each
// value kept (as the new definition stores it) or removed (refused by it), with the pass's cursor and counts kept on
// the withdrawn definition in the same transaction, so a restart resumes where the last batch ended.

import neo4j from 'neo4j-driver';
import { valueProperty } from './attributes.js';
import type { Run } from './run.js';

/** What a redeclaration carrying values is, as the withdrawn definition keeps it. */
export interface CarrySpec {
  /** The new declaration as sent (REST names; allowed_ref_type a guid). */
  declaration: Record<string, unknown>;
  /** Who asked for it, with which request and reason: the new definition's change record names them. */
  actor: string | null;
  requestId: string | null;
  reason: string | null;
}

/**
 * Marks a definition just withdrawn (same transaction) as carrying its values to `spec`. `room`: the JSON lengths of
 * the new definition's enumeration and default; until the carry ends, the type counts them (and the definition) as
 * if it were live (db/attributes.ts, readDeclareFacts), so that no other declaration takes the room it will need.
 */
export async function markCarry(
  run: Run,
  tenant: string,
  guid: string,
  spec: CarrySpec,
  room: { jsonBytes: number; defaultBytes: number },
) {
  await run(
    `MATCH (a:AttributeDefinition {guid: $guid}) WHERE a.tenant = $tenant AND a.state = 'withdrawn'
     SET a.carry = $spec, a.carrying = true, a.carry_kept = 0, a.carry_refused = 0, a.carry_refusals = '[]',
         a.carry_json_bytes = $jsonBytes, a.carry_default_bytes = $defaultBytes`,
    { tenant, guid, spec: JSON.stringify(spec), ...room },
  );
}

/** One instance's value of the carried attribute: a scalar (as stored) or references (with their targets' types). */
export interface CarriedItem {
  guid: string;
  raw: unknown;
  refs: { target: string; targetType: string | null; pos: number }[];
}

/** The next `batch` instances of the type after `cursor`, in guid order, with their values of the attribute. */
export async function readCarryBatch(
  run: Run,
  p: { tenant: string; typeGuid: string; nameKey: string; cursor: string; batch: number },
): Promise<CarriedItem[]> {
  const rows = await run(
    `MATCH (e:Entity)
     WHERE e.tenant = $tenant AND e.type_guid = $typeGuid AND e.guid > $cursor
     WITH e ORDER BY e.tenant, e.type_guid, e.guid LIMIT $batch
     OPTIONAL MATCH (e)-[r:REFERS_TO {attr: $nameKey}]->(x:Entity)
     WITH e, collect(CASE WHEN r IS NULL THEN null ELSE [x.guid, x.type_guid, r.pos] END) AS refs
     RETURN e.guid AS guid, e[$prop] AS raw, refs
     ORDER BY guid`,
    { ...p, prop: valueProperty(p.nameKey), batch: neo4j.int(p.batch) },
  );
  return rows.map((r) => ({
    guid: r.guid as string,
    raw: r.raw ?? null,
    refs: (r.refs as [string, string | null, unknown][]).map(([target, targetType, pos]) => ({
      target,
      targetType,
      pos: Number(pos),
    })),
  }));
}

/** What one batch decided: each changed instance's new stored value (null: removed), and whether its references go. */
export interface CarryDecisions {
  updates: { guid: string; store: unknown; dropRefs: boolean }[];
  kept: number;
  refused: number;
  /** Refusals to keep as examples (the definition keeps the first CARRY_SAMPLES). */
  samples: CarryRefusal[];
  /** Every refusal of this batch (the purger logs them all: each refused value is reported, not only examples). */
  refusals: CarryRefusal[];
}

/** A stored value the new definition refuses: whose it was, and why. */
export interface CarryRefusal {
  entity: string;
  reason: string;
  message: string;
}

export const CARRY_SAMPLES = 100;

/**
 * Applies a batch's decisions and advances the pass (cursor, counts, examples of refusals; complete when the batch
 * was short), in the caller's transaction.
 */
export async function writeCarryBatch(
  run: Run,
  p: {
    tenant: string;
    guid: string;
    nameKey: string;
    decisions: CarryDecisions;
    next: string;
    complete: boolean;
  },
) {
  await run(
    `UNWIND $updates AS u
     MATCH (e:Entity {guid: u.guid}) WHERE e.tenant = $tenant
     SET e[$prop] = u.store
     WITH e, u
     CALL {
       WITH e, u
       WITH e WHERE u.dropRefs
       OPTIONAL MATCH (e)-[r:REFERS_TO {attr: $nameKey}]->()
       DELETE r
     }
     RETURN count(*) AS changed`,
    {
      tenant: p.tenant,
      nameKey: p.nameKey,
      prop: valueProperty(p.nameKey),
      updates: p.decisions.updates,
    },
  );
  await run(
    `MATCH (a:AttributeDefinition {guid: $guid}) WHERE a.tenant = $tenant AND a.state = 'withdrawn'
     SET a.purge_cursor = $next,
         a.carry_kept = coalesce(a.carry_kept, 0) + $kept,
         a.carry_refused = coalesce(a.carry_refused, 0) + $refused,
         a.values_removed = coalesce(a.values_removed, 0) + $refused,
         a.carry_refusals = $samples,
         a.purge_completed_at = CASE WHEN $complete THEN datetime() ELSE null END`,
    {
      tenant: p.tenant,
      guid: p.guid,
      next: p.next,
      kept: neo4j.int(p.decisions.kept),
      refused: neo4j.int(p.decisions.refused),
      samples: JSON.stringify(p.decisions.samples.slice(0, CARRY_SAMPLES)),
      complete: p.complete,
    },
  );
}

/** A carry's state, read from its withdrawn definition. */
export interface CarryState {
  guid: string;
  tenant: string;
  typeGuid: string;
  name: string;
  nameKey: string;
  valueType: string;
  cardinality: string;
  spec: CarrySpec;
  kept: number;
  refused: number;
  refusals: CarryRefusal[];
}

export async function readCarry(run: Run, guid: string): Promise<CarryState | null> {
  const rows = await run(
    `MATCH (a:AttributeDefinition {guid: $guid}) WHERE a.state = 'withdrawn' AND a.carry IS NOT NULL
     RETURN a {.guid, .tenant, .owner_guid, .name, .name_key, .value_type, .cardinality, .carry, .carry_kept,
               .carry_refused, .carry_refusals} AS a`,
    { guid },
  );
  const a = rows[0]?.a as Record<string, unknown> | undefined;
  if (!a) return null;
  return {
    guid: a.guid as string,
    tenant: a.tenant as string,
    typeGuid: a.owner_guid as string,
    name: a.name as string,
    nameKey: a.name_key as string,
    valueType: a.value_type as string,
    cardinality: a.cardinality as string,
    spec: JSON.parse(a.carry as string) as CarrySpec,
    kept: Number(a.carry_kept ?? 0),
    refused: Number(a.carry_refused ?? 0),
    refusals: JSON.parse((a.carry_refusals as string | null) ?? '[]'),
  };
}

/**
 * Gives up a carry (its new declaration was refused when its turn came): the definition becomes an ordinary
 * withdrawn one, its pass started anew so that the purge removes the values it had kept.
 */
export async function dropCarry(run: Run, guid: string, why: string) {
  await run(
    `MATCH (a:AttributeDefinition {guid: $guid}) WHERE a.state = 'withdrawn'
     SET a.carry = null, a.carrying = null, a.carry_failed = $why, a.purge_cursor = '', a.purge_pass_started_at = datetime(),
         a.purge_completed_at = null`,
    { guid, why },
  );
}
