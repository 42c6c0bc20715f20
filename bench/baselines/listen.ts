// How every baseline server runs: on 127.0.0.1:$PORT (0: any free port), printing `LISTENING <port>` once it listens
// (the bench waits for that line), and closing on SIGTERM or SIGINT after whatever else it must close.
import type { FastifyInstance } from 'fastify';

export async function listenUntilStopped(
  app: FastifyInstance,
  closeAlso: () => Promise<unknown> = async () => {},
) {
  await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
  const address = app.server.address();
  console.log(`LISTENING ${typeof address === 'object' && address ? address.port : 0}`);
  const stop = () => {
    void app
      .close()
      .then(closeAlso)
      .then(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
