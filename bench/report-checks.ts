// The bench's targets checked against its measurements: the ratios to the baselines measured in the same run, CPU
// per request, the writes' ratio to baseline (b) against a fixed floor, the deep page uncached too, and the hostile
// storm's phases (bench/report.ts holds the figures they read). A target whose figure was not measured is missed,
// never met (test/unit/verdicts-bench.test.ts plants each).
// Over 300 lines: one check per target, each beside the figures it reads; split, the list of targets would scatter.
import { probeVerdict } from './probe-verdict.js';
import {
  CACHED_PAGES,
  find,
  fixed,
  hitPct,
  type Measurement,
  READS,
  type Report,
  type StormPhase,
  TARGETS,
  type TargetCheck,
  WRITES,
  x2,
  x3,
} from './report.js';
import { ceilingChecks, filterChecks } from './report-ceiling.js';

export function ratios(r: Report, m: Measurement) {
  const a = find(r, m.scenario, 'a', m.connections);
  const b = find(r, 'constant', 'b', m.connections);
  const c = find(r, m.scenario, 'c', m.connections);
  const ceiling = find(r, m.scenario, 'm', m.connections);
  const over = (x: Measurement | undefined) => (x && x.rps > 0 ? m.rps / x.rps : null);
  return { a: over(a), b: over(b), c: over(c), m: over(ceiling) };
}

/**
 * Whether a service row meets its targets (the checks stated for its scenario): null when the row has none or one
 * of them could not be checked, false as soon as one is missed.
 */
export function rowTarget(r: Report, m: Measurement, checks: TargetCheck[]): boolean | null {
  if (m.target !== 'service' || m.connections !== r.settings.targetLevel) return null;
  const own = checks.filter((c) => c.scenario === m.scenario);
  if (own.length === 0) return null;
  if (own.some((c) => c.met === false)) return false;
  return own.every((c) => c.met === true) ? true : null;
}

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
      met: ratio !== null && ratio >= TARGETS.readRatioToDriver,
      detail: `${fixed(m.rps, 0)} vs ${fixed(a?.rps, 0)} req/s = ${x2(ratio)}; hit rate ${hitPct(m.cacheHitRate)}%`,
    });
    checks.push({
      scenario: id,
      name: `${id} at ${level} connections: p99 < ${TARGETS.readP99Ms} ms`,
      met: Number.isFinite(m.p99) && m.p99 < TARGETS.readP99Ms,
      detail: `p99 ${fixed(m.p99, 2)} ms`,
    });
    if (CACHED_PAGES.includes(id)) {
      const ms = m.cpuMsPerRequest.server;
      checks.push({
        scenario: id,
        name: `${id} at ${level} connections: service CPU <= ${TARGETS.cachedPageCpuMs} ms per request`,
        met: ms !== null && ms <= TARGETS.cachedPageCpuMs,
        detail: ms === null ? "the service's CPU was not measured" : `${fixed(ms, 3)} ms per request`,
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
        `${fixed(deep.rps, 0)} vs ${fixed(start.rps, 0)} req/s (${x2(ratio)}); mean ${fixed(deep.mean, 2)} vs ${fixed(start.mean, 2)} ms; ` +
        `${fixed(deep.queriesPerRequest, 2)} vs ${fixed(start.queriesPerRequest, 2)} queries`,
    });
  }
  checks.push(...deepPageUncached(r, level));
  // Issue 14: a filtered page costs the same at the last page as at row 0 (both one ordered seek per tag).
  const first = find(r, 'filter-tag', 'service', level);
  const lastPage = find(r, 'filter-tag-last', 'service', level);
  if (first && lastPage) {
    const ratio = lastPage.rps / first.rps;
    checks.push({
      name: `a tag filter's last page costs the same as its first within ${TARGETS.deepPageTolerance * 100}%`,
      met: Math.abs(1 - ratio) <= TARGETS.deepPageTolerance,
      detail: `${fixed(lastPage.rps, 0)} vs ${fixed(first.rps, 0)} req/s (${x2(ratio)}); p99 ${fixed(lastPage.p99, 2)} vs ${fixed(first.p99, 2)} ms`,
    });
  }
  const trips = r.graphqlRoundTrips.filter((t) => !t.reason && t.queries !== null);
  if (trips.length > 0) {
    // Fixed means bounded by a constant, not growing with the page: on a miss the page, own definitions, platform
    // definitions, and one batch for referenced types the page does not hold (absent when it holds them all); and
    // the model version read. From the cache, the version read alone (a share of it under load).
    const bound = TARGETS.graphqlMaxRoundTrips;
    const underLoad = r.measurements.filter((m) => m.scenario === 'graphql' && m.target === 'service');
    const loadCounts = new Set(underLoad.map((m) => fixed(m.queriesPerRequest, 2)));
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
      met: ratio !== null && ratio >= TARGETS.graphqlRatioToNeo4jGraphql,
      detail: r.neo4jGraphql.ok
        ? `${fixed(g.rps, 1)} vs ${fixed(c?.rps, 1)} req/s = ${x2(ratio)}`
        : `baseline (c) not run: ${r.neo4jGraphql.problem}`,
    });
  }
  checks.push(...writeChecks(r, level));
  checks.push(...ceilingChecks(r), ...filterChecks(r));
  checks.push({
    name: `service RSS < ${TARGETS.maxRssMb} MB through the whole bench (body storm included)`,
    met: r.memory.maxRssMb > 0 && r.memory.maxRssMb < TARGETS.maxRssMb,
    detail:
      `max ${fixed(r.memory.maxRssMb, 0)} MB; storm: ` +
      r.memory.storms
        .map((s) => `${s.kind} ${fixed(s.rssBeforeMb, 0)} -> ${fixed(s.rssMaxMb, 0)} MB`)
        .join(', '),
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

export const answersText = (statuses: Record<string, number>, times = 'x') =>
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
          `${s.kind} ${fixed(peak(s), 0)} MB, ${
            s.rssUnderTargetAfterMs === null
              ? `still ${fixed(s.rssAfterMb, 0)} MB after ${TARGETS.stormSettleMs / 1000} s`
              : `under ${TARGETS.stormSettleRssMb} MB after ${fixed(s.rssUnderTargetAfterMs / 1000, 1)} s`
          }`,
      )
      .join('; '),
  });
  const windows = storms.flatMap((s) => [
    { what: s.kind, w: s.health },
    { what: `${s.kind} (after)`, w: s.healthAfter },
  ]);
  const worst = storms.reduce((a, s) => (s.health.max > a.health.max ? s : a), storms[0]!);
  const probes = windows.reduce((a, { w }) => a + w.probes, 0);
  const failures = windows.reduce((a, { w }) => a + w.failures, 0);
  const over = windows.reduce((a, { w }) => a + w.over100ms, 0);
  const late = windows.reduce((a, { w }) => a + w.late, 0);
  // Each window judged alone: one with no probe, a failed probe, or a max that is not a number fails the target.
  const reasons = windows.flatMap(
    ({ what, w }) => probeVerdict(`${what}: /healthz`, w, { max: TARGETS.healthMaxMs }).reasons,
  );
  const maxAll = Math.max(...windows.map(({ w }) => w.max));
  checks.push({
    name: `/healthz answered within ${TARGETS.healthMaxMs} ms throughout the storm`,
    met: reasons.length === 0,
    detail:
      `${probes} probes (phases and the ${TARGETS.stormSettleMs / 1000} s after each), max ${fixed(maxAll, 1)} ms ` +
      `(worst phase ${worst.kind}: p99 ${fixed(worst.health.p99, 1)}, max ${fixed(worst.health.max, 1)} ms); ` +
      `${over} over ${TARGETS.healthMaxMs} ms, ${late} sent late (due while one was unanswered), ${failures} failed` +
      (reasons.length > 0 ? `: ${reasons.slice(0, 3).join('; ')}` : ''),
  });
  return checks;
}

/**
 * Each write's ratio to baseline (b), both measured in this run, against its fixed floor (TARGETS.writeRatioToB).
 * A write measured without (b) beside it fails: a ratio that was not measured is not a ratio that held.
 */
export function writeChecks(r: Report, level: number): TargetCheck[] {
  const b = find(r, 'constant', 'b', level);
  return WRITES.flatMap((id) => {
    const m = find(r, id, 'service', level);
    if (!m) return [];
    const floor = TARGETS.writeRatioToB[id] as number;
    const now = b && b.rps > 0 ? m.rps / b.rps : null;
    const before = r.previous?.writeRatiosToB[id];
    return [
      {
        scenario: id,
        name: `${id} at ${level} connections: x(b) >= ${x3(floor)} (baseline (b) in the same run)`,
        met: now !== null && Number.isFinite(now) && now >= floor,
        detail:
          now === null
            ? `baseline (b) not measured at ${level} connections in this run`
            : `x(b) ${x3(now)} (${fixed(m.rps, 0)} vs ${fixed(b?.rps, 0)} req/s)${
                before ? `; previous run ${x3(before)} (${r.previous?.date})` : ''
              }`,
      },
    ];
  });
}

/**
 * The deep page without the model cache: the same Cypher (baseline (a), the service's own statement through the
 * driver) at the deep row costs the same as at row 0, within the tolerance. The service's own pages are served from
 * the cache and would not show a seek that grew with the row.
 */
export function deepPageUncached(r: Report, level: number): TargetCheck[] {
  const start = find(r, 'page-start', 'a', level);
  const deep = find(r, 'page-deep', 'a', level);
  if (!start && !deep) return [];
  const ratio = start && deep && start.rps > 0 ? deep.rps / start.rps : Number.NaN;
  return [
    {
      name: `uncached type page (its Cypher, baseline (a)) at the deep row costs the same as at row 0 within ${TARGETS.deepPageTolerance * 100}%`,
      met: Number.isFinite(ratio) && Math.abs(1 - ratio) <= TARGETS.deepPageTolerance,
      detail: Number.isFinite(ratio)
        ? `${fixed(deep?.rps, 0)} vs ${fixed(start?.rps, 0)} req/s (${x2(ratio)}); mean ${fixed(deep?.mean, 2)} vs ${fixed(start?.mean, 2)} ms`
        : 'one of the two uncached pages was not measured',
    },
  ];
}
