// Before a route reads its body: a request takes its admission turn (admission.ts), shared fairly between tenants:
// its tenant runs at most TENANT_CONCURRENCY requests at once (requests without a token count as one tenant, but
// liveness and readiness, which must answer whatever happens), and a request that may hold much memory reserves it
// from the process's request memory. What it reserves: a heavy door's stated memory (its budget), and for a body past
// LARGE_BODY_BYTES (or of unknown length) three times its length (the bytes, the parsed value, a copy), whatever the
// door. The turn is given back when the answer has gone (or the connection went first). A route that states no
// budget is admitted as the heaviest door there is, and said so in the log once: no door goes without a bound.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { AdmissionAbandoned } from '../admission.js';
import { bodyBytesRead, LARGE_BODY_BYTES } from '../body.js';
import type { Services } from '../context.js';
import { isClosed, whenClosed } from '../http/connection.js';
import { wantsGraphiQL } from '../http/pages.js';
import { BODY_LIMIT_BYTES, type DoorBudget, LIGHT_FROM_MEMORY_BYTES } from '../model/doors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** What one request through this route may cost at most (model/doors.ts). */
    budget?: DoorBudget;
  }
}

/**
 * What a request's body may hold in memory while it is read, parsed and handled: nothing for a small one (under
 * LARGE_BODY_BYTES, which the body reader takes in turns of its own) or one declared past its door's limit (refused
 * before a byte is read), else three times its declared length, or its limit's when it declares none.
 */
function bodyMemory(req: FastifyRequest, limit = BODY_LIMIT_BYTES): number {
  if (req.headers['content-length'] === undefined)
    return req.headers['transfer-encoding'] === undefined ? 0 : 3 * limit;
  const length = declaredLength(req);
  if (length === undefined || length <= LARGE_BODY_BYTES || length > limit) return 0;
  return 3 * length;
}

/** The body's length as its Content-Length declares it; undefined when it declares none it can be read by. */
function declaredLength(req: FastifyRequest): number | undefined {
  const length = Number(req.headers['content-length'] ?? Number.NaN);
  return Number.isFinite(length) && length >= 0 ? length : undefined;
}

/** What a door states its request may hold: its memory, or for one whose memory grows with its body, its body's. */
function statedMemory(req: FastifyRequest, budget: DoorBudget): number {
  if (budget.memoryPerBodyByte === undefined) return budget.memoryBytes;
  const length = declaredLength(req) ?? budget.bodyBytes ?? BODY_LIMIT_BYTES;
  return Math.min(budget.memoryBytes, Math.ceil(budget.memoryPerBodyByte * length));
}

/**
 * Heavy requests one tenant runs at once at most: each may hold megabytes and keep the event loop and the database
 * busy for milliseconds at a time, so one tenant's flood of them is held to two while others are served.
 */
export const HEAVY_PER_TENANT = 2;

/**
 * Whether a heavy door's answer is held in the model cache, small (`fromMemory`, LIGHT_FROM_MEMORY_BYTES): a listing
 * of a few definitions read again and again is then admitted as a light request, not two at a time.
 */
function heldSmall(services: Services, req: FastifyRequest, budget: DoorBudget): boolean {
  const from = budget.fromMemory;
  if (!from || !req.ctx) return false;
  const id = (req.params as Record<string, unknown> | undefined)?.[from.param];
  if (typeof id !== 'string') return false;
  const bytes = services.model.cache.bytesOf(req.ctx.viewer.tenant, from.kind, id);
  return bytes !== undefined && bytes <= LIGHT_FROM_MEMORY_BYTES;
}

/**
 * The reason a request's wait is given up with when its connection closes (every request's closes, in the end): one
 * value, not the DOMException with a stack trace `abort()` makes by default for each.
 */
const GONE = 'the connection closed';

/** Routes that never wait for a turn: liveness and readiness answer whatever the load (a probe must not time out). */
const UNQUEUED = new Set(['/healthz', '/readyz']);

/** The budget a route states, or undefined when it states none. */
export const budgetOf = (req: FastifyRequest): DoorBudget | undefined => req.routeOptions.config?.budget;

export const admissionHooks = fp(
  async (app: FastifyInstance, { services }: { services: Services }) => {
    const { admission, logger } = services;
    const unbudgeted = new Set<string>();
    admission.start();
    app.addHook('onClose', async () => admission.stop());
    app.addHook('onRequest', async (req, reply) => {
      const route = req.routeOptions.url;
      if (route === undefined || UNQUEUED.has(route)) return;
      const budget = budgetOf(req);
      let bytes = bodyMemory(req, budget?.bodyBytes);
      if (!budget) {
        if (!unbudgeted.has(route)) {
          unbudgeted.add(route);
          logger.error({ route }, 'a route states no budget: admitted as the heaviest door');
        }
        bytes = admission.maxPerTenant;
      } else if (
        budget.admission === 'heavy' &&
        !(route === '/graphql' && wantsGraphiQL(req)) &&
        !heldSmall(services, req, budget)
      ) {
        // (The GraphiQL page is a fixed document, not an operation.) A heavy request reserves at least its share of
        // HEAVY_PER_TENANT: a tenant runs at most that many at once, whatever they state.
        bytes += Math.max(statedMemory(req, budget), Math.ceil(admission.maxPerTenant / HEAVY_PER_TENANT));
      }
      const tenant = req.ctx ? `t:${req.ctx.viewer.tenant}` : 'public';
      // A client that goes away while its request waits gives its place up; one that goes away as the turn is
      // granted (the grant reaches the request a turn of the event loop later) gives the turn back at once. Either
      // way the request stops here: nobody is left to answer, and its turn must not stay taken.
      const away = new AbortController();
      whenClosed(reply.raw, () => away.abort(GONE));
      let release: () => void;
      try {
        release = await admission.acquire(tenant, bytes, away.signal);
      } catch (err) {
        if (!(err instanceof AdmissionAbandoned)) throw err;
        reply.hijack();
        return;
      }
      if (isClosed(reply.raw)) {
        release();
        reply.hijack();
        return;
      }
      whenClosed(reply.raw, () => {
        // What crossed the one thread both ways: the body read and parsed (the bytes read, not what it declared), the
        // answer serialised and written. Recorded before the turn is given back: the next request's spacing, decided
        // as the turn is given back, is this one's weight.
        const sent = Number(reply.getHeader('content-length') ?? 0) || 0;
        admission.answered(tenant, sent + bodyBytesRead(req.raw));
        release();
      });
    });
  },
  { name: 'admission' },
);
