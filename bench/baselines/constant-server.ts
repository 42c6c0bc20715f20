// Baseline (b), the HTTP limit: a minimal Fastify app answering one constant JSON body, in its own process like
// the service. Listens on 127.0.0.1:$PORT (0: any free port) and prints `LISTENING <port>` once it does.
import Fastify from 'fastify';

const BODY = JSON.stringify({ STATUS: 'SUCCESS', MESSAGE: '', DATA: { status: 'ok' } });

const app = Fastify({ logger: false });
app.get('/constant', async (_req, reply) => reply.header('content-type', 'application/json').send(BODY));

await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
const address = app.server.address();
console.log(`LISTENING ${typeof address === 'object' && address ? address.port : 0}`);

const stop = () => {
  void app.close().then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
