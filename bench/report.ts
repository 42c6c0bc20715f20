// What the bench measures and reports: the measurements' and report's shapes, the targets, the scenarios' groups and
// the figures' formats. The targets are checked in report-checks.ts; the report is drawn by report-text.ts (the
// printed tables), report-markdown.ts (bench/results/latest.md) and report-svg.ts (latest.svg).
import type { HealthStats, StormResult } from './storm.js';

/** service: the metamodel service; a: neo4j-driver alone; b: Fastify constant JSON; c: @neo4j/graphql. */
export type Target = 'service' | 'a' | 'b' | 'c' | 'm';

/** What the whole machine did during a run (from /proc/stat). */
export interface MachineLoad {
  /** Cores busy in all (user, system, interrupts), ours and anyone else's. */
  busyCores: number;
  /** Cores busy with processes other than the server under test, Neo4j and the bench. */
  otherCores: number;
  /** Share of CPU time the hypervisor gave to other guests. */
  stealPct: number;
}

export interface Measurement {
  scenario: string;
  target: Target;
  connections: number;
  seconds: number;
  /** 2xx answers (baseline a: completed transactions). */
  requests: number;
  rps: number;
  /** Latency percentiles and mean in ms, over 2xx answers. */
  p50: number;
  p99: number;
  mean: number;
  non2xx: number;
  errors: number;
  /** Neo4j statements per request (the service's x-db-queries; 1 for baseline a). */
  queriesPerRequest: number | null;
  /** CPU per request in ms: the server under test, Neo4j, and the bench process (load generator / driver). */
  cpuMsPerRequest: { server: number | null; neo4j: number | null; loadgen: number | null };
  /** CPU cores kept busy by the three together (the machine has `machine.cpus`). */
  cpuCoresBusy: number;
  machine: MachineLoad | null;
  rssMaxMb?: number | null;
  /** Set when the run sent a fixed number of requests (GraphQL) instead of running for a fixed time. */
  amount?: number;
  graphqlErrors?: number;
  statuses?: Record<string, number>;
  /**
   * Service runs: lookups in the service's caches while the run's requests were served (GET /admin/engine-cache
   * read before and after it); null when the diagnostic could not be read. Absent for the baselines.
   */
  cache?: CacheCounts | null;
  /** Hits over lookups, the model cache and the engine cache together; null when there was no lookup. */
  cacheHitRate?: number | null;
  /**
   * Model version statements per request that read a version (requests waiting at once share one statement, so
   * under load this falls below 1); null when no request read one.
   */
  versionReadsPerRequest?: number | null;
}

/** What the service's caches did during one run: deltas of GET /admin/engine-cache (issue #12). */
export interface CacheCounts {
  /** The model cache: metamodel reads (type pages, types, attribute listings, the GraphQL catalog's rows). */
  modelHits: number;
  modelMisses: number;
  /** The engine cache: the definitions entity writes validate against. */
  engineHits: number;
  engineMisses: number;
  /** Model version statements sent, the requests they answered, and the requests a read lease answered. */
  versionReads: number;
  versionRequests: number;
  versionLeased: number;
}

/** The previous run's figures the write targets compare with (read from latest.json when this run started). */
export interface PreviousRun {
  date: string;
  quick: boolean;
  /** The connection count the ratios are at: this run's target level. */
  connections: number;
  /** req/s over baseline (b)'s per write scenario; null when the previous run did not measure it there. */
  writeRatiosToB: Record<string, number | null>;
}

/** One phase of the hostile-request storm: what the clients got, the service's RSS and /healthz meanwhile. */
export interface StormPhase extends StormResult {
  /** Service RSS (MB) just before the phase, its peak during it (sampled every 100 ms), and the after window. */
  rssBeforeMb: number;
  rssMaxMb: number;
  /** Peak over the 10 s after the last answer, and the RSS at their end. */
  rssAfterMaxMb: number;
  rssAfterMb: number;
  /** When the RSS was first under TARGETS.stormSettleRssMb after the last answer (null: not within the 10 s). */
  rssUnderTargetAfterMs: number | null;
  /** /healthz while the phase's requests ran, and over the 10 s after. */
  health: HealthStats;
  healthAfter: HealthStats;
}

/** What the storm set up in its tenant before its phases. */
export interface StormSetup {
  tenant: string;
  /** The user type declarations (many-keys, deep, slow) are sent to. */
  targetGuid: string;
  /** The type whose attributes all refer to itself (the GraphQL phases). */
  loopGuid: string;
  loopAttributes: number;
  loopSelfReferences: number;
  seconds: number;
}

export interface Report {
  date: string;
  machine: { cpus: number; cpuModel: string; memoryGb: number; node: string; neo4j: string };
  settings: {
    graphqlRequests: { perConnection: number; min: number; maxSeconds: number };
    quick: boolean;
    seconds: number;
    warmup: number;
    levels: number[];
    targetLevel: number;
    logLevel: string;
    /** The service's node command line, as started (npm start's flags, then --node-flags); absent in older runs. */
    serviceCommand?: string;
    /** --storm-only: no catalog, baselines or scenarios; only the storm. */
    stormOnly?: boolean;
  };
  /** null with --storm-only. */
  catalog: {
    tenants: number;
    bigTenantTypes: number;
    deepRow: number;
    types: number;
    attributes: number;
    entities: number;
    relationships: number;
    loadSeconds: number;
  } | null;
  scenarios: { id: string; label: string; baselineA: boolean; graphql: boolean }[];
  measurements: Measurement[];
  graphqlRoundTrips: {
    first: number;
    status: number;
    queries: number | null;
    types: number;
    attributes: number;
    /** One request, alone. */
    ms: number;
    reason?: string;
  }[];
  /** Walking the big tenant's listing 500 rows a page up to the deep row, one request at a time. */
  pageWalk: { pages: number; seconds: number; firstTenMedianMs: number; lastTenMedianMs: number } | null;
  neo4jGraphql:
    | { ok: true; shape: { types: number; attributes: number } | null }
    | { ok: false; problem: string };
  /** The previous run's write ratios (null: none, or it was a --storm-only run), kept so the performance page can quote them. */
  previous: PreviousRun | null;
  memory: {
    maxRssMb: number;
    afterRssMb: number | null;
    phases: Record<string, number>;
    series: [number, number][];
    storms: StormPhase[];
    stormSetup: StormSetup;
  };
  serviceExitCode: number | null;
  profile: {
    totalMs: number;
    busyMs: number;
    areas: { name: string; share: number }[];
    inclusive: { name: string; share: number }[];
    functions: { name: string; share: number }[];
  } | null;
  /** Wall time of each phase of the run, in seconds. */
  phases: Record<string, number>;
  totalSeconds: number;
}

// ---- targets of issues 5, 11 and 12 ----

export const TARGETS = {
  /** Issue 12: reads served from the model cache beat the Cypher they would otherwise send. */
  readRatioToDriver: 1.5,
  readP99Ms: 25,
  deepPageTolerance: 0.2,
  /** Issue 64: the GraphQL catalog query over @neo4j/graphql's same question, at the target level. */
  graphqlRatioToNeo4jGraphql: 50,
  /** Issue 64: a filtered entity page over the raw driver's same query (a), at 16 and 64 connections. */
  filterRatioToDriver: 1,
  filterLevels: [16, 64],
  /**
   * Statements per GraphQL request, whatever the page size: at most 4 loads (cold: the page, own definitions,
   * platform definitions, referenced types the page does not hold) plus the model version read (issue 12).
   */
  graphqlMaxRoundTrips: 5,
  /** Issue 12: service CPU per type page request served from the cache, in ms. */
  cachedPageCpuMs: 0.6,
  /**
   * Issue 12: each write's req/s over baseline (b)'s, measured in the same run, at least this (three quarters of
   * the ratios of the run of docs/performance.md#benchmark): a fixed floor, not the previous run's figure, so that a
   * loss does not compound from run to run.
   */
  writeRatioToB: { 'create-new': 0.008, declare: 0.006, 'entity-write': 0.01 } as Record<string, number>,
  maxRssMb: 300,
  /** Issue 11: the service's RSS during any storm phase, and within stormSettleMs after it. */
  stormPeakRssMb: 400,
  stormSettleRssMb: 300,
  stormSettleMs: 10_000,
  /** Issue 11: every /healthz answer during the storm, in ms. */
  healthMaxMs: 100,
  /** Issue 64: a cached read's req/s over the memory ceiling's (m), at 1, 16 and 64 connections; its p99 at 16. */
  ceilingRatio: 0.8,
  ceilingP99Ms: 5,
  ceilingP99Connections: 16,
} as const;

export const READS = ['page-start', 'page-deep', 'attributes', 'type-by-name'];
/**
 * Reads served from memory, held to the memory ceiling (m): Fastify verifying the same token with jose and sending
 * the same body from memory, measured in the same run (issue 64), at every connection count.
 */
export const CEILING_READS = ['page-start', 'attributes', 'type-by-name'];
/** Filtered entity pages, held to the raw driver's same query (a). */
export const FILTERS = ['filter-tag', 'filter-tag-last', 'filter-two-tags'];
/** The reads whose CPU per request is a target (issue 12): type pages served from the model cache. */
export const CACHED_PAGES = ['page-start', 'page-deep'];
/** Writes: their ratio to baseline (b) in the same run against a fixed floor, since no baseline does the same work. */
export const WRITES = ['create-new', 'declare', 'entity-write'];

export function find(r: Report, scenario: string, target: Target, connections: number) {
  return r.measurements.find(
    (m) => m.scenario === scenario && m.target === target && m.connections === connections,
  );
}

/**
 * The previous run's ratios to baseline (b) for the writes, at `level` connections, from its latest.json (parsed
 * as untrusted: it may be of an older shape). null when it holds no scenario runs (--storm-only, or unreadable).
 */
export function previousRun(json: unknown, level: number): PreviousRun | null {
  if (typeof json !== 'object' || json === null) return null;
  const r = json as {
    date?: unknown;
    settings?: { quick?: unknown; stormOnly?: unknown };
    measurements?: unknown;
  };
  if (typeof r.date !== 'string' || r.settings?.stormOnly === true || !Array.isArray(r.measurements))
    return null;
  const measurements = r.measurements as Partial<Measurement>[];
  const rps = (scenario: string, target: Target) => {
    const m = measurements.find(
      (x) => x.scenario === scenario && x.target === target && x.connections === level,
    );
    return typeof m?.rps === 'number' && m.rps > 0 ? m.rps : null;
  };
  const b = rps('constant', 'b');
  return {
    date: r.date,
    quick: r.settings?.quick === true,
    connections: level,
    writeRatiosToB: Object.fromEntries(
      WRITES.map((id) => {
        const s = rps(id, 'service');
        return [id, s === null || b === null ? null : s / b];
      }),
    ),
  };
}

/** A hit rate as a percentage, '–' when there was no lookup (or no figure). */
export const hitPct = (rate: number | null | undefined) =>
  rate === null || rate === undefined ? '–' : (rate * 100).toFixed(1);

/** A figure to `digits` decimals, '–' when there is none. */
export const fixed = (n: number | null | undefined, digits = 1) =>
  n === null || n === undefined || !Number.isFinite(n) ? '–' : n.toFixed(digits);
export const x2 = (n: number | null) => (n === null ? '–' : `${n.toFixed(2)}x`);
/** Ratios to baseline (b) are small (writes reach about 1% of it): three significant digits. */
export const x3 = (n: number | null) => (n === null ? '–' : `${n.toPrecision(3)}x`);

/** A target of the bench, checked against this run's figures (bench/report-checks.ts). */
export interface TargetCheck {
  name: string;
  met: boolean | null;
  detail: string;
  /** The scenario whose row (at the target level) the check belongs to, for the tables' "target" column. */
  scenario?: string;
}
