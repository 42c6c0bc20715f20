// Turns the bench's measurements into the printed table, bench/results/latest.md and latest.svg, with the
// ratios to the baselines and the issue's targets checked.
import type { HealthStats, StormResult } from './storm.js';

/** service: the metamodel service; a: neo4j-driver alone; b: Fastify constant JSON; c: @neo4j/graphql. */
export type Target = 'service' | 'a' | 'b' | 'c';

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
  /** Model version statements sent, and the requests they answered. */
  versionReads: number;
  versionRequests: number;
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
  graphqlRatioToNeo4jGraphql: 5,
  /**
   * Statements per GraphQL request, whatever the page size: at most 4 loads (cold: the page, own definitions,
   * platform definitions, referenced types the page does not hold) plus the model version read (issue 12).
   */
  graphqlMaxRoundTrips: 5,
  /** Issue 12: service CPU per type page request served from the cache, in ms. */
  cachedPageCpuMs: 0.6,
  /** Issue 12: writes keep at least this share of the previous run's ratio to baseline (b) (within 10%). */
  writeRatioToPrevious: 0.9,
  maxRssMb: 300,
  /** Issue 11: the service's RSS during any storm phase, and within stormSettleMs after it. */
  stormPeakRssMb: 400,
  stormSettleRssMb: 300,
  stormSettleMs: 10_000,
  /** Issue 11: every /healthz answer during the storm, in ms. */
  healthMaxMs: 100,
} as const;

const READS = ['page-start', 'page-deep', 'attributes'];
/** The reads whose CPU per request is a target (issue 12): type pages served from the model cache. */
const CACHED_PAGES = ['page-start', 'page-deep'];
/** Writes: compared with the previous run's ratio to baseline (b), since no baseline does the same work. */
export const WRITES = ['create-new', 'declare', 'entity-write'];

function find(r: Report, scenario: string, target: Target, connections: number) {
  return r.measurements.find(
    (m) => m.scenario === scenario && m.target === target && m.connections === connections,
  );
}

function ratios(r: Report, m: Measurement) {
  const a = find(r, m.scenario, 'a', m.connections);
  const b = find(r, 'constant', 'b', m.connections);
  const c = find(r, m.scenario, 'c', m.connections);
  const over = (x: Measurement | undefined) => (x && x.rps > 0 ? m.rps / x.rps : null);
  return { a: over(a), b: over(b), c: over(c) };
}

/**
 * Whether a service row meets its targets (the checks stated for its scenario): null when the row has none or one
 * of them could not be checked, false as soon as one is missed.
 */
function rowTarget(r: Report, m: Measurement, checks: TargetCheck[]): boolean | null {
  if (m.target !== 'service' || m.connections !== r.settings.targetLevel) return null;
  const own = checks.filter((c) => c.scenario === m.scenario);
  if (own.length === 0) return null;
  if (own.some((c) => c.met === false)) return false;
  return own.every((c) => c.met === true) ? true : null;
}

export interface TargetCheck {
  name: string;
  met: boolean | null;
  detail: string;
  /** The scenario whose row (at the target level) the check belongs to, for the tables' "target" column. */
  scenario?: string;
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

const f = (n: number | null | undefined, digits = 1) =>
  n === null || n === undefined || !Number.isFinite(n) ? '–' : n.toFixed(digits);
const x2 = (n: number | null) => (n === null ? '–' : `${n.toFixed(2)}x`);
/** Ratios to baseline (b) are small (writes reach about 1% of it): three significant digits. */
const x3 = (n: number | null) => (n === null ? '–' : `${n.toPrecision(3)}x`);

export function checkTargets(r: Report): TargetCheck[] {
  const level = r.settings.targetLevel;
  const checks: TargetCheck[] = [];
  for (const id of READS) {
    const m = find(r, id, 'service', level);
    const a = find(r, id, 'a', level);
    if (!m) continue;
    const ratio = a && a.rps > 0 ? m.rps / a.rps : null;
    checks.push({
      scenario: id,
      name: `${id} at ${level} connections: >= ${TARGETS.readRatioToDriver}x baseline (a)`,
      met: ratio === null ? null : ratio >= TARGETS.readRatioToDriver,
      detail: `${f(m.rps, 0)} vs ${f(a?.rps, 0)} req/s = ${x2(ratio)}; hit rate ${hitPct(m.cacheHitRate)}%`,
    });
    checks.push({
      scenario: id,
      name: `${id} at ${level} connections: p99 < ${TARGETS.readP99Ms} ms`,
      met: Number.isFinite(m.p99) ? m.p99 < TARGETS.readP99Ms : null,
      detail: `p99 ${f(m.p99, 2)} ms`,
    });
    if (CACHED_PAGES.includes(id)) {
      const ms = m.cpuMsPerRequest.server;
      checks.push({
        scenario: id,
        name: `${id} at ${level} connections: service CPU <= ${TARGETS.cachedPageCpuMs} ms per request`,
        met: ms === null ? null : ms <= TARGETS.cachedPageCpuMs,
        detail: ms === null ? "the service's CPU was not measured" : `${f(ms, 3)} ms per request`,
      });
    }
  }
  const start = find(r, 'page-start', 'service', level);
  const deep = find(r, 'page-deep', 'service', level);
  if (start && deep && r.catalog) {
    const ratio = deep.rps / start.rps;
    checks.push({
      name: `type page at row ${r.catalog.deepRow.toLocaleString('en')} costs the same as at row 0 within ${TARGETS.deepPageTolerance * 100}%`,
      met: Math.abs(1 - ratio) <= TARGETS.deepPageTolerance,
      detail:
        `${f(deep.rps, 0)} vs ${f(start.rps, 0)} req/s (${x2(ratio)}); mean ${f(deep.mean, 2)} vs ${f(start.mean, 2)} ms; ` +
        `${f(deep.queriesPerRequest, 2)} vs ${f(start.queriesPerRequest, 2)} queries`,
    });
  }
  // Issue 14: a filtered page costs the same at the last page as at row 0 (both one ordered seek per tag).
  const first = find(r, 'filter-tag', 'service', level);
  const lastPage = find(r, 'filter-tag-last', 'service', level);
  if (first && lastPage) {
    const ratio = lastPage.rps / first.rps;
    checks.push({
      name: `a tag filter's last page costs the same as its first within ${TARGETS.deepPageTolerance * 100}%`,
      met: Math.abs(1 - ratio) <= TARGETS.deepPageTolerance,
      detail: `${f(lastPage.rps, 0)} vs ${f(first.rps, 0)} req/s (${x2(ratio)}); p99 ${f(lastPage.p99, 2)} vs ${f(first.p99, 2)} ms`,
    });
  }
  const trips = r.graphqlRoundTrips.filter((t) => !t.reason && t.queries !== null);
  if (trips.length > 0) {
    // Fixed means bounded by a constant, not growing with the page: on a miss the page, own definitions, platform
    // definitions, and one batch for referenced types the page does not hold (absent when it holds them all); and
    // the model version read. From the cache, the version read alone (a share of it under load).
    const bound = TARGETS.graphqlMaxRoundTrips;
    const underLoad = r.measurements.filter((m) => m.scenario === 'graphql' && m.target === 'service');
    const loadCounts = new Set(underLoad.map((m) => f(m.queriesPerRequest, 2)));
    checks.push({
      name: `GraphQL nested query: at most ${bound} statements per request whatever the page size (${bound - 1} loads + the model version read)`,
      met:
        trips.every((t) => (t.queries ?? Infinity) <= bound) &&
        underLoad.every((m) => (m.queriesPerRequest ?? Infinity) <= bound),
      detail:
        `${trips.map((t) => `first ${t.first}: ${t.queries}`).join(', ')}` +
        `${underLoad.length > 0 ? `; under load ${[...loadCounts].join('/')} per request` : ''}`,
    });
  }
  const g = find(r, 'graphql', 'service', level);
  const c = find(r, 'graphql', 'c', level);
  if (g) {
    const ratio = c && c.rps > 0 ? g.rps / c.rps : null;
    checks.push({
      scenario: 'graphql',
      name: `GraphQL at ${level} connections: >= ${TARGETS.graphqlRatioToNeo4jGraphql}x @neo4j/graphql`,
      met: ratio === null ? null : ratio >= TARGETS.graphqlRatioToNeo4jGraphql,
      detail: r.neo4jGraphql.ok
        ? `${f(g.rps, 1)} vs ${f(c?.rps, 1)} req/s = ${x2(ratio)}`
        : `baseline (c) not run: ${r.neo4jGraphql.problem}`,
    });
  }
  const b = find(r, 'constant', 'b', level);
  for (const id of WRITES) {
    const m = find(r, id, 'service', level);
    if (!m) continue;
    const now = b && b.rps > 0 ? m.rps / b.rps : null;
    const before = r.previous?.writeRatiosToB[id] ?? null;
    const name = `${id} at ${level} connections: x(b) >= ${TARGETS.writeRatioToPrevious} × previous x(b)`;
    const nowText = `x(b) ${x3(now)} (${f(m.rps, 0)} vs ${f(b?.rps, 0)} req/s)`;
    if (!r.previous) {
      checks.push({ scenario: id, name, met: null, detail: 'no previous run' });
    } else {
      const prev = `previous ${x3(before)} (${r.previous.date}${r.previous.quick ? ', --quick' : ''})`;
      checks.push({
        scenario: id,
        name,
        met: now === null || before === null ? null : now >= TARGETS.writeRatioToPrevious * before,
        detail:
          before === null
            ? `${nowText}; the previous run (${r.previous.date}) did not measure ${id} and (b) at ${level} connections`
            : `${nowText} vs ${prev} = ${now === null ? '–' : (now / before).toFixed(2)} of it`,
      });
    }
  }
  checks.push({
    name: `service RSS < ${TARGETS.maxRssMb} MB through the whole bench (body storm included)`,
    met: r.memory.maxRssMb > 0 ? r.memory.maxRssMb < TARGETS.maxRssMb : null,
    detail:
      `max ${f(r.memory.maxRssMb, 0)} MB; storm: ` +
      r.memory.storms.map((s) => `${s.kind} ${f(s.rssBeforeMb, 0)} -> ${f(s.rssMaxMb, 0)} MB`).join(', '),
  });
  checks.push(...stormChecks(r.memory.storms));
  return checks;
}

/** Whether an answer ("status reason") is a refusal with a reason: a 4xx, or for GraphQL an error's reason. */
export function isRefusal(key: string, graphql: boolean): boolean {
  const m = /^(\d{3}) (\S+)$/.exec(key);
  if (!m) return false;
  const [status, reason] = [Number(m[1]), m[2]!];
  if (['data', 'not_json', 'graphql_error'].includes(reason)) return false;
  return (status >= 400 && status < 500) || (graphql && status === 200);
}

const answersText = (statuses: Record<string, number>, times = 'x') =>
  Object.entries(statuses)
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${n}${times} ${k}`)
    .join(', ');

function stormChecks(storms: StormPhase[]): TargetCheck[] {
  if (storms.length === 0) return [];
  const checks: TargetCheck[] = [];
  const graphql = (s: StormPhase) => s.kind.startsWith('graphql');
  const wrong = storms.flatMap((s) =>
    Object.entries(s.statuses)
      .filter(([k]) => !isRefusal(k, graphql(s)))
      .map(([k, n]) => `${s.kind}: ${n}x ${k}`),
  );
  const unexpected = storms.flatMap((s) =>
    Object.entries(s.statuses)
      .filter(([k]) => k !== s.expected && isRefusal(k, graphql(s)))
      .map(([k, n]) => `${s.kind}: ${n}x ${k} (expected ${s.expected})`),
  );
  const total = storms.reduce((a, s) => a + s.requests, 0);
  checks.push({
    name: 'every storm answer is a 4xx with a reason (GraphQL: a refusal reason in errors[0].extensions)',
    met: wrong.length === 0,
    detail:
      wrong.length === 0
        ? `${total} of ${total} refused with a reason${unexpected.length > 0 ? `; not the expected one: ${unexpected.join('; ')}` : ', each the expected one'}`
        : `not refused: ${wrong.join('; ')}${unexpected.length > 0 ? `; other reasons: ${unexpected.join('; ')}` : ''}`,
  });
  const peak = (s: StormPhase) => Math.max(s.rssMaxMb, s.rssAfterMaxMb);
  const settled = (s: StormPhase) =>
    s.rssUnderTargetAfterMs !== null && s.rssUnderTargetAfterMs <= TARGETS.stormSettleMs;
  checks.push({
    name: `RSS peak < ${TARGETS.stormPeakRssMb} MB in every storm phase, back under ${TARGETS.stormSettleRssMb} MB within ${TARGETS.stormSettleMs / 1000} s`,
    met: storms.every((s) => peak(s) < TARGETS.stormPeakRssMb && settled(s)),
    detail: storms
      .map(
        (s) =>
          `${s.kind} ${f(peak(s), 0)} MB, ${
            s.rssUnderTargetAfterMs === null
              ? `still ${f(s.rssAfterMb, 0)} MB after ${TARGETS.stormSettleMs / 1000} s`
              : `under ${TARGETS.stormSettleRssMb} MB after ${f(s.rssUnderTargetAfterMs / 1000, 1)} s`
          }`,
      )
      .join('; '),
  });
  const windows = storms.flatMap((s) => [s.health, s.healthAfter]);
  const worst = storms.reduce((a, s) => (s.health.max > a.health.max ? s : a), storms[0]!);
  const probes = windows.reduce((a, h) => a + h.probes, 0);
  const failures = windows.reduce((a, h) => a + h.failures, 0);
  const over = windows.reduce((a, h) => a + h.over100ms, 0);
  const late = windows.reduce((a, h) => a + h.late, 0);
  const maxAll = Math.max(...windows.map((h) => (Number.isFinite(h.max) ? h.max : 0)));
  checks.push({
    name: `/healthz answered within ${TARGETS.healthMaxMs} ms throughout the storm`,
    met: probes > 0 && failures === 0 && maxAll <= TARGETS.healthMaxMs,
    detail:
      `${probes} probes (phases and the ${TARGETS.stormSettleMs / 1000} s after each), max ${f(maxAll, 1)} ms ` +
      `(worst phase ${worst.kind}: p99 ${f(worst.health.p99, 1)}, max ${f(worst.health.max, 1)} ms); ` +
      `${over} over ${TARGETS.healthMaxMs} ms, ${late} due while one was unanswered, ${failures} failed`,
  });
  return checks;
}

const yesNo = (met: boolean | null) => (met === null ? '–' : met ? 'yes' : 'NO');

// ---- plain text ----

function textTable(header: string[], rows: string[][], rightAlign: boolean[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (rightAlign[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

function serviceRows(r: Report): string[][] {
  const rows: string[][] = [];
  const checks = checkTargets(r);
  for (const s of r.scenarios) {
    for (const m of r.measurements.filter((x) => x.scenario === s.id && x.target === 'service')) {
      const x = ratios(r, m);
      rows.push([
        s.id,
        String(m.connections),
        f(m.rps, 0),
        f(m.p50, 2),
        f(m.p99, 2),
        f(m.queriesPerRequest, 2),
        hitPct(m.cacheHitRate),
        String(m.non2xx + m.errors + (m.graphqlErrors ?? 0)),
        x2(x.a),
        x2(x.b),
        x2(x.c),
        yesNo(rowTarget(r, m, checks)),
      ]);
    }
  }
  return rows;
}

const SERVICE_HEADER = [
  'scenario',
  'conns',
  'req/s',
  'p50 ms',
  'p99 ms',
  'q/req',
  'hit %',
  'fail',
  'x(a)',
  'x(b)',
  'x(c)',
  'target',
];
const SERVICE_ALIGN = [false, true, true, true, true, true, true, true, true, true, true, false];

function baselineRows(r: Report): string[][] {
  const name = { a: '(a) neo4j-driver', b: '(b) Fastify constant', c: '(c) @neo4j/graphql', service: '' };
  return r.measurements
    .filter((m) => m.target !== 'service')
    .map((m) => [
      name[m.target],
      m.scenario,
      String(m.connections),
      f(m.rps, 0),
      f(m.p50, 2),
      f(m.p99, 2),
      String(m.non2xx + m.errors + (m.graphqlErrors ?? 0)),
    ]);
}

const BASELINE_HEADER = ['baseline', 'scenario', 'conns', 'req/s', 'p50 ms', 'p99 ms', 'fail'];
const BASELINE_ALIGN = [false, false, true, true, true, true, true];

function cpuRows(r: Report): string[][] {
  return r.measurements.map((m) => [
    m.target === 'service' ? 'service' : `(${m.target})`,
    m.scenario,
    String(m.connections),
    f(m.cpuMsPerRequest.server, 3),
    f(m.cpuMsPerRequest.neo4j, 3),
    f(m.cpuMsPerRequest.loadgen, 3),
    f(m.cpuCoresBusy, 2),
    f(m.machine?.otherCores, 2),
    f(m.machine?.stealPct, 0),
    f(m.versionReadsPerRequest, 3),
  ]);
}

const CPU_HEADER = [
  'who',
  'scenario',
  'conns',
  'server ms/req',
  'neo4j ms/req',
  'bench ms/req',
  'cores busy',
  'others cores',
  'steal %',
  'version reads/req',
];
const CPU_ALIGN = [false, false, true, true, true, true, true, true, true, true];

// ---- the storm: one row per phase ----

const STORM_HEADER = [
  'shape',
  'requests',
  'at once',
  'answers',
  'answered in p50 / max',
  'RSS before',
  'RSS max',
  'RSS 10 s after',
  '/healthz p99 ms',
  '/healthz max ms',
  'time',
];
const STORM_ALIGN = [false, true, true, false, true, true, true, true, true, true, true];

function stormRows(r: Report, markdown: boolean): string[][] {
  const ms = (n: number) => (n >= 1_000 ? `${f(n / 1000, 1)} s` : `${f(n, 0)} ms`);
  return r.memory.storms.map((s) => [
    markdown ? `\`${s.kind}\`: ${s.label}` : s.kind,
    String(s.requests),
    String(s.concurrency),
    answersText(s.statuses, markdown ? '×' : 'x'),
    `${ms(s.answerMs.p50)} / ${ms(s.answerMs.max)}`,
    `${f(s.rssBeforeMb, 0)} MB`,
    `${f(s.rssMaxMb, 0)} MB`,
    `${f(s.rssAfterMb, 0)} MB`,
    f(s.health.p99, 1),
    `${f(s.health.max, 1)}${s.health.failures > 0 ? ` (${s.health.failures} failed)` : ''}`,
    `${f(s.ms / 1000, 1)} s`,
  ]);
}

export function renderTable(r: Report): string {
  const parts: string[] = [];
  if (!r.settings.stormOnly) {
    parts.push(
      `== service (${r.settings.seconds} s per run, GraphQL ${r.settings.graphqlRequests.perConnection} requests per connection, LOG_LEVEL=${r.settings.logLevel}; x(a)/x(b)/x(c) = req/s over the baseline's at the same connections) ==`,
      textTable(SERVICE_HEADER, serviceRows(r), SERVICE_ALIGN),
      '',
      '== baselines ==',
      textTable(BASELINE_HEADER, baselineRows(r), BASELINE_ALIGN),
      '',
      `== CPU per request (server under test, Neo4j, bench process) on ${r.machine.cpus} cores ==`,
      textTable(CPU_HEADER, cpuRows(r), CPU_ALIGN),
      '',
    );
  }
  parts.push(
    '== targets ==',
    ...checkTargets(r).map((t) => `${yesNo(t.met).padEnd(3)}  ${t.name}: ${t.detail}`),
  );
  if (!r.settings.stormOnly) parts.push(previousText(r));
  if (r.pageWalk && r.catalog) {
    parts.push(
      '',
      `page walk: ${r.pageWalk.pages} pages of 500 in ${f(r.pageWalk.seconds)} s, one at a time; median page ` +
        `${f(r.pageWalk.firstTenMedianMs)} ms near row 0, ${f(r.pageWalk.lastTenMedianMs)} ms near row ${r.catalog.deepRow.toLocaleString('en')}`,
    );
  }
  parts.push(
    '',
    `memory: service RSS max ${f(r.memory.maxRssMb, 0)} MB, after the storm ${f(r.memory.afterRssMb, 0)} MB`,
    '',
    '== storm (one phase per shape; RSS sampled every 100 ms; /healthz every 50 ms over one keep-alive connection) ==',
    textTable(STORM_HEADER, stormRows(r, false), STORM_ALIGN),
    ...r.memory.storms.map((s) => `  ${s.kind}: ${s.label}`),
  );
  if (r.profile) {
    parts.push(
      '',
      `== service CPU profile (whole run, ${f(r.profile.busyMs / 1000)} s busy of ${f(r.profile.totalMs / 1000)} s): self time by area ==`,
    );
    parts.push(...r.profile.areas.map((a) => `  ${(a.share * 100).toFixed(1).padStart(5)}%  ${a.name}`));
    parts.push('  inclusive (area anywhere on the stack):');
    parts.push(...r.profile.inclusive.map((a) => `  ${(a.share * 100).toFixed(1).padStart(5)}%  ${a.name}`));
    parts.push('  hottest functions:');
    parts.push(...r.profile.functions.map((a) => `  ${(a.share * 100).toFixed(1).padStart(5)}%  ${a.name}`));
  }
  return `${parts.join('\n')}\n`;
}

// ---- Markdown ----

function mdTable(header: string[], rows: string[][], rightAlign: boolean[]): string {
  const esc = (s: string) => s.replace(/\|/g, '\\|');
  return [
    `| ${header.map(esc).join(' | ')} |`,
    `| ${rightAlign.map((r) => (r ? '---:' : '---')).join(' | ')} |`,
    ...rows.map((row) => `| ${row.map(esc).join(' | ')} |`),
  ].join('\n');
}

/** latest.md of a --storm-only run (storm.md): the storm's targets and table. */
/** Each target, whether it is met, and what was measured (markdown). */
function targetsTable(r: Report): string {
  return mdTable(
    ['target', 'met', 'measured'],
    checkTargets(r).map((t) => [t.name, yesNo(t.met), t.detail]),
    [false, false, false],
  );
}

function renderStormMarkdown(r: Report): string {
  const lines: string[] = [];
  lines.push('# Benchmark results: the storm alone (`--storm-only`)', '');
  lines.push(
    `${r.date} · ${r.machine.cpus} × ${r.machine.cpuModel}, ${r.machine.memoryGb} GB · Node ${r.machine.node} · Neo4j: ${r.machine.neo4j}`,
    '',
    `The service runs in its own process (\`${r.settings.serviceCommand ?? 'node dist/server.js'}\`, as \`npm start\` runs it, NODE_ENV=production, ` +
      `LOG_LEVEL=${r.settings.logLevel}) on an empty database: no catalog is loaded and no scenario runs; the storm ` +
      `creates what it needs in a tenant of its own (${f(r.memory.stormSetup.seconds, 1)} s). Everything, the ` +
      `storm's clients included, shares the same ${r.machine.cpus} cores.`,
    '',
  );
  lines.push('## Targets', '');
  lines.push(targetsTable(r), '');
  lines.push('## Storm', '');
  lines.push(...stormSection(r));
  const phases = Object.entries(r.memory.phases).map(([p, mb]) => `${p} ${f(mb, 0)}`);
  lines.push(`Max RSS by phase (MB): ${phases.join(', ')}.`, '');
  lines.push(
    `Run time ${f(r.totalSeconds, 0)} s: ${Object.entries(r.phases)
      .map(([p, sec]) => `${p} ${f(sec, 0)} s`)
      .join(', ')}.`,
    '',
  );
  return lines.join('\n');
}

export function renderMarkdown(r: Report): string {
  if (r.settings.stormOnly || !r.catalog || !r.pageWalk) return renderStormMarkdown(r);
  const labels = new Map(r.scenarios.map((s) => [s.id, s.label]));
  const lines: string[] = [];
  lines.push('# Benchmark results', '');
  lines.push(
    `${r.date} · ${r.machine.cpus} × ${r.machine.cpuModel}, ${r.machine.memoryGb} GB · Node ${r.machine.node} · Neo4j: ${r.machine.neo4j}`,
    '',
    `Runs of ${r.settings.seconds} s after ${r.settings.warmup} s of warm-up (GraphQL, whose requests take hundreds ` +
      `of ms: ${r.settings.graphqlRequests.perConnection} requests per connection, at least ${r.settings.graphqlRequests.min}, ` +
      `timed until all are answered, no warm-up) at ${r.settings.levels.join(', ')} connections` +
      `${r.settings.quick ? ' (--quick)' : ''}; the service runs in its own process (\`${r.settings.serviceCommand ?? 'node dist/server.js'}\`, as \`npm start\` runs it, ` +
      `NODE_ENV=production, LOG_LEVEL=${r.settings.logLevel}); load generator (autocannon) and baseline (a) in the bench process. ` +
      `Everything shares the same ${r.machine.cpus} cores, so figures are noisy; ratios within one run are what count. ` +
      'Each read scenario is measured interleaved with its baseline (a), and the two type pages with each other, in two ' +
      'rounds of half the run time each, so that drift during the run (garbage collection, other processes) falls on ' +
      'both sides alike.',
    '',
    `Catalog: ${r.catalog.tenants} tenants, one with ${r.catalog.bigTenantTypes.toLocaleString('en')} user types; ` +
      `${r.catalog.types.toLocaleString('en')} types, ${r.catalog.attributes.toLocaleString('en')} attribute definitions ` +
      `(4 types with 200, each with a 1,000-entry enumeration), ${r.catalog.entities.toLocaleString('en')} entities, loaded in ` +
      `${f(r.catalog.loadSeconds)} s. REST scenarios use the big tenant; the GraphQL page is the second tenant's first ` +
      '100 types, each with 20 attributes of which 4 reference other types (plus the 5 platform attributes).',
    '',
  );
  lines.push('## Service', '');
  lines.push(
    'req/s counts 2xx answers; latencies are per request as the load generator saw them; q/req is the `x-db-queries` ' +
      'header (Neo4j statements per request; fractional since requests waiting at once share one model version read); ' +
      'hit % is hits over lookups in the model cache and the engine cache together while the run was served (deltas of ' +
      '`GET /admin/engine-cache` read before and after each run, outside it); x(a), x(b), x(c) are req/s over the ' +
      `baseline at the same connection count; "target" is checked at ${r.settings.targetLevel} connections.`,
    '',
  );
  lines.push(
    mdTable(
      ['scenario', ...SERVICE_HEADER.slice(1)],
      serviceRows(r).map((row) => [`${labels.get(row[0]!) ?? row[0]!} (\`${row[0]}\`)`, ...row.slice(1)]),
      SERVICE_ALIGN,
    ),
    '',
  );
  lines.push('## Baselines', '');
  lines.push(
    '(a) the same Cypher the service sends (imported from `src/db`), sent the way the service sends it (`readOne`: an auto-commit read, one round trip) through `neo4j-driver` from ' +
      'N concurrent loops, no HTTP; (b) a minimal Fastify app answering a constant JSON body, in its own process; ' +
      '(c) `@neo4j/graphql` 7 served by Fastify + graphql-yoga in its own process, on the same data.',
    '',
  );
  lines.push(mdTable(BASELINE_HEADER, baselineRows(r), BASELINE_ALIGN), '');
  lines.push('## Targets', '');
  lines.push(targetsTable(r), '');
  lines.push(previousText(r), '');
  lines.push(
    `Getting the cursor for row ${r.catalog.deepRow.toLocaleString('en')} walked the listing ${r.pageWalk.pages} pages of ` +
      `500, one request at a time, in ${f(r.pageWalk.seconds)} s: median page ${f(r.pageWalk.firstTenMedianMs)} ms near ` +
      `row 0, ${f(r.pageWalk.lastTenMedianMs)} ms near row ${r.catalog.deepRow.toLocaleString('en')}.`,
    '',
  );
  lines.push('## GraphQL round trips by page size', '');
  lines.push(
    mdTable(
      ['first', 'status', 'types', 'attributes', 'Neo4j queries', 'ms (alone)'],
      r.graphqlRoundTrips.map((t) => [
        String(t.first),
        String(t.status),
        String(t.types),
        String(t.attributes),
        t.reason ? `refused: ${t.reason}` : String(t.queries),
        f(t.ms, 0),
      ]),
      [true, true, true, true, false, true],
    ),
    '',
  );
  if (r.neo4jGraphql.ok) {
    const shape = r.neo4jGraphql.shape;
    const ours = r.graphqlRoundTrips.find((t) => t.first === 100);
    lines.push(
      `Baseline (c) answers the same 100 types (${shape?.types ?? '?'} returned) with ${shape?.attributes ?? '?'} attributes; ` +
        `the service answers ${ours?.attributes ?? '?'}: its \`attributes\` also lists the five platform attributes of ` +
        'every type (owned by the root type, not HAS_ATTRIBUTE children of each type, so @neo4j/graphql cannot express ' +
        'them). The service also resolves `ownerType`/`allowedRefType` as single objects and signs a cursor per edge; ' +
        '@neo4j/graphql returns lists (v7 has no single-element relationships). (c) needs no token; the service verifies ' +
        'a JWT per request.',
      '',
    );
  } else {
    lines.push(`Baseline (c) was not run: ${r.neo4jGraphql.problem}`, '');
  }
  lines.push('## CPU per request', '');
  lines.push(
    `CPU time per request of the server under test (the service, or the baseline's server), of Neo4j, and of the bench ` +
      `process (autocannon; for baseline (a) the driver loops), and the cores the three kept busy together ` +
      `(out of ${r.machine.cpus}); then the cores other processes of the machine kept busy meanwhile, and the share of ` +
      `CPU time the hypervisor stole (both from /proc/stat). Neo4j's CPU is only measured when the bench started it. ` +
      'version reads/req is, for the service, the model version statements it sent over the requests that read a ' +
      'version (1 for a request alone; requests waiting at once share one statement, so it falls under load).',
    '',
  );
  lines.push(mdTable(CPU_HEADER, cpuRows(r), CPU_ALIGN), '');
  lines.push('## Memory', '');
  lines.push(
    `Service resident set (sampled every 500 ms, every 100 ms during the storm): max ${f(r.memory.maxRssMb, 0)} MB, ` +
      `${f(r.memory.afterRssMb, 0)} MB after the storm.`,
    '',
  );
  lines.push(...stormSection(r));
  const phases = Object.entries(r.memory.phases).map(([p, mb]) => `${p} ${f(mb, 0)}`);
  lines.push(`Max RSS by phase (MB): ${phases.join(', ')}.`, '');
  if (r.profile) {
    lines.push(
      '## Service CPU profile (whole run)',
      '',
      `Shares of the ${f(r.profile.busyMs / 1000)} s the service was busy (of ${f(r.profile.totalMs / 1000)} s), start-up and catalog load included.`,
      '',
    );
    lines.push(
      mdTable(
        ['self time', 'area'],
        r.profile.areas.map((a) => [`${(a.share * 100).toFixed(1)}%`, a.name]),
        [true, false],
      ),
      '',
      mdTable(
        ['inclusive', 'area anywhere on the stack'],
        r.profile.inclusive.map((a) => [`${(a.share * 100).toFixed(1)}%`, a.name]),
        [true, false],
      ),
      '',
      mdTable(
        ['self time', 'function'],
        r.profile.functions.map((a) => [`${(a.share * 100).toFixed(1)}%`, a.name]),
        [true, false],
      ),
      '',
    );
  }
  lines.push(
    `Run time ${f(r.totalSeconds, 0)} s: ${Object.entries(r.phases)
      .map(([p, sec]) => `${p} ${f(sec, 0)} s`)
      .join(', ')}.`,
    '',
  );
  lines.push('![req/s at the target connection count](latest.svg)', '');
  return lines.join('\n');
}

/** What the write targets compared with: the previous run's ratios to baseline (b). */
function previousText(r: Report): string {
  const p = r.previous;
  if (!p)
    return 'Writes: no previous run to compare with (no bench/results/latest.json when this run started).';
  return (
    `Writes are compared with the previous run (${p.date}${p.quick ? ', --quick' : ''}) at ${p.connections} ` +
    `connections, where x(b) was ${WRITES.map((id) => `${id} ${x3(p.writeRatiosToB[id] ?? null)}`).join(', ')}.`
  );
}

/** The storm's table and what it measures (Markdown lines). */
function stormSection(r: Report): string[] {
  const setup = r.memory.stormSetup;
  return [
    'The storm (issue #11): each shape is a phase of its own; every request is a fresh connection, and its answer ' +
      "is counted by status and reason (the envelope's `DATA.reason`, or a GraphQL answer's " +
      '`errors[0].extensions.reason`; "reset" when the connection ended without an answer). "answered in" is the ' +
      'time from the start of a request to its answer. RSS before is sampled just before the phase, RSS max every ' +
      '100 ms while it runs, and RSS 10 s after ten seconds after its last answer. /healthz is probed every 50 ms ' +
      'from a process of its own over one keep-alive connection (a probe due while the last one is unanswered is ' +
      'not sent, so a stall shows as one long answer); p99 and max are over the probes sent during the phase. ' +
      `The storm's requests are for a tenant of their own (\`${setup.tenant}\`), whose type \`${setup.loopGuid}\` ` +
      `has ${setup.loopSelfReferences} attributes referring to itself (${setup.loopAttributes} with the platform ones).`,
    '',
    mdTable(['shape', ...STORM_HEADER.slice(1)], stormRows(r, true), STORM_ALIGN),
    '',
  ];
}

// ---- SVG: req/s per scenario at the target level, log scale, with the baselines ----

const COLORS: Record<Target, string> = { service: '#2563eb', a: '#9ca3af', b: '#16a34a', c: '#ea580c' };
const escapeXml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function renderSvg(r: Report): string {
  const level = r.settings.targetLevel;
  const bars: { label: string; target: Target; rps: number }[] = [];
  const b = find(r, 'constant', 'b', level);
  if (b) bars.push({ label: '(b) Fastify constant JSON', target: 'b', rps: b.rps });
  for (const s of r.scenarios) {
    const m = find(r, s.id, 'service', level);
    if (m) bars.push({ label: s.id, target: 'service', rps: m.rps });
    const a = find(r, s.id, 'a', level);
    if (a) bars.push({ label: `  (a) same Cypher, driver only`, target: 'a', rps: a.rps });
    const c = find(r, s.id, 'c', level);
    if (c) bars.push({ label: '  (c) @neo4j/graphql', target: 'c', rps: c.rps });
  }
  const width = 900;
  const left = 230;
  const right = 90;
  const top = 50;
  const rowH = 22;
  const height = top + bars.length * rowH + 40;
  const maxRps = Math.max(10, ...bars.map((x) => x.rps));
  const decades = Math.ceil(Math.log10(maxRps));
  const scale = (v: number) => left + ((width - left - right) * Math.log10(Math.max(1, v))) / decades;
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-labelledby="title" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<title id="title">Requests per second at ${level} connections: the service against its baselines</title>`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${left}" y="20" font-size="14" font-weight="bold">req/s at ${level} connections (log scale) — ${escapeXml(r.date.slice(0, 10))}</text>`,
    `<text x="${left}" y="38" fill="#555">blue: service · grey: (a) same Cypher via neo4j-driver · green: (b) Fastify constant JSON · orange: (c) @neo4j/graphql</text>`,
  );
  for (let d = 0; d <= decades; d++) {
    const x = scale(10 ** d);
    out.push(
      `<line x1="${x.toFixed(1)}" y1="${top - 4}" x2="${x.toFixed(1)}" y2="${top + bars.length * rowH}" stroke="#e5e7eb"/>`,
      `<text x="${x.toFixed(1)}" y="${top + bars.length * rowH + 16}" text-anchor="middle" fill="#555">${(10 ** d).toLocaleString('en')}</text>`,
    );
  }
  bars.forEach((bar, i) => {
    const y = top + i * rowH;
    const x = scale(bar.rps);
    out.push(
      `<text x="${left - 8}" y="${y + 15}" text-anchor="end">${escapeXml(bar.label)}</text>`,
      `<rect x="${left}" y="${y + 3}" width="${Math.max(1, x - left).toFixed(1)}" height="${rowH - 6}" fill="${COLORS[bar.target]}"/>`,
      `<text x="${(x + 6).toFixed(1)}" y="${y + 15}" fill="#111">${bar.rps >= 100 ? bar.rps.toFixed(0) : bar.rps.toFixed(1)}</text>`,
    );
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
