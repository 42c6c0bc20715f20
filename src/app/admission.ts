// A request's admission (fairness/admission.ts; its README tells the whole), in steps. Before anything of it is read,
// its turn, shared fairly between tenants (requests without a token count as one tenant; liveness and readiness never
// wait). A tenant not set up yet in this process is first set up in a turn among all such tenants, as one. Then its
// memory, drawn from the process's request memory as it is used, never as it is declared: its body as the bytes
// arrive (body/read.ts), and, once its body is in, a heavy door's stated memory (its budget; a door whose memory grows
// with its body states it per byte of the body read). So a client that sends slowly holds only what it sent, and a
// body refused or abandoned gives its memory back at once. The turn and the memory are given back when the answer has
// gone (or the connection went first). A route that states no budget is admitted as the heaviest door there is, and
// said so in the log once: no door goes without a bound.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { type BodyMemory, bodyBytesRead } from '../body/read.js';
import type { Services } from '../context.js';
import { AdmissionAbandoned, type AdmissionLease } from '../fairness/admission.js';
import { isClosed, whenClosed } from '../http/connection.js';
import { wantsGraphiQL } from '../http/pages.js';
import { BODY_LIMIT_BYTES, type DoorBudget, LIGHT_FROM_MEMORY_BYTES } from '../model/doors.js';
import { ROUTES } from '../rest/schemas.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** What one request through this route may cost at most (model/doors.ts). */
    budget?: DoorBudget;
  }
  interface FastifyRequest {
    /** The request's memory, drawn as it is used (undefined for the routes that take no turn). */
    memory?: AdmissionLease & { signal: AbortSignal };
  }
}

/** What a door states its request may hold: its memory, or for one whose memory grows with its body, its body's. */
function statedMemory(req: FastifyRequest, budget: DoorBudget): number {
  if (budget.memoryPerBodyByte === undefined) return budget.memoryBytes;
  const length = bodyBytesRead(req.raw) || (budget.bodyBytes ?? BODY_LIMIT_BYTES);
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
 * The reason a wait is given up with when its connection closes (every request's closes, in the end): one value,
 * not the DOMException with a stack trace `abort()` makes by default for each.
 */
const GONE = 'the connection closed';

/** Routes that never wait for a turn: liveness and readiness answer whatever the load (a probe must not time out). */
const UNQUEUED = new Set(['/healthz', '/readyz']);

/** The turns of the tenants not set up yet in this process, shared as one tenant's. */
const NEW_TENANTS = 'new-tenants';

/** Who a request is for admission: its tenant, or the public (requests without a token). */
const tenantOf = (req: FastifyRequest) => (req.ctx ? `t:${req.ctx.viewer.tenant}` : 'public');

/** The budget a route states, or undefined when it states none. */
export const budgetOf = (req: FastifyRequest): DoorBudget | undefined => req.routeOptions.config?.budget;

/** A request's memory as its body reader draws it (body/read.ts); none for a request that took no turn. */
export const bodyMemoryOf = (req: FastifyRequest): BodyMemory | undefined => {
  const memory = req.memory;
  return memory && { grow: (bytes) => memory.grow(bytes, memory.signal), release: () => memory.release() };
};

export const admissionHooks = fp(
  async (app: FastifyInstance, { services }: { services: Services }) => {
    const { admission, logger } = services;
    const unbudgeted = new Set<string>();
    admission.start();
    app.addHook('onClose', async () => admission.stop());
    app.addHook('onRequest', async (req, reply) => {
      const route = req.routeOptions.url;
      if (route === undefined || UNQUEUED.has(route)) return;
      const tenant = tenantOf(req);
      // A client that goes away while its request waits gives its place up; one that goes away as the turn is
      // granted (the grant reaches the request a turn of the event loop later) gives the turn back at once. Either
      // way the request stops here: nobody is left to answer, and its turn must not stay taken.
      const away = new AbortController();
      whenClosed(reply.raw, () => away.abort(GONE));
      // A tenant's writes are held to TENANT_CONCURRENCY whoever waits: they meet on its model's locks, and more of
      // them at once only retry more; its reads may use every turn when no other tenant waits.
      const write = req.method !== 'GET' && req.method !== 'HEAD' && route !== '/graphql';
      const turn = (who: string) =>
        admission.acquire(who, 0, away.signal, write).catch((err: unknown) => {
          if (!(err instanceof AdmissionAbandoned)) throw err;
          return undefined;
        });
      // The tenant's system types, set up once per process (metrics read no tenant's data, and must be readable
      // while the database is away). A tenant not set up yet is set up in a turn among all such tenants, taken as
      // one tenant's: a flood of new tenants (each its own tenant, each a set-up of writes) holds one tenant's
      // share of the turns, not all of them; then the request takes a turn of its own.
      const viewer = req.ctx?.viewer.tenant;
      if (viewer !== undefined && route !== ROUTES.metrics.path && !services.tenants.known(viewer)) {
        const setUp = await turn(NEW_TENANTS);
        if (!setUp) return reply.hijack();
        try {
          await services.tenants.ensure(viewer);
        } finally {
          setUp();
        }
      }
      const release = await turn(tenant);
      if (!release) return reply.hijack();
      const memory = Object.assign(admission.lease(tenant), { signal: away.signal });
      req.memory = memory;
      whenClosed(reply.raw, () => {
        // What crossed the one thread both ways: the body read and parsed (the bytes read, not what it declared), the
        // answer serialised and written. Recorded before the turn is given back: the next request's spacing, decided
        // as the turn is given back, is this one's weight.
        const sent = Number(reply.getHeader('content-length') ?? 0) || 0;
        admission.answered(tenant, sent + bodyBytesRead(req.raw));
        memory.release();
        release();
      });
      if (isClosed(reply.raw)) return reply.hijack();
    });

    // A heavy door's memory, once its body is in: what it states, and at least its share of HEAVY_PER_TENANT (a
    // tenant runs at most that many at once, whatever they state).
    app.addHook('preValidation', async (req, reply) => {
      const memory = req.memory;
      const route = req.routeOptions.url;
      if (!memory || route === undefined) return;
      const budget = budgetOf(req);
      let target = 0;
      if (!budget) {
        if (!unbudgeted.has(route)) {
          unbudgeted.add(route);
          logger.error({ route }, 'a route states no budget: admitted as the heaviest door');
        }
        target = admission.maxPerTenant;
      } else if (
        budget.admission === 'heavy' &&
        // (The GraphiQL page is a fixed document, not an operation.)
        !(route === '/graphql' && wantsGraphiQL(req)) &&
        !heldSmall(services, req, budget)
      ) {
        // (a door stating memory per byte of its body counts its body in it; any other's is beside its body's)
        const body = budget.memoryPerBodyByte === undefined ? memory.bytes : 0;
        target = Math.max(
          body + statedMemory(req, budget),
          Math.ceil(admission.maxPerTenant / HEAVY_PER_TENANT),
        );
      }
      if (target <= memory.bytes) return;
      try {
        await memory.grow(target - memory.bytes, memory.signal);
      } catch (err) {
        if (!(err instanceof AdmissionAbandoned)) throw err;
        reply.hijack();
      }
    });
  },
  { name: 'admission' },
);
