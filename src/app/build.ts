// buildApp(deps): the composition root. Fastify with its options, then one plugin per concern in the order the
// request meets them (src/app/): tracing, CORS, the HTTP hooks, authentication, error handling, the operations
// routes, the REST routes, GraphQL. Never listens; the entry file does.

import { randomUUID } from 'node:crypto';
import cors from '@fastify/cors';
import rateLimit from '@fastify/rate-limit';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';
import type { RequestContext, Services } from '../context.js';
import { REQUEST_ID_HEADER, requestIdOf } from '../contract/request-id.js';
import { CHANGE_REASON_HEADER, IDEMPOTENCY_HEADER, REPLAYED_HEADER } from '../contract/write-headers.js';
import type { Readiness } from '../db/readiness.js';
import { storagePolicyOf } from '../db/storage-policy.js';
import { answerClientError } from '../http/client-errors.js';
import { MAX_PARAM_LENGTH } from '../http/methods.js';
import { parseQueryString } from '../http/query-string.js';
import type { DoorBudget } from '../model/doors.js';
import { BODY_LIMIT_BYTES } from '../model/doors.js';
import { adminRoutes } from '../rest/admin.js';
import { attributeRoutes } from '../rest/attributes.js';
import { changeRoutes } from '../rest/changes.js';
import { dashboardRoutes } from '../rest/dashboards.js';
import { entityRoutes } from '../rest/entities.js';
import { entityTypeRoutes } from '../rest/entity-types.js';
import { modelRoutes } from '../rest/model.js';
import { BOOKMARK_HEADER } from '../services/bookmarks.js';
import { TRACE_CONTEXT_HEADERS, traceRequests } from '../telemetry/tracing.js';
import { admissionHooks } from './admission.js';
import { authentication } from './auth.js';
import { errorHandling, frameworkErrors } from './errors.js';
import { graphqlRoute } from './graphql.js';
import { httpHooks } from './http-hooks.js';
import { operationsRoutes } from './operations.js';
import { type AppDeps, createServices } from './services.js';
import { writeHeaders } from './write-headers.js';

export type { AppDeps };

declare module 'fastify' {
  interface FastifyRequest {
    ctx: RequestContext;
  }
}

/** One access line per request, when it completes (Fastify's default writes two: incoming and completed). */
class AccessLog extends LogController {
  override incomingRequest() {}

  override requestCompleted(error: Error | null | undefined, req: FastifyRequest, reply: FastifyReply) {
    const entry = { req, res: { statusCode: reply.statusCode }, responseTime: Math.round(reply.elapsedTime) };
    if (error) reply.log.error({ ...entry, err: error }, 'request errored');
    else reply.log.info(entry, 'request completed');
  }
}

export interface RegisteredRoute {
  method: string;
  url: string;
  /** What one request may cost at most, as the route states it (undefined: it states none). */
  budget?: DoorBudget;
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config } = deps;
  const { services, verify, readiness, tracing } = createServices(deps);
  const { logger } = services;

  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT_BYTES,
    // The caller's x-request-id when well formed (bounded, checked), else a new one.
    genReqId: (req) => requestIdOf(req.headers[REQUEST_ID_HEADER], randomUUID),
    logController: new AccessLog(),
    // While closing (SIGTERM behind a load balancer), requests already on open keep-alive connections are still
    // served, each answered with `Connection: close` (onSend in app/http-hooks.ts), instead of Fastify's own
    // non-envelope 503.
    return503OnClosing: false,
    // Names may be 256 characters (more once percent-encoded); refuse only absurd path segments.
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH, querystringParser: parseQueryString },
    // Time limits Node enforces before a route runs: headers (answered 408 by answerClientError), and the whole
    // request as a backstop behind the body deadlines (body/read.ts answers those first, in the envelope).
    http: { headersTimeout: config.HTTP_HEADERS_TIMEOUT_MS, connectionsCheckingInterval: 1_000 },
    requestTimeout: config.HTTP_HEADERS_TIMEOUT_MS + config.HTTP_BODY_TIMEOUT_MS + 5_000,
    clientErrorHandler: answerClientError,
    // X-Forwarded-For names the client only when a configured proxy sends it (the unverified requests' limit).
    trustProxy: config.TRUSTED_PROXIES ?? false,
    frameworkErrors,
  });

  app.server.maxConnections = config.HTTP_MAX_CONNECTIONS;
  // Traces (src/telemetry/tracing.ts): the request's span opens first, so it covers every other hook.
  if (tracing.tracer) traceRequests(app, tracing.tracer);
  app.addHook('onClose', async () => {
    await tracing.shutdown();
  });
  // Browsers may call the API from the configured origins only (none by default: then preflights get 405).
  if (config.CORS_ORIGINS && config.CORS_ORIGINS.length > 0) {
    await app.register(cors, {
      origin: config.CORS_ORIGINS,
      methods: ['GET', 'POST', 'PATCH', 'DELETE'],
      // Every request header the service honours, so that a browser client can send what a script can.
      allowedHeaders: [
        'authorization',
        'content-type',
        BOOKMARK_HEADER,
        IDEMPOTENCY_HEADER,
        CHANGE_REASON_HEADER,
        REQUEST_ID_HEADER,
        ...TRACE_CONTEXT_HEADERS,
      ],
      exposedHeaders: [REQUEST_ID_HEADER, 'x-db-queries', BOOKMARK_HEADER, REPLAYED_HEADER],
      maxAge: 600,
    });
  }
  app.decorate('services', services);
  app.decorate('readiness', readiness);
  // Every route as registered, so a test can hold the OpenAPI document against what the router really serves.
  const registeredRoutes: RegisteredRoute[] = [];
  app.decorate('registeredRoutes', registeredRoutes);
  app.addHook('onRoute', (r) => {
    const budget = r.config?.budget;
    for (const method of [r.method].flat()) {
      registeredRoutes.push({ method, url: r.url, ...(budget ? { budget } : {}) });
    }
  });
  app.decorateRequest('ctx', null as unknown as RequestContext);

  // Rate limits used where they apply (app/auth.ts), not on every route.
  await app.register(rateLimit, { global: false });
  await app.register(writeHeaders, { services });
  await app.register(httpHooks, { services });
  await app.register(authentication, { services, verify });
  await app.register(admissionHooks, { services });
  await app.register(errorHandling);

  const stopListening = storagePolicyOf(deps.driver).onUnavailable(() => readiness.lost());
  readiness.start();
  app.addHook('onClose', async () => {
    stopListening();
    await readiness.stop();
  });
  await app.register(operationsRoutes, { services, readiness });

  for (const routes of [
    entityTypeRoutes,
    changeRoutes,
    modelRoutes,
    attributeRoutes,
    entityRoutes,
    dashboardRoutes,
    adminRoutes,
  ]) {
    routes(app);
  }
  app.addHook('onClose', async () => {
    await services.purger.stop();
  });

  await app.register(graphqlRoute, { services, tracing });
  return app;
}

declare module 'fastify' {
  interface FastifyInstance {
    services: Services;
    /** Whether the database answers and the hot paths are warmed (db/readiness.ts): /readyz, and the executor. */
    readiness: Readiness;
    registeredRoutes: RegisteredRoute[];
  }
}
