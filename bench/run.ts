// Benchmark (npm run bench): the service in its own process on its own Neo4j, a realistic catalog loaded with
// Cypher, autocannon at several connection counts per scenario, and in the same run the baselines:
//   (a) the same Cypher straight through neo4j-driver, no HTTP (the database limit),
//   (b) Fastify answering a constant JSON body (the HTTP limit),
//   (c) the same GraphQL question served by @neo4j/graphql on the same data.
// Prints a table and writes bench/results/latest.{md,svg,json}. Traffic goes to 127.0.0.1 only; every phase is
// bounded in time; child processes and the throwaway Neo4j are removed on every exit path.
// Last comes the hostile-request storm (issue #11, bench/storm.ts): over-limit, many-valued, deep and slow bodies and
// costly GraphQL documents, phase by phase, with the service's RSS sampled and /healthz probed throughout.
//   npm run bench -- [--quick] [--seconds 5] [--warmup 1] [--connections 1,16,64] [--log-level info]
//                    [--only page-start,graphql] [--big-types 100000] [--cpu-prof] [--storm-only]
//                    [--node-flags '--trace-gc']
//   --storm-only   the storm alone, in a couple of minutes: Neo4j and the service start as usual, but no catalog is
//                  loaded (the storm creates the two types it needs in a tenant of its own), no baseline starts and
//                  no scenario runs; writes bench/results/storm.{md,json} and leaves latest.* as they are.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { closeSync, copyFileSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { Driver } from 'neo4j-driver';
import { neo4jSettings } from '../scripts/throwaway-service.js';
import { mintToken } from '../src/auth/tokens.js';
import { findAttributesApplyingTo } from '../src/db/attributes.js';
import { createDriver } from '../src/db/driver.js';
import { listKey, readEntityPage } from '../src/db/entities.js';
import { findTypeByName, listTypes } from '../src/db/entity-types.js';
import { createExecutor } from '../src/db/executor.js';
import { freePort, type LocalNeo4j, startLocalNeo4j } from '../src/db/local-neo4j.js';
import { migrate } from '../src/db/migrations.js';
import { nameKey, platformAttributeGuid, typeGuid } from '../src/model/names.js';
import {
  autocannon,
  children,
  cpuMsOf,
  machineTicks,
  percentile,
  rssMbOf,
  Samples,
  serviceNodeFlags,
  sleep,
  startAnnouncingChild,
  stopChild,
  withTimeout,
} from './lib.js';
import { DEFAULT_CATALOG, type LoadedCatalog, loadCatalog } from './load-catalog.js';
import { NEO4J_GRAPHQL_QUERY, serviceCatalogQuery } from './queries.js';
import {
  type CacheCounts,
  hitPct,
  type MachineLoad,
  type Measurement,
  type PreviousRun,
  previousRun,
  type Report,
  renderMarkdown,
  renderSvg,
  renderTable,
  type StormPhase,
  type StormSetup,
  TARGETS,
  type Target,
} from './report.js';
import {
  deepBody,
  epochNow,
  graphqlFragmentsBody,
  graphqlNestedBody,
  graphqlPagesBody,
  manyKeysBody,
  runStorm,
  type StormShape,
  slowBody,
  startHealthProbe,
  tinyObjectsBody,
} from './storm.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RESULTS = path.join(ROOT, 'bench', 'results');
const HOST = '127.0.0.1';

// ---- options ----

const { values: argv } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    seconds: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string' },
    'log-level': { type: 'string', default: 'info' },
    only: { type: 'string' },
    'big-types': { type: 'string' },
    'cpu-prof': { type: 'boolean', default: false },
    'storm-only': { type: 'boolean', default: false },
    'node-flags': { type: 'string' },
  },
});

function numberOption(name: string, raw: string | undefined, fallback: number, min: number, max: number) {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || value > max) {
    console.error(`--${name} must be a number in ${min}..${max} (got ${raw})`);
    process.exit(2);
  }
  return value;
}

const QUICK = argv.quick === true;
const SECONDS = numberOption('seconds', argv.seconds, QUICK ? 2 : 5, 0.5, 600);
const WARMUP = numberOption('warmup', argv.warmup, QUICK ? 0.5 : 1, 0, 60);
const LEVELS = (argv.connections ?? (QUICK ? '16' : '1,16,64')).split(',').map((c) => {
  const n = Number(c);
  if (!Number.isInteger(n) || n < 1 || n > 1000) {
    console.error(`--connections takes integers in 1..1000 separated by commas (got ${argv.connections})`);
    process.exit(2);
  }
  return n;
});
const LOG_LEVEL = argv['log-level'] ?? 'info';
const BIG_TYPES = numberOption('big-types', argv['big-types'], DEFAULT_CATALOG.bigTypes, 1_000, 1_000_000);
/** The deep page starts here; at least 100 plain types follow it, so it is as full and alike as the first page. */
const DEEP_ROW = Math.min(100_000, Math.floor((BIG_TYPES - 100) / 500) * 500);
/**
 * GraphQL requests cost hundreds of ms each, so at many connections one lasts longer than a timed run: those runs
 * send a fixed number of requests instead (GRAPHQL_PER_CONNECTION per connection, at least GRAPHQL_MIN) and time
 * how long all of them take, stopping after GRAPHQL_MAX_SECONDS at most.
 */
const GRAPHQL_PER_CONNECTION = QUICK ? 2 : 4;
const GRAPHQL_MIN = QUICK ? 16 : 20;
const GRAPHQL_MAX_SECONDS = QUICK ? 40 : 90;
const CPU_PROF = argv['cpu-prof'] === true;
/** Only the hostile-request storm: no catalog, no baselines, no scenarios (a couple of minutes). */
const STORM_ONLY = argv['storm-only'] === true;
/** Extra flags for the service's node process (e.g. `--trace-gc`, to see where its memory goes), space-separated. */
const NODE_FLAGS = (argv['node-flags'] ?? '').split(' ').filter((f) => f !== '');
/** The tenant the storm's requests are for (its own types only: the storm needs no catalog). */
const STORM_TENANT = `bench-storm-${Math.random().toString(36).slice(2, 10)}`;
const STORM_BUDGET_MS = 900_000;
/** Targets of issue #11, checked in the report: the service's RSS during and after each storm phase. */
const STORM_AFTER_MS = 10_000;
/** The connection count the targets are stated at (the middle level when 16 is not run). */
const TARGET_LEVEL = LEVELS.includes(16) ? 16 : LEVELS[Math.floor(LEVELS.length / 2)]!;

/** The previous run's latest.json, as the write targets need it; null when there is none or it cannot be read. */
function readPrevious(): PreviousRun | null {
  let text: string;
  try {
    text = readFileSync(path.join(RESULTS, 'latest.json'), 'utf8');
  } catch {
    return null;
  }
  try {
    return previousRun(JSON.parse(text), TARGET_LEVEL);
  } catch (e) {
    console.log(`(bench/results/latest.json is not JSON, so no previous run: ${(e as Error).message})`);
    return null;
  }
}
/**
 * Issue 12: writes no slower than before. Their ratios to baseline (b) in the previous run, read now, before this
 * run overwrites latest.json. A --storm-only run measures no write (and leaves latest.json as it is).
 */
const PREVIOUS: PreviousRun | null = STORM_ONLY ? null : readPrevious();

// ---- scenarios ----

interface HttpRequest {
  method: 'GET' | 'POST';
  path: string;
  body?: string;
}

interface Scenario {
  id: string;
  label: string;
  /** Statuses a correct answer has. */
  ok: readonly number[];
  graphql?: boolean;
  /** The tenant the scenario's requests are for (default: the big tenant). */
  api?: Api;
  request(i: number): HttpRequest;
  /** Baseline (a): the same Cypher through neo4j-driver. */
  direct?: (i: number) => Promise<unknown>;
  /** Requests sent (and direct calls made) before measuring, so that every key it rotates over is warm (default 5). */
  primes?: number;
}

// ---- the run ----

const env = neo4jSettings({ LOG_LEVEL });
const DATABASE = env.NEO4J_DATABASE;

const log = (line: string) => console.log(line);
const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '-');

/** The service's resident set, sampled every 500 ms (every 100 ms during the body storm), per phase. */
class RssSampler {
  private timer: NodeJS.Timeout | undefined;
  readonly series: [number, number][] = [];
  readonly phaseMax = new Map<string, number>();
  max = 0;
  phase = 'start-up';
  private readonly started = performance.now();
  constructor(private readonly pid: number | undefined) {}
  sample() {
    const mb = rssMbOf(this.pid);
    if (mb === null) return null;
    this.max = Math.max(this.max, mb);
    this.phaseMax.set(this.phase, Math.max(this.phaseMax.get(this.phase) ?? 0, mb));
    const t = (performance.now() - this.started) / 1000;
    const last = this.series[this.series.length - 1];
    if (!last || t - last[0] >= 0.45) this.series.push([Math.round(t * 10) / 10, Math.round(mb * 10) / 10]);
    return mb;
  }
  every(ms: number) {
    if (this.timer) clearInterval(this.timer);
    this.timer = setInterval(() => this.sample(), ms);
    this.timer.unref();
  }
  stop() {
    if (this.timer) clearInterval(this.timer);
  }
}

interface Api {
  base: string;
  authorization: string;
  call(
    method: string,
    urlPath: string,
    body?: unknown,
  ): Promise<{ status: number; json: Record<string, unknown>; headers: Headers }>;
}

function apiFor(base: string, authorization: string): Api {
  return {
    base,
    authorization,
    async call(method, urlPath, body) {
      const res = await fetch(`${base}${urlPath}`, {
        method,
        headers: {
          authorization,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
        signal: AbortSignal.timeout(60_000),
      });
      const text = await res.text();
      let json: Record<string, unknown> = {};
      try {
        json = JSON.parse(text) as Record<string, unknown>;
      } catch {
        json = { text };
      }
      return { status: res.status, json, headers: res.headers };
    },
  };
}

type RunLength = { seconds: number } | { amount: number; maxSeconds: number };

/**
 * autocannon at `connections` for some seconds or a number of requests, with our own latency list (ms, not
 * rounded) and query count.
 */
async function cannon(
  base: string,
  headers: Record<string, string>,
  connections: number,
  length: RunLength,
  build: () => HttpRequest,
  graphql: boolean,
) {
  const timeoutSeconds = graphql ? 60 : 30;
  const latencies = new Samples();
  let ok = 0;
  let non2xx = 0;
  let queries = 0;
  let counted = 0;
  let graphqlErrors = 0;
  const statuses: Record<string, number> = {};
  // A run of a fixed number of requests is timed here, from start to its last answer: autocannon notices that the
  // amount is reached only on its once-a-second tick, so its duration of a short run is at least a second.
  const started = performance.now();
  let lastAnswer = started;
  const result = await new Promise<{ duration: number; errors: number; timeouts: number }>(
    (resolve, reject) => {
      let cap: NodeJS.Timeout | undefined;
      const instance = autocannon(
        {
          url: base,
          connections,
          ...('amount' in length ? { amount: length.amount } : { duration: length.seconds }),
          timeout: timeoutSeconds,
          requests: [
            {
              setupRequest: (req) => {
                const r = build();
                // autocannon's request (host, port) with ours on top; a fresh headers object each time, since
                // autocannon writes Content-Length into the one it is given.
                return {
                  ...req,
                  method: r.method,
                  path: r.path,
                  headers: { ...req.headers, ...headers },
                  body: r.body ?? Buffer.alloc(0),
                };
              },
              onResponse: (status, body, _context, responseHeaders) => {
                statuses[status] = (statuses[status] ?? 0) + 1;
                const q = responseHeaders['x-db-queries'];
                if (typeof q === 'string') {
                  queries += Number(q);
                  counted += 1;
                }
                if (graphql && body.includes('"errors":')) graphqlErrors += 1;
              },
            },
          ],
        },
        (error, r) => {
          clearTimeout(cap);
          if (error) reject(error);
          else resolve(r);
        },
      );
      if ('amount' in length) cap = setTimeout(() => instance.stop(), length.maxSeconds * 1000);
      instance.on('response', (_client, status, _bytes, ms) => {
        lastAnswer = performance.now();
        if (status >= 200 && status < 300) {
          ok += 1;
          latencies.push(ms);
        } else {
          non2xx += 1;
        }
      });
    },
  );
  return {
    seconds: 'amount' in length ? (lastAnswer - started) / 1000 : result.duration,
    ok,
    non2xx,
    errors: result.errors + result.timeouts,
    latencies,
    queries,
    counted,
    graphqlErrors,
    statuses,
  };
}

/** Baseline (a): `concurrency` async loops running `op` through the driver for `seconds`. */
async function driverLoops(op: (i: number) => Promise<unknown>, concurrency: number, seconds: number) {
  const latencies = new Samples();
  let errors = 0;
  let i = 0;
  let firstError: unknown;
  const started = performance.now();
  const end = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const t = performance.now();
        try {
          await op(i++);
          latencies.push(performance.now() - t);
        } catch (e) {
          errors += 1;
          firstError ??= e;
          await sleep(10);
        }
      }
    }),
  );
  if (errors > 0 && latencies.length === 0) throw firstError;
  return { seconds: (performance.now() - started) / 1000, ok: latencies.length, errors, latencies };
}

/** Waits (at most `maxMs`) until the given processes together use under 10% of a core; returns the ms waited. */
async function settle(pids: (number | undefined)[], maxMs = 60_000) {
  const started = performance.now();
  const total = () => pids.reduce<number>((sum, pid) => sum + (cpuMsOf(pid) ?? 0), 0);
  let previous = total();
  while (performance.now() - started < maxMs) {
    await sleep(250);
    const now = total();
    const used = now - previous;
    previous = now;
    if (used < 25) break;
  }
  return performance.now() - started;
}

interface Pids {
  server?: number | undefined;
  neo4j?: number | undefined;
}

/** CPU used by the server under test, Neo4j and this process (the load generator) while `work` runs. */
async function withCpu<T>(pids: Pids, work: () => Promise<T>) {
  const before = {
    server: cpuMsOf(pids.server),
    neo4j: cpuMsOf(pids.neo4j),
    self: process.cpuUsage(),
    machine: machineTicks(),
    at: performance.now(),
  };
  const value = await work();
  const diff = (a: number | null, b: number | null) => (a === null || b === null ? null : b - a);
  const self = process.cpuUsage(before.self);
  const machine = machineTicks();
  const wallMs = performance.now() - before.at;
  const cpu = {
    server: diff(before.server, cpuMsOf(pids.server)),
    neo4j: diff(before.neo4j, cpuMsOf(pids.neo4j)),
    loadgen: (self.user + self.system) / 1000,
  };
  let load: MachineLoad | null = null;
  if (before.machine && machine && machine.total > before.machine.total) {
    const busyCores = ((machine.busy - before.machine.busy) * 10) / wallMs;
    const ours = ((cpu.server ?? 0) + (cpu.neo4j ?? 0) + cpu.loadgen) / wallMs;
    load = {
      busyCores,
      otherCores: Math.max(0, busyCores - ours),
      stealPct: (100 * (machine.steal - before.machine.steal)) / (machine.total - before.machine.total),
    };
  }
  return { value, cpu, load };
}

/** One measured stretch of a run: what the load generator saw and what the processes spent meanwhile. */
interface Part {
  seconds: number;
  ok: number;
  non2xx: number;
  errors: number;
  latencies: Samples;
  /** Sum of x-db-queries over the answers that carried it, and how many did. */
  queries: number;
  counted: number;
  graphqlErrors: number;
  statuses: Record<string, number>;
  cpu: { server: number | null; neo4j: number | null; loadgen: number };
  load: MachineLoad | null;
  rssMaxMb: number | null;
  /** The service's cache lookups meanwhile (null: the diagnostic could not be read; undefined: not the service). */
  cache?: CacheCounts | null;
}

const COUNT_KEYS = [
  'modelHits',
  'modelMisses',
  'engineHits',
  'engineMisses',
  'versionReads',
  'versionRequests',
] as const satisfies readonly (keyof CacheCounts)[];

/** What the counters moved by between two readings (null when either could not be read). */
function cacheDelta(before: CacheCounts | null, after: CacheCounts | null): CacheCounts | null {
  if (!before || !after) return null;
  return Object.fromEntries(COUNT_KEYS.map((k) => [k, after[k] - before[k]])) as unknown as CacheCounts;
}

/** Several parts' counts as one: undefined when none is the service's, null when one could not be read. */
function sumCounts(counts: (CacheCounts | null | undefined)[]): CacheCounts | null | undefined {
  if (counts.every((c) => c === undefined)) return undefined;
  if (counts.some((c) => !c)) return null;
  return Object.fromEntries(
    COUNT_KEYS.map((k) => [k, counts.reduce<number>((a, c) => a + c![k], 0)]),
  ) as unknown as CacheCounts;
}

/** A run's cache figures for its measurement: hit rate over both caches, version statements per request. */
function cacheFigures(cache: CacheCounts | null): Partial<Measurement> {
  if (!cache) return { cache: null, cacheHitRate: null, versionReadsPerRequest: null };
  const hits = cache.modelHits + cache.engineHits;
  const lookups = hits + cache.modelMisses + cache.engineMisses;
  return {
    cache,
    cacheHitRate: lookups > 0 ? hits / lookups : null,
    versionReadsPerRequest: cache.versionRequests > 0 ? cache.versionReads / cache.versionRequests : null,
  };
}

/** Several stretches of one job (interleaved with other jobs) as one. */
function mergeParts(parts: Part[]): Part {
  const sumOrNull = (xs: (number | null)[]) =>
    xs.some((x) => x === null) ? null : xs.reduce<number>((a, x) => a + x!, 0);
  const seconds = parts.reduce((a, p) => a + p.seconds, 0);
  const latencies = new Samples();
  const statuses: Record<string, number> = {};
  for (const p of parts) {
    latencies.append(p.latencies);
    for (const [k, n] of Object.entries(p.statuses)) statuses[k] = (statuses[k] ?? 0) + n;
  }
  const loads = parts.map((p) => p.load);
  const weighted = (pick: (l: MachineLoad) => number) =>
    parts.reduce((a, p) => a + (p.load ? pick(p.load) * p.seconds : 0), 0) / Math.max(seconds, 0.001);
  const rss = parts.map((p) => p.rssMaxMb).filter((x): x is number => x !== null);
  return {
    seconds,
    ok: parts.reduce((a, p) => a + p.ok, 0),
    non2xx: parts.reduce((a, p) => a + p.non2xx, 0),
    errors: parts.reduce((a, p) => a + p.errors, 0),
    latencies,
    queries: parts.reduce((a, p) => a + p.queries, 0),
    counted: parts.reduce((a, p) => a + p.counted, 0),
    graphqlErrors: parts.reduce((a, p) => a + p.graphqlErrors, 0),
    statuses,
    cpu: {
      server: sumOrNull(parts.map((p) => p.cpu.server)),
      neo4j: sumOrNull(parts.map((p) => p.cpu.neo4j)),
      loadgen: parts.reduce((a, p) => a + p.cpu.loadgen, 0),
    },
    load: loads.every((l) => l !== null)
      ? {
          busyCores: weighted((l) => l.busyCores),
          otherCores: weighted((l) => l.otherCores),
          stealPct: weighted((l) => l.stealPct),
        }
      : null,
    rssMaxMb: rss.length > 0 ? Math.max(...rss) : null,
    cache: sumCounts(parts.map((p) => p.cache)),
  };
}

function measurement(
  scenario: string,
  target: Target,
  connections: number,
  r: Part,
  extra: Partial<Measurement> = {},
): Measurement {
  const sorted = r.latencies.sorted();
  let sum = 0;
  for (const v of sorted) sum += v;
  const perRequest = (ms: number | null) => (ms === null || r.ok === 0 ? null : ms / r.ok);
  const { cpu } = r;
  return {
    scenario,
    target,
    connections,
    seconds: r.seconds,
    requests: r.ok,
    rps: r.ok / r.seconds,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean: sorted.length > 0 ? sum / sorted.length : Number.NaN,
    non2xx: r.non2xx,
    errors: r.errors,
    queriesPerRequest: r.counted > 0 ? r.queries / r.counted : null,
    cpuMsPerRequest: {
      server: perRequest(cpu.server),
      neo4j: perRequest(cpu.neo4j),
      loadgen: perRequest(cpu.loadgen),
    },
    cpuCoresBusy: ((cpu.server ?? 0) + (cpu.neo4j ?? 0) + cpu.loadgen) / 1000 / Math.max(r.seconds, 0.001),
    rssMaxMb: r.rssMaxMb,
    statuses: r.statuses,
    ...(r.graphqlErrors > 0 ? { graphqlErrors: r.graphqlErrors } : {}),
    ...(r.cache === undefined ? {} : cacheFigures(r.cache)),
    ...extra,
    machine: r.load,
  };
}

/** Starts the service as `npm start` does (`node <its flags> dist/server.js`, built first), its output in a log file; waits until ready. */
async function startService(uri: string, secret: string, workDir: string, profileDir: string | undefined) {
  const build = spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: ROOT, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`building the service failed:\n${build.stdout}${build.stderr}`);
  const port = await freePort();
  const logPath = path.join(workDir, 'service.log');
  const fd = openSync(logPath, 'w');
  const child = spawn(
    process.execPath,
    [
      ...serviceNodeFlags(),
      ...NODE_FLAGS,
      ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
      'dist/server.js',
    ],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        NODE_ENV: 'production',
        PORT: String(port),
        HOST,
        NEO4J_URI: uri,
        AUTH_JWT_SECRET: secret,
        LOG_LEVEL,
      },
      stdio: ['ignore', fd, fd],
    },
  );
  closeSync(fd);
  children.add(child);
  const tail = () => readFileSync(logPath, 'utf8').split('\n').slice(-30).join('\n');
  const base = `http://${HOST}:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`the service exited during start-up:\n${tail()}`);
    if (i > 480) throw new Error(`the service was not ready within 120 s:\n${tail()}`);
    try {
      const res = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(2_000) });
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    await sleep(250);
  }
  return { child, port, base, tail };
}

/**
 * A CPU profile summarised: self time by package / source area, inclusive time by area (the samples with that area
 * anywhere on the stack), and the hottest functions. Shares are of the time the process was busy (idle left out).
 */
function summariseProfile(file: string) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as {
    nodes: {
      id: number;
      callFrame: { functionName: string; url: string; lineNumber: number };
      hitCount?: number;
      children?: number[];
    }[];
    timeDeltas: number[];
  };
  const totalMs = profile.timeDeltas.reduce((a, b) => a + b, 0) / 1000;
  const area = (url: string, fn: string) => {
    if (url === '') return fn.startsWith('(') ? fn : '(native)';
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
    if (pkg) return pkg[1]!;
    const src = /\/(src\/.+)$/.exec(url);
    if (src) return src[1]!;
    return url;
  };
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  let busy = 0;
  let idle = 0;
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const byFunction = new Map<string, number>();
  const add = (m: Map<string, number>, k: string, h: number) => m.set(k, (m.get(k) ?? 0) + h);
  for (const n of profile.nodes) {
    const h = n.hitCount ?? 0;
    if (h === 0) continue;
    if (n.callFrame.functionName === '(idle)') {
      idle += h;
      continue;
    }
    busy += h;
    const a = area(n.callFrame.url, n.callFrame.functionName);
    add(self, a, h);
    add(byFunction, `${n.callFrame.functionName || '(anonymous)'} ${a}:${n.callFrame.lineNumber + 1}`, h);
    const onStack = new Set<string>();
    for (let id: number | undefined = n.id; id !== undefined; id = parent.get(id)) {
      const frame = byId.get(id)!.callFrame;
      if (frame.url !== '') onStack.add(area(frame.url, frame.functionName));
    }
    for (const x of onStack) add(inclusive, x, h);
  }
  const top = (m: Map<string, number>, count: number) =>
    [...m]
      .sort((x, y) => y[1] - x[1])
      .slice(0, count)
      .map(([name, h]) => ({ name, share: h / Math.max(busy, 1) }));
  return {
    totalMs,
    busyMs: (totalMs * busy) / Math.max(busy + idle, 1),
    areas: top(self, 20),
    inclusive: top(inclusive, 25),
    functions: top(byFunction, 25),
  };
}

/** How many attributes of the storm's self-referencing type refer to it (each nesting level multiplies by this). */
const LOOP_ATTRIBUTES = 45;

/**
 * The hostile-request storm (issue #11): in the storm tenant, a user type to declare on and a type whose attributes
 * all refer to itself; then each shape of bench/storm.ts as a phase of its own, with the service's RSS sampled every
 * 100 ms (before, peak, and over the STORM_AFTER_MS after) and GET /healthz probed every 50 ms from a process of
 * its own over one keep-alive connection.
 */
async function hostileStorm(port: number, api: Api, sampler: RssSampler) {
  const started = performance.now();
  const must = async (what: string, status: number[], method: string, urlPath: string, body?: unknown) => {
    const res = await api.call(method, urlPath, body);
    if (!status.includes(res.status))
      throw new Error(
        `storm setup: ${what} answered ${res.status} ${JSON.stringify(res.json).slice(0, 400)}`,
      );
    return res.json;
  };
  const typeGuidOf = (json: Record<string, unknown>) =>
    (json.DATA as { entity_type: { guid: string } }).entity_type.guid;
  const targetGuid = typeGuidOf(
    await must('creating the target type', [201, 200], 'POST', '/entities/types', { name: 'Storm target' }),
  );
  const loopGuid = typeGuidOf(
    await must('creating the looping type', [201, 200], 'POST', '/entities/types', { name: 'Storm loop' }),
  );
  for (let i = 0; i < LOOP_ATTRIBUTES; i++) {
    await must(`declaring ref${i}`, [201], 'POST', `/entities/types/${loopGuid}/attributes`, {
      name: `ref${i}`,
      value_type: 'entity_ref',
      cardinality: 'single',
      allowed_ref_type: loopGuid,
    });
  }
  // The looping type answers an ordinary question (so a refusal below is the storm's shape, nothing else).
  const plain = await must('a plain GraphQL question', [200], 'POST', '/graphql', {
    query: `{ entityType(guid: "${loopGuid}") { attributes { name allowedRefType { guid } } } }`,
  });
  const plainAttributes =
    (
      plain.data as
        | { entityType?: { attributes?: { allowedRefType: { guid: string } | null }[] } }
        | undefined
    )?.entityType?.attributes ?? [];
  const loopRefs = plainAttributes.filter((a) => a.allowedRefType?.guid === loopGuid).length;
  if (loopRefs !== LOOP_ATTRIBUTES)
    throw new Error(
      `storm setup: the looping type has ${loopRefs} self-references, not ${LOOP_ATTRIBUTES}: ` +
        JSON.stringify(plain).slice(0, 600),
    );
  const setup: StormSetup = {
    tenant: STORM_TENANT,
    targetGuid,
    loopGuid,
    loopAttributes: plainAttributes.length,
    loopSelfReferences: loopRefs,
    seconds: (performance.now() - started) / 1000,
  };
  log(
    `\nStorm tenant ${STORM_TENANT}: type ${targetGuid} to declare on; type ${loopGuid} with ${loopRefs} ` +
      `attributes referring to itself (${plainAttributes.length} with the platform ones).`,
  );

  // Every body built once, shared by all the requests that send it.
  const declarePath = `/entities/types/${targetGuid}/attributes`;
  const tiny = tinyObjectsBody();
  const many = manyKeysBody();
  const deep = deepBody(5_000);
  const mb = (b: number) => `${(b / 1024 ** 2).toFixed(1)} MB`;
  const shapes: StormShape[] = [
    {
      kind: 'declared',
      label: 'Content-Length 9 MB, 64 KB sent',
      expected: '413 request_too_large',
      requests: 640,
      concurrency: 64,
      timeoutMs: 60_000,
      request: {
        path: '/entities/types',
        body: { mode: 'declared', declaredBytes: 9 * 1024 ** 2, sendBytes: 64 * 1024 },
      },
    },
    {
      kind: 'streamed',
      label: 'chunked, streamed until answered (9 MB at most)',
      expected: '413 request_too_large',
      requests: 64,
      concurrency: 64,
      timeoutMs: 60_000,
      request: { path: '/entities/types', body: { mode: 'streamed', limitBytes: 9 * 1024 ** 2 } },
    },
    {
      kind: 'tiny-objects',
      label: `/entities/lookup, ${tiny.values.toLocaleString('en')} {} in ${mb(tiny.data.length)}`,
      expected: '400 json_too_large',
      requests: 128,
      concurrency: 64,
      timeoutMs: 60_000,
      request: { path: '/entities/lookup', body: { mode: 'whole', data: tiny.data } },
    },
    {
      kind: 'many-keys',
      label: `declaration with ${many.keys.toLocaleString('en')} unknown keys, ${mb(many.data.length)}`,
      expected: '400 json_too_large',
      requests: 128,
      concurrency: 64,
      timeoutMs: 60_000,
      request: { path: declarePath, body: { mode: 'whole', data: many.data } },
    },
    {
      kind: 'deep',
      label: `declaration, default_value nested 5,000 deep (${(deep.length / 1024).toFixed(1)} KB)`,
      expected: '400 json_too_deep',
      requests: 640,
      concurrency: 64,
      timeoutMs: 60_000,
      request: { path: declarePath, body: { mode: 'whole', data: deep } },
    },
    {
      kind: 'slow',
      label: 'declaration, Content-Length 1,000, 1 byte every 5 s',
      expected: '408 request_timeout',
      requests: 64,
      concurrency: 64,
      timeoutMs: 120_000,
      request: { path: declarePath, body: { mode: 'trickle', data: slowBody(1_000), everyMs: 5_000 } },
    },
    {
      kind: 'graphql-nested',
      label: `GraphQL: 5 aliases x entityType, attributes nested 4 deep (${LOOP_ATTRIBUTES} self-references)`,
      expected: '200 query_too_costly',
      requests: 640,
      concurrency: 64,
      timeoutMs: 60_000,
      request: { path: '/graphql', body: { mode: 'whole', data: graphqlNestedBody(loopGuid, 5, 4) } },
    },
    {
      kind: 'graphql-pages',
      label: 'GraphQL: 15 aliases x entityTypes(first: $n = 500), attributes of referenced types',
      expected: '200 query_too_costly',
      requests: 640,
      concurrency: 64,
      timeoutMs: 60_000,
      request: { path: '/graphql', body: { mode: 'whole', data: graphqlPagesBody(15, 500) } },
    },
    {
      kind: 'graphql-fragments',
      label: 'GraphQL: two fragments, each spread 60 times in the other (3,600 expansions from 1 KB)',
      expected: '200 query_too_costly',
      requests: 640,
      concurrency: 64,
      timeoutMs: 60_000,
      request: { path: '/graphql', body: { mode: 'whole', data: graphqlFragmentsBody(loopGuid, 60) } },
    },
  ];

  const probe = await startHealthProbe(ROOT, port, 50);
  const phases: StormPhase[] = [];
  try {
    log(
      `Storm: ${shapes.length} phases, each followed by ${STORM_AFTER_MS / 1000} s of watching the service's RSS; ` +
        '/healthz probed every 50 ms ...',
    );
    sampler.every(100);
    await sleep(500); // the probe's keep-alive connection is open before the first phase
    for (const shape of shapes) {
      sampler.phase = `storm-${shape.kind}`;
      const rssBeforeMb = sampler.sample() ?? 0;
      const from = epochNow();
      const r = await runStorm(port, api.authorization, shape);
      const to = epochNow();
      sampler.sample();
      const rssMaxMb = sampler.phaseMax.get(sampler.phase) ?? 0;
      // The STORM_AFTER_MS after the last answer: when the RSS is first back under the target, and where it is then.
      sampler.phase = `storm-${shape.kind} after`;
      const ended = performance.now();
      let underMs: number | null = null;
      for (;;) {
        const now = sampler.sample();
        const at = performance.now() - ended;
        if (underMs === null && now !== null && now < TARGETS.stormSettleRssMb) underMs = at;
        if (at >= STORM_AFTER_MS) break;
        await sleep(100);
      }
      const rssAfterMb = sampler.sample() ?? 0;
      const phase: StormPhase = {
        ...r,
        rssBeforeMb,
        rssMaxMb,
        rssAfterMaxMb: sampler.phaseMax.get(sampler.phase) ?? 0,
        rssAfterMb,
        rssUnderTargetAfterMs: underMs,
        health: probe.stats(from, to),
        healthAfter: probe.stats(to, epochNow()),
      };
      phases.push(phase);
      const answers = Object.entries(r.statuses)
        .map(([k, n]) => `${n}x ${k}`)
        .join(', ');
      log(
        `  ${shape.kind.padEnd(14)} ${r.requests} requests (${r.concurrency} at once): ${answers} in ` +
          `${fmt(r.ms / 1000)} s (answer p50 ${fmt(r.answerMs.p50, 0)} ms, max ${fmt(r.answerMs.max, 0)} ms); RSS ` +
          `${fmt(rssBeforeMb, 0)} -> max ${fmt(rssMaxMb, 0)} -> ${fmt(rssAfterMb, 0)} MB ${STORM_AFTER_MS / 1000} s ` +
          `after; /healthz p99 ${fmt(phase.health.p99, 1)} max ${fmt(phase.health.max, 1)} ms` +
          `${phase.health.failures > 0 ? `, ${phase.health.failures} failed` : ''}`,
      );
    }
  } finally {
    await probe.stop();
  }
  return { api, setup, phases };
}

async function main(): Promise<number> {
  const started = performance.now();
  let local: LocalNeo4j | undefined;
  let workDir: string | undefined;
  let driver: Driver | undefined;
  let service: { child: ChildProcess; tail: () => string } | undefined;
  const baselineChildren: ChildProcess[] = [];
  let sampler: RssSampler | undefined;
  const phases: Record<string, number> = {};
  let phaseStarted = performance.now();
  const mark = (name: string) => {
    phases[name] = (performance.now() - phaseStarted) / 1000;
    phaseStarted = performance.now();
  };
  try {
    workDir = await mkdtemp(path.join(os.tmpdir(), 'bench-'));
    workDirToRemove = workDir;
    let uri = env.NEO4J_URI;
    if (!uri) {
      const port = await freePort();
      log(`Starting a throwaway Neo4j on ${HOST}:${port} ...`);
      local = await startLocalNeo4j({
        dataDir: path.join(workDir, 'neo4j'),
        port,
        heapMb: 1536,
        pageCacheMb: 512,
      });
      children.add(local.process);
      uri = local.uri;
    } else {
      log(`Using NEO4J_URI=${uri} (Neo4j's CPU is not measured: its process is not ours)`);
    }
    driver = createDriver({ uri, user: env.NEO4J_USER, password: env.NEO4J_PASSWORD });
    const exec = createExecutor(driver, DATABASE);
    await migrate(exec);
    mark('neo4j');

    const secret = `bench-${Math.random().toString(36).slice(2)}-0123456789abcdefghijklmnopqrstuvwxyz`;
    const profileDir = CPU_PROF ? path.join(workDir, 'profile') : undefined;
    const svc = await startService(uri, secret, workDir, profileDir);
    service = svc;
    sampler = new RssSampler(svc.child.pid);
    sampler.every(500);
    log(`Service: ${svc.base} (pid ${svc.child.pid}, LOG_LEVEL=${LOG_LEVEL}, NODE_ENV=production)`);
    mark('service start');

    const tokens = new Map<string, string>();
    const tokenOf = async (tenant: string) => {
      let t = tokens.get(tenant);
      if (!t) {
        t = `Bearer ${await mintToken(secret, { tenant })}`;
        tokens.set(tenant, t);
      }
      return t;
    };

    /** The catalog, the baselines and every measured scenario (all skipped with --storm-only). */
    const measureScenarios = async (sampler: RssSampler, driver: Driver, uri: string) => {
      log(
        PREVIOUS
          ? `Writes compared with the previous run (${PREVIOUS.date}${PREVIOUS.quick ? ', --quick' : ''}): x(b) at ` +
              `${TARGET_LEVEL} connections ${Object.entries(PREVIOUS.writeRatiosToB)
                .map(([id, x]) => `${id} ${x === null ? '–' : x.toPrecision(3)}`)
                .join(', ')}.`
          : 'No previous run (bench/results/latest.json) to compare the writes with.',
      );
      // ---- catalog ----
      sampler.phase = 'load';
      log(
        `Loading the catalog: ${DEFAULT_CATALOG.tenants} tenants, one with ${BIG_TYPES.toLocaleString('en')} types ...`,
      );
      const catalog: LoadedCatalog = await withTimeout(
        'loading the catalog',
        loadCatalog(
          driver,
          async (tenant) => {
            const res = await apiFor(svc.base, await tokenOf(tenant)).call(
              'GET',
              '/entities/types?page_size=1',
            );
            if (res.status !== 200) throw new Error(`GET /entities/types for ${tenant}: ${res.status}`);
          },
          { ...DEFAULT_CATALOG, bigTypes: BIG_TYPES, database: DATABASE, log },
        ),
        900_000,
      );
      log(
        `Catalog loaded in ${fmt(catalog.seconds)} s: ${catalog.counts.types} types, ${catalog.counts.attributes} ` +
          `attribute definitions, ${catalog.counts.entities} entities, ${catalog.counts.relationships} relationships ` +
          '(besides the system types the service created).',
      );
      const big = catalog.bigTenant;
      const api = apiFor(svc.base, await tokenOf(big));
      const graphApi = apiFor(svc.base, await tokenOf(catalog.graphTenant));
      const headersOf = (a: Api) => ({ authorization: a.authorization, 'content-type': 'application/json' });

      // The service's cache counters (issue #12), read by an operator (an administrator of the default tenant)
      // before and after each measured run of the service. The diagnostic touches neither cache, and its requests
      // go outside the runs' timing, CPU and request counts.
      const operator = apiFor(
        svc.base,
        `Bearer ${await mintToken(secret, { tenant: process.env.DEFAULT_TENANT || 'default', roles: ['admin'] })}`,
      );
      let countersProblem: string | undefined;
      const cacheCounters = async (): Promise<CacheCounts | null> => {
        try {
          const res = await operator.call('GET', '/admin/engine-cache');
          const data = res.json.DATA as
            | {
                hits?: unknown;
                misses?: unknown;
                model_cache?: { hits?: unknown; misses?: unknown };
                model_versions?: { reads?: unknown; requests?: unknown };
              }
            | undefined;
          const counts = {
            modelHits: data?.model_cache?.hits,
            modelMisses: data?.model_cache?.misses,
            engineHits: data?.hits,
            engineMisses: data?.misses,
            versionReads: data?.model_versions?.reads,
            versionRequests: data?.model_versions?.requests,
          };
          if (res.status !== 200 || !Object.values(counts).every((v) => typeof v === 'number')) {
            throw new Error(`answered ${res.status} ${JSON.stringify(res.json).slice(0, 300)}`);
          }
          return counts as CacheCounts;
        } catch (e) {
          // Said once: the runs are still measured, only without hit rates.
          if (countersProblem === undefined) {
            countersProblem = e instanceof Error ? e.message : String(e);
            log(`GET /admin/engine-cache failed, so no hit rates: ${countersProblem}`);
          }
          return null;
        }
      };
      await cacheCounters();

      mark('catalog load');

      // Baselines (b) and (c) start in their own processes meanwhile.
      const constantStarting = startAnnouncingChild(
        'bench/baselines/constant-server.ts',
        { PORT: '0' },
        ROOT,
      );
      const neoGraphqlStarting = startAnnouncingChild(
        'bench/baselines/neo4j-graphql-server.ts',
        {
          PORT: '0',
          NEO4J_URI: uri,
          NEO4J_USER: env.NEO4J_USER ?? '',
          NEO4J_PASSWORD: env.NEO4J_PASSWORD ?? '',
          NEO4J_DATABASE: DATABASE ?? '',
        },
        ROOT,
      ).then(
        (started) => ({ started, problem: undefined }),
        (e: unknown) => ({ started: undefined, problem: e instanceof Error ? e.message : String(e) }),
      );
      constantStarting.catch(() => {});

      // ---- the cursor at row DEEP_ROW: a real next_cursor, by paging there once ----
      sampler.phase = 'prepare';
      let cursor: string | null = null;
      let rows = 0;
      let lastName = '';
      const pagingStarted = performance.now();
      const pagePath = (c: string | null) =>
        `/entities/types?page_size=500${c ? `&cursor=${encodeURIComponent(c)}` : ''}`;
      const pageCursors: (string | null)[] = [];
      while (rows < DEEP_ROW) {
        pageCursors.push(cursor);
        const res = await api.call('GET', pagePath(cursor));
        const data = res.json.DATA as { entity_types: { name: string }[]; next_cursor: string | null };
        if (res.status !== 200 || !data.next_cursor)
          throw new Error(`paging stopped at row ${rows}: ${res.status}`);
        rows += data.entity_types.length;
        lastName = data.entity_types[data.entity_types.length - 1]!.name;
        cursor = data.next_cursor;
      }
      const deepCursor = cursor!;
      const deepKey = nameKey(lastName);
      const walkSeconds = (performance.now() - pagingStarted) / 1000;
      log(
        `Cursor at row ${rows.toLocaleString('en')} obtained by paging (500 a page) in ${fmt(walkSeconds)} s.`,
      );

      // ---- GraphQL round trips per page size ----
      const roundTrips: Report['graphqlRoundTrips'] = [];
      // Once untimed first: Neo4j plans the statements on their first use.
      await graphApi.call('POST', '/graphql', { query: serviceCatalogQuery(100) });
      for (const first of [1, 10, 50, 100, 200]) {
        const t = performance.now();
        const res = await graphApi.call('POST', '/graphql', { query: serviceCatalogQuery(first) });
        const ms = performance.now() - t;
        const data = res.json.data as
          | { entityTypes?: { edges: { node: { attributes: unknown[] } }[] } }
          | undefined;
        const errors = res.json.errors as { extensions?: { reason?: string } }[] | undefined;
        const edges = data?.entityTypes?.edges ?? [];
        roundTrips.push({
          first,
          status: res.status,
          queries: res.headers.get('x-db-queries') === null ? null : Number(res.headers.get('x-db-queries')),
          types: edges.length,
          attributes: edges.reduce((n, e) => n + e.node.attributes.length, 0),
          ms,
          ...(errors?.[0] ? { reason: errors[0].extensions?.reason ?? 'error' } : {}),
        });
      }
      log(
        `GraphQL round trips by page size: ${roundTrips
          .map(
            (r) =>
              `first ${r.first}: ${r.reason ? `refused (${r.reason})` : `${r.queries} queries, ${r.attributes} attributes, ${fmt(r.ms, 0)} ms`}`,
          )
          .join(', ')}`,
      );

      // ---- baselines (b) and (c) in their own processes ----
      const constant = await constantStarting;
      baselineChildren.push(constant.child);

      // The walk's first and last ten pages again, one at a time, now that nothing else is starting.
      const timePages = async (cursors: (string | null)[]) => {
        const ms: number[] = [];
        for (const c of cursors) {
          const t = performance.now();
          const res = await api.call('GET', pagePath(c));
          if (res.status !== 200) throw new Error(`page walk: ${res.status}`);
          ms.push(performance.now() - t);
        }
        return ms.sort((x, y) => x - y)[Math.floor(ms.length / 2)] ?? Number.NaN;
      };
      const pageWalk = {
        pages: pageCursors.length,
        seconds: walkSeconds,
        firstTenMedianMs: await timePages(pageCursors.slice(0, 10)),
        lastTenMedianMs: await timePages(pageCursors.slice(-10)),
      };
      log(
        `Pages of 500, one at a time: median ${fmt(pageWalk.firstTenMedianMs)} ms for the first ten, ` +
          `${fmt(pageWalk.lastTenMedianMs)} ms for the last ten before row ${rows.toLocaleString('en')}.`,
      );
      const neoGraphqlStart = await neoGraphqlStarting;
      let neoGraphql: { child: ChildProcess; port: number } | undefined = neoGraphqlStart.started;
      let neoGraphqlProblem: string | undefined = neoGraphqlStart.problem;
      if (neoGraphql) baselineChildren.push(neoGraphql.child);
      else log(`Baseline (c) skipped: @neo4j/graphql did not start: ${neoGraphqlProblem}`);
      const neoGraphqlBody = JSON.stringify({
        query: NEO4J_GRAPHQL_QUERY,
        variables: { tenant: catalog.graphTenant, limit: 100 },
      });
      let neoGraphqlShape: { types: number; attributes: number } | undefined;
      if (neoGraphql) {
        const res = await fetch(`http://${HOST}:${neoGraphql.port}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: neoGraphqlBody,
          signal: AbortSignal.timeout(60_000),
        });
        const json = (await res.json()) as {
          data?: { entityTypes: { attributes: unknown[] }[] };
          errors?: { message: string }[];
        };
        if (res.status !== 200 || json.errors || !json.data) {
          neoGraphqlProblem = `@neo4j/graphql answered ${res.status}: ${JSON.stringify(json.errors ?? json).slice(0, 500)}`;
          log(`Baseline (c) skipped: ${neoGraphqlProblem}`);
          await stopChild(neoGraphql.child);
          neoGraphql = undefined;
        } else {
          neoGraphqlShape = {
            types: json.data.entityTypes.length,
            attributes: json.data.entityTypes.reduce((n, t) => n + t.attributes.length, 0),
          };
        }
      }

      // ---- scenarios ----
      let counter = 0;
      const tag = catalog.runId;
      const existingBodies = catalog.existingNames.map((name) => JSON.stringify({ name }));
      const entityBodies = Array.from({ length: 1_000 }, (_, i) =>
        JSON.stringify({
          type_guid: catalog.wideGuids[1],
          name: `bench-entity-${i}`,
          values: catalog.entityValues(i),
        }),
      );
      const graphqlBody = JSON.stringify({ query: serviceCatalogQuery(100) });

      // Issue #14: pages of the tagged type's entities filtered by tags. The last page of a tag (rows 200 to 299 of
      // its 300) starts at a real cursor, found by paging there once, for the first FILTER_TAGS tags.
      const FILTER_TAGS = 20;
      const tagged = catalog.taggedType;
      const tagsDefinition = platformAttributeGuid(big, 'tags');
      const filterPath = (where: string[], after?: string) =>
        `/entities?type_guid=${tagged}${where.map((w) => `&where=${w}`).join('')}&page_size=100` +
        (after ? `&cursor=${encodeURIComponent(after)}` : '');
      const lastPages: { tag: string; cursor: string; key: string }[] = [];
      for (const tag of catalog.tagGuids.slice(0, FILTER_TAGS)) {
        let cursor: string | undefined;
        let key = '';
        for (let page = 0; page < 2; page++) {
          const res = await api.call('GET', filterPath([`tags:${tag}`], cursor));
          const data = res.json.DATA as {
            entities: { guid: string; name: string }[];
            next_cursor: string | null;
          };
          const last = data?.entities[data.entities.length - 1];
          if (res.status !== 200 || !data.next_cursor || !last)
            throw new Error(
              `filter paging for tag ${tag}: ${res.status} ${JSON.stringify(res.json).slice(0, 200)}`,
            );
          cursor = data.next_cursor;
          key = listKey(nameKey(last.name), last.guid);
        }
        lastPages.push({ tag, cursor: cursor as string, key });
      }
      const tagAt = (i: number) => catalog.tagGuids[i % FILTER_TAGS]!;
      const filterDirect = (guids: string[], after: string) =>
        exec.readOne((run) =>
          readEntityPage(run, {
            tenant: big,
            typeGuid: tagged,
            after,
            drive: { attr: 'tags', guids },
            others: [],
            definitions: [tagsDefinition],
            window: 101,
            limit: 101,
          }),
        );
      const listGuid = catalog.wideGuids[0]!;
      const rootKey = nameKey('entity');
      const scenarios: Scenario[] = [
        {
          id: 'create-existing',
          label: 'create-or-get, existing name',
          ok: [200],
          request: (i) => ({
            method: 'POST',
            path: '/entities/types',
            body: existingBodies[i % existingBodies.length]!,
          }),
          direct: (i) => {
            const key = nameKey(catalog.existingNames[i % catalog.existingNames.length]!);
            return exec.readOne((run) => findTypeByName(run, big, key, typeGuid(big, key)));
          },
        },
        {
          id: 'create-new',
          label: 'create-or-get, new name',
          ok: [201],
          request: (i) => ({ method: 'POST', path: '/entities/types', body: `{"name":"New ${tag} ${i}"}` }),
        },
        {
          id: 'page-start',
          label: 'type page at row 0 (100 rows)',
          ok: [200],
          request: () => ({ method: 'GET', path: '/entities/types?page_size=100' }),
          direct: () => exec.readOne((run) => listTypes(run, big, '', 101)),
        },
        {
          id: 'page-deep',
          label: `type page at row ${DEEP_ROW.toLocaleString('en')} (100 rows)`,
          ok: [200],
          request: () => ({
            method: 'GET',
            path: `/entities/types?page_size=100&cursor=${encodeURIComponent(deepCursor)}`,
          }),
          direct: () => exec.readOne((run) => listTypes(run, big, deepKey, 101)),
        },
        {
          id: 'attributes',
          label: 'attribute listing, 200-attribute type',
          ok: [200],
          request: () => ({ method: 'GET', path: `/entities/types/${listGuid}/attributes` }),
          direct: () => exec.readOne((run) => findAttributesApplyingTo(run, big, listGuid, rootKey)),
        },
        {
          id: 'declare',
          label: 'declare an attribute',
          ok: [201],
          request: (i) => ({
            method: 'POST',
            path: `/entities/types/${catalog.declareGuids[i % catalog.declareGuids.length]}/attributes`,
            body: `{"name":"d_${tag}_${i}","value_type":"string","cardinality":"single"}`,
          }),
        },
        {
          id: 'entity-write',
          label: 'entity write with 12 values (+ default)',
          ok: [201],
          request: (i) => ({
            method: 'POST',
            path: '/entities',
            body: entityBodies[i % entityBodies.length]!,
          }),
        },
        {
          id: 'filter-tag',
          primes: 2 * FILTER_TAGS,
          label: 'entities with a tag (of 300), page at row 0 (100 rows)',
          ok: [200],
          request: (i) => ({ method: 'GET', path: filterPath([`tags:${tagAt(i)}`]) }),
          direct: (i) => filterDirect([tagAt(i)], ''),
        },
        {
          id: 'filter-tag-last',
          primes: 2 * FILTER_TAGS,
          label: 'entities with a tag (of 300), last page (rows 200-299)',
          ok: [200],
          request: (i) => {
            const last = lastPages[i % lastPages.length]!;
            return { method: 'GET', path: filterPath([`tags:${last.tag}`], last.cursor) };
          },
          direct: (i) => {
            const last = lastPages[i % lastPages.length]!;
            return filterDirect([last.tag], last.key);
          },
        },
        {
          id: 'filter-two-tags',
          primes: 2 * FILTER_TAGS,
          label: 'entities with either of two tags (of 600), page at row 0 (100 rows)',
          ok: [200],
          request: (i) => ({ method: 'GET', path: filterPath([`tags:${tagAt(i)},${tagAt(i + 7)}`]) }),
          direct: (i) => filterDirect([tagAt(i), tagAt(i + 7)], ''),
        },
        {
          id: 'graphql',
          label: 'GraphQL: 100 types, attributes, owner and referenced types',
          ok: [200],
          graphql: true,
          api: graphApi,
          request: () => ({ method: 'POST', path: '/graphql', body: graphqlBody }),
        },
      ];
      const only = argv.only ? new Set(argv.only.split(',')) : null;
      const active = scenarios.filter((s) => !only || only.has(s.id));
      if (active.length === 0)
        throw new Error(`--only matches no scenario (${scenarios.map((s) => s.id).join(', ')})`);

      // Priming: every scenario answers as expected before anything is measured (and its plans are cached).
      sampler.phase = 'prepare';
      for (const s of active) {
        for (let k = 0; k < (s.graphql ? 2 : (s.primes ?? 5)); k++) {
          const r = s.request(counter++);
          const res = await (s.api ?? api).call(r.method, r.path, r.body);
          if (!s.ok.includes(res.status) || (s.graphql && res.json.errors)) {
            throw new Error(
              `${s.id}: ${r.method} ${r.path} answered ${res.status} ${JSON.stringify(res.json).slice(0, 400)}`,
            );
          }
        }
        if (s.direct) for (let k = 0; k < (s.primes ?? 5); k++) await s.direct(k);
      }
      mark('prepare');

      const runsPlanned =
        LEVELS.length *
        (1 +
          active.length +
          active.filter((s) => s.direct).length +
          (neoGraphql && active.some((s) => s.graphql) ? 1 : 0));
      log(
        `\nMeasuring: ${runsPlanned} runs of ${SECONDS} s, each after ${WARMUP} s of warm-up (GraphQL: ` +
          `${GRAPHQL_PER_CONNECTION} requests per connection, at least ${GRAPHQL_MIN}, no warm-up), at ` +
          `${LEVELS.join(', ')} connections ...`,
      );
      const measurements: Measurement[] = [];
      const record = (m: Measurement) => {
        measurements.push(m);
        const who = m.target === 'service' ? 'service' : `baseline (${m.target})`;
        log(
          `  ${m.scenario.padEnd(16)} ${who.padEnd(13)} c=${String(m.connections).padEnd(3)} ` +
            `${fmt(m.rps, 0).padStart(7)} req/s  p50 ${fmt(m.p50, 2).padStart(7)} ms  p99 ${fmt(m.p99, 2).padStart(7)} ms` +
            `${m.queriesPerRequest === null ? '' : `  q/req ${fmt(m.queriesPerRequest, 2)}`}` +
            `${m.cacheHitRate === undefined ? '' : `  hit ${hitPct(m.cacheHitRate)}%`}` +
            `${m.non2xx + m.errors > 0 ? `  non-2xx ${m.non2xx} errors ${m.errors}` : ''}` +
            `  rss ${m.rssMaxMb === null || m.rssMaxMb === undefined ? '-' : fmt(m.rssMaxMb, 0)} MB`,
        );
      };
      const neo4jPid = local?.process.pid;

      /** One job: a scenario against one target, warmed up once, measured in one or more interleaved parts. */
      interface Job {
        scenario: string;
        target: Target;
        graphql: boolean;
        warmed: boolean;
        parts: Part[];
        /** Runs the job for `length`, returning what it measured; `warmup` first when not warmed yet. */
        run(length: RunLength): Promise<Omit<Part, 'cpu' | 'load' | 'rssMaxMb' | 'cache'>>;
        warmup(): Promise<unknown>;
        pids: (number | undefined)[];
        serverPid: number | undefined;
        /** The service's cache counters, read around each part (service jobs only). */
        counters?: () => Promise<CacheCounts | null>;
      }
      const httpJob = (
        scenario: string,
        target: Target,
        base: string,
        reqHeaders: Record<string, string>,
        build: () => HttpRequest,
        graphql: boolean,
        serverPid: number | undefined,
        connections: number,
      ): Job => ({
        scenario,
        target,
        graphql,
        warmed: false,
        parts: [],
        serverPid,
        pids: [serverPid, neo4jPid],
        run: (length) => cannon(base, reqHeaders, connections, length, build, graphql),
        // GraphQL is warm from priming; a timed warm-up would leave many slow requests in flight.
        warmup: () =>
          graphql || WARMUP === 0
            ? Promise.resolve()
            : cannon(base, reqHeaders, connections, { seconds: WARMUP }, build, graphql),
      });
      const directJob = (s: Scenario, op: (i: number) => Promise<unknown>, connections: number): Job => ({
        scenario: s.id,
        target: 'a',
        graphql: false,
        warmed: false,
        parts: [],
        serverPid: undefined,
        pids: [neo4jPid],
        run: async (length) => {
          const r = await driverLoops(op, connections, 'seconds' in length ? length.seconds : SECONDS);
          return { ...r, non2xx: 0, queries: r.ok, counted: r.ok, graphqlErrors: 0, statuses: {} };
        },
        warmup: () => (WARMUP === 0 ? Promise.resolve() : driverLoops(op, connections, WARMUP)),
      });

      /** Runs one part of a job: warm-up the first time, then measured, then waits until the processes are idle. */
      const runPart = async (job: Job, connections: number, length: RunLength) => {
        if (!job.warmed) {
          await job.warmup();
          await settle(job.pids);
          job.warmed = true;
        }
        // Read before the part (after the warm-up), outside its timing and CPU.
        const countersBefore = job.counters ? await job.counters() : undefined;
        sampler!.phase = `${job.scenario}@${connections}`;
        const rssBefore = sampler!.sample();
        const { value, cpu, load } = await withCpu({ server: job.serverPid, neo4j: neo4jPid }, () =>
          job.run(length),
        );
        // Requests still in flight when the run ended are served before the next run begins.
        const settled = await settle(job.pids);
        if (settled > 2_000) log(`    (${fmt(settled / 1000)} s until the processes were idle again)`);
        // Read once the processes are idle, so the lookups of requests still in flight at the end are in.
        const countersAfter = job.counters ? await job.counters() : undefined;
        const rssMaxMb =
          job.target === 'service'
            ? Math.max(rssBefore ?? 0, sampler!.phaseMax.get(sampler!.phase) ?? 0)
            : null;
        const cache =
          countersBefore === undefined || countersAfter === undefined
            ? undefined
            : cacheDelta(countersBefore, countersAfter);
        job.parts.push({ ...value, cpu, load, rssMaxMb, cache });
      };

      /**
       * Runs jobs interleaved: `rounds` rounds, each giving every job SECONDS / rounds, so that whatever drifts during
       * the run (garbage collection, other processes) falls on all of them alike. Then records each.
       */
      const interleaved = async (jobs: Job[], connections: number, rounds: number) => {
        for (let k = 0; k < rounds; k++) {
          for (const job of jobs) await runPart(job, connections, { seconds: SECONDS / rounds });
        }
        for (const job of jobs)
          record(measurement(job.scenario, job.target, connections, mergeParts(job.parts)));
      };
      const ROUNDS = 2;

      for (const c of LEVELS) {
        const constantJob = httpJob(
          'constant',
          'b',
          `http://${HOST}:${constant.port}`,
          {},
          () => ({ method: 'GET', path: '/constant' }),
          false,
          constant.child.pid,
          c,
        );
        await interleaved([constantJob], c, 1);
        const serviceJob = (s: Scenario): Job => ({
          ...httpJob(
            s.id,
            'service',
            svc.base,
            headersOf(s.api ?? api),
            () => s.request(counter++),
            s.graphql === true,
            svc.child.pid,
            c,
          ),
          counters: cacheCounters,
        });
        // Reads, each interleaved with its baseline (a); the two type pages interleaved with each other as well.
        const reads = active.filter((s) => s.direct);
        const groups: Scenario[][] = [];
        const pages = reads.filter((s) => s.id === 'page-start' || s.id === 'page-deep');
        for (const s of reads) {
          if (pages.includes(s)) {
            if (s === pages[0]) groups.push(pages);
          } else {
            groups.push([s]);
          }
        }
        for (const group of groups) {
          await interleaved(
            group.flatMap((s) => [serviceJob(s), directJob(s, s.direct!, c)]),
            c,
            ROUNDS,
          );
        }
        // GraphQL: a fixed number of requests per connection, the service and then @neo4j/graphql.
        for (const s of active.filter((x) => x.graphql)) {
          const length: RunLength = {
            amount: Math.max(GRAPHQL_MIN, GRAPHQL_PER_CONNECTION * c),
            maxSeconds: GRAPHQL_MAX_SECONDS,
          };
          const jobs = [serviceJob(s)];
          if (neoGraphql) {
            jobs.push(
              httpJob(
                s.id,
                'c',
                `http://${HOST}:${neoGraphql.port}`,
                { 'content-type': 'application/json' },
                () => ({ method: 'POST', path: '/graphql', body: neoGraphqlBody }),
                true,
                neoGraphql.child.pid,
                c,
              ),
            );
          }
          for (const job of jobs) {
            await runPart(job, c, length);
            record(
              measurement(job.scenario, job.target, c, mergeParts(job.parts), { amount: length.amount }),
            );
          }
        }
        // Writes last: they grow the catalog.
        for (const s of active.filter((x) => !x.direct && !x.graphql)) {
          await interleaved([serviceJob(s)], c, 1);
        }
      }

      mark('runs');
      return {
        catalog,
        roundTrips,
        pageWalk,
        neo4jGraphql: neoGraphql
          ? ({ ok: true, shape: neoGraphqlShape ?? null } as const)
          : ({ ok: false, problem: neoGraphqlProblem ?? 'not run' } as const),
        active,
        measurements,
      };
    };
    const scenarioRun = STORM_ONLY ? null : await measureScenarios(sampler, driver, uri);

    // ---- the hostile-request storm ----
    const storm = await withTimeout(
      'the storm',
      hostileStorm(svc.port, apiFor(svc.base, await tokenOf(STORM_TENANT)), sampler),
      STORM_BUDGET_MS,
    );
    sampler.every(500);
    sampler.phase = 'after';
    await sleep(1_000);
    const rssAfter = sampler.sample();
    mark('storm');

    // The service still answers after everything.
    const after = await storm.api.call('GET', '/entities/types?page_size=1');
    if (after.status !== 200)
      throw new Error(`the service no longer answers after the storm: ${after.status}`);

    // ---- stop the children before reporting (the CPU profile is written on exit) ----
    sampler.stop();
    const exitCode = await stopChild(svc.child, 30_000);
    service = undefined;
    let profile: ReturnType<typeof summariseProfile> | undefined;
    if (profileDir) {
      const file = readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'));
      if (file) {
        profile = summariseProfile(path.join(profileDir, file));
        await mkdir(RESULTS, { recursive: true });
        copyFileSync(path.join(profileDir, file), path.join(RESULTS, 'service.cpuprofile.tmp'));
      }
    }

    mark('stop');
    const report: Report = {
      date: new Date().toISOString(),
      machine: {
        cpus: os.cpus().length,
        cpuModel: os.cpus()[0]?.model ?? 'unknown',
        memoryGb: Math.round(os.totalmem() / 1024 ** 3),
        node: process.version,
        neo4j: local
          ? 'local Community 5.26 (throwaway, heap 1536 MB, page cache 512 MB)'
          : `NEO4J_URI ${uri}`,
      },
      settings: {
        graphqlRequests: {
          perConnection: GRAPHQL_PER_CONNECTION,
          min: GRAPHQL_MIN,
          maxSeconds: GRAPHQL_MAX_SECONDS,
        },
        quick: QUICK,
        seconds: SECONDS,
        warmup: WARMUP,
        levels: LEVELS,
        targetLevel: TARGET_LEVEL,
        logLevel: LOG_LEVEL,
        serviceCommand: ['node', ...serviceNodeFlags(), ...NODE_FLAGS, 'dist/server.js'].join(' '),
        stormOnly: STORM_ONLY,
      },
      catalog: scenarioRun
        ? {
            tenants: scenarioRun.catalog.tenants.length,
            bigTenantTypes: BIG_TYPES,
            deepRow: DEEP_ROW,
            ...scenarioRun.catalog.counts,
            loadSeconds: scenarioRun.catalog.seconds,
          }
        : null,
      scenarios: (scenarioRun?.active ?? []).map((s) => ({
        id: s.id,
        label: s.label,
        baselineA: !!s.direct,
        graphql: !!s.graphql,
      })),
      measurements: scenarioRun?.measurements ?? [],
      graphqlRoundTrips: scenarioRun?.roundTrips ?? [],
      pageWalk: scenarioRun?.pageWalk ?? null,
      neo4jGraphql: scenarioRun?.neo4jGraphql ?? { ok: false, problem: 'not run (--storm-only)' },
      previous: PREVIOUS,
      memory: {
        maxRssMb: sampler.max,
        afterRssMb: rssAfter,
        phases: Object.fromEntries(sampler.phaseMax),
        series: sampler.series,
        storms: storm.phases,
        stormSetup: storm.setup,
      },
      serviceExitCode: exitCode,
      profile: profile ?? null,
      phases,
      totalSeconds: (performance.now() - started) / 1000,
    };

    // A storm-only run writes storm.{md,json}, leaving the full run's latest.{md,svg,json} as they are.
    const files = STORM_ONLY ? ['storm.json', 'storm.md'] : ['latest.json', 'latest.md', 'latest.svg'];
    await mkdir(RESULTS, { recursive: true });
    await writeFile(path.join(RESULTS, files[0]!), `${JSON.stringify(report, null, 2)}\n`);
    await writeFile(path.join(RESULTS, files[1]!), renderMarkdown(report));
    if (!STORM_ONLY) await writeFile(path.join(RESULTS, files[2]!), renderSvg(report));
    // The results are committed: formatted the way `npm run lint` (Biome) wants them.
    const biome = spawnSync(
      path.join(ROOT, 'node_modules', '.bin', 'biome'),
      ['check', '--write', ...files.map((f) => `bench/results/${f}`)],
      { cwd: ROOT, encoding: 'utf8', timeout: 60_000 },
    );
    if (biome.status !== 0)
      log(`(biome check --write of the results failed: ${biome.stderr || biome.error?.message})`);
    console.log(`\n${renderTable(report)}`);
    console.log(
      `Written: ${files.map((f) => `bench/results/${f}`).join(', ')} (${fmt(report.totalSeconds, 0)} s in all).`,
    );
    return 0;
  } catch (e) {
    console.error(`bench: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    if (service) console.error(`service log (last lines):\n${service.tail()}`);
    return 1;
  } finally {
    sampler?.stop();
    const quietly = async (what: string, work: () => Promise<unknown>) => {
      try {
        await withTimeout(what, work(), 60_000);
      } catch (e) {
        console.error(`bench: ${e instanceof Error ? e.message : String(e)}`);
      }
    };
    const svcChild = service?.child;
    if (svcChild) await quietly('stopping the service', () => stopChild(svcChild, 20_000));
    for (const child of baselineChildren)
      await quietly('stopping a baseline', () => stopChild(child, 10_000));
    const [openDriver, openLocal, dir] = [driver, local, workDir];
    if (openDriver) await quietly('closing the driver', () => openDriver.close());
    if (openLocal) {
      await quietly('stopping Neo4j', () => openLocal.stop());
      children.delete(openLocal.process);
    }
    if (dir && NODE_FLAGS.length > 0) {
      // What the flags made the service print (a GC trace, say) outlives the work directory.
      const kept = path.join(os.tmpdir(), 'bench-service.log');
      await quietly('keeping the service log', async () => copyFileSync(path.join(dir, 'service.log'), kept));
      console.log(`bench: the service's log is kept at ${kept}`);
    }
    if (dir) await quietly('removing the work directory', () => rm(dir, { recursive: true, force: true }));
    workDirToRemove = undefined;
  }
}

// Last resort: whatever hangs, the process ends by itself (children are killed on exit, the work directory
// with the throwaway Neo4j is removed).
let workDirToRemove: string | undefined;
process.on('exit', () => {
  if (workDirToRemove) rmSync(workDirToRemove, { recursive: true, force: true });
});
const budgetSeconds =
  900 +
  STORM_BUDGET_MS / 1000 +
  LEVELS.length * (14 * (SECONDS + WARMUP + 3) * 1.5 + 2 * (GRAPHQL_MAX_SECONDS + 60));
setTimeout(() => {
  console.error(`bench: watchdog expired after ${Math.round(budgetSeconds)} s, exiting`);
  process.exit(2);
}, budgetSeconds * 1000).unref();
process.once('SIGINT', () => {
  console.error('bench: interrupted');
  process.exit(130);
});

process.exit(await main());
