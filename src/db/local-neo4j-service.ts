// The local Neo4j that `npm start` runs for the service: its Bolt port is checked before the JVM starts, so a port in
// use ends the start at once with the setting to change, and every line Neo4j prints becomes a log line.
import { createServer } from 'node:net';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { type LocalNeo4j, localNeo4jUri, startLocalNeo4j } from './local-neo4j.js';

/** The local Neo4j's Bolt port cannot be listened on: one line naming the port and the setting to change. */
export class LocalNeo4jPortUnusable extends Error {
  constructor(
    readonly port: number,
    readonly code: string,
  ) {
    super(
      code === 'EADDRINUSE'
        ? `The local Neo4j cannot start: port ${port} on 127.0.0.1 is already in use (another Neo4j, or a second npm start?). Set NEO4J_LOCAL_PORT to a free port, or NEO4J_URI to a Neo4j that is running.`
        : `The local Neo4j cannot start: port ${port} on 127.0.0.1 cannot be listened on (${code}). Set NEO4J_LOCAL_PORT to another port, or NEO4J_URI to a Neo4j that is running.`,
    );
  }
}

/**
 * Resolves once a listener could bind 127.0.0.1:`port` (and closed again); rejects with LocalNeo4jPortUnusable when
 * it cannot. Neo4j would find out only after its JVM started, seconds later, with a stack trace.
 */
export function assertLocalPortFree(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.unref();
    probe.once('error', (e: NodeJS.ErrnoException) =>
      reject(new LocalNeo4jPortUnusable(port, e.code ?? e.message)),
    );
    probe.listen({ port, host: '127.0.0.1', exclusive: true }, () => probe.close(() => resolve()));
  });
}

type OutputLevel = 'debug' | 'warn' | 'error';

/**
 * The log level of a line the local Neo4j printed: its errors (an exception, its cause, an ERROR line) as errors,
 * warnings and whatever else the JVM writes to stderr as warnings, its ordinary output (NEO4J_READY) as debug.
 */
export function neo4jOutputLevel(line: string, stream: 'stdout' | 'stderr'): OutputLevel {
  if (/\b(ERROR|SEVERE|FATAL)\b|Exception\b|^\s*Caused by:/.test(line)) return 'error';
  if (/\bWARN(ING)?\b/i.test(line)) return 'warn';
  return stream === 'stderr' ? 'warn' : 'debug';
}

export interface ServiceNeo4j {
  uri: string;
  /** Settles when the database is up, or with LocalNeo4jStartFailed when it does not start. */
  started: Promise<LocalNeo4j>;
}

/**
 * Starts the service's local Neo4j on NEO4J_LOCAL_PORT, its output logged by `logger` (as `neo4j` lines). Resolves
 * as soon as the port is checked and the JVM is starting, so the app is built while Neo4j starts; rejects with
 * LocalNeo4jPortUnusable before anything starts when the port is taken.
 */
export async function startServiceNeo4j(config: Config, logger: Logger): Promise<ServiceNeo4j> {
  await assertLocalPortFree(config.NEO4J_LOCAL_PORT);
  const log = logger.child({ component: 'neo4j' });
  const started = startLocalNeo4j({
    dataDir: config.NEO4J_DATA_DIR,
    port: config.NEO4J_LOCAL_PORT,
    onOutput: (line, stream) => {
      if (line.trim() !== '') log[neo4jOutputLevel(line, stream)](line);
    },
  });
  return { uri: localNeo4jUri(config.NEO4J_LOCAL_PORT), started };
}
