// Planted failures of the load test's, the fuzzer's and the fault variant's verdicts (scripts/loadtest/verdict.ts,
// scripts/fuzz-verdict.ts, scripts/loadtest/fault-verdict.ts): the verdict each tool calls, run on a bad result
// planted here (an error in the service's log, an invariant over no case, zero fuzz cases, an empty outage phase,
// a slow recovery on a fast machine), fails; the good result beside it passes.
import { describe, expect, it } from 'vitest';
import { type FuzzRun, fuzzVerdict, generatedCases } from '../../scripts/fuzz-verdict.js';
import {
  type FaultMeasures,
  faultChecks,
  faultVerdict,
  recoveriesVerdict,
  scaledAim,
} from '../../scripts/loadtest/fault-verdict.js';
import type { Outcome } from '../../scripts/loadtest/invariants.js';
import type { Recovery } from '../../scripts/loadtest/recovery.js';
import { loadtestVerdict } from '../../scripts/loadtest/verdict.js';

describe('the load test', () => {
  const held = (name: string, cases = 10): Outcome => ({ name, ok: true, detail: '', problems: [], cases });

  it('passes when every invariant held over some cases and nothing was logged', () => {
    expect(loadtestVerdict([held('acknowledged-types-kept'), held('no-5xx')], [])).toEqual({
      ok: true,
      reasons: [],
    });
  });

  it('fails on an error in the service log', () => {
    const v = loadtestVerdict([held('no-5xx')], ['{"level":50,"msg":"boom"}']);
    expect(v.ok).toBe(false);
    expect(v.reasons[0]).toMatch(/the service logged 1 error/);
  });

  it('fails an invariant checked over no case (answer checks, acknowledged writes kept)', () => {
    const v = loadtestVerdict([held('answers: paging order', 0), held('acknowledged-entities-kept', 0)], []);
    expect(v.reasons).toEqual([
      'answers: paging order: nothing was checked (0 cases)',
      'acknowledged-entities-kept: nothing was checked (0 cases)',
    ]);
  });

  it('fails an invariant that failed, and a run that checked no invariant', () => {
    expect(loadtestVerdict([{ ...held('one-type-per-name'), ok: false }], []).ok).toBe(false);
    expect(loadtestVerdict([], []).reasons).toEqual(['no invariant was checked']);
  });
});

describe('the fuzzer', () => {
  const output = (cases: string) =>
    `===== SUMMARY =====\n\nTest cases:\n  ${cases}\n\n=== 2 warnings in 7.71s ===\n`;
  const run = (name: string, code = 0, cases = '951 generated, 951 passed, 20 skipped'): FuzzRun => ({
    name,
    code,
    output: output(cases),
  });

  it('passes when every run exited 0 with test cases', () => {
    expect(generatedCases(output('1,204 generated, 1,204 passed'))).toBe(1204);
    expect(fuzzVerdict(2, [run('rest-tenant'), run('graphql')], []).ok).toBe(true);
  });

  it('fails a run with zero test cases, or none reported, though schemathesis exited 0', () => {
    expect(fuzzVerdict(1, [run('graphql', 0, '0 generated')], []).reasons[0]).toMatch(
      /graphql: no test case/,
    );
    const silent = { name: 'rest-tenant', code: 0, output: '=== 2 warnings in 7.71s ===' };
    expect(fuzzVerdict(1, [silent], []).reasons[0]).toMatch(/none reported/);
  });

  it('fails a failed run, a run that did not run, and an error in the service log', () => {
    expect(fuzzVerdict(1, [run('rest-tenant', 1)], []).ok).toBe(false);
    expect(fuzzVerdict(3, [run('rest-tenant')], []).reasons).toEqual(['1 of 3 runs ran']);
    expect(fuzzVerdict(1, [run('rest-tenant')], ['error']).ok).toBe(false);
  });
});

describe('the fault variant', () => {
  const good: FaultMeasures = {
    outageRefusedMs: [20, 900],
    outageServedMs: [150, 400],
    readyzDuringOutage: 0,
    acknowledged: 900,
    present: 900,
    unconverged: 0,
    duplicates: [],
    ownConflicts: 0,
    reused: 0,
    other5xx: 0,
    firstSuccessMs: 2_000,
    neo4jRestartMs: 4_000,
    writesAfter: 900,
    errorRecords: 0,
    errorLines: [],
  };
  const failing = (m: Partial<FaultMeasures>) =>
    faultChecks({ ...good, ...m })
      .filter(([, ok]) => !ok)
      .map(([what]) => what);

  it('passes a recovery within the aims', () => {
    expect(faultVerdict(good)).toEqual({ ok: true, reasons: [] });
  });

  it('an empty outage phase fails its checks instead of passing them', () => {
    expect(failing({ outageRefusedMs: [], outageServedMs: [] })).toHaveLength(2);
  });

  it('bounds the first success by the aim of 8 s, not by the service: 9 s after a fast Neo4j fails', () => {
    expect(failing({ firstSuccessMs: 9_000 })[0]).toMatch(/first successful write within 8.00 s/);
    expect(failing({ firstSuccessMs: Number.NaN })).toHaveLength(1);
  });

  it('on a slower machine, the aim grows with Neo4j own restart in the same run', () => {
    expect(scaledAim(8_000, 8_800)).toBe(16_000);
    expect(failing({ firstSuccessMs: 9_000, neo4jRestartMs: 8_800 })).toEqual([]);
    expect(failing({ firstSuccessMs: 9_000, neo4jRestartMs: Number.NaN })).toHaveLength(1);
  });

  it('a served request during the outage past the bound and the write aim fails, whatever the writes before took', () => {
    expect(failing({ outageServedMs: [3_600] })).toHaveLength(1);
  });

  it('an error in the service log, a lost write, and no acknowledged write each fail', () => {
    expect(failing({ errorRecords: 1, errorLines: ['boom'] })).toEqual(['the service logged no error']);
    expect(failing({ present: 899 })).toHaveLength(1);
    expect(failing({ acknowledged: 0, present: 0 })).toHaveLength(1);
  });

  it('over the runs: the median first success against 5 s, and no run at all, fail', () => {
    const recovery = (firstSuccessMs: number, p99 = 200): Recovery =>
      ({ firstSuccessMs, neo4jRestartMs: 4_000, after: { p99 } }) as Recovery;
    expect(recoveriesVerdict([recovery(2_000), recovery(3_000), recovery(7_000)]).ok).toBe(true);
    expect(recoveriesVerdict([recovery(6_000), recovery(6_500), recovery(2_000)]).ok).toBe(false);
    expect(recoveriesVerdict([recovery(2_000, 1_500)]).ok).toBe(false);
    expect(recoveriesVerdict([]).ok).toBe(false);
  });
});
