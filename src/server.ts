// Entry: reads config, starts the local Neo4j unless NEO4J_URI is set, then loads and builds the app and listens while
// it starts; migrates, warms, serves; closes all on SIGTERM.

import v8 from 'node:v8';
import type { Logger } from 'pino';
import { startupBanner } from './app/banner.js';
import { loadOrCreateDevSecret } from './auth/dev-secret.js';
import { type Config, ConfigError, loadConfig } from './config.js';
import { type LocalNeo4j, LocalNeo4jStartFailed } from './db/local-neo4j.js';
import { LocalNeo4jPortUnusable, startServiceNeo4j } from './db/local-neo4j-service.js';
import { jsonParseReadsEscapedKeys, RUNTIME_REFUSAL } from './json/runtime-check.js';
import { chooseLogFormat, createLogger, LogRing } from './telemetry/logging.js';

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

function loadConfigOrExit(): Config {
  if (!jsonParseReadsEscapedKeys()) {
    console.error(RUNTIME_REFUSAL);
    process.exit(1);
  }
  try {
    return loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(e.message);
      process.exit(1);
    }
    throw e;
  }
}

/**
 * Starts the local Neo4j unless NEO4J_URI is set; resolves once it is starting (the app is built meanwhile, and
 * /readyz says 503 until it is up, migrated and warmed). A port that cannot be used, or a database that does not
 * start, ends the process with one log line.
 */
async function startNeo4jUnlessGiven(config: Config, logger: Logger) {
  const state: { uri: string; starting?: Promise<LocalNeo4j>; local?: LocalNeo4j } = {
    uri: config.NEO4J_URI ?? '',
  };
  if (config.NEO4J_URI) return state;
  let neo4j: Awaited<ReturnType<typeof startServiceNeo4j>>;
  try {
    neo4j = await startServiceNeo4j(config, logger);
  } catch (e) {
    if (!(e instanceof LocalNeo4jPortUnusable)) throw e;
    // The message names the port and the setting: one line, in JSON or pretty.
    logger.error(e.message);
    process.exit(1);
  }
  logger.info(
    `Starting the local Neo4j on port ${config.NEO4J_LOCAL_PORT} (data in ${config.NEO4J_DATA_DIR}) ...`,
  );
  const started = performance.now();
  state.uri = neo4j.uri;
  state.starting = neo4j.started;
  state.starting.then(
    (local) => {
      state.local = local;
      logger.info({ ms: Math.round(performance.now() - started) }, 'local Neo4j started');
    },
    (e: unknown) => {
      // Its own lines were logged as it wrote them: the headline is what is left to say.
      logger.error(
        e instanceof LocalNeo4jStartFailed ? e.headline : e instanceof Error ? e.message : String(e),
      );
      process.exit(1);
    },
  );
  return state;
}

async function main() {
  const config = loadConfigOrExit();
  // Every line the running service writes goes through pino (JSON, scrubbed; pretty at a terminal outside
  // production); only a configuration it cannot start with is printed plainly, before the logger exists.
  const logRing = new LogRing();
  const format = chooseLogFormat(config, process.stdout.isTTY === true);
  const logger = createLogger({ level: config.LOG_LEVEL, ring: logRing, format });
  let jwtSecret = config.AUTH_JWT_SECRET;
  if (!jwtSecret && !config.AUTH_JWKS_URL) {
    // Not in production: the configuration's schema refuses a production start without either.
    jwtSecret = loadOrCreateDevSecret();
    logger.info(
      'AUTH_JWT_SECRET is not set: using the development secret in .data/dev-secret. Mint a token with: npm run token -- --tenant acme [--role admin] [--role platform]',
    );
  }
  const neo4j = await startNeo4jUnlessGiven(config, logger);
  const { uri, starting } = neo4j;

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
  void app.readiness.whenReady().then(() => {
    const address = app.server.address();
    const banner = startupBanner(config, typeof address === 'object' && address ? address.port : config.PORT);
    if (banner) logger.info(banner);
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
    await neo4j.local?.stop();
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
