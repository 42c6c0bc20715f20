// buildApp(deps): Fastify with the REST router and Yoga at /graphql. Never listens; the entry file does.
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Readable } from 'node:stream';
import { useGraphQlJit } from '@envelop/graphql-jit';
import cors from '@fastify/cors';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';
import { getOperationAST } from 'graphql';
import { createGraphQLError, createYoga, type Plugin } from 'graphql-yoga';
import type { Driver } from 'neo4j-driver';
import type { Logger } from 'pino';
import { createTokenVerifier } from './auth/tokens.js';
import {
  BODY_LIMIT_BYTES,
  bodyLeftUnread,
  LARGE_BODY_SLOTS,
  lingerAfterRefusal,
  parseJsonBody,
  readBody,
  tooLarge,
} from './body.js';
import { EngineCache } from './cache/engine-cache.js';
import { ModelCache } from './cache/model-cache.js';
import { ModelReads } from './cache/model-reads.js';
import { VersionReader } from './cache/version-reader.js';
import { type Config, cursorKeyOf } from './config.js';
import { createContext, type RequestContext, type Services } from './context.js';
import { createExecutor } from './db/executor.js';
import { type IdempotencyScope, readIdempotencyRecord } from './db/idempotency.js';
import { ProbeTimeout, Readiness } from './db/readiness.js';
import { storagePolicyOf } from './db/storage-policy.js';
import { type AppError, isAppError, refusalExtensions, refuse } from './errors.js';
import { answerClientError } from './http/client-errors.js';
import {
  fingerprintOf,
  IDEMPOTENCY_HEADER,
  parseIdempotencyKey,
  replayed,
  storedAnswer,
  takesIdempotencyKey,
} from './http/idempotency.js';
import { type RouteMethods, routeMethods } from './http/methods.js';
import { ASSETS_PREFIX, DOCS_PATHS, registerPages, sendGraphiQL, wantsGraphiQL } from './http/pages.js';
import { createPurger } from './jobs/purge.js';
import { warmUp } from './jobs/warmup.js';
import { createLogger, LogRing } from './logging.js';
import { createMetrics } from './metrics.js';
import { buildOpenApiDocument } from './openapi.js';
import { assertOperator } from './resolvers/admin.js';
import { adminRoutes } from './rest/admin.js';
import { attributeRoutes } from './rest/attributes.js';
import { changeRoutes } from './rest/changes.js';
import { entityRoutes } from './rest/entities.js';
import { entityTypeRoutes } from './rest/entity-types.js';
import { clearRefusal, fail, failBody, refusalAnswer, refusalOf } from './rest/envelope.js';
import { modelRoutes } from './rest/model.js';
import { platformRoutes } from './rest/platform.js';
import { inputOf, route } from './rest/route.js';
import { ROUTES } from './rest/schemas.js';
import { armorPlugin, knownOperationTypesPlugin } from './schema/armor.js';
import { answerKey, type CachedAnswer, GraphQLAnswers } from './schema/graphql-answers.js';
import { operationGuardPlugin } from './schema/guard.js';
import { schema } from './schema/index.js';
import { BOOKMARK_HEADER, createBookmarkCodec } from './services/bookmarks.js';
import { createCursorCodec } from './services/cursor.js';
import { createTenantDirectory } from './services/tenants.js';
import { Slots } from './slots.js';
import { createTracing, graphqlTracingPlugin, type Tracing, traceOf, traceRequests } from './tracing.js';

/** The id of the request being served, for code that has no request at hand (GraphQL error masking). */
const requestScope = new AsyncLocalStorage<{ requestId: string }>();

declare module 'fastify' {
  interface FastifyRequest {
    ctx: RequestContext;
  }
}

export interface AppDeps {
  config: Config;
  driver: Driver;
  /** Signing secret for bearer tokens when the config has none (development). */
  jwtSecret?: string | undefined;
  logger?: Logger;
  /** Where the logger keeps recent entries for GET /admin/logs (made here when the logger is). */
  logRing?: LogRing;
  /** Identifies this process in leases (defaults to a random id). */
  instanceId?: string;
  /** Where spans go (tests pass an in-memory exporter's); else made from the config, off without an endpoint. */
  tracing?: Tracing;
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

/** Whether a presented credential equals the expected one, in time independent of where they differ. */
function sameSecret(presented: string | undefined, expected: string) {
  const a = Buffer.from(presented ?? '');
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Routes served without a token: they carry no tenant data. */
const PUBLIC_ROUTES = new Set<string>([
  '/healthz',
  '/readyz',
  '/openapi.json',
  '/schemas/metamodel.json',
  ...DOCS_PATHS,
  `${ASSETS_PREFIX}/:name`,
]);
/** Longest path segment the router matches (names may be 256 characters, more once percent-encoded). */
const MAX_PARAM_LENGTH = 4096;

const { version } = createRequire(import.meta.url)('../package.json') as { version: string };
let openApiDocument: Record<string, unknown> | undefined;
/** The OpenAPI document, built once per process from the REST contract (rest/schemas.ts). */
export const openApi = () => {
  openApiDocument ??= buildOpenApiDocument(version);
  return openApiDocument;
};

export interface RegisteredRoute {
  method: string;
  url: string;
}

/** Whether an Accept header admits a JSON answer (absent, or listing a JSON type or a wildcard with q > 0). */
export function acceptsGraphQLAnswer(accept: string | undefined): boolean {
  if (accept === undefined || accept.trim() === '') return true;
  return accept.split(',').some((range) => {
    const [type, ...params] = range.split(';').map((part) => part.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    if (q !== undefined && !(Number(q.slice(2)) > 0)) return false;
    return ['*/*', 'application/*', 'application/json', 'application/graphql-response+json'].includes(
      type ?? '',
    );
  });
}

/** Maps framework errors (body parsing, limits) to refusals; anything else is unexpected. */
function toAppError(error: FastifyError): AppError | null {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return tooLarge();
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return refuse('unsupported_media_type', 'Send the body as application/json.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return refuse('invalid_json', 'The body is empty; send a JSON object.');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return refuse('invalid_body', 'The body length does not match Content-Length.');
    default:
      if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
        return refuse('invalid_body', 'The request could not be read.');
      }
      return null;
  }
}

/**
 * Refusals become GraphQL errors carrying the spec's reason in extensions.reason; GraphQL's own errors (syntax,
 * validation) pass through; anything else is logged and masked. Checked by shape, not by class identity, so a
 * second copy of graphql in the process cannot break it.
 */
export function maskGraphQLError(logger: Logger) {
  return (error: unknown, message: string): Error => {
    const wrapped = error as { originalError?: unknown; name?: string; path?: readonly (string | number)[] };
    const isGraphQLError = error instanceof Error && error.name === 'GraphQLError';
    const original = isGraphQLError ? wrapped.originalError : error;
    if (isGraphQLError && (original === undefined || (original as Error | null)?.name === 'GraphQLError')) {
      return error as Error;
    }
    if (isAppError(original)) {
      return createGraphQLError(original.message, {
        ...(wrapped.path ? { path: wrapped.path } : {}),
        extensions: {
          ...refusalExtensions(original.reason, original.status),
          // The database away or busy: the answer is a 503 with Retry-After, as over REST (Yoga sends `http` as
          // the response's status and headers, not in the body).
          ...(original.retryAfterSeconds !== undefined
            ? { http: { status: 503, headers: { 'retry-after': String(original.retryAfterSeconds) } } }
            : {}),
        },
      });
    }
    const requestId = requestScope.getStore()?.requestId;
    logger.error({ err: original, requestId }, 'unexpected GraphQL error');
    return createGraphQLError(requestId ? `${message.replace(/\.$/, '')} (request ${requestId}).` : message, {
      ...(wrapped.path ? { path: wrapped.path } : {}),
      extensions: {
        ...refusalExtensions('internal_error', 500),
        ...(requestId ? { requestId } : {}),
      },
    });
  };
}

/**
 * An Idempotency-Key stands for one write and its answer: a keyed mutation operation selects one field, or it is
 * refused before it runs (idempotency_key_not_supported), so that no part of it is written under a key.
 */
function oneKeyedWritePlugin(): Plugin<RequestContext> {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const ctx = args.contextValue as RequestContext;
      if (!ctx.keyed?.scope) return;
      const operation = getOperationAST(args.document, args.operationName);
      if (operation?.operation !== 'mutation' || operation.selectionSet.selections.length === 1) return;
      setResultAndStopExecution({
        errors: [
          createGraphQLError('An Idempotency-Key covers one write; send one mutation field per request.', {
            extensions: refusalExtensions('idempotency_key_not_supported', 400),
          }),
        ],
      });
    },
  };
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config } = deps;
  const logRing = deps.logRing ?? new LogRing();
  const logger = deps.logger ?? createLogger({ level: config.LOG_LEVEL, ring: logRing });
  const jwtSecret = config.AUTH_JWT_SECRET ?? deps.jwtSecret;
  // Transactions start once readiness admits them (see /readyz below).
  const db = createExecutor(deps.driver, config.NEO4J_DATABASE, undefined, undefined, undefined, () =>
    readiness.admit(),
  );
  const cursorKey = cursorKeyOf(config, jwtSecret);
  const cacheBytes = config.MODEL_CACHE_MAX_MB * 1024 * 1024;
  const engineCache = new EngineCache(10_000, Math.floor(cacheBytes / 3));
  const model = new ModelReads(new ModelCache(cacheBytes - engineCache.maxBytes), new VersionReader(db));
  const metrics = createMetrics({ engineCache, model });
  const services: Services = {
    config,
    db,
    logger,
    cursors: createCursorCodec(cursorKey),
    bookmarks: createBookmarkCodec(cursorKey),
    tenants: createTenantDirectory(db),
    engineCache,
    model,
    logRing,
    metrics,
    purger: createPurger({
      db,
      logger,
      instanceId: deps.instanceId ?? randomUUID(),
      graceSeconds: config.PURGE_GRACE_SECONDS,
      batchSize: config.PURGE_BATCH_SIZE,
      onProgress: (p) => metrics.observePurge(p),
    }),
  };
  const verify = createTokenVerifier({
    jwtSecret,
    jwksUrl: config.AUTH_JWKS_URL,
    issuer: config.AUTH_ISSUER,
    audience: config.AUTH_AUDIENCE,
  });

  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT_BYTES,
    genReqId: () => randomUUID(),
    logController: new AccessLog(),
    // While closing (SIGTERM behind a load balancer), requests already on open keep-alive connections are still
    // served, each answered with `Connection: close` (onSend below), instead of Fastify's own non-envelope 503.
    return503OnClosing: false,
    // Names may be 256 characters (more once percent-encoded); refuse only absurd path segments.
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // Time limits Node enforces before a route runs: headers (answered 408 by answerClientError), and the whole
    // request as a backstop behind the body deadlines (body.ts answers those first, in the envelope).
    http: { headersTimeout: config.HTTP_HEADERS_TIMEOUT_MS, connectionsCheckingInterval: 1_000 },
    requestTimeout: config.HTTP_HEADERS_TIMEOUT_MS + config.HTTP_BODY_TIMEOUT_MS + 5_000,
    clientErrorHandler: answerClientError,
    // Refusals the router makes before any handler (bad percent-encoding, over-long segment) get the envelope too.
    frameworkErrors: (error, _req, reply) => {
      return fail(
        reply,
        refuse(error.statusCode === 414 ? 'uri_too_long' : 'invalid_url', 'The request URL is malformed.'),
      );
    },
  });

  app.server.maxConnections = config.HTTP_MAX_CONNECTIONS;
  // Traces (src/tracing.ts): the request's span opens first, so it covers every other hook.
  const tracing = deps.tracing ?? createTracing(config.OTEL_EXPORTER_OTLP_ENDPOINT, config.OTEL_SERVICE_NAME);
  if (tracing.tracer) traceRequests(app, tracing.tracer);
  app.addHook('onClose', async () => {
    await tracing.shutdown();
  });
  // Browsers may call the API from the configured origins only (none by default: then preflights get 405).
  if (config.CORS_ORIGINS && config.CORS_ORIGINS.length > 0) {
    await app.register(cors, {
      origin: config.CORS_ORIGINS,
      methods: ['GET', 'POST', 'PATCH', 'DELETE'],
      allowedHeaders: ['authorization', 'content-type', 'neo4j-bookmark'],
      exposedHeaders: ['x-request-id', 'x-db-queries', 'neo4j-bookmark'],
      maxAge: 600,
    });
  }
  app.decorate('services', services);
  // Every route as registered, so a test can hold the OpenAPI document against what the router really serves.
  const registeredRoutes: RegisteredRoute[] = [];
  app.decorate('registeredRoutes', registeredRoutes);
  app.addHook('onRoute', (r) => {
    for (const method of [r.method].flat()) registeredRoutes.push({ method, url: r.url });
  });
  app.decorateRequest('ctx', null as unknown as RequestContext);

  // Every body is read under the size and shape limits with bounded memory and time, then parsed as JSON (see
  // body.ts); large bodies take turns in slots shared fairly between tenants.
  const largeBodySlots = new Slots(LARGE_BODY_SLOTS);
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', async (req: FastifyRequest, payload: Readable) =>
    parseJsonBody(
      await readBody(req.raw, payload, {
        slots: largeBodySlots,
        key: req.ctx?.viewer.tenant ?? '',
        timeoutMs: config.HTTP_BODY_TIMEOUT_MS,
        idleTimeoutMs: config.HTTP_BODY_IDLE_TIMEOUT_MS,
      }),
    ),
  );

  /**
   * The end of a request under an Idempotency-Key (http/idempotency.ts), REST and GraphQL alike: its write commits
   * here with its answer stored in it (an answer of 500 or more rolls it back; a failed commit answers 503, and a
   * retry with the key then gets the stored answer if the commit went through after all, or runs the write if it
   * did not). A write that found the key held by a request that committed meanwhile answers with that one's answer.
   * Returns the payload to send.
   */
  const settleKeyedWrite = async (
    ctx: RequestContext,
    reply: FastifyReply,
    scope: IdempotencyScope,
    payload: unknown,
    graphql: boolean,
  ): Promise<unknown> => {
    const open = scope.open;
    scope.open = undefined;
    if (open) {
      const body =
        typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : null;
      if (reply.statusCode >= 500 || body === null) {
        await open.rollback();
        return payload;
      }
      try {
        const contentType = String(reply.getHeader('content-type') ?? 'application/json; charset=utf-8');
        ctx.stats.written = await open.commit({ status: reply.statusCode, body, contentType });
        return payload;
      } catch {
        return JSON.stringify(refusalAnswer(reply, refuse.storageUnavailable(), { graphql }));
      }
    }
    if (!scope.taken) return payload;
    scope.taken = false;
    const record = await ctx.db
      .readOne((run) => readIdempotencyRecord(run, scope.tenant, scope.key))
      .catch(() => null);
    // Gone again (expired at that very moment): the refusal (503 storage_busy) stands, and a retry runs the write.
    if (!record) return payload;
    try {
      const answer = replayed(reply, storedAnswer(scope, record));
      clearRefusal(reply);
      reply.removeHeader('retry-after');
      return answer;
    } catch (e) {
      return JSON.stringify(refusalAnswer(reply, e as AppError, { graphql }));
    }
  };

  // While closing, answers end their connection, so a drained keep-alive socket does not hold the close open.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });

  app.addHook('onSend', async (req, reply, payload) => {
    const ctx = req.ctx;
    const scope = ctx?.keyed.scope;
    let sent = payload;
    if (ctx && scope)
      sent = await settleKeyedWrite(ctx, reply, scope, payload, req.routeOptions.url === '/graphql');
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
    // socket with the client still sending, often before it reads the 413. Its rest is drained instead (body.ts).
    else if (bodyLeftUnread(req.raw)) reply.removeHeader('connection');
    return sent;
  });

  // An Idempotency-Key on a write (http/idempotency.ts): a stored answer is sent again; otherwise the request's
  // write will claim the key. Operators' routes (/admin) take none.
  app.addHook('preHandler', async (req, reply) => {
    const ctx = req.ctx;
    if (!ctx || !takesIdempotencyKey(req.method, req.routeOptions.url ?? '/admin')) return;
    const key = parseIdempotencyKey(req.headers[IDEMPOTENCY_HEADER]);
    if (key === undefined) return;
    const tenant = ctx.viewer.tenant;
    const scope = { tenant, key, fingerprint: fingerprintOf(req.method, req.url, req.body) };
    // Read before the handler runs, not left to the write's claim: a request sent again may not reach a write
    // at all (a create-or-get finds the type its first send created and answers 200, not the stored 201).
    const record = await ctx.db.readOne((run) => readIdempotencyRecord(run, tenant, key));
    if (record) return reply.send(replayed(reply, storedAnswer(scope, record)));
    ctx.keyed.scope = scope;
  });

  app.addHook('onResponse', (req, reply, done) => {
    // A keyed write whose answer was never sent (the connection went first): not committed.
    const open = req.ctx?.keyed.scope?.open;
    if (open && req.ctx?.keyed.scope) {
      req.ctx.keyed.scope.open = undefined;
      void open.rollback();
    }
    // The rest of a body refused unread is discarded for a while, then the connection is closed (see body.ts).
    lingerAfterRefusal(req.raw);
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

  // Everything this request runs sees its id (callback style: the rest of the request runs inside the scope).
  app.addHook('onRequest', (req, _reply, done) => {
    requestScope.run({ requestId: req.id }, done);
  });

  // A path no route serves is answered here, before its body is read: 405 with Allow when the path is served with
  // other methods, 404 otherwise.
  let methods: RouteMethods | undefined;
  app.addHook('onRequest', async (req, reply) => {
    reply.header('x-request-id', req.id);
    const route = req.routeOptions.url;
    if (route === undefined) {
      methods ??= routeMethods(registeredRoutes, MAX_PARAM_LENGTH);
      const path = req.url.split('?')[0] as string;
      const allowed = methods.allowed(path);
      if (allowed.length > 0) {
        reply.header('allow', allowed.join(', '));
        throw refuse('method_not_allowed', `${req.method} is not served at this path.`);
      }
      throw refuse('not_found', `No route ${req.method} ${path}.`);
    }
    if (PUBLIC_ROUTES.has(route)) return;
    if (route === '/graphql' && wantsGraphiQL(req)) return;
    if (route === '/metrics' && services.config.METRICS_TOKEN !== undefined) {
      // A scrape credential of its own, so Prometheus needs no user token (compared in constant time).
      if (sameSecret(req.headers.authorization, `Bearer ${services.config.METRICS_TOKEN}`)) return;
    }
    const viewer = await verify(req.headers.authorization);
    const clientBookmarks = services.bookmarks.decode(viewer.tenant, req.headers[BOOKMARK_HEADER]);
    // Metrics read no tenant's data, and must be readable while the database is away.
    if (route !== ROUTES.metrics.path) await services.tenants.ensure(viewer.tenant);
    req.ctx = createContext(services, viewer, req.id, clientBookmarks);
    const requestTrace = traceOf(req.raw);
    if (requestTrace) req.ctx.stats.trace = requestTrace;
  });

  app.setErrorHandler((error: FastifyError, req, reply) => {
    const refusal = isAppError(error) ? error : toAppError(error);
    if (refusal) return fail(reply, refusal, { graphql: req.routeOptions.url === '/graphql' });
    req.log.error({ err: error, requestId: req.id }, 'unexpected error');
    return fail(reply, refuse('internal_error', `Unexpected error (request ${req.id}).`));
  });

  app.setNotFoundHandler((req, reply) =>
    fail(reply, refuse('not_found', `No route ${req.method} ${req.url.split('?')[0]}.`)),
  );

  route(app, ROUTES.healthz, async () => ({ STATUS: 'SUCCESS', MESSAGE: '', DATA: { status: 'ok' } }));
  // Prometheus metrics: operators' tokens, or METRICS_TOKEN when set.
  route(app, ROUTES.metrics, async (req, reply) => {
    if (req.ctx) assertOperator(req.ctx);
    reply.type(metrics.registry.contentType);
    return metrics.registry.metrics();
  });

  // Ready once the database answers and the hot paths are warmed on it (db/readiness.ts), again after each outage.
  const readiness = new Readiness({
    probe: (timeoutMs) =>
      Promise.race([
        deps.driver.getServerInfo({ database: config.NEO4J_DATABASE }).then(() => undefined),
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new ProbeTimeout(timeoutMs)), timeoutMs).unref(),
        ),
      ]),
    warm: () => warmUp(services, deps.driver, config.NEO4J_DATABASE),
    logger,
    onReady: (report) => metrics.observeWarmup(report),
  });
  metrics.watchReadiness(() => readiness.state === 'ready');
  const stopListening = storagePolicyOf(deps.driver).onUnavailable(() => readiness.lost());
  readiness.start();
  app.decorate('readiness', readiness);
  app.addHook('onClose', async () => {
    stopListening();
    await readiness.stop();
  });
  route(app, ROUTES.readyz, async (_req, reply) => {
    if (await readiness.check()) {
      return reply.send({ STATUS: 'SUCCESS', MESSAGE: '', DATA: { status: 'ready' } });
    }
    return reply.code(503).send(failBody(readiness.refusal()));
  });

  route(app, ROUTES.openapi, async () => openApi());
  await registerPages(app);

  entityTypeRoutes(app);
  changeRoutes(app);
  modelRoutes(app);
  attributeRoutes(app);
  entityRoutes(app);
  platformRoutes(app);
  adminRoutes(app);
  app.addHook('onClose', async () => {
    await services.purger.stop();
  });

  const graphqlSlots = new Slots(config.GRAPHQL_CONCURRENCY);
  const answers = new GraphQLAnswers(services.model, config.GRAPHQL_QUERY_TIMEOUT_MS);
  const yoga = createYoga<{ req: { ctx: RequestContext | null } }>({
    schema,
    graphqlEndpoint: '/graphql',
    plugins: [
      armorPlugin(),
      knownOperationTypesPlugin(),
      answers.plugin(),
      oneKeyedWritePlugin(),
      operationGuardPlugin({ queryTimeMs: config.GRAPHQL_QUERY_TIMEOUT_MS }),
      useGraphQlJit({}, { onError: (failure) => logger.warn({ failure }, 'GraphQL operation not compiled') }),
      ...(tracing.tracer ? [graphqlTracingPlugin((ctx: RequestContext) => ctx.stats.trace)] : []),
    ],
    landingPage: false,
    // GraphiQL is served by the /graphql route (http/pages.ts); CORS is the app's (configured origins only).
    graphiql: false,
    cors: false,
    multipart: false,
    logging: false,
    context: ({ req }) => {
      if (!req.ctx) throw refuse.unauthenticated();
      return req.ctx;
    },
    // isDev off: Yoga's own refusals must not carry originalError (internals) whatever NODE_ENV says.
    maskedErrors: { maskError: maskGraphQLError(logger), isDev: false },
  });

  app.route({
    url: '/graphql',
    method: ['GET', 'POST'],
    handler: async (req, reply) => {
      if (wantsGraphiQL(req)) return sendGraphiQL(req, reply);
      // The request's shape is checked here, with the REST contract's schemas and reasons, so that Yoga only ever
      // sees a well-formed GraphQL request.
      inputOf(req.method === 'GET' ? ROUTES.graphqlGet : ROUTES.graphqlPost, req);
      if (!acceptsGraphQLAnswer(req.headers.accept)) {
        throw refuse(
          'not_acceptable',
          'The answer is JSON (application/json or application/graphql-response+json).',
        );
      }
      const ctx = req.ctx;
      const execute = async () => {
        // A few operations at a time: a nested catalog query holds megabytes of rows and result while it runs,
        // and on 2 cores running 64 at once only multiplies memory, not throughput. The rest wait their turn.
        let release: () => void;
        try {
          release = await graphqlSlots.acquire(
            ctx?.viewer.tenant ?? '',
            AbortSignal.timeout(config.GRAPHQL_QUEUE_TIMEOUT_MS),
          );
        } catch {
          reply.header('retry-after', '1');
          throw refuse('server_busy', 'Too many GraphQL operations are waiting; try again shortly.');
        }
        try {
          return await yoga.handleNodeRequestAndResponse(req, reply, { req });
        } finally {
          release();
        }
      };
      // A query answered before at the request's model version, or being answered now, is sent as it was made
      // (schema/graphql-answers.ts); any other operation executes.
      const key =
        ctx &&
        answerKey({
          method: req.method,
          accept: req.headers.accept,
          params: req.method === 'GET' ? req.query : req.body,
        });
      const answer = ctx && key ? await answers.serve(ctx, key, execute) : await execute();
      // A kept answer's body is bytes; Yoga's Response (not necessarily this runtime's Response class) streams.
      if (Buffer.isBuffer(answer.body)) {
        for (const [name, value] of (answer as CachedAnswer).headers) reply.header(name, value);
        reply.status(answer.status);
        return reply.send(answer.body);
      }
      const response = answer as Response;
      response.headers.forEach((value, name) => {
        reply.header(name, value);
      });
      reply.status(response.status);
      // Under an Idempotency-Key the answer is read whole: it is stored with the write, or replaced, on send.
      return reply.send(ctx?.keyed.scope ? Buffer.from(await response.arrayBuffer()) : response.body);
    },
  });

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
