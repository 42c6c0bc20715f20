// The Idempotency-Key request header as the wire carries it: a client sends a unique key with a write and may send
// the same request again (after a 503, a timeout, a reset connection) without the write happening twice. What the
// service does with a key is in services/keyed-requests.ts (turns, replays, bounds) and db/idempotency-records.ts (records).
//
// - A key is 1 to 255 visible ASCII characters, as a structured-field string ("...") or bare.
// - The write's transaction claims the key first and stores the answer (status, body) in the same transaction as
//   the change, just before committing (db/executor.ts): either both are committed or neither.
// - A request with a key already stored gets that answer again (`Idempotent-Replayed: true`), if it is the same
//   request (method, path and body); another request with the key is refused 422 `idempotency_key_reused`.
// - Answers of requests that wrote nothing (refusals before any write, a create-or-get of an existing name, a dry
//   run) are not stored: sent again, the request runs again, as Stripe does for requests refused before they run.
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { IDEMPOTENCY_KEY_MAX, IDEMPOTENCY_KEY_PATTERN, REPLAYED_HEADER } from '../contract/write-headers.js';
import { refuse } from '../errors.js';
import type { StoredAnswer } from '../services/keyed-requests.js';
import { isClosed, whenClosed } from './connection.js';

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

/**
 * What makes two requests the same request: method, path (with its query) and body, the body in a canonical form:
 * its objects' keys in order (a client may send them in any order), and numbers JSON cannot write (1e400 parses to
 * Infinity) kept apart from null, which JSON.stringify writes for them.
 */
export function fingerprintOf(method: string, url: string, body: unknown): string {
  const hash = createHash('sha256')
    .update(JSON.stringify([method, url]))
    .update('\n');
  hash.update(body === undefined ? 'null' : canonicalJson(body));
  return hash.digest('base64url');
}

/** JSON text of a parsed body with every object's keys sorted; a non-finite number as `#Infinity` (no JSON token). */
export function canonicalJson(value: unknown): string {
  if (typeof value === 'number') return Number.isFinite(value) ? JSON.stringify(value) : `#${value}`;
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(record[k])}`).join(',')}}`;
}

/** Puts a stored answer on the reply (status and headers) and returns its body. */
export function replayed(reply: FastifyReply, answer: StoredAnswer) {
  reply.code(answer.status).header('content-type', answer.contentType).header(REPLAYED_HEADER, 'true');
  return answer.body;
}

/**
 * At the door, once the caller is known to be allowed the request and it has been admitted (REST: rest/route.ts;
 * GraphQL: after the operation's cost check): the turn of a request sent with an Idempotency-Key. Returns the
 * stored answer it gets again, or undefined when it runs, its write then claiming the key.
 */
export async function takeKeyedTurn(
  req: FastifyRequest,
  reply: FastifyReply,
): Promise<StoredAnswer | undefined> {
  const ctx = req.ctx;
  const pending = ctx?.keyed.pending;
  if (!pending) return undefined;
  ctx.keyed.pending = undefined;
  const turn = await ctx.services.keyed.start(ctx.db, pending.owner, pending.fingerprint, req.body);
  if (turn.replay) return turn.replay;
  // The connection may have gone while the request waited for its key's turn: the turn ends at once.
  if (isClosed(reply.raw)) {
    turn.end();
    throw refuse('invalid_request', 'The connection closed while the request waited for its turn.');
  }
  req.body = turn.body;
  ctx.keyed.scope = { ...pending.owner, fingerprint: pending.fingerprint };
  ctx.keyed.end = turn.end;
  // However the request ends (answered, or its connection gone first), its turn ends, and a write still waiting
  // for its answer is not committed.
  whenClosed(reply.raw, () => {
    const open = ctx.keyed.scope?.open;
    if (open && ctx.keyed.scope) {
      ctx.keyed.scope.open = undefined;
      // The turn ends once the write is rolled back: the next request with the key would wait on its claim.
      void open.rollback().finally(() => turn.end());
      return;
    }
    turn.end();
  });
  return undefined;
}
