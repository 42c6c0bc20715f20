// Idempotency records (issue #17): one per tenant and Idempotency-Key, written in the transaction of the write it
// guards, with that write's answer. Kept IDEMPOTENCY_TTL_HOURS, then removed by the daily job; an expired record
// is treated as absent (and replaced by the next write with its key).

import neo4j from 'neo4j-driver';
import { AppError } from '../errors.js';
import type { Run } from './run.js';

export const IDEMPOTENCY_TTL_HOURS = 24;

export interface IdempotencyRecord {
  fingerprint: string;
  status: number;
  body: string;
  contentType: string;
}

/** The live record of a key, or null (none, or expired). */
export async function readIdempotencyRecord(run: Run, tenant: string, key: string) {
  const rows = await run(
    `MATCH (k:IdempotencyKey {tenant: $tenant, key: $key}) WHERE k.expires_at > datetime()
     RETURN k.fingerprint AS fingerprint, k.status AS status, k.body AS body, k.content_type AS contentType`,
    { tenant, key },
  );
  const row = rows[0];
  return row ? (row as unknown as IdempotencyRecord) : null;
}

/**
 * Claims the key in the write's transaction, first of its statements: a concurrent transaction claiming the same
 * key waits on the uniqueness constraint until this one ends, then fails (and its request answers with this
 * one's stored answer). An expired record of the key is replaced.
 */
export async function claimIdempotencyKey(run: Run, tenant: string, key: string, fingerprint: string) {
  await run(
    `OPTIONAL MATCH (old:IdempotencyKey {tenant: $tenant, key: $key}) WHERE old.expires_at <= datetime()
     DELETE old
     WITH count(*) AS replaced
     CREATE (:IdempotencyKey {tenant: $tenant, key: $key, fingerprint: $fingerprint, created_at: datetime(),
       expires_at: datetime() + duration({hours: $hours})})`,
    { tenant, key, fingerprint, hours: IDEMPOTENCY_TTL_HOURS },
  );
}

/** The answer of the write, stored in its transaction just before the commit. */
export async function storeIdempotentAnswer(
  run: Run,
  tenant: string,
  key: string,
  answer: { status: number; body: string; contentType: string },
) {
  await run(
    `MATCH (k:IdempotencyKey {tenant: $tenant, key: $key})
     SET k.status = $status, k.body = $body, k.content_type = $contentType`,
    { tenant, key, ...answer },
  );
}

/** Removes expired records, at most `limit` (the daily job calls it until it returns less). */
export async function removeExpiredIdempotencyRecords(run: Run, limit: number): Promise<number> {
  const rows = await run(
    `MATCH (k:IdempotencyKey) WHERE k.expires_at <= datetime()
     WITH k LIMIT $limit DELETE k RETURN count(*) AS removed`,
    { limit: neo4j.int(limit) },
  );
  return Number(rows[0]?.removed ?? 0);
}

/** What a request sending an Idempotency-Key carries into its writes (src/http/idempotency.ts sets it up). */
export interface IdempotencyScope {
  tenant: string;
  key: string;
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
