// Planted failures of the storms' verdicts (bench/probe-verdict.ts, bench/door-verdict.ts): each runs the verdict
// the door storm and the hostile storm call on a bad result planted here (a service that sheds everything, a dead
// probe, failed probes, an empty window, a lost key cap, a token in the log) and shows that it fails, beside a good
// result that passes.
import { describe, expect, it } from 'vitest';
import { DOOR_SHAPES, SHED } from '../../bench/door-shapes.js';
import {
  afterStormVerdict,
  quietVerdict,
  runVerdict,
  shapeVerdict,
  windowsVerdict,
} from '../../bench/door-verdict.js';
import { type ProbeSample, probeVerdict, probeWindow } from '../../bench/probe-verdict.js';

const LIMITS = { victimCeilingMs: 300, healthCeilingMs: 300, healthMs: 100 };

/** Probes due every 20 ms over [0, n × 20), answered in `ms` with `outcome`. */
const samples = (n: number, ms: number, outcome = '200', late = false): ProbeSample[] =>
  Array.from({ length: n }, (_, i) => ({ at: i * 20, ms, outcome, late }));
const window = (s: ProbeSample[]) => probeWindow(s, [], 0, 1e9);

describe('a probe window', () => {
  it('passes when every probe was served under the ceiling', () => {
    const w = window(samples(100, 5));
    expect(probeVerdict('victim', w, { p99: 300 })).toEqual({ ok: true, reasons: [] });
  });

  it('fails a dead probe: no probe in the window, and NaN latency, never a pass', () => {
    const w = window([]);
    expect(w.p99).toBeNaN();
    const v = probeVerdict('victim', w, { p99: 300 });
    expect(v.ok).toBe(false);
    expect(v.reasons.join('\n')).toMatch(/no probe in the window/);
    expect(v.reasons.join('\n')).toMatch(/p99 was not measured/);
  });

  it('counts latency over the probes served only: fast 503s and resets fail the window instead', () => {
    const w = window([...samples(50, 250), ...samples(50, 1, '503'), ...samples(10, 1, 'error:ECONNRESET')]);
    expect(w.served).toBe(50);
    expect(w.failures).toBe(60);
    expect(w.p50).toBe(250);
    const v = probeVerdict('victim', w, { p99: 300 });
    expect(v.ok).toBe(false);
    expect(v.reasons[0]).toMatch(/60 of 110 probes failed \(50x 503, 10x error:ECONNRESET\)/);
  });

  it('a service that answers every probe 503 fails, though each answer was quick', () => {
    expect(probeVerdict('/healthz', window(samples(100, 1, '503')), { max: 300 }).ok).toBe(false);
  });

  it('counts late probes, and their latency from when they were due', () => {
    const w = window([...samples(10, 5), ...samples(5, 400, '200', true)]);
    expect(w.late).toBe(5);
    expect(w.max).toBe(400);
    expect(probeVerdict('victim', w, { max: 300 }).ok).toBe(false);
  });
});

describe('a door shape', () => {
  const heavy = { name: 'heavy', doors: ['planModel'], expected: ['200', ...SHED], through: 0.1 };

  it('passes when a share of its requests is answered by the door', () => {
    expect(
      shapeVerdict(heavy, { requests: 30, answers: { '200': 3, '429 tenant_busy': 27 }, largestAnswer: 10 })
        .ok,
    ).toBe(true);
  });

  it('fails a service that sheds everything (503 server_busy to every request)', () => {
    const v = shapeVerdict(heavy, { requests: 30, answers: { '503 server_busy': 30 }, largestAnswer: 10 });
    expect(v.ok).toBe(false);
    expect(v.reasons[0]).toMatch(/0 of 30 requests answered by the door/);
  });

  it('fails a shape that sent nothing, and a shape that states nothing must get through', () => {
    expect(shapeVerdict(heavy, { requests: 0, answers: {}, largestAnswer: 0 }).reasons[0]).toMatch(
      /no request/,
    );
    expect(
      shapeVerdict({ ...heavy, through: 0 }, { requests: 1, answers: { '200': 1 }, largestAnswer: 0 }).ok,
    ).toBe(false);
  });

  it('fails an unexpected answer, and an answer past its door budget', () => {
    expect(shapeVerdict(heavy, { requests: 2, answers: { '200': 1, '500': 1 }, largestAnswer: 0 }).ok).toBe(
      false,
    );
    expect(
      shapeVerdict(heavy, { requests: 1, answers: { '200': 1 }, largestAnswer: 11 }, { planModel: 10 }).ok,
    ).toBe(false);
  });

  it('every shape of the storm states a share in (0, 1], so a service refusing everything fails each', () => {
    for (const shape of DOOR_SHAPES) {
      expect(shape.through, shape.name).toBeGreaterThan(0);
      expect(shape.through, shape.name).toBeLessThanOrEqual(1);
      const shed = shapeVerdict(shape, {
        requests: 10,
        answers: { '503 server_busy': 10 },
        largestAnswer: 0,
      });
      expect(shed.ok, shape.name).toBe(false);
    }
  });
});

describe('the storm windows and run', () => {
  const good = window(samples(150, 5));

  it('a shape under which the victim was not probed, or failed, fails the run', () => {
    expect(windowsVerdict('s', good, good, LIMITS, 20).failures).toEqual([]);
    expect(windowsVerdict('s', window([]), good, LIMITS, 20).failures.join()).toMatch(/victim: no probe/);
    expect(windowsVerdict('s', good, window(samples(60, 1, 'timeout')), LIMITS, 20).failures.join()).toMatch(
      /healthz: 60 of 60 probes failed/,
    );
  });

  it('a victim past its ceiling fails; past twice quiet is a target missed', () => {
    const slow = window(samples(150, 350));
    expect(windowsVerdict('s', slow, good, LIMITS, 20).failures.join()).toMatch(
      /victim p99 350.0 ms, past 300/,
    );
    const r = windowsVerdict('s', window(samples(150, 50)), good, LIMITS, 20);
    expect(r.failures).toEqual([]);
    expect(r.missed.join()).toMatch(/victim p99 50.0 ms, past 20.0/);
  });

  it('a quiet window without a served probe fails (the targets would be NaN)', () => {
    expect(quietVerdict(good, good).ok).toBe(true);
    expect(quietVerdict(window(samples(10, 1, '503')), good).ok).toBe(false);
  });

  it('a run in which no shape ran, the service died, or its RSS was never sampled fails', () => {
    const run = { asked: 8, ran: 8, alive: true, tail: '', rssMaxMb: 200, rssCeilingMb: 512 };
    expect(runVerdict(run).ok).toBe(true);
    expect(runVerdict({ ...run, asked: 0, ran: 0 }).ok).toBe(false);
    expect(runVerdict({ ...run, ran: 3, alive: false, tail: 'killed' }).reasons).toHaveLength(2);
    expect(runVerdict({ ...run, rssMaxMb: 0 }).reasons[0]).toMatch(/never sampled/);
    expect(runVerdict({ ...run, rssMaxMb: 600 }).ok).toBe(false);
  });

  it('after the storm: a budget passed, the token logged, the key cap never reached or passed, writes lost: each fails', () => {
    const keys = { created: 190, exhausted: 130, listed: 190, requests: 320, cap: 200 };
    expect(
      afterStormVerdict({ overBudget: [], strayLogged: false, oneKeyEntities: 1, manyKeys: keys }).ok,
    ).toBe(true);
    const bad = afterStormVerdict({
      overBudget: ['metamodel_door_over_budget_total{door="x"} 1'],
      strayLogged: true,
      oneKeyEntities: 2,
      manyKeys: { ...keys, created: 0, exhausted: 0, listed: 0 },
    });
    expect(bad.reasons).toHaveLength(5);
    expect(
      afterStormVerdict({ overBudget: [], strayLogged: false, manyKeys: { ...keys, created: 201 } }).ok,
    ).toBe(false);
    expect(
      afterStormVerdict({ overBudget: [], strayLogged: false, manyKeys: { ...keys, listed: 10 } }).ok,
    ).toBe(false);
  });
});

describe("a combination's answers", () => {
  it('count a part’s shed answers as shed, and every part shed fails the whole', async () => {
    const { combinationShape, DOOR_COMBINATIONS } = await import('../../bench/door-combinations.js');
    const { shapeVerdict } = await import('../../bench/door-verdict.js');
    const combination = DOOR_COMBINATIONS.find((c) => c.name === 'memory-at-once');
    expect(combination).toBeDefined();
    const shape = combinationShape(combination as NonNullable<typeof combination>);
    const shed = { 'history-4mb: 429 tenant_busy': 40, 'attributes-4mb: 503 server_busy': 40 };
    expect(shapeVerdict(shape, { requests: 80, answers: shed, largestAnswer: 0 }).reasons.join(' ')).toMatch(
      /answered by the door/,
    );
    const some = { ...shed, 'history-4mb: 200': 20 };
    expect(shapeVerdict(shape, { requests: 100, answers: some, largestAnswer: 0 }).reasons).toEqual([]);
  });
});
