// Entry: reads config, starts the local Neo4j unless NEO4J_URI is set, then loads and builds the app and listens while
// it starts; migrates, warms, serves; closes all on SIGTERM.

import v8 from 'node:v8';
import { loadOrCreateDevSecret } from './auth/dev-secret.js';
import { ConfigError, loadConfig } from './config.js';
import { type LocalNeo4j, localNeo4jUri, startLocalNeo4j } from './db/local-neo4j.js';
import { jsonParseReadsEscapedKeys, RUNTIME_REFUSAL } from './json/runtime-check.js';
import { createLogger, LogRing } from './telemetry/logging.js';

// The app and the driver are imported once the local Neo4j is starting (below): loading them takes time that a crash
// restart then spends beside Neo4j's start instead of before it.

/** The longest a graceful shutdown may take before the process exits anyway. */
const SHUTDOWN_DEADLINE_MS = 45_000;

/**
 * Memory (issue #12): after each full collection V8 lets the heap grow to up to 4 times what survived it before
 * collecting again, far more than the service keeps alive. 100 lets the heap grow to twice what survived: a smaller
 * heap and RSS at the same throughput (a lower value shrinks the heap further but costs throughput). A
 * `--heap-growing-percent` given to node on its command line wins.
 */
const HEAP_GROWING_PERCENT = 100;
if (!process.execArgv.some((a) => a.startsWith('--heap-growing-percent'))) {
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}

async function main() {
  if (!jsonParseReadsEscapedKeys()) {
    console.error(RUNTIME_REFUSAL);
    process.exit(1);
  }
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(e.message);
      process.exit(1);
    }
    throw e;
  }

  // Every line the running service writes goes through pino (JSON, scrubbed); only a configuration it cannot
  // start with is printed plainly, before the logger exists.
  const logRing = new LogRing();
  const logger = createLogger({ level: config.LOG_LEVEL, ring: logRing });
  let jwtSecret = config.AUTH_JWT_SECRET;
  if (!jwtSecret && !config.AUTH_JWKS_URL) {
    // Not in production: the configuration's schema refuses a production start without either.
    jwtSecret = loadOrCreateDevSecret();
    logger.info(
      'AUTH_JWT_SECRET is not set: using the development secret in .data/dev-secret. Mint a token with: npm run token -- --tenant acme [--role admin] [--role platform]',
    );
  }

  // The local Neo4j starts while the app is built and listening (/readyz says 503 until it is up, migrated and
  // warmed): a start spends its time on Neo4j, not on Neo4j and then the app.
  let local: LocalNeo4j | undefined;
  let starting: Promise<LocalNeo4j> | undefined;
  let uri = config.NEO4J_URI;
  if (!uri) {
    logger.info(`Starting the local Neo4j (data in ${config.NEO4J_DATA_DIR}) ...`);
    const started = performance.now();
    starting = startLocalNeo4j({ dataDir: config.NEO4J_DATA_DIR, port: config.NEO4J_LOCAL_PORT });
    starting.then(
      (neo4j) => {
        local = neo4j;
        logger.info({ ms: Math.round(performance.now() - started) }, 'local Neo4j started');
      },
      () => {},
    );
    uri = localNeo4jUri(config.NEO4J_LOCAL_PORT);
  }

  const [
    { buildApp },
    { createDriver },
    { createExecutor },
    { checkSchemaInFull, migrate },
    { schedulePurge },
    { preparePages },
  ] = await Promise.all([
    import('./app/build.js'),
    import('./db/driver.js'),
    import('./db/executor.js'),
    import('./db/migrations.js'),
    import('./jobs/purge.js'),
    import('./http/pages.js'),
  ]);
  const driver = createDriver({
    uri,
    user: config.NEO4J_USER,
    password: config.NEO4J_PASSWORD,
    connectTimeoutMs: config.NEO4J_CONNECT_TIMEOUT_MS,
  });
  let trustedMark = false;
  const schemaReady = (async () => {
    await starting;
    const migrating = performance.now();
    const outcome = await migrate(createExecutor(driver, { database: config.NEO4J_DATABASE }));
    logger.info({ ms: Math.round(performance.now() - migrating), ...outcome }, 'schema migrations applied');
    trustedMark = outcome.checked === 'marked';
  })();
  schemaReady.catch(() => {}); // (awaited below, after listening)
  const app = await buildApp({ config, driver, jwtSecret, logger, logRing, schemaReady });
  const preparing = performance.now();
  preparePages();
  logger.info({ ms: Math.round(performance.now() - preparing) }, 'pages prepared');
  await app.listen({ port: config.PORT, host: config.HOST });
  // A local Neo4j that cannot start, or a schema that cannot be migrated, ends the process.
  await schemaReady;
  // Finish any purge a previous run left half done once the database is ready, then keep the daily schedule.
  void app.readiness.whenReady().then(() => app.services.purger.kick());
  // The schema checked in full once ready when the start trusted the database's mark of a full migration.
  void app.readiness.whenReady().then(() => {
    if (trustedMark) {
      void checkSchemaInFull(createExecutor(driver, { database: config.NEO4J_DATABASE }), app.log);
    }
  });
  const purgeSchedule = schedulePurge(config.PURGE_CRON, app.services.purger, app.log as never);

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    // A request or purge batch that will not end must not hold the process past the orchestrator's grace period
    // (deploy/kubernetes: 60 s, of which 10 s pass in preStop before the signal).
    setTimeout(() => {
      app.log.error('shutdown deadline passed; exiting with requests still open');
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS).unref();
    purgeSchedule.stop();
    await app.close(); // drains in-flight requests, stops the purger
    app.log.info('http server closed');
    await driver.close();
    await local?.stop();
    app.log.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
