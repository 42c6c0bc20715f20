// Prometheus metrics (prom-client), one registry per app: requests and latency by route and refusal reason, Neo4j
// statements, engine cache hits and misses, purge progress. Labels never carry a tenant, guid or name: routes are
// the route patterns (`/entities/types/:guid`), reasons the documented refusal codes.
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { ModelReads } from './cache/model-reads.js';
import type { EngineCache } from './resolvers/engine-cache.js';

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
}

export function createMetrics(options: {
  engineCache: EngineCache;
  model: ModelReads;
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
  const cache = options.engineCache;
  new Counter({
    name: 'metamodel_engine_cache_hits_total',
    help: 'Entity writes whose type definitions came from the engine cache.',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(cache.stats().hits);
    },
  });
  new Counter({
    name: 'metamodel_engine_cache_misses_total',
    help: 'Entity writes whose type definitions were read from Neo4j.',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(cache.stats().misses);
    },
  });
  new Gauge({
    name: 'metamodel_engine_cache_bytes',
    help: 'Approximate memory the engine cache holds (bounded by its byte budget).',
    registers: [registry],
    collect() {
      this.set(cache.stats().bytes);
    },
  });
  new Counter({
    name: 'metamodel_engine_cache_evictions_total',
    help: 'Engine cache entries evicted to stay within its entry and byte budgets.',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(cache.stats().evictions);
    },
  });
  new Gauge({
    name: 'metamodel_engine_cache_entries',
    help: 'Types whose definitions the engine cache holds.',
    registers: [registry],
    collect() {
      this.set(cache.stats().entries);
    },
  });
  // The model cache (metamodel reads from memory): per kind of read, without tenant labels.
  const model = options.model;
  new Counter({
    name: 'metamodel_model_cache_hits_total',
    help: 'Metamodel reads answered from the model cache at the version read for the request, by kind of read.',
    labelNames: ['kind'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [kind, c] of Object.entries(model.cache.stats().byKind)) this.inc({ kind }, c.hits);
    },
  });
  new Counter({
    name: 'metamodel_model_cache_misses_total',
    help: 'Metamodel reads loaded from Neo4j (nothing cached at the request version), by kind of read.',
    labelNames: ['kind'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [kind, c] of Object.entries(model.cache.stats().byKind)) this.inc({ kind }, c.misses);
    },
  });
  new Counter({
    name: 'metamodel_model_cache_evictions_total',
    help: 'Model cache entries evicted to stay within the byte budget or a tenant share of it.',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(model.cache.stats().evictions);
    },
  });
  new Counter({
    name: 'metamodel_model_cache_invalidations_total',
    help: 'Model cache entries replaced by one read at a newer model version (a metamodel write came between).',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(model.cache.stats().invalidations);
    },
  });
  new Gauge({
    name: 'metamodel_model_cache_bytes',
    help: 'Approximate memory the model cache holds (bounded by its byte budget).',
    registers: [registry],
    collect() {
      this.set(model.cache.stats().bytes);
    },
  });
  new Gauge({
    name: 'metamodel_model_cache_entries',
    help: 'Entries the model cache holds.',
    registers: [registry],
    collect() {
      this.set(model.cache.stats().entries);
    },
  });
  new Counter({
    name: 'metamodel_model_version_reads_total',
    help: 'Statements reading tenants model versions (each shared by every request waiting at the time).',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(model.versions.stats().reads);
    },
  });
  new Counter({
    name: 'metamodel_model_version_requests_total',
    help: 'Requests that got their model version from those statements.',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(model.versions.stats().requests);
    },
  });
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

  return {
    registry,
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
  };
}
