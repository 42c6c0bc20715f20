// The app's long-lived collaborators, made once from its dependencies: the executor (admitting transactions once
// ready), the caches, the codecs, the tenant directory, metrics, the purger, the token verifier, readiness, tracing.
import { randomUUID } from 'node:crypto';
import type { Driver } from 'neo4j-driver';
import type { Logger } from 'pino';
import { createTokenVerifier } from '../auth/tokens.js';
import { refusedBytesDiscarded } from '../body/refused.js';
import { EngineCache } from '../cache/engine-cache.js';
import { ModelCache } from '../cache/model-cache.js';
import { ModelReads } from '../cache/model-reads.js';
import { VersionReader } from '../cache/version-reader.js';
import { type Config, cursorKeyOf } from '../config.js';
import type { Services } from '../context.js';
import { createExecutor } from '../db/executor.js';
import { ProbeTimeout, Readiness } from '../db/readiness.js';
import { Admission } from '../fairness/admission.js';
import { LoopShare } from '../fairness/loop-share.js';
import { createPurger } from '../jobs/purge.js';
import { completeCarry, judgeBatch } from '../resolvers/carry.js';
import { createBookmarkCodec } from '../services/bookmarks.js';
import { createCursorCodec } from '../services/cursor.js';
import { IDEMPOTENCY_LIMITS, KeyedRequests } from '../services/keyed-requests.js';
import { createTenantDirectory } from '../services/tenants.js';
import { createLogger, LogRing } from '../telemetry/logging.js';
import { createMetrics } from '../telemetry/metrics.js';
import { createTracing, type Tracing } from '../telemetry/tracing.js';
import { processRequestMemory } from './memory.js';
import { keepWarming, WARMUP_ROUNDS, warmUp } from './warmup.js';

export interface AppDeps {
  config: Config;
  driver: Driver;
  /** Signing secret for bearer tokens when the config has none (development). */
  jwtSecret?: string | undefined;
  logger?: Logger;
  /** Where the logger keeps recent entries for GET /admin/logs (made here when the logger is). */
  logRing?: LogRing;
  /** Identifies this process in leases (defaults to a random id). */
  instanceId?: string;
  /**
   * Resolves once the database's schema is migrated (server.ts: the local Neo4j started and the migrations applied,
   * while the app was built and listening): the warm-up waits for it. Absent: the schema is there already.
   */
  schemaReady?: Promise<void>;
  /** Where spans go (tests pass an in-memory exporter's); else made from the config, off without an endpoint. */
  tracing?: Tracing;
  /**
   * At most this many rounds in each warm-up (default and ceiling: WARMUP_ROUNDS.max; see app/warmup.ts). The test
   * suite's apps take 1: the statements are planned once, without the rounds that warm a JVM for traffic.
   */
  warmupRounds?: number;
  /**
   * Whether the first seconds after each ready that follows an outage let a few transactions in at a time
   * (db/readiness.ts RAMP_MS; default true). The test suite's apps, on a database the other tests keep warm, take
   * false.
   */
  rampAfterReady?: boolean;
}

export function createServices(deps: AppDeps) {
  const { config } = deps;
  const logRing = deps.logRing ?? new LogRing();
  const logger = deps.logger ?? createLogger({ level: config.LOG_LEVEL, ring: logRing });
  const jwtSecret = config.AUTH_JWT_SECRET ?? deps.jwtSecret;
  // Transactions start once readiness admits them (db/readiness.ts; /readyz in app/operations.ts).
  const db = createExecutor(deps.driver, {
    database: config.NEO4J_DATABASE,
    admit: (tenant, continuing) => readiness.admit(tenant, continuing),
  });
  const cursorKey = cursorKeyOf(config, jwtSecret);
  const cacheBytes = config.MODEL_CACHE_MAX_MB * 1024 * 1024;
  const engineCache = new EngineCache(10_000, Math.floor(cacheBytes / 3));
  const model = new ModelReads(
    new ModelCache(cacheBytes - engineCache.maxBytes),
    new VersionReader(db, config.MODEL_READ_LEASE_MS),
  );
  const metrics = createMetrics({ engineCache, model, refusedBodyBytes: refusedBytesDiscarded });
  // (Not while the database is away or the warm-up runs: see LoopShareOptions.active.)
  const loopShare = new LoopShare({ active: () => readiness.state === 'ready' });
  const services: Services = {
    config,
    db,
    logger,
    cursors: createCursorCodec(cursorKey),
    bookmarks: createBookmarkCodec(cursorKey),
    tenants: createTenantDirectory(db),
    engineCache,
    model,
    logRing,
    metrics,
    admission: new Admission({
      capacity: processRequestMemory(config.REQUEST_MEMORY_MB),
      maxRunningPerTenant: config.TENANT_CONCURRENCY,
      maxRunning: config.REQUEST_CONCURRENCY || Number.POSITIVE_INFINITY,
      queueTimeoutMs: config.ADMISSION_QUEUE_TIMEOUT_MS,
      share: loopShare,
    }),
    keyed: new KeyedRequests({
      ...IDEMPOTENCY_LIMITS,
      maxKeysPerTenant: config.IDEMPOTENCY_TENANT_MAX_KEYS,
      maxBytesPerTenant: config.IDEMPOTENCY_TENANT_MAX_MB * 1024 * 1024,
    }),
    purger: createPurger({
      db,
      logger,
      instanceId: deps.instanceId ?? randomUUID(),
      graceSeconds: config.PURGE_GRACE_SECONDS,
      batchSize: config.PURGE_BATCH_SIZE,
      onProgress: (p) => metrics.observePurge(p),
      // Redeclarations carrying their values: judged and ended by the rules (resolvers/carry.ts).
      carry: { judge: judgeBatch, complete: (guid) => completeCarry(services, guid) },
    }),
  };
  const verify = createTokenVerifier({
    jwtSecret,
    jwksUrl: config.AUTH_JWKS_URL,
    issuer: config.AUTH_ISSUER,
    audience: config.AUTH_AUDIENCE,
  });

  const tracing = deps.tracing ?? createTracing(config.OTEL_EXPORTER_OTLP_ENDPOINT, config.OTEL_SERVICE_NAME);
  // Ready once the database answers and the hot paths are warmed on it (db/readiness.ts), again after each outage.
  const readiness = new Readiness({
    probe: (timeoutMs) =>
      Promise.race([
        deps.driver.getServerInfo({ database: config.NEO4J_DATABASE }).then(() => undefined),
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new ProbeTimeout(timeoutMs)), timeoutMs).unref(),
        ),
      ]),
    warm: async (planned) => {
      await deps.schemaReady;
      return warmUp(services, deps.driver, config.NEO4J_DATABASE, planned);
    },
    keepWarming: (first, stopped) =>
      keepWarming(
        services,
        deps.driver,
        config.NEO4J_DATABASE,
        first,
        deps.warmupRounds ?? WARMUP_ROUNDS.max,
        stopped,
      ),
    logger,
    ...(deps.rampAfterReady === false ? { rampMs: 0 } : {}),
    onReady: (report) => metrics.observeWarmup(report),
  });
  metrics.watchReadiness(() => readiness.state === 'ready');
  metrics.watchAdmission(() => ({
    inUse: services.admission.inUse,
    queued: services.admission.queued,
    refused: services.admission.refused,
    heldBack: loopShare.held().size,
    holdSteps: loopShare.heldBack,
  }));
  return { services, verify, readiness, tracing };
}
