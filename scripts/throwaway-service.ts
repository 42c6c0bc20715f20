// The service in this process on a throwaway Neo4j (or NEO4J_URI), for the scripts that drive it from outside
// (loadtest.ts, fuzz.ts): migrated, listening on loopback, with a fresh token secret, and the errors it logs
// (what stands behind a 500) kept for the script to report. startThrowawayNeo4j is the database part alone, for
// scripts that run the service in processes of their own (loadtest.ts --instances N).
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Driver } from 'neo4j-driver';
import pino from 'pino';
import { neo4jSettings, withTimeout } from '../bench/lib.js';
import { buildApp } from '../src/app/build.js';
import { parseConfig } from '../src/config.js';
import { createDriver } from '../src/db/driver.js';
import { createExecutor } from '../src/db/executor.js';
import { freePort, type LocalNeo4j, startLocalNeo4j } from '../src/db/local-neo4j.js';
import { migrate } from '../src/db/migrations.js';

export const HOST = '127.0.0.1';
const CLOSE_TIMEOUT_MS = 60_000;

export interface ThrowawayService {
  base: string;
  /** HS256 secret of the service's tokens. */
  secret: string;
  driver: Driver;
  /** Error lines the service logged, the first `maxErrors` of them. */
  errorLog: string[];
  /** Closes the service (waits for requests in flight); idempotent. */
  closeApp(): Promise<void>;
  /** Closes the service, the driver and the local Neo4j, and removes its data; never throws. */
  close(): Promise<void>;
}

export interface ThrowawayNeo4j {
  /** Bolt URI of the throwaway Neo4j, or NEO4J_URI. */
  uri: string;
  /** NEO4J_USER, NEO4J_PASSWORD and NEO4J_DATABASE from the environment (for NEO4J_URI). */
  user: string | undefined;
  password: string | undefined;
  database: string | undefined;
  /** A driver on it, the schema migrated. */
  driver: Driver;
  /** Closes the driver and the local Neo4j, and removes its data; never throws. */
  close(): Promise<void>;
}

const quietly = async (label: string, what: string, work: () => Promise<unknown>) => {
  try {
    await withTimeout(what, work(), CLOSE_TIMEOUT_MS);
  } catch (e) {
    console.error(`${label}: ${e instanceof Error ? e.message : String(e)}`);
  }
};

/**
 * A throwaway Neo4j (or NEO4J_URI from the environment), migrated, with a driver on it: what the service needs
 * underneath, for scripts that run the service in this process (startThrowawayService) or in processes of its own.
 */
export async function startThrowawayNeo4j(options: {
  /** Prefixes what it prints, and names the data directory. */
  label: string;
  heapMb: number;
}): Promise<ThrowawayNeo4j> {
  const { label } = options;
  const env = neo4jSettings();
  let local: LocalNeo4j | undefined;
  let dataDir: string | undefined;
  let driver: Driver | undefined;
  // Once: a second call waits for the first.
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      if (driver) await quietly(label, 'closing the driver', () => driver!.close());
      if (local) await quietly(label, 'stopping Neo4j', () => local!.stop());
      if (dataDir)
        await quietly(label, 'removing the Neo4j data', () => rm(dataDir!, { recursive: true, force: true }));
    })();
    return closing;
  };
  try {
    let uri = env.NEO4J_URI;
    if (!uri) {
      dataDir = await mkdtemp(path.join(os.tmpdir(), `${label}-neo4j-`));
      const port = await freePort();
      console.log(`Starting a throwaway Neo4j on ${HOST}:${port} (data in ${dataDir}) ...`);
      local = await startLocalNeo4j({ dataDir, port, heapMb: options.heapMb });
      uri = local.uri;
    }
    console.log(`Neo4j: ${uri}`);
    driver = createDriver({ uri, user: env.NEO4J_USER, password: env.NEO4J_PASSWORD });
    await migrate(createExecutor(driver, { database: env.NEO4J_DATABASE }));
    return {
      uri,
      user: env.NEO4J_USER,
      password: env.NEO4J_PASSWORD,
      database: env.NEO4J_DATABASE,
      driver,
      close,
    };
  } catch (e) {
    await close();
    throw e;
  }
}

export async function startThrowawayService(options: {
  /** Prefixes what it prints, and names the data directory. */
  label: string;
  heapMb: number;
  maxErrors: number;
  /** More configuration for the service. */
  env?: Record<string, string>;
}): Promise<ThrowawayService> {
  const { label } = options;
  let neo4jServer: ThrowawayNeo4j | undefined;
  let app: FastifyInstance | undefined;
  let appClosed = false;
  const errorLog: string[] = [];

  const closeApp = async () => {
    if (!app || appClosed) return;
    appClosed = true;
    await withTimeout('closing the service', app.close(), CLOSE_TIMEOUT_MS);
  };
  const close = async () => {
    await quietly(label, 'closing the service', closeApp);
    await neo4jServer?.close();
  };

  try {
    neo4jServer = await startThrowawayNeo4j({ label, heapMb: options.heapMb });
    const { uri, driver } = neo4jServer;
    const secret = randomBytes(24).toString('hex');
    const config = parseConfig({
      NODE_ENV: 'test',
      AUTH_JWT_SECRET: secret,
      NEO4J_URI: uri,
      NEO4J_DATABASE: neo4jServer.database ?? '',
      LOG_LEVEL: 'silent',
      // Its callers (the fuzzer, the load test) send every request from one address, most with new or bad tokens.
      UNVERIFIED_PER_ADDRESS_PER_SECOND: '1000000',
      UNVERIFIED_PER_SECOND: '10000000',
      ...options.env,
    });
    const logger = pino(
      { level: 'error' },
      {
        write(line: string) {
          if (errorLog.length < options.maxErrors) errorLog.push(line.slice(0, 2_000));
        },
      },
    );
    // One warm-up round (the suite's): it plans every hot statement, and nothing a throwaway service serves is timed.
    app = await buildApp({ config, driver, logger, warmupRounds: 1 });
    const port = await freePort();
    await app.listen({ port, host: HOST });
    // As a load balancer would: traffic once ready (the database answers, the warm-up has run).
    await withTimeout('readiness', app.readiness.whenReady(), 120_000);
    return { base: `http://${HOST}:${port}`, secret, driver, errorLog, closeApp, close };
  } catch (e) {
    await close();
    throw e;
  }
}
