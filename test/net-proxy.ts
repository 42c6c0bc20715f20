// A TCP proxy in front of the run's Neo4j that a test can cut: the database, as the service sees it, goes away
// (every open connection reset, new ones refused, as when its process dies) and comes back on the same address.
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export interface CuttableProxy {
  /** bolt://127.0.0.1:<port>, the address to give the service. */
  uri: string;
  /** Resets every open connection and stops listening: connects are refused. */
  cut(): Promise<void>;
  /** Listens again on the same port. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function cuttableProxy(targetUri: string): Promise<CuttableProxy> {
  const target = new URL(targetUri.replace(/^[a-z+]+:/, 'http:'));
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };
  const serve = (): Server =>
    createServer((client) => {
      const upstream = createConnection({ host: target.hostname, port: Number(target.port) });
      track(client);
      track(upstream);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
      client.pipe(upstream).pipe(client);
    });
  const listen = (server: Server, port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve((server.address() as { port: number }).port));
    });
  let server = serve();
  const port = await listen(server, 0);
  const stop = async () => {
    for (const socket of sockets) socket.resetAndDestroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return {
    uri: `bolt://127.0.0.1:${port}`,
    cut: stop,
    async restore() {
      server = serve();
      await listen(server, port);
    },
    async close() {
      if (server.listening) await stop();
    },
  };
}
