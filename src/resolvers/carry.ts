// A redeclaration that carries its values (a change a stored value might not survive is no change in place: the
// definition is withdrawn and declared anew; the
// definition's lifecycle stays withdrawn, purged, declared afresh: docs/api.md#lifecycle-of-a-definition). The
// withdrawal marks the definition as carrying (db/carry.ts), in its own transaction; once the purge's grace has passed
// (writes begun before the withdrawal have committed), one pass over the type's instances judges each stored value
// against the new definition: a value it accepts is kept, as it stores it, one it refuses is removed and reported
// (entity, reason). When the pass is done the withdrawn definition is removed and the new one declared, in one
// transaction, its change record saying what was carried. The purger runs the pass and calls `completeCarry`
// (jobs/purge.ts); both are given it by the composition root, so the purge stays below the rules it calls.

import type { Viewer } from '../auth/tokens.js';
import { createContext, type Services } from '../context.js';
import type { StoredAttribute } from '../db/attributes.js';
import {
  type CarriedItem,
  type CarryDecisions,
  type CarryState,
  dropCarry,
  readCarry,
  readCarryBatch,
} from '../db/carry.js';
import { removeDefinition } from '../db/purge.js';
import type { Run } from '../db/run.js';
import { AppError, isAppError } from '../errors.js';
import { IMPACT_SCAN_MAX } from '../model/limits.js';
import { declareIn } from './attributes.js';
import { type CheckedDeclaration, checkDeclaration } from './declaration.js';
import { checkValue, ENTITY_VALUE_REASONS } from './values.js';

/** A stored scalar value as its definition reads it (json entries are JSON text), null when none. */
function decodeStored(state: { valueType: string; cardinality: string }, raw: unknown): unknown {
  if (raw === null || raw === undefined) return null;
  const decode = (v: unknown) => (state.valueType === 'json' ? JSON.parse(v as string) : v);
  const entries = Array.isArray(raw) ? raw.map(decode) : [decode(raw)];
  return state.cardinality === 'multi' ? entries : entries[0];
}

/** A value as the new definition stores it (entries checked by checkValue). */
function encodeStored(d: CheckedDeclaration, entries: unknown[]): unknown {
  const stored = d.valueType === 'json' ? entries.map((v) => JSON.stringify(v)) : entries;
  return d.cardinality === 'multi' ? stored : stored[0];
}

/** What the new definition says of one instance's value: kept (as stored now), or refused with a reason. */
export function judgeCarried(
  old: { valueType: string; cardinality: string; nameKey: string },
  d: CheckedDeclaration,
  item: CarriedItem,
): { keep: true; store?: unknown } | { keep: false; reason: string; message: string } | null {
  const oldReference = old.valueType === 'entity_ref';
  const newReference = d.valueType === 'entity_ref';
  if (oldReference) {
    if (item.refs.length === 0) return null;
    if (!newReference) {
      return { keep: false, reason: 'invalid_value', message: 'a reference does not become a scalar value' };
    }
    if (d.cardinality === 'single' && item.refs.length > 1) {
      return {
        keep: false,
        reason: 'invalid_value',
        message: 'several references do not fit cardinality single',
      };
    }
    const stray = item.refs.find((r) => r.targetType !== d.allowedRefType);
    if (stray) {
      return {
        keep: false,
        reason: 'ref_type_mismatch',
        message: `${stray.target} is not of allowed_ref_type`,
      };
    }
    return { keep: true };
  }
  const stored = decodeStored(old, item.raw);
  if (stored === null) return null;
  if (newReference) {
    return { keep: false, reason: 'invalid_value', message: 'a scalar value does not become a reference' };
  }
  // A change of cardinality keeps what fits: a single value becomes a list of one; a list of one its value.
  let value: unknown = stored;
  if (old.cardinality === 'single' && d.cardinality === 'multi') value = [stored];
  if (old.cardinality === 'multi' && d.cardinality === 'single') {
    const entries = stored as unknown[];
    if (entries.length !== 1) {
      return {
        keep: false,
        reason: 'invalid_value',
        message: `${entries.length} values do not fit cardinality single`,
      };
    }
    value = entries[0];
  }
  try {
    const entries = checkValue(
      { name: d.name, value_type: d.valueType, cardinality: d.cardinality, allowed_values: d.allowedValues },
      value,
      ENTITY_VALUE_REASONS,
      'the value',
    );
    return { keep: true, store: encodeStored(d, entries) };
  } catch (e) {
    if (isAppError(e)) return { keep: false, reason: e.reason, message: e.message };
    throw e;
  }
}

/** What one batch of a carry's pass does: the purger writes it (db/carry.ts, writeCarryBatch). */
export function judgeBatch(state: CarryState, items: readonly CarriedItem[]): CarryDecisions {
  const d = checkDeclaration(state.spec.declaration);
  const decisions: CarryDecisions = { updates: [], kept: 0, refused: 0, samples: [], refusals: [] };
  for (const item of items) {
    const verdict = judgeCarried(state, d, item);
    if (verdict === null) continue;
    if (verdict.keep) {
      decisions.kept += 1;
      if (verdict.store !== undefined)
        decisions.updates.push({ guid: item.guid, store: verdict.store, dropRefs: false });
    } else {
      decisions.refused += 1;
      decisions.updates.push({ guid: item.guid, store: null, dropRefs: item.refs.length > 0 });
      decisions.refusals.push({ entity: item.guid, reason: verdict.reason, message: verdict.message });
    }
  }
  decisions.samples = [...state.refusals, ...decisions.refusals];
  return decisions;
}

/**
 * Ends a carry whose pass is complete: the withdrawn definition removed and the new one declared, in one
 * transaction, as the caller who asked for the redeclaration (its change records name them, with the carry's
 * counts). The carry held its room on the type meanwhile (its count and budgets), so only a declaration refused for
 * another cause (the type, its referenced type or its default's entity deleted meanwhile) gives the carry up: the definition becomes an ordinary withdrawn one and the purge removes the values it
 * had kept. Returns what happened, for the purger's log.
 */
export async function completeCarry(services: Services, guid: string) {
  const state = await services.db.read((run) => readCarry(run, guid));
  if (!state) return { completed: false as const, reason: 'no_carry' };
  const viewer: Viewer = {
    subject: state.spec.actor ?? 'metamodel',
    tenant: state.tenant,
    roles: new Set(),
    crossTenant: false,
  };
  const ctx = createContext(services, viewer, {
    requestId: state.spec.requestId ?? `carry-${guid}`,
    operation: 'carry',
  });
  if (state.spec.reason) ctx.changeReason = state.spec.reason;
  const carried = { kept: state.kept, refused: state.refused, refusals: state.refusals };
  try {
    const d = checkDeclaration(state.spec.declaration);
    await ctx.db.write(async (run) => {
      const removed = await removeDefinition(run, guid, {
        actor: state.spec.actor,
        requestId: state.spec.requestId,
        reason: state.spec.reason,
      });
      if (!removed) throw new AppError('attribute_def_withdrawn', 'The withdrawn definition is not ready.');
      return declareIn(ctx, run, state.typeGuid, d, { carried });
    });
    services.engineCache.invalidate(state.tenant, state.typeGuid);
    return { completed: true as const, ...carried };
  } catch (e) {
    if (!isAppError(e)) throw e;
    await services.db.write((run) => dropCarry(run, guid, `${e.reason}: ${e.message}`));
    services.purger.kick();
    return { completed: false as const, reason: e.reason };
  }
}

/** Most characters of stored values one count of a carry reads (a plan's): past it, the count says it stopped. */
const CARRY_COUNT_MAX_CHARS = 8 * 1024 * 1024;

/**
 * What carrying `old`'s values to `declaration` would keep and refuse, counted over at most IMPACT_SCAN_MAX
 * instances and CARRY_COUNT_MAX_CHARS of values (`complete` false past either): what a plan shows of a redeclaration.
 */
export async function countCarry(
  run: Run,
  p: { tenant: string; typeGuid: string; old: StoredAttribute; declaration: Record<string, unknown> },
) {
  const d = checkDeclaration(p.declaration);
  const old = { valueType: p.old.value_type, cardinality: p.old.cardinality, nameKey: p.old.name_key };
  let kept = 0;
  let refused = 0;
  let scanned = 0;
  let chars = 0;
  let cursor = '';
  for (;;) {
    const items = await readCarryBatch(run, {
      tenant: p.tenant,
      typeGuid: p.typeGuid,
      nameKey: p.old.name_key,
      cursor,
      batch: 1_000,
    });
    for (const item of items) {
      const verdict = judgeCarried(old, d, item);
      if (verdict?.keep) kept += 1;
      else if (verdict) refused += 1;
      chars += typeof item.raw === 'string' ? item.raw.length : JSON.stringify(item.raw ?? null).length;
    }
    scanned += items.length;
    if (items.length < 1_000) return { values: kept, refused, complete: true };
    if (scanned >= IMPACT_SCAN_MAX || chars >= CARRY_COUNT_MAX_CHARS)
      return { values: kept, refused, complete: false };
    cursor = items[items.length - 1]?.guid ?? cursor;
  }
}
