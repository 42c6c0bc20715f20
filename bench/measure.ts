// Measuring: a scenario's requests through autocannon, baseline (a)'s loops through the driver, the CPU every
// process spent meanwhile, and the cache counters, turned into one measurement per scenario and level.
// Over 300 lines: one measurement (traffic, every process's CPU, the cache counters), its parts sharing its state.

import { performance } from 'node:perf_hooks';
import { autocannon, cpuMsOf, machineTicks, percentile, Samples, sleep } from './lib.js';
import type { CacheCounts, MachineLoad, Measurement, Target } from './report.js';
import type { Api } from './service.js';

// ---- scenarios ----

export interface HttpRequest {
  method: 'GET' | 'POST';
  path: string;
  body?: string;
}

export interface Scenario {
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
export type RunLength = { seconds: number } | { amount: number; maxSeconds: number };

/**
 * autocannon at `connections` for some seconds or a number of requests, with our own latency list (ms, not
 * rounded) and query count.
 */
export async function cannon(
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
export async function driverLoops(op: (i: number) => Promise<unknown>, concurrency: number, seconds: number) {
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
export async function settle(pids: (number | undefined)[], maxMs = 60_000) {
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
export async function withCpu<T>(pids: Pids, work: () => Promise<T>) {
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
export interface Part {
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
  'versionLeased',
] as const satisfies readonly (keyof CacheCounts)[];

/** What the counters moved by between two readings (null when either could not be read). */
export function cacheDelta(before: CacheCounts | null, after: CacheCounts | null): CacheCounts | null {
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
    // (every request that asked for a version: answered by a statement's share, or by a read lease)
    versionReadsPerRequest:
      cache.versionRequests + cache.versionLeased > 0
        ? cache.versionReads / (cache.versionRequests + cache.versionLeased)
        : null,
  };
}

/** Several stretches of one job (interleaved with other jobs) as one. */
export function mergeParts(parts: Part[]): Part {
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

export function measurement(
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
