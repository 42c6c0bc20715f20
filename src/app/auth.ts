// Before a route runs: the request's id in scope, 404 or 405 for a path no route serves (before its body is read),
// then the bearer token verified and the request's context built (public routes and a metrics scrape excepted).
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { createTokenVerifier } from '../auth/tokens.js';
import { createContext, type Services } from '../context.js';
import { REQUEST_ID_HEADER } from '../contract/request-id.js';
import { refuse } from '../errors.js';
import { MAX_PARAM_LENGTH, type RouteMethods, routeMethods } from '../http/methods.js';
import { ASSETS_PREFIX, DOCS_PATHS, wantsGraphiQL } from '../http/pages.js';
import { isIllFormedQuery } from '../http/query-string.js';
import { sentHeader } from '../http/single-headers.js';
import { BOOKMARK_HEADER } from '../services/bookmarks.js';
import { traceOf } from '../telemetry/tracing.js';
import { requestScope } from './errors.js';

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

/** Public routes no address is ever limited on: a probe must answer whatever the load. */
const UNLIMITED_ROUTES = new Set(['/healthz', '/readyz']);

/**
 * The bucket of the requests that come with no token already verified (a path no route serves, a public page, a
 * token not yet verified, or a bad one), counted before any work is spent on them: per client address (the peer, or
 * the address a trusted proxy forwards: TRUSTED_PROXIES) and all together, each per second; past either they are
 * refused 429 rate_limited. A verified token's requests are the tenant's, admitted by its turns (app/admission.ts).
 */
function unverifiedLimit(app: FastifyInstance, config: Services['config']) {
  const limits = [
    app.createRateLimit({
      max: config.UNVERIFIED_PER_ADDRESS_PER_SECOND,
      timeWindow: 1000,
      keyGenerator: (req) => `address:${req.ip}`,
    }),
    app.createRateLimit({ max: config.UNVERIFIED_PER_SECOND, timeWindow: 1000, keyGenerator: () => 'all' }),
  ];
  return async (req: FastifyRequest) => {
    for (const [i, limit] of limits.entries()) {
      const verdict = await limit(req);
      if (verdict.isAllowed || !verdict.isExceeded) continue;
      throw refuse(
        'rate_limited',
        i === 0
          ? 'Too many requests without a verified token from your address; try again shortly.'
          : 'Too many requests without a verified token; try again shortly.',
        Math.max(1, verdict.ttlInSeconds),
      );
    }
  };
}

export const authentication = fp(
  async (
    app: FastifyInstance,
    { services, verify }: { services: Services; verify: ReturnType<typeof createTokenVerifier> },
  ) => {
    // Everything this request runs sees its id (callback style: the rest of the request runs inside the scope).
    app.addHook('onRequest', (req, _reply, done) => {
      requestScope.run({ requestId: req.id }, done);
    });

    const unverified = unverifiedLimit(app, services.config);

    // A path no route serves is answered here, before its body is read: 405 with Allow when the path is served with
    // other methods, 404 otherwise.
    let methods: RouteMethods | undefined;
    app.addHook('onRequest', async (req, reply) => {
      reply.header(REQUEST_ID_HEADER, req.id);
      if (isIllFormedQuery(req.query)) {
        throw refuse('invalid_url', 'The query string is malformed: an escape (%XX) that is not UTF-8 text.');
      }
      const route = req.routeOptions.url;
      if (route === undefined) {
        await unverified(req);
        methods ??= routeMethods(app.registeredRoutes, MAX_PARAM_LENGTH);
        const path = req.url.split('?')[0] as string;
        const allowed = methods.allowed(path);
        if (allowed.length > 0) {
          reply.header('allow', allowed.join(', '));
          throw refuse('method_not_allowed', `${req.method} is not served at this path.`);
        }
        throw refuse('not_found', `No route ${req.method} ${path}.`);
      }
      if (PUBLIC_ROUTES.has(route)) {
        if (!UNLIMITED_ROUTES.has(route)) await unverified(req);
        return;
      }
      if (route === '/graphql' && wantsGraphiQL(req)) return;
      if (route === '/metrics' && services.config.METRICS_TOKEN !== undefined) {
        // A scrape credential of its own, so Prometheus needs no user token (compared in constant time).
        if (sameSecret(req.headers.authorization, `Bearer ${services.config.METRICS_TOKEN}`)) return;
      }
      const authorization = sentHeader(req.raw, 'authorization');
      if (Array.isArray(authorization)) throw refuse.unauthenticated('Send one Authorization header.');
      let viewer = verify.remembered(authorization);
      if (!viewer) {
        await unverified(req);
        viewer = await verify(authorization);
      }
      const clientBookmarks = services.bookmarks.decode(viewer.tenant, sentHeader(req.raw, BOOKMARK_HEADER));
      req.ctx = createContext(services, viewer, {
        requestId: req.id,
        operation: `${req.method} ${route}`,
        clientBookmarks,
      });
      const requestTrace = traceOf(req.raw);
      if (requestTrace) req.ctx.stats.trace = requestTrace;
    });
  },
  { name: 'authentication' },
);
