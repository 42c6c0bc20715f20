// Before a route reads its body: a request takes its admission turn (admission.ts) when it may hold much memory,
// reserving it from the process's request memory, shared fairly between tenants, and giving it back when the answer
// has gone (or the connection went first). What it reserves: a heavy door's stated memory (its budget), and for a
// body past LARGE_BODY_BYTES (or of unknown length) three times its length (the bytes, the parsed value, a copy),
// whatever the door. A small request to a light door takes no turn. A route that states no budget is admitted as
// the heaviest door there is, and said so in the log once: no door goes without a bound.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { BODY_LIMIT_BYTES, LARGE_BODY_BYTES } from '../body.js';
import type { Services } from '../context.js';
import { wantsGraphiQL } from '../http/pages.js';
import type { DoorBudget } from '../model/doors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** What one request through this route may cost at most (model/doors.ts). */
    budget?: DoorBudget;
  }
}

/**
 * What a request's body may hold in memory while it is read, parsed and handled: nothing for a small one (under
 * LARGE_BODY_BYTES, which the body reader takes in turns of its own), else three times its declared length, or its
 * limit's when it declares none.
 */
function bodyMemory(req: FastifyRequest): number {
  const declared = req.headers['content-length'];
  if (declared === undefined)
    return req.headers['transfer-encoding'] === undefined ? 0 : 3 * BODY_LIMIT_BYTES;
  const length = Number(declared);
  if (!Number.isFinite(length) || length <= LARGE_BODY_BYTES) return 0;
  return 3 * Math.min(length, BODY_LIMIT_BYTES);
}

/** The budget a route states, or undefined when it states none. */
export const budgetOf = (req: FastifyRequest): DoorBudget | undefined => req.routeOptions.config?.budget;

export const admissionHooks = fp(
  async (app: FastifyInstance, { services }: { services: Services }) => {
    const { admission, logger } = services;
    const unbudgeted = new Set<string>();
    app.addHook('onRequest', async (req, reply) => {
      const route = req.routeOptions.url;
      if (route === undefined) return;
      let bytes = bodyMemory(req);
      const budget = budgetOf(req);
      if (!budget) {
        if (!unbudgeted.has(route)) {
          unbudgeted.add(route);
          logger.error({ route }, 'a route states no budget: admitted as the heaviest door');
        }
        bytes = admission.maxPerTenant;
      } else if (budget.admission === 'heavy' && !(route === '/graphql' && wantsGraphiQL(req))) {
        // (The GraphiQL page is a fixed document, not an operation.)
        bytes += budget.memoryBytes;
      }
      if (bytes === 0) return;
      const release = await admission.acquire(req.ctx?.viewer.tenant ?? '', bytes);
      reply.raw.once('close', release);
    });
  },
  { name: 'admission' },
);
