// Prometheus metrics (prom-client), one registry per app: requests and latency by route and refusal reason, Neo4j
// statements, engine cache hits and misses, purge progress. Labels never carry a tenant, guid or name: routes are
// the route patterns (`/entities/types/:guid`), reasons the documented refusal codes.
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { EngineCache } from '../cache/engine-cache.js';
import type { ModelReads } from '../cache/model-reads.js';

export interface Metrics {
  registry: Registry;
  /** One finished request: its route pattern, status, refusal reason ('' on success) and Neo4j statements. */
  observeRequest(r: {
    method: string;
    route: string;
    status: number;
    reason: string;
    seconds: number;
    queries: number;
  }): void;
  /** Values a purge batch removed, definitions whose removal finished, and what a daily run left pending. */
  observePurge(r: { valuesRemoved: number; definitionsRemoved: number; pending?: number }): void;
  /** A warm-up that made the service ready (db/readiness.ts), and how long it took. */
  observeWarmup(r: { ms: number }): void;
  /** Where `metamodel_ready` reads the service's readiness from. */
  watchReadiness(ready: () => boolean): void;
  /** A request that passed what its door's budget states (a bug: the bound that should hold it did not). */
  observeOverBudget(r: { route: string; bound: 'statements' | 'answer_bytes' }): void;
  /** Where the admission gauges read from. */
  watchAdmission(
    read: () => { inUse: number; queued: number; refused: number; heldBack: number; holdSteps: number },
  ): void;
}

export function createMetrics(options: {
  engineCache: EngineCache;
  model: ModelReads;
  /** Bytes of refused bodies discarded so far (the body reader's count: body/refused.ts). */
  refusedBodyBytes: () => number;
  defaultMetrics?: boolean;
}): Metrics {
  const registry = new Registry();
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'metamodel_' });

  const requests = new Counter({
    name: 'metamodel_http_requests_total',
    help: 'Requests answered, by method, route pattern, status and refusal reason (empty on success).',
    labelNames: ['method', 'route', 'status', 'reason'] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'metamodel_http_request_duration_seconds',
    help: 'Time to answer a request, by method and route pattern.',
    labelNames: ['method', 'route'] as const,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const queries = new Counter({
    name: 'metamodel_neo4j_queries_total',
    help: 'Cypher statements sent to Neo4j on behalf of requests, by route pattern.',
    labelNames: ['route'] as const,
    registers: [registry],
  });
  const { total, level, perKind } = readAtScrape(registry, options.model);
  cacheMetrics(options, total, level, perKind);
  const purgedValues = new Counter({
    name: 'metamodel_purge_values_removed_total',
    help: 'Stored values of withdrawn attribute definitions removed by the purge.',
    registers: [registry],
  });
  const purgedDefinitions = new Counter({
    name: 'metamodel_purge_definitions_removed_total',
    help: 'Withdrawn attribute definitions whose data was fully removed (their names are free again).',
    registers: [registry],
  });

  const pending = new Gauge({
    name: 'metamodel_purge_definitions_pending',
    help: 'Withdrawn definitions the last daily purge (all tenants) could not remove yet.',
    registers: [registry],
  });

  const warmups = new Counter({
    name: 'metamodel_warmups_total',
    help: 'Warm-ups that made the service ready: at start, and after each time the database came back.',
    registers: [registry],
  });
  const warmupSeconds = new Gauge({
    name: 'metamodel_warmup_seconds',
    help: 'How long the last warm-up took.',
    registers: [registry],
  });
  let ready = () => false;
  level(
    'metamodel_ready',
    '1 when GET /readyz would say ready (database answering, hot paths warmed), else 0.',
    () => (ready() ? 1 : 0),
  );

  const overBudget = new Counter({
    name: 'metamodel_door_over_budget_total',
    help: "Requests that sent more statements or a larger answer than their door's budget states, by route and bound (always 0 when the bounds hold).",
    labelNames: ['route', 'bound'] as const,
    registers: [registry],
  });
  const watched = admissionMetrics(total, level, options.refusedBodyBytes);

  return {
    registry,
    observeOverBudget(r) {
      overBudget.inc(r);
    },
    watchAdmission(read) {
      watched.admission = read;
    },
    observeRequest(r) {
      requests.inc({ method: r.method, route: r.route, status: String(r.status), reason: r.reason });
      latency.observe({ method: r.method, route: r.route }, r.seconds);
      if (r.queries > 0) queries.inc({ route: r.route }, r.queries);
    },
    observePurge(r) {
      if (r.valuesRemoved > 0) purgedValues.inc(r.valuesRemoved);
      if (r.definitionsRemoved > 0) purgedDefinitions.inc(r.definitionsRemoved);
      if (r.pending !== undefined) pending.set(r.pending);
    },
    observeWarmup(r) {
      warmups.inc();
      warmupSeconds.set(r.ms / 1000);
    },
    watchReadiness(read) {
      ready = read;
    },
  };
}

type Reader = (name: string, help: string, read: () => number) => unknown;
type PerKind = (name: string, help: string, read: (c: { hits: number; misses: number }) => number) => unknown;

/** Totals and sizes kept by the caches and the admission themselves, read at scrape time. */
function readAtScrape(registry: Registry, model: ModelReads) {
  const total = (name: string, help: string, read: () => number) =>
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(read());
      },
    });
  const level = (name: string, help: string, read: () => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read());
      },
    });
  const perKind = (name: string, help: string, read: (c: { hits: number; misses: number }) => number) =>
    new Counter({
      name,
      help,
      labelNames: ['kind'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const [kind, c] of Object.entries(model.cache.stats().byKind)) this.inc({ kind }, read(c));
      },
    });
  return { total, level, perKind };
}

/** The engine cache's and the model cache's figures, and the model version reads. */
function cacheMetrics(
  options: { engineCache: EngineCache; model: ModelReads },
  total: Reader,
  level: Reader,
  perKind: PerKind,
) {
  const cache = options.engineCache;
  total(
    'metamodel_engine_cache_hits_total',
    'Entity writes whose type definitions came from the engine cache.',
    () => cache.stats().hits,
  );
  total(
    'metamodel_engine_cache_misses_total',
    'Entity writes whose type definitions were read from Neo4j.',
    () => cache.stats().misses,
  );
  level(
    'metamodel_engine_cache_bytes',
    'Approximate memory the engine cache holds (bounded by its byte budget).',
    () => cache.stats().bytes,
  );
  total(
    'metamodel_engine_cache_evictions_total',
    'Engine cache entries evicted to stay within its entry and byte budgets.',
    () => cache.stats().evictions,
  );
  level(
    'metamodel_engine_cache_entries',
    'Types whose definitions the engine cache holds.',
    () => cache.stats().entries,
  );
  // The model cache (metamodel reads from memory): per kind of read, without tenant labels.
  const model = options.model;
  perKind(
    'metamodel_model_cache_hits_total',
    'Metamodel reads answered from the model cache at the version read for the request, by kind of read.',
    (c) => c.hits,
  );
  perKind(
    'metamodel_model_cache_misses_total',
    'Metamodel reads loaded from Neo4j (nothing cached at the request version), by kind of read.',
    (c) => c.misses,
  );
  total(
    'metamodel_model_cache_evictions_total',
    'Model cache entries evicted to stay within the byte budget or a tenant share of it.',
    () => model.cache.stats().evictions,
  );
  total(
    'metamodel_model_cache_invalidations_total',
    'Model cache entries replaced by one read at a newer model version (a metamodel write came between).',
    () => model.cache.stats().invalidations,
  );
  level(
    'metamodel_model_cache_bytes',
    'Approximate memory the model cache holds (bounded by its byte budget).',
    () => model.cache.stats().bytes,
  );
  level('metamodel_model_cache_entries', 'Entries the model cache holds.', () => model.cache.stats().entries);
  total(
    'metamodel_model_version_reads_total',
    'Statements reading tenants model versions (each shared by every request waiting at the time).',
    () => model.versions.stats().reads,
  );
  total(
    'metamodel_model_version_requests_total',
    'Requests that got their model version from those statements.',
    () => model.versions.stats().requests,
  );
  total(
    'metamodel_model_version_leased_total',
    'Requests that got their model version from a read lease, with no statement (MODEL_READ_LEASE_MS).',
    () => model.versions.stats().leased,
  );
}

/** The admission's figures (read from what watchAdmission is given) and the refused bodies' bytes. */
function admissionMetrics(total: Reader, level: Reader, refusedBodyBytes: () => number) {
  const watched = { admission: () => ({ inUse: 0, queued: 0, refused: 0, heldBack: 0, holdSteps: 0 }) };
  level(
    'metamodel_admission_bytes_in_use',
    'Request memory reserved now by requests running (REQUEST_MEMORY_MB is the whole).',
    () => watched.admission().inUse,
  );
  level(
    'metamodel_admission_queued',
    'Requests waiting for their admission turn.',
    () => watched.admission().queued,
  );
  total(
    'metamodel_refused_body_bytes_total',
    'Bytes of refused request bodies read and discarded after their answer, about 1 MiB a turn of the event loop.',
    refusedBodyBytes,
  );
  total(
    'metamodel_admission_refused_total',
    'Requests refused their admission turn (tenant_busy, server_busy).',
    () => watched.admission().refused,
  );
  level(
    'metamodel_tenants_held_back',
    "Tenants whose requests start spaced now because they held the event loop from other tenants' requests.",
    () => watched.admission().heldBack,
  );
  total(
    'metamodel_tenant_hold_steps_total',
    'Times a tenant was held back further (its requests spaced further apart) while the event loop lagged.',
    () => watched.admission().holdSteps,
  );
  return watched;
}
