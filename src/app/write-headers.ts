// A tenant write's headers, around its route: X-Change-Reason recorded with its changes, and an Idempotency-Key: its
// key checked with what makes the request the same request (before the route; the route takes the key's turn once
// its caller is known to be allowed: http/idempotency-key.ts), its write committed with its answer stored in it (on
// send), or rolled back when its answer is never sent (services/keyed-requests.ts, db/idempotency-records.ts).
import type { FastifyInstance, FastifyReply } from 'fastify';
import fp from 'fastify-plugin';
import type { RequestContext, Services } from '../context.js';
import {
  CHANGE_REASON_HEADER,
  IDEMPOTENCY_HEADER,
  isTenantWrite,
  KEYLESS_WRITES,
} from '../contract/write-headers.js';
import type { IdempotencyScope } from '../db/idempotency-records.js';
import { type AppError, refuse } from '../errors.js';
import { isClosed } from '../http/connection.js';
import { fingerprintOf, parseIdempotencyKey, replayed } from '../http/idempotency-key.js';
import { sentHeader } from '../http/single-headers.js';
import { sayWhy } from '../resolvers/change-author.js';
import { clearRefusal, refusalAnswer } from '../rest/envelope.js';
import { BOOKMARK_HEADER } from '../services/bookmarks.js';
import { answerFor, IDEMPOTENCY_LIMITS, storedRecordOf } from '../services/keyed-requests.js';

export const writeHeaders = fp(
  async (app: FastifyInstance, _options: { services: Services }) => {
    // An Idempotency-Key on a write (services/keyed-requests.ts): checked here, with what makes the request the same
    // request; the key is looked up at the door, once the caller is known to be allowed and admitted
    // (takeKeyedTurn). Operators' routes (/admin) take none.
    app.addHook('preHandler', async (req) => {
      const ctx = req.ctx;
      const route = req.routeOptions.url ?? '/admin';
      if (!ctx || !isTenantWrite(req.method, route)) return;
      // Why the caller makes the change, when it says (recorded with it).
      const why = sentHeader(req.raw, CHANGE_REASON_HEADER);
      if (why !== undefined) {
        if (Array.isArray(why)) throw refuse('invalid_change_reason', 'Send one X-Change-Reason header.');
        sayWhy(ctx, why, true);
      }
      if (KEYLESS_WRITES.has(route)) {
        if (req.headers[IDEMPOTENCY_HEADER] !== undefined) {
          throw refuse(
            'idempotency_key_not_supported',
            'This request takes no Idempotency-Key: it is idempotent by itself (send it again).',
          );
        }
        return;
      }
      const key = parseIdempotencyKey(sentHeader(req.raw, IDEMPOTENCY_HEADER));
      if (key === undefined) return;
      ctx.keyed.pending = {
        owner: { tenant: ctx.viewer.tenant, subject: ctx.viewer.subject, key },
        fingerprint: fingerprintOf(req.method, req.url, req.body),
      };
    });

    app.addHook('onSend', async (req, reply, payload) => {
      const ctx = req.ctx;
      const scope = ctx?.keyed.scope;
      if (!ctx || !scope) return payload;
      return settleKeyedWrite(ctx, reply, scope, payload, req.routeOptions.url === '/graphql');
    });

    app.addHook('onResponse', (req, _reply, done) => {
      // A keyed write whose answer was never sent (the connection went first): not committed; its key's turn ends.
      const open = req.ctx?.keyed.scope?.open;
      if (open && req.ctx?.keyed.scope) {
        req.ctx.keyed.scope.open = undefined;
        void open.rollback();
      }
      req.ctx?.keyed.end?.();
      done();
    });
  },
  { name: 'write-headers' },
);

/**
 * The end of a request under an Idempotency-Key (services/keyed-requests.ts), REST and GraphQL alike: its write
 * commits here with its answer stored in it. An answer of 500 or more, or one the request must not store (a
 * GraphQL mutation whose answer became a refusal after it wrote), rolls it back, as does a connection closed
 * already (its close, heard a moment later, would roll it back: nobody is left to get the answer); so does an
 * answer over the stored-answer bound, which is then refused (idempotency_answer_too_large). A failed commit
 * answers 503, and a retry with the key then gets the stored answer if the commit went through after all, or runs
 * the write if it did not. A write that found the key held by a request (of another instance) that committed
 * meanwhile answers with that one's answer. Returns the payload to send.
 */
async function settleKeyedWrite(
  ctx: RequestContext,
  reply: FastifyReply,
  scope: IdempotencyScope,
  payload: unknown,
  graphql: boolean,
): Promise<unknown> {
  const open = scope.open;
  scope.open = undefined;
  if (open) {
    const body =
      typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : null;
    if (reply.statusCode >= 500 || body === null || scope.discard || isClosed(reply.raw)) {
      await open.rollback();
      return payload;
    }
    if (Buffer.byteLength(body) > IDEMPOTENCY_LIMITS.maxAnswerBytes) {
      await open.rollback();
      const refusal = refuse(
        'idempotency_answer_too_large',
        `Under an Idempotency-Key an answer is stored, and it may hold at most ${IDEMPOTENCY_LIMITS.maxAnswerBytes.toLocaleString('en-US')} bytes; this one would hold ${Buffer.byteLength(body).toLocaleString('en-US')}. Nothing was written: ask for less, or send the request without a key.`,
      );
      reply.removeHeader(BOOKMARK_HEADER);
      return JSON.stringify(refusalAnswer(reply, refusal, { graphql }));
    }
    try {
      const contentType = String(reply.getHeader('content-type') ?? 'application/json; charset=utf-8');
      const stored = { status: reply.statusCode, body, contentType };
      ctx.stats.written = await open.commit(stored);
      ctx.keyed.end?.(stored);
      return payload;
    } catch {
      return JSON.stringify(refusalAnswer(reply, refuse.storageUnavailable(), { graphql }));
    }
  }
  if (!scope.taken) return payload;
  scope.taken = false;
  const record = await storedRecordOf(ctx.db, scope).catch(() => null);
  // Gone again (expired at that very moment): the refusal (503 storage_busy) stands, and a retry runs the write.
  if (!record) return payload;
  try {
    const answer = replayed(reply, answerFor(scope.fingerprint, record));
    clearRefusal(reply);
    reply.removeHeader('retry-after');
    return answer;
  } catch (e) {
    return JSON.stringify(refusalAnswer(reply, e as AppError, { graphql }));
  }
}
