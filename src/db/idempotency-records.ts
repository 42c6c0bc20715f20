// Idempotency records: one per tenant, subject and Idempotency-Key, written in the transaction of the write it
// guards, with that write's answer. Kept IDEMPOTENCY_TTL_HOURS, then removed by the sweep; an expired record is
// treated as absent (and replaced by the next write with its key).
//
// What a tenant holds is counted in a ledger (IdempotencyLedger, IDEMPOTENCY_LEDGER_SHARDS nodes per tenant: keys
// and stored answer bytes), changed in the same transactions that store and remove records, so the per-tenant cap
// is read in the statement that looks the key up, without counting the records. The ledger is sharded by key so
// that a tenant's keyed writes do not all take turns on one node's lock at commit.

import { createHash } from 'node:crypto';
import neo4j from 'neo4j-driver';
import { AppError } from '../errors.js';
import { IDEMPOTENCY_TTL_HOURS } from '../model/limits.js';
import type { Run } from './run.js';

export { IDEMPOTENCY_TTL_HOURS };
export const IDEMPOTENCY_LEDGER_SHARDS = 8;

export interface IdempotencyRecord {
  fingerprint: string;
  status: number;
  body: string;
  contentType: string;
}

/** Who a key belongs to: the tenant and the token's subject (another caller's key is another key). */
export interface KeyOwner {
  tenant: string;
  subject: string;
  key: string;
}

/** The owner's fields alone, as statement parameters (a scope carries functions the driver cannot send). */
const ownerParams = (o: KeyOwner) => ({ tenant: o.tenant, subject: o.subject, key: o.key });

/** The ledger shard of a key (the same on every instance). */
export const shardOfKey = (owner: KeyOwner) =>
  createHash('sha256').update(`${owner.subject}\u0000${owner.key}`).digest().readUInt8(0) %
  IDEMPOTENCY_LEDGER_SHARDS;

/** What a tenant's stored keys hold, from its ledger. */
export interface KeyUsage {
  keys: number;
  bytes: number;
}

/**
 * The live record of a key (null: none, or expired) and what the tenant's stored keys hold, in one statement.
 */
export async function readIdempotencyState(
  run: Run,
  owner: KeyOwner,
): Promise<{ record: IdempotencyRecord | null; usage: KeyUsage }> {
  const rows = await run(
    `OPTIONAL MATCH (k:IdempotencyKey {tenant: $tenant, subject: $subject, key: $key})
       WHERE k.expires_at > datetime()
     WITH k LIMIT 1
     CALL {
       OPTIONAL MATCH (l:IdempotencyLedger {tenant: $tenant})
       RETURN coalesce(sum(l.keys), 0) AS keys, coalesce(sum(l.bytes), 0) AS bytes
     }
     RETURN k.fingerprint AS fingerprint, k.status AS status, k.body AS body, k.content_type AS contentType,
            keys, bytes`,
    ownerParams(owner),
  );
  const row = rows[0] ?? {};
  const usage = { keys: Number(row.keys ?? 0), bytes: Number(row.bytes ?? 0) };
  if (row.fingerprint === null || row.fingerprint === undefined || row.status === null) {
    return { record: null, usage };
  }
  return {
    record: {
      fingerprint: row.fingerprint as string,
      status: Number(row.status),
      body: row.body as string,
      contentType: row.contentType as string,
    },
    usage,
  };
}

/**
 * Claims the key in the write's transaction, first of its statements: a concurrent transaction claiming the same
 * key waits on the uniqueness constraint until this one ends, then fails (and its request answers with this
 * one's stored answer). An expired record of the key is replaced (and leaves the ledger).
 */
export async function claimIdempotencyKey(run: Run, owner: KeyOwner, fingerprint: string) {
  await run(
    `OPTIONAL MATCH (old:IdempotencyKey {tenant: $tenant, subject: $subject, key: $key})
       WHERE old.expires_at <= datetime()
     CALL {
       WITH old
       WITH old WHERE old IS NOT NULL
       OPTIONAL MATCH (l:IdempotencyLedger {tenant: $tenant, shard: old.shard})
       SET l.keys = l.keys - 1, l.bytes = l.bytes - coalesce(old.bytes, 0)
       DELETE old
     }
     WITH count(*) AS replaced
     CREATE (:IdempotencyKey {tenant: $tenant, subject: $subject, key: $key, shard: $shard,
       fingerprint: $fingerprint, created_at: datetime(), expires_at: datetime() + duration({hours: $hours})})`,
    { ...ownerParams(owner), shard: neo4j.int(shardOfKey(owner)), fingerprint, hours: IDEMPOTENCY_TTL_HOURS },
  );
}

/** The answer of the write, stored in its transaction just before the commit, and counted in the ledger. */
export async function storeIdempotentAnswer(
  run: Run,
  owner: KeyOwner,
  answer: { status: number; body: string; contentType: string },
) {
  await run(
    `MATCH (k:IdempotencyKey {tenant: $tenant, subject: $subject, key: $key})
     SET k.status = $status, k.body = $body, k.content_type = $contentType, k.bytes = $bytes
     MERGE (l:IdempotencyLedger {tenant: $tenant, shard: $shard})
     SET l.keys = coalesce(l.keys, 0) + 1, l.bytes = coalesce(l.bytes, 0) + $bytes`,
    {
      ...ownerParams(owner),
      status: answer.status,
      body: answer.body,
      contentType: answer.contentType,
      shard: neo4j.int(shardOfKey(owner)),
      bytes: neo4j.int(Buffer.byteLength(answer.body)),
    },
  );
}

/**
 * Removes expired records, at most `limit`, and takes them out of their tenants' ledgers in the same transaction
 * (the sweep calls it until it returns less).
 */
export async function removeExpiredIdempotencyRecords(run: Run, limit: number): Promise<number> {
  const rows = await run(
    `MATCH (k:IdempotencyKey) WHERE k.expires_at <= datetime()
     WITH k LIMIT $limit
     WITH k.tenant AS tenant, k.shard AS shard, count(k) AS keys, sum(coalesce(k.bytes, 0)) AS bytes,
          collect(k) AS records
     OPTIONAL MATCH (l:IdempotencyLedger {tenant: tenant, shard: shard})
     SET l.keys = l.keys - keys, l.bytes = l.bytes - bytes
     FOREACH (k IN records | DELETE k)
     RETURN sum(keys) AS removed`,
    { limit: neo4j.int(limit) },
  );
  return Number(rows[0]?.removed ?? 0);
}

/** What a request sending an Idempotency-Key carries into its writes (services/keyed-requests.ts sets it up). */
export interface IdempotencyScope extends KeyOwner {
  fingerprint: string;
  /** The write's transaction, left open until the answer is stored in it (set by the executor's write). */
  open?: {
    commit(answer: { status: number; body: string; contentType: string }): Promise<string[]>;
    rollback(): Promise<void>;
  };
  /** Set when the write found the key held by another request that committed: that one's answer is the answer. */
  taken?: boolean;
  /** What runs once the open transaction commits (Executor.afterCommit). */
  afterCommit?: (() => void)[];
  /**
   * Set when the answer must not be stored, with the write it stands for rolled back (a GraphQL mutation whose
   * answer was replaced by a refusal after it wrote): the answer is that refusal.
   */
  discard?: boolean;
}

/**
 * The key is held by another request's write, which committed meanwhile: a refusal like any other (503
 * storage_busy, REST and GraphQL alike), which the request's send replaces with that write's stored answer
 * (app/http-hooks.ts). It stands only if that answer cannot be read: the client's retry then gets it.
 */
export class IdempotencyKeyTaken extends AppError {
  constructor() {
    super('storage_busy', 'The Idempotency-Key is held by another request; try again shortly.', 1);
  }
}
