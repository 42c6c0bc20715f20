// Baseline (b), the HTTP limit: a minimal Fastify app answering one constant JSON body, in its own process like
// the service. Listens on 127.0.0.1:$PORT (0: any free port) and prints `LISTENING <port>` once it does.
import Fastify from 'fastify';
import { listenUntilStopped } from './listen.js';

const BODY = JSON.stringify({ STATUS: 'SUCCESS', MESSAGE: '', DATA: { status: 'ok' } });

const app = Fastify({ logger: false });
app.get('/constant', async (_req, reply) => reply.header('content-type', 'application/json').send(BODY));

await listenUntilStopped(app);
