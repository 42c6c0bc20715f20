// REST routes for operators (admins of the default tenant, cross-tenant accounts).
import type { FastifyInstance } from 'fastify';
import { engineCacheDiagnostic, recentLogs, runPurgeNow } from '../resolvers/admin.js';
import { succeed } from './envelope.js';
import { bodyObject, queryValue } from './input.js';

export function adminRoutes(app: FastifyInstance) {
  app.post('/admin/jobs/purge', async (req, reply) => {
    const body = req.body === undefined ? {} : bodyObject(req.body);
    return succeed(reply, 200, { ...(await runPurgeNow(req.ctx, body.tenant)) });
  });
  app.get('/admin/logs', async (req, reply) => {
    const q = (name: string) => queryValue(req.query, name, 'invalid_field');
    const logs = recentLogs(req.ctx, {
      level: q('level'),
      since: q('since'),
      until: q('until'),
      limit: q('limit'),
    });
    return succeed(reply, 200, logs);
  });
  app.get('/admin/engine-cache', async (req, reply) => succeed(reply, 200, engineCacheDiagnostic(req.ctx)));
}
