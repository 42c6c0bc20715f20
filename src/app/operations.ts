// The operations routes: liveness, readiness (after the warm-up, again after each outage), Prometheus metrics, the
// OpenAPI document and the documentation pages.
import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Services } from '../context.js';
import type { Readiness } from '../db/readiness.js';
import { registerPages } from '../http/pages.js';
import { assertOperator } from '../resolvers/admin.js';
import { failBody } from '../rest/envelope.js';
import { buildOpenApiDocument } from '../rest/openapi.js';
import { route } from '../rest/route.js';
import { ROUTES } from '../rest/schemas.js';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };
let openApiDocument: Record<string, unknown> | undefined;
/** The OpenAPI document, built once per process from the REST contract (rest/schemas.ts). */
export const openApi = () => {
  openApiDocument ??= buildOpenApiDocument(version);
  return openApiDocument;
};

export const operationsRoutes = fp(
  async (app: FastifyInstance, { services, readiness }: { services: Services; readiness: Readiness }) => {
    const { metrics } = services;
    route(app, ROUTES.healthz, async () => ({ STATUS: 'SUCCESS', MESSAGE: '', DATA: { status: 'ok' } }));
    // Prometheus metrics: operators' tokens, or METRICS_TOKEN when set.
    route(app, ROUTES.metrics, async (req, reply) => {
      if (req.ctx) assertOperator(req.ctx);
      reply.type(metrics.registry.contentType);
      return metrics.registry.metrics();
    });

    route(app, ROUTES.readyz, async (_req, reply) => {
      if (await readiness.check()) {
        return reply.send({ STATUS: 'SUCCESS', MESSAGE: '', DATA: { status: 'ready' } });
      }
      return reply.code(503).send(failBody(readiness.refusal()));
    });

    // Serialised once: a public document sent as it is (an anonymous flood costs socket writes, not serialising).
    let openApiBytes: Buffer | undefined;
    route(app, ROUTES.openapi, async (_req, reply) => {
      openApiBytes ??= Buffer.from(JSON.stringify(openApi()));
      return reply.type('application/json; charset=utf-8').send(openApiBytes);
    });
    await registerPages(app);
  },
  { name: 'operations-routes' },
);
