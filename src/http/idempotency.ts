// The Idempotency-Key request header (IETF draft "The Idempotency-Key HTTP Header Field"; Stripe's behaviour):
// a client sends a unique key with a write and may send the same request again (after a 503, a timeout, a reset
// connection) without the write happening twice.
//
// - The key is per tenant, 1 to 255 visible ASCII characters, as a structured-field string ("...") or bare.
// - The write's transaction claims the key first and stores the answer (status, body) in the same transaction as
//   the change, just before committing (db/idempotency.ts, db/executor.ts): either both are committed or neither.
// - A request with a key already stored gets that answer again (`Idempotent-Replayed: true`), if it is the same
//   request (method, path and body); another request with the key is refused 422 `idempotency_key_reused`.
// - Requests with one key at once: the first to claim it runs; the others wait on the key until it commits and
//   then get its answer. The write runs once.
// - Answers of requests that wrote nothing (refusals before any write, a create-or-get of an existing name, a dry
//   run) are not stored: sent again, the request runs again, as Stripe does for requests refused before they run.
// - Records are kept IDEMPOTENCY_TTL_HOURS (24 h), then the daily job removes them.
import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import { IDEMPOTENCY_KEY_MAX, IDEMPOTENCY_KEY_PATTERN, REPLAYED_HEADER } from '../contract/idempotency.js';
import type { IdempotencyRecord, IdempotencyScope } from '../db/idempotency.js';
import { refuse } from '../errors.js';

const invalid = (message: string) => refuse('invalid_idempotency_key', message);
const SENT = new RegExp(IDEMPOTENCY_KEY_PATTERN);

/** The key a request sent, undefined without one; throws invalid_idempotency_key for a malformed one. */
export function parseIdempotencyKey(value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (Array.isArray(value)) throw invalid('Send one Idempotency-Key header.');
  const text = value.trim();
  if (!SENT.test(text)) {
    throw invalid(
      `An Idempotency-Key is 1 to ${IDEMPOTENCY_KEY_MAX} visible ASCII characters, quoted ("...") or bare.`,
    );
  }
  return text.startsWith('"') ? text.slice(1, -1) : text;
}

/** What makes two requests the same request: method, path (with its query) and body. */
export function fingerprintOf(method: string, url: string, body: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify([method, url, body ?? null]))
    .digest('base64url');
}

/**
 * A stored answer, to send again: its status, content type and body; refused (idempotency_key_reused) when this
 * is another request than the one that stored it.
 */
export function storedAnswer(scope: IdempotencyScope, record: IdempotencyRecord) {
  if (record.fingerprint !== scope.fingerprint) {
    throw refuse(
      'idempotency_key_reused',
      'This Idempotency-Key was sent with another request (method, path or body); use a new key for a new request.',
    );
  }
  return { status: record.status, contentType: record.contentType, body: record.body };
}

/** Puts a stored answer on the reply (status and headers) and returns its body. */
export function replayed(reply: FastifyReply, answer: ReturnType<typeof storedAnswer>) {
  reply.code(answer.status).header('content-type', answer.contentType).header(REPLAYED_HEADER, 'true');
  return answer.body;
}
