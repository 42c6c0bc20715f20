// Cypher for the metamodel's change records: written by the statement that makes each change, in its transaction,
// and read back as a type's history (newest first) and as the tenant's change feed (oldest first, exactly once).

import neo4j from 'neo4j-driver';
import type { ChangeKind } from '../model/changes.js';
import { utf8Bytes } from '../model/limits.js';
import { nameKey } from '../model/names.js';
import { MODEL_VERSION_SHARDS } from './model-version.js';
import { objectFromList, type Run } from './run.js';

/**
 * Who made a change: the token's subject and the request's id (both null for the purge's own changes), and why,
 * when the caller said (a reason it sent with the write, bounded by CHANGE_REASON_MAX).
 */
export interface ChangeAuthor {
  actor: string | null;
  requestId: string | null;
  reason?: string | null;
}

/** The change a statement makes: its kind, and the before/after of what changed as JSON text (null for none). */
export interface ChangeFacts {
  kind: ChangeKind;
  before: unknown;
  after: unknown;
  /**
   * Made by the service itself, on a caller's earlier word: the purge removing a withdrawn definition, a carried
   * redeclaration declared once its grace has passed. An apply does not take these for another caller's change.
   */
  internal?: boolean;
}

/** The parameters recordChange's clause reads: bound with the statement's own. */
export type ChangeRecord = ReturnType<typeof changeParams>;

/** The name of the attribute an attribute change is about (its before or after names it), as its key. */
function attributeKeyOf(facts: ChangeFacts): string | null {
  if (!facts.kind.startsWith('attribute_')) return null;
  const side = (facts.after ?? facts.before) as { name?: unknown } | null;
  return typeof side?.name === 'string' ? nameKey(side.name) : null;
}

export const changeParams = (author: ChangeAuthor, facts: ChangeFacts) => {
  const before = facts.before === null ? null : JSON.stringify(facts.before);
  const after = facts.after === null ? null : JSON.stringify(facts.after);
  return {
    changeKind: facts.kind,
    changeAttribute: attributeKeyOf(facts),
    changeActor: author.actor,
    changeRequest: author.requestId,
    changeReason: author.reason ?? null,
    changeInternal: facts.internal === true,
    changeBefore: before,
    changeAfter: after,
    /** The texts' bytes as a page carries them (UTF-8): what a page of the history counts against its bound. */
    changeBytes: utf8Bytes(before) + utf8Bytes(after),
  };
};

const pad = (expression: string, width: number) =>
  `right('${'0'.repeat(width)}' + toString(${expression}), ${width})`;

/**
 * A Cypher clause that gives the tenant's model a new version AND records the change, once per row reaching it; it
 * goes where the statement has exactly one row when (and only when) it changed something, last in its
 * transaction's writes. It changes one of the tenant's version shards (picked at random: writes of one tenant
 * lock one shard in eight) and takes that shard's next sequence number for the record. The shard's lock is held
 * to the commit, so within a shard records commit in sequence order with no gap, which the change feed relies on
 * (readFeed). The version is set before the sequence is read: the SET takes the lock, so the read that follows
 * sees the last committed number and no two records get the same one (the model_change_seq constraint would
 * refuse it). MATCH, not MERGE: the shards exist before any request of the tenant is served.
 *
 * `typeGuid` and `attributeGuid` are Cypher expressions over `imports` (variables of the statement).
 */
export const recordChange = (p: {
  typeGuid: string;
  attributeGuid?: string;
  imports?: readonly string[];
  tenantVariable?: string;
}) => {
  const tenant = p.tenantVariable ?? '$tenant';
  const imports = [...(p.imports ?? []), ...(p.tenantVariable ? [p.tenantVariable] : [])];
  const carried = imports.length > 0 ? `, ${imports.join(', ')}` : '';
  const imported = imports.length > 0 ? `WITH ${imports.join(', ')} ` : '';
  return `CALL { ${imported}UNWIND [toInteger(rand() * ${MODEL_VERSION_SHARDS})] AS mvShard
     MATCH (mv:ModelVersion {tenant: ${tenant}, shard: mvShard})
     SET mv.version = randomUUID()
     WITH mv, mvShard${carried}
     SET mv.seq = coalesce(mv.seq, 0) + 1
     WITH mv, mvShard, datetime.realtime() AS at${carried}
     CREATE (:ModelChange {tenant: ${tenant}, shard: mvShard, seq: mv.seq, at: at,
       key: ${pad('at.epochMillis * 1000 + at.microsecond % 1000', 16)} + '.' + toString(mvShard) + '.' + ${pad('mv.seq', 12)},
       kind: $changeKind, type_guid: ${p.typeGuid}, attribute_guid: ${p.attributeGuid ?? 'null'},
       attribute_key: $changeAttribute,
       actor: $changeActor, request_id: $changeRequest, reason: $changeReason, internal: $changeInternal,
       before: $changeBefore, after: $changeAfter,
       bytes: $changeBytes, bytes_utf8: true}) }`;
};

/** The same as a statement of its own, for a transaction whose statements cannot carry it. */
export async function recordChangeAlone(run: Run, tenant: string, typeGuid: string, change: ChangeRecord) {
  await run(`WITH $typeGuid AS typeGuid ${recordChange({ typeGuid: 'typeGuid', imports: ['typeGuid'] })}`, {
    tenant,
    typeGuid,
    ...change,
  });
}

/** A change record without its before/after texts (`bytes`: their length in UTF-8 bytes, at most: see fieldOf). */
export interface ChangeHead {
  shard: number;
  seq: number;
  key: string;
  bytes: number;
}

export interface StoredChange extends ChangeHead {
  at: string;
  kind: ChangeKind;
  type_guid: string;
  attribute_guid: string | null;
  actor: string | null;
  request_id: string | null;
  reason: string | null;
  before: string | null;
  after: string | null;
}

/** A feed candidate's head: with what a feed's filter reads (the kind, the type, the attribute's guid and key). */
export interface FeedHead extends ChangeHead {
  kind: string;
  type_guid: string;
  attribute_guid: string | null;
  attribute_key: string | null;
}

const HEAD_FIELDS = ['shard', 'seq', 'key', 'bytes'] as const;
const FEED_HEAD_FIELDS = [...HEAD_FIELDS, 'kind', 'type_guid', 'attribute_guid', 'attribute_key'] as const;
/**
 * A record's field as read; its `bytes` in UTF-8, the unit a page is bounded in: a record written before it was
 * counted so (by code points, without `bytes_utf8`) at four bytes a character, the most UTF-8 takes.
 */
const fieldOf = (c: string, f: string) =>
  f === 'bytes' ? `CASE WHEN ${c}.bytes_utf8 = true THEN ${c}.bytes ELSE 4 * ${c}.bytes END` : `${c}.${f}`;
const headProjection = (c: string, fields: readonly string[] = HEAD_FIELDS) =>
  `[${fields.map((f) => fieldOf(c, f)).join(', ')}]`;
const toHead = <H extends ChangeHead = ChangeHead>(
  values: unknown,
  fields: readonly string[] = HEAD_FIELDS,
): H => {
  const head = objectFromList<H>(fields, values);
  return { ...head, shard: Number(head.shard), seq: Number(head.seq), bytes: Number(head.bytes) };
};

/**
 * One read of the feed's candidates: each shard's head (its last sequence number) before and after reading up to
 * `limit` records of each shard after `positions` and not past the first head. When the heads read after are the
 * ones read before, no change committed while the statement ran, and the records read are a consistent cut: every
 * change committed before one of them is among them or already delivered (see resolvers/changes.ts).
 */
export async function readFeedCandidates(
  run: Run,
  tenant: string,
  positions: readonly number[],
  limit: number,
) {
  const heads = (imported: string) => `CALL {
       WITH ${imported}
       UNWIND range(0, ${MODEL_VERSION_SHARDS - 1}) AS shard
       MATCH (mv:ModelVersion {tenant: $tenant, shard: shard})
       RETURN collect([shard, coalesce(mv.seq, 0)]) AS heads
     }`;
  const rows = await run(
    `WITH 0 AS start
     ${heads('start')}
     WITH heads AS before
     UNWIND range(0, ${MODEL_VERSION_SHARDS - 1}) AS s
     CALL {
       WITH s, before
       WITH s, head([h IN before WHERE h[0] = s | h[1]]) AS top
       MATCH (c:ModelChange) WHERE c.tenant = $tenant AND c.shard = s AND c.seq > $positions[s] AND c.seq <= top
       WITH c ORDER BY c.tenant, c.shard, c.seq LIMIT $limit
       RETURN collect(${headProjection('c', FEED_HEAD_FIELDS)}) AS records
     }
     WITH before, collect(records) AS perShard
     // Imports what the reads above returned: read after them, not planned beside them.
     ${heads('perShard')}
     RETURN before, heads AS after, perShard`,
    { tenant, positions: positions.map((p) => neo4j.int(p)), limit: neo4j.int(limit) },
  );
  const row = rows[0];
  const shardSeqs = (list: unknown) => {
    const out: number[] = new Array(MODEL_VERSION_SHARDS).fill(0);
    for (const [shard, seq] of list as [unknown, unknown][]) out[Number(shard)] = Number(seq);
    return out;
  };
  return {
    before: shardSeqs(row?.before ?? []),
    after: shardSeqs(row?.after ?? []),
    records: ((row?.perShard ?? []) as unknown[][]).flat().map((v) => toHead<FeedHead>(v, FEED_HEAD_FIELDS)),
  };
}

/**
 * The records of the given types older than `before` (a record key; '~', after every key, for the newest first),
 * newest first, at most `limit` per type, without their texts. Ordered by all three properties of the index, so the
 * index gives the order: a page is a seek and a limit, at any depth.
 */
export async function readHistoryHeads(
  run: Run,
  tenant: string,
  requests: readonly { typeGuid: string; before: string }[],
  limit: number,
) {
  const rows = await run(
    `UNWIND range(0, size($requests) - 1) AS i
     CALL {
       WITH i
       WITH $requests[i] AS r
       MATCH (c:ModelChange) WHERE c.tenant = $tenant AND c.type_guid = r.typeGuid AND c.key < r.before
       WITH c ORDER BY c.tenant DESC, c.type_guid DESC, c.key DESC LIMIT $limit
       RETURN collect(${headProjection('c')}) AS records
     }
     RETURN i, records`,
    { tenant, requests, limit: neo4j.int(limit) },
  );
  const out: ChangeHead[][] = requests.map(() => []);
  for (const row of rows) out[Number(row.i)] = (row.records as unknown[]).map((v) => toHead(v));
  return out;
}

const CHANGE_FIELDS = [
  'shard',
  'seq',
  'key',
  'bytes',
  'at',
  'kind',
  'type_guid',
  'attribute_guid',
  'actor',
  'request_id',
  'reason',
  'before',
  'after',
] as const;

/** The whole records of the given heads, by key. */
export async function readChanges(run: Run, tenant: string, heads: readonly ChangeHead[]) {
  if (heads.length === 0) return new Map<string, StoredChange>();
  const rows = await run(
    `UNWIND $heads AS h
     MATCH (c:ModelChange {tenant: $tenant, shard: h.shard, seq: h.seq})
     RETURN [${CHANGE_FIELDS.map((f) => (f === 'at' ? 'toString(c.at)' : fieldOf('c', f))).join(', ')}] AS change`,
    { tenant, heads: heads.map((h) => ({ shard: neo4j.int(h.shard), seq: neo4j.int(h.seq) })) },
  );
  const changes = rows.map((r) => {
    const c = objectFromList<StoredChange>(CHANGE_FIELDS, r.change);
    return { ...c, shard: Number(c.shard), seq: Number(c.seq), bytes: Number(c.bytes) };
  });
  return new Map(changes.map((c) => [c.key, c]));
}

/**
 * Each type's former names, most recent first (the befores of its type_renamed records, at most `max`), for the
 * types that were ever renamed: one index seek per type (model_change_type_kind), newest first.
 */
export async function readFormerNames(run: Run, tenant: string, typeGuids: readonly string[], max: number) {
  if (typeGuids.length === 0) return new Map<string, string[]>();
  const rows = await run(
    `UNWIND $guids AS g
     CALL {
       WITH g
       MATCH (c:ModelChange) USING INDEX c:ModelChange(tenant, type_guid, kind, key)
       WHERE c.tenant = $tenant AND c.type_guid = g AND c.kind = 'type_renamed' AND c.key > ''
       WITH c ORDER BY c.tenant DESC, c.type_guid DESC, c.kind DESC, c.key DESC LIMIT $max
       RETURN collect(c.before) AS befores
     }
     WITH g, befores WHERE size(befores) > 0
     RETURN g AS guid, befores`,
    { tenant, guids: typeGuids, max: neo4j.int(max) },
  );
  const out = new Map<string, string[]>();
  for (const r of rows) {
    const names: string[] = [];
    for (const before of r.befores as string[]) {
      const name = (JSON.parse(before) as { name?: unknown }).name;
      if (typeof name === 'string' && !names.some((n) => nameKey(n) === nameKey(name))) names.push(name);
    }
    out.set(r.guid as string, names);
  }
  return out;
}
