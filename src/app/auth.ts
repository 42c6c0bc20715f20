// Before a route runs: the request's id in scope, 404 or 405 for a path no route serves (before its body is read),
// then the bearer token verified and the request's context built (public routes and a metrics scrape excepted).
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { createTokenVerifier } from '../auth/tokens.js';
import { createContext, type Services } from '../context.js';
import { REQUEST_ID_HEADER } from '../contract/request-id.js';
import { refuse } from '../errors.js';
import { MAX_PARAM_LENGTH, type RouteMethods, routeMethods } from '../http/methods.js';
import { ASSETS_PREFIX, DOCS_PATHS, wantsGraphiQL } from '../http/pages.js';
import { ROUTES } from '../rest/schemas.js';
import { BOOKMARK_HEADER } from '../services/bookmarks.js';
import { traceOf } from '../tracing.js';
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

export const authentication = fp(
  async (
    app: FastifyInstance,
    { services, verify }: { services: Services; verify: ReturnType<typeof createTokenVerifier> },
  ) => {
    // Everything this request runs sees its id (callback style: the rest of the request runs inside the scope).
    app.addHook('onRequest', (req, _reply, done) => {
      requestScope.run({ requestId: req.id }, done);
    });

    // A path no route serves is answered here, before its body is read: 405 with Allow when the path is served with
    // other methods, 404 otherwise.
    let methods: RouteMethods | undefined;
    app.addHook('onRequest', async (req, reply) => {
      reply.header(REQUEST_ID_HEADER, req.id);
      const route = req.routeOptions.url;
      if (route === undefined) {
        methods ??= routeMethods(app.registeredRoutes, MAX_PARAM_LENGTH);
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
