// The load test's verdict, pure: every invariant held, each over at least one case (an invariant checked over
// nothing proves nothing), and the service logged no error. scripts/loadtest.ts calls it on the run's outcomes and
// the service's error log; test/unit/verdicts-loadtest.test.ts on planted bad ones.
import { someCases, type Verdict, verdictOf } from '../../bench/verdict.js';
import type { Outcome } from './invariants.js';

export function loadtestVerdict(outcomes: readonly Outcome[], errorLog: readonly string[]): Verdict {
  return verdictOf([
    outcomes.length === 0 && 'no invariant was checked',
    ...outcomes.map((o) => !o.ok && `${o.name}: ${o.detail}`),
    ...outcomes.map((o) => someCases(o.name, o.cases)),
    errorLog.length > 0 &&
      `the service logged ${errorLog.length} error(s), the first: ${errorLog[0]?.trim().slice(0, 300)}`,
  ]);
}
