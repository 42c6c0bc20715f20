// The memory ceiling for cached reads: a minimal Fastify app that verifies the request's bearer token with jose, as
// the service does (HS256, $SECRET), and sends the very body the service answered for that path, from memory. What a
// read served from memory could cost at best, on this machine, in the same run. Listens on 127.0.0.1:$PORT and
// prints `LISTENING <port>` once it does; POST /_bodies {path: body} loads the bodies (no token: the bench's own).
import Fastify from 'fastify';
import { jwtVerify } from 'jose';
import { listenUntilStopped } from './listen.js';

const secret = new TextEncoder().encode(process.env.SECRET ?? '');
const bodies = new Map<string, string>();

const app = Fastify({ logger: false, bodyLimit: 64 * 1024 * 1024 });
app.post('/_bodies', async (req) => {
  for (const [path, body] of Object.entries(req.body as Record<string, string>)) bodies.set(path, body);
  return { loaded: bodies.size };
});
app.get('/*', async (req, reply) => {
  const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
  try {
    if (!token) throw new Error('no token');
    await jwtVerify(token, secret, { algorithms: ['HS256'] });
  } catch {
    return reply.code(401).send({ STATUS: 'FAIL', MESSAGE: '', DATA: { reason: 'unauthenticated' } });
  }
  const body = bodies.get(req.url);
  if (body === undefined)
    return reply.code(404).send({ STATUS: 'FAIL', MESSAGE: '', DATA: { reason: 'not_found' } });
  return reply.header('content-type', 'application/json; charset=utf-8').send(body);
});

await listenUntilStopped(app);
