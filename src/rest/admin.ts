// REST routes for operators (admins of the default tenant, cross-tenant accounts).
import { PassThrough } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Envelope, NDJSON } from '../contract/wire.js';
import { type AppError, isAppError, refuse } from '../errors.js';
import type { PurgeProgress } from '../jobs/purge.js';
import { engineCacheDiagnostic, recentLogs, runPurgeNow } from '../resolvers/admin.js';
import { failBody, succeed } from './envelope.js';
import { route } from './route.js';
import { ROUTES } from './schemas.js';

/** Whether the Accept header lists application/x-ndjson (with a q above 0). */
export function acceptsNdjson(accept: string | undefined): boolean {
  return (accept ?? '').split(',').some((range) => {
    const [type, ...params] = range.split(';').map((part) => part.trim().toLowerCase());
    if (type !== NDJSON) return false;
    const q = params.find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

/**
 * The purge as newline-delimited JSON: `{"progress": {...}}` lines while it runs, then one line holding the
 * ordinary envelope (SUCCESS with the report, or FAIL with DATA.reason). The response head is sent with the first
 * progress line, which the job tells once it holds its lease: every refusal before that (401, 403, 400, 409
 * purge_already_running) is still an ordinary envelope response with its own status code.
 */
async function streamPurge(req: FastifyRequest, reply: FastifyReply, tenant: unknown) {
  let stream: PassThrough | undefined;
  const write = (line: unknown) => {
    if (stream && !stream.destroyed) stream.write(`${JSON.stringify(line)}\n`);
  };
  let started!: () => void;
  const streaming = new Promise<'streaming'>((resolve) => {
    started = () => resolve('streaming');
  });
  const job = runPurgeNow(req.ctx, tenant, (progress: PurgeProgress) => {
    if (!stream) {
      stream = new PassThrough();
      // A client that goes away only stops the lines; the job runs to its end (it holds the lease).
      stream.on('error', () => {});
      reply.code(200).type(`${NDJSON}; charset=utf-8`).header('cache-control', 'no-store').send(stream);
      started();
    }
    write({ progress });
  });
  // Settles first when the job ends (or is refused) before its first progress line: an ordinary response.
  const first = await Promise.race([job, streaming]);
  if (first !== 'streaming') return succeed(reply, 200, { ...first });
  job
    .then(
      (report) => {
        const envelope: Envelope = { STATUS: 'SUCCESS', MESSAGE: '', DATA: { ...report } };
        write(envelope);
      },
      (err: unknown) => {
        let refusal: AppError;
        if (isAppError(err)) refusal = err;
        else {
          req.log.error({ err, requestId: req.id }, 'unexpected error');
          refusal = refuse('internal_error', `Unexpected error (request ${req.id}).`);
        }
        write(failBody(refusal));
      },
    )
    .finally(() => stream?.end());
  return reply;
}

export function adminRoutes(app: FastifyInstance) {
  route(app, ROUTES.purge, async (req, reply, { body }) => {
    if (acceptsNdjson(req.headers.accept)) return streamPurge(req, reply, body.tenant);
    return succeed(reply, 200, { ...(await runPurgeNow(req.ctx, body.tenant)) });
  });
  route(app, ROUTES.logs, async (req, reply, { query }) => succeed(reply, 200, recentLogs(req.ctx, query)));
  route(app, ROUTES.engineCache, async (req, reply) => succeed(reply, 200, engineCacheDiagnostic(req.ctx)));
}
