// REST routes for operators (admins of the default tenant, cross-tenant accounts).
import type { FastifyInstance } from 'fastify';
import { engineCacheDiagnostic, runPurgeNow } from '../resolvers/admin.js';
import { succeed } from './envelope.js';
import { bodyObject } from './input.js';

export function adminRoutes(app: FastifyInstance) {
  app.post('/admin/jobs/purge', async (req, reply) => {
    const body = req.body === undefined ? {} : bodyObject(req.body);
    return succeed(reply, 200, { ...(await runPurgeNow(req.ctx, body.tenant)) });
  });
  app.get('/admin/engine-cache', async (req, reply) => succeed(reply, 200, engineCacheDiagnostic(req.ctx)));
}
