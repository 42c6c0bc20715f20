// Planted failures of the benchmark's targets (bench/report-checks.ts): the committed run's report with one figure
// made bad at a time (a slow write, a write whose baseline was not measured, a slow uncached deep page, a /healthz
// window with no probe) fails the target the bench prints, while the committed figures meet it.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { probeWindow } from '../../bench/probe-verdict.js';
import type { Measurement, Report, StormPhase } from '../../bench/report.js';
import { ceilingChecks, filterChecks } from '../../bench/report-ceiling.js';
import { checkTargets, deepPageUncached, writeChecks } from '../../bench/report-checks.js';

const committed = JSON.parse(readFileSync('bench/results/latest.json', 'utf8')) as Report;
const LEVEL = committed.settings.targetLevel;
const fresh = (): Report => structuredClone(committed);
const row = (r: Report, scenario: string, target: string) =>
  r.measurements.find(
    (m) => m.scenario === scenario && m.target === target && m.connections === LEVEL,
  ) as Measurement;

describe("the writes' targets", () => {
  it("the committed run meets them, as ratios to baseline (b) in the same run, not to the previous run's", () => {
    const checks = writeChecks({ ...fresh(), previous: null }, LEVEL);
    expect(checks).toHaveLength(3);
    expect(checks.every((c) => c.met === true)).toBe(true);
  });

  it('a write at half its speed fails, whatever the previous run measured', () => {
    const r = fresh();
    row(r, 'declare', 'service').rps /= 2;
    const check = writeChecks(r, LEVEL).find((c) => c.scenario === 'declare');
    expect(check?.met).toBe(false);
  });

  it('a write measured without baseline (b) fails (a ratio not measured is not met)', () => {
    const r = fresh();
    r.measurements = r.measurements.filter((m) => m.target !== 'b');
    const checks = writeChecks(r, LEVEL);
    expect(checks.map((c) => c.met)).toEqual([false, false, false]);
    expect(checks[0]?.detail).toMatch(/baseline \(b\) not measured/);
  });
});

describe('the deep page', () => {
  it('is measured uncached too: its Cypher at the deep row costs as much as at row 0', () => {
    expect(deepPageUncached(fresh(), LEVEL)[0]?.met).toBe(true);
  });

  it('a slow seek fails though the cached pages are equal', () => {
    const r = fresh();
    row(r, 'page-deep', 'a').rps /= 3;
    expect(deepPageUncached(r, LEVEL)[0]?.met).toBe(false);
    const cached = checkTargets(r).find((c) => c.name.startsWith('type page at row'));
    expect(cached?.met).toBe(true);
  });

  it('an uncached page not measured fails', () => {
    const r = fresh();
    r.measurements = r.measurements.filter((m) => !(m.scenario === 'page-start' && m.target === 'a'));
    expect(deepPageUncached(r, LEVEL)[0]?.met).toBe(false);
  });
});

describe("the hostile storm's /healthz target", () => {
  const phase = (samples: { at: number; ms: number; outcome: string; late: boolean }[]): StormPhase =>
    ({
      kind: 'deep',
      expected: '400 json_too_deep',
      statuses: { '400 json_too_deep': 10 },
      requests: 10,
      rssMaxMb: 100,
      rssAfterMaxMb: 100,
      rssAfterMb: 100,
      rssBeforeMb: 100,
      rssUnderTargetAfterMs: 0,
      health: probeWindow(samples, [], 0, 1e9),
      healthAfter: probeWindow(samples, [], 0, 1e9),
    }) as unknown as StormPhase;
  const healthTarget = (storms: StormPhase[]) => {
    const r = fresh();
    r.memory = { ...r.memory, storms };
    return checkTargets(r).find((c) => c.name.startsWith('/healthz answered'));
  };
  const ok = Array.from({ length: 20 }, (_, i) => ({ at: i, ms: 5, outcome: '200', late: false }));

  it('is met when every window was probed and served in time', () => {
    expect(healthTarget([phase(ok)])?.met).toBe(true);
  });

  it('a window whose max is not a number (no probe) fails instead of counting as 0 ms', () => {
    const target = healthTarget([phase(ok), phase([])]);
    expect(target?.met).toBe(false);
    expect(target?.detail).toMatch(/no probe in the window/);
  });

  it('a window of fast failed probes fails', () => {
    expect(healthTarget([phase(ok.map((s) => ({ ...s, outcome: '503' })))])?.met).toBe(false);
  });
});

describe('the memory ceiling (m) and the filtered pages', () => {
  /** A report with a cached read measured at 1, 16 and 64 connections, beside its ceiling. */
  const withCeiling = (serviceRps: number, ceilingRps: number | null, p99 = 2): Report => {
    const r = fresh();
    const base = row(r, 'page-start', 'service');
    r.settings.levels = [1, 16, 64];
    r.measurements = r.measurements.filter((m) => !(m.scenario === 'page-start'));
    for (const connections of [1, 16, 64]) {
      r.measurements.push({ ...base, connections, rps: serviceRps, p99 });
      if (ceilingRps !== null)
        r.measurements.push({ ...base, target: 'm', connections, rps: ceilingRps, p99 });
    }
    return r;
  };

  it('a cached read at 0.9x the ceiling and a p99 of 2 ms meets its targets at every connection count', () => {
    const checks = ceilingChecks(withCeiling(9_000, 10_000)).filter((c) => c.scenario === 'page-start');
    expect(checks).toHaveLength(4);
    expect(checks.every((c) => c.met === true)).toBe(true);
  });

  it('at 0.5x the ceiling, or with a p99 of 12 ms at 16 connections, or with no ceiling measured, it fails', () => {
    const slow = ceilingChecks(withCeiling(5_000, 10_000)).filter((c) => c.scenario === 'page-start');
    expect(slow.filter((c) => c.met === false)).toHaveLength(3);
    const late = ceilingChecks(withCeiling(9_000, 10_000, 12)).filter(
      (c) => c.scenario === 'page-start' && c.name.includes('p99'),
    );
    expect(late.map((c) => c.met)).toEqual([false]);
    const missing = ceilingChecks(withCeiling(9_000, null)).filter((c) => c.scenario === 'page-start');
    expect(missing.filter((c) => c.name.includes('ceiling')).map((c) => c.met)).toEqual([
      false,
      false,
      false,
    ]);
  });

  it('a filtered page slower than the raw driver, or measured without it, fails', () => {
    const r = fresh();
    const service = r.measurements.find((m) => m.scenario === 'filter-tag' && m.target === 'service');
    expect(service).toBeDefined();
    if (!service) return;
    r.measurements = r.measurements.filter((m) => m.scenario !== 'filter-tag');
    r.measurements.push(
      { ...service, connections: 16, rps: 100 },
      { ...service, target: 'a', connections: 16, rps: 200 },
    );
    const checks = filterChecks(r).filter((c) => c.scenario === 'filter-tag');
    expect(checks.map((c) => c.met)).toEqual([false]);
    r.measurements = r.measurements.filter((m) => m.target !== 'a');
    expect(
      filterChecks(r)
        .filter((c) => c.scenario === 'filter-tag')
        .map((c) => c.met),
    ).toEqual([false]);
  });
});
