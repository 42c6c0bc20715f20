// What every request goes through around its route: the body read under its limits, the wait of a write that changed
// a model for the read leases, the headers every answer carries, its door's budget, and the access metrics. (A
// write's headers, X-Change-Reason and Idempotency-Key, are app/write-headers.ts's.)
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { releaseBody } from '../body/bytes.js';
import { bodyLeftUnread, parseJsonBody, readBody } from '../body/read.js';
import { takeRefusedBody } from '../body/refused.js';
import type { RequestContext, Services } from '../context.js';
import { refuse } from '../errors.js';
import { whenClosed } from '../http/connection.js';
import { sentHeader } from '../http/single-headers.js';
import { refusalOf } from '../rest/envelope.js';
import { BOOKMARK_HEADER } from '../services/bookmarks.js';
import { bodyMemoryOf, budgetOf } from './admission.js';

export const httpHooks = fp(
  async (app: FastifyInstance, { services }: { services: Services }) => {
    const { config, metrics } = services;
    // Every body is read under the size and shape limits with bounded memory and time, then parsed as JSON (see
    // body/read.ts); a large body draws its memory from its request's admission as its bytes arrive.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', async (req: FastifyRequest, payload: Readable) => {
      if (Array.isArray(sentHeader(req.raw, 'content-type'))) {
        throw refuse('unsupported_media_type', 'Send one Content-Type header.');
      }
      const body = await readBody(req.raw, payload, {
        limit: budgetOf(req)?.bodyBytes,
        memory: bodyMemoryOf(req),
        timeoutMs: config.HTTP_BODY_TIMEOUT_MS,
        idleTimeoutMs: config.HTTP_BODY_IDLE_TIMEOUT_MS,
        graceMs: config.HTTP_BODY_GRACE_MS,
        minBytesPerSecond: config.HTTP_BODY_MIN_KIB_PER_SECOND * 1024,
      });
      try {
        return await parseJsonBody(body, { gone: () => req.raw.socket?.destroyed === true });
      } finally {
        releaseBody(body);
      }
    });

    const checkBudget = budgetCheck(services);

    /**
     * A write that changed its tenant's model is acknowledged only once every replica's read lease that could have
     * begun before its commit has run out (cache/version-reader.ts): then no replica answers a later read from memory
     * older than the write.
     */
    const leasesOut = async (ctx: RequestContext | null) => {
      const committedAt = ctx?.stats.modelCommittedAt;
      if (!ctx || committedAt === undefined) return;
      const versions = services.model.versions;
      versions.forget(ctx.viewer.tenant);
      const left = committedAt + versions.writeWaitMs - performance.now();
      if (left > 0) await sleep(left);
    };

    // While closing, answers end their connection, so a drained keep-alive socket does not hold the close open.
    let closing = false;
    app.addHook('preClose', async () => {
      closing = true;
    });

    app.addHook('onSend', async (req, reply, payload) => {
      // The rest of a body refused unread is discarded at a bounded pace, then the connection is closed if it goes
      // on: taken before the answer is sent, after which Node would discard it at full speed (body/refused.ts).
      takeRefusedBody(req.raw);
      const sent = payload;
      await leasesOut(req.ctx);
      checkBudget(req, reply, sent);
      takeAnswerWithin(req, reply, sent, config.HTTP_ANSWER_TIMEOUT_MS, config.HTTP_ANSWER_MS_PER_MIB);
      // API answers are per tenant and per moment: never stored by a cache (pages and assets set their own policy).
      if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
      reply.header('x-content-type-options', 'nosniff');
      // Database queries this request sent: the benchmark's round-trips-per-request figure.
      if (req.ctx) {
        // A shared statement counts as this request's share of it (three decimals).
        reply.header('x-db-queries', String(Math.round(req.ctx.stats.queries * 1000) / 1000));
        // A write's commit, as a bookmark the client may send back to any instance (see services/bookmarks.ts).
        const written = req.ctx.stats.written;
        if (written && written.length > 0) {
          reply.header(BOOKMARK_HEADER, services.bookmarks.encode(req.ctx.viewer.tenant, written));
        }
      }
      if (closing) reply.header('connection', 'close');
      // Fastify closes the connection after any body-parser refusal; for a body refused unread that would reset the
      // socket with the client still sending, often before it reads the 413. Its rest is drained instead (body/read.ts).
      else if (bodyLeftUnread(req.raw)) reply.removeHeader('connection');
      return sent;
    });

    app.addHook('onResponse', (req, reply, done) => {
      metrics.observeRequest({
        method: req.method,
        route: req.routeOptions.url ?? 'unmatched',
        status: reply.statusCode,
        reason: refusalOf(reply) ?? '',
        seconds: reply.elapsedTime / 1000,
        queries: req.ctx?.stats.queries ?? 0,
      });
      done();
    });
  },
  { name: 'http-hooks' },
);

/**
 * What a request cost, held to its door's budget (model/doors.ts): a request past it is counted and logged (once
 * per route and bound) as the bug it is, a bound that should have held it did not. It is still answered.
 */
function budgetCheck(services: Services) {
  const reported = new Set<string>();
  return (req: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const budget = budgetOf(req);
    const route = req.routeOptions.url;
    if (!budget || route === undefined) return;
    // (an answer sent as its slices states its length)
    const bytes =
      typeof payload === 'string'
        ? Buffer.byteLength(payload)
        : Buffer.isBuffer(payload)
          ? payload.length
          : Number(reply.getHeader('content-length')) || 0;
    const statements = req.ctx?.stats.queries ?? 0;
    // A transaction run again after a transient error sends its statements again.
    const allowed = budget.statements * (1 + (req.ctx?.stats.retries ?? 0));
    for (const [bound, over] of [
      ['statements', statements > allowed],
      ['answer_bytes', bytes > budget.answerBytes],
    ] as const) {
      if (!over) continue;
      services.metrics.observeOverBudget({ route, bound });
      if (reported.has(`${route} ${bound}`)) continue;
      reported.add(`${route} ${bound}`);
      services.logger.error(
        {
          route,
          bound,
          statements,
          bytes,
          budget: { statements: budget.statements, answerBytes: budget.answerBytes },
        },
        "a request passed its door's budget",
      );
    }
  };
}

/** Answers up to this size fit in a socket's buffers: written at once, whoever reads them, and never timed. */
const TIMED_ANSWER_BYTES = 64 * 1024;

/**
 * Resets the connection of an answer its client has not taken within `baseMs` plus `msPerMib` a MiB of it. Node
 * bounds the time to receive a request, not to send its answer: a client reading a large plan a few bytes at a time
 * would keep the plan's reservation (a large part of the room all tenants share) for as long as it kept reading,
 * and other tenants' plans would wait for room until refused.
 */
function takeAnswerWithin(
  req: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  baseMs: number,
  msPerMib: number,
) {
  const bytes =
    typeof payload === 'string'
      ? Buffer.byteLength(payload)
      : Buffer.isBuffer(payload)
        ? payload.length
        : Number(reply.getHeader('content-length') ?? Number.NaN);
  // (a stream of unstated length: the same bound as the largest answer a route may send, 8 MiB at the least)
  const size = Number.isFinite(bytes) ? bytes : 8 * 1024 * 1024;
  if (size <= TIMED_ANSWER_BYTES) return;
  const res = reply.raw;
  const timer = setTimeout(
    () => {
      if (res.writableFinished) return;
      req.log.info({ bytes: size }, 'answer not taken in time: connection reset');
      // A reset, not a close: what the kernel still holds of the answer is dropped, not kept for a client that does
      // not read (a close would send it, then the end, at the client's pace).
      const socket = res.socket ?? req.raw.socket;
      if (socket && typeof socket.resetAndDestroy === 'function') socket.resetAndDestroy();
      else socket?.destroy();
    },
    baseMs + Math.ceil((size / (1024 * 1024)) * msPerMib),
  );
  timer.unref();
  res.once('finish', () => clearTimeout(timer));
  whenClosed(res, () => clearTimeout(timer));
}
