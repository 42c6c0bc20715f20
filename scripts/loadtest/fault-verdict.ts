// The fault variant's verdict, pure (scripts/loadtest/fault.ts measures, this judges): every bound is a documented
// aim of docs/performance.md#neo4j-restarted-under-load, scaled on a slower machine by a ratio measured in the same
// run (Neo4j's own restart time against the reference machine's), never by the service's own figures; and a phase
// with nothing in it fails its check instead of passing it. test/unit/verdicts-fault.test.ts plants each failure.
import { percentile } from '../../bench/lib.js';
import { atMost, type Verdict, verdictOf } from '../../bench/verdict.js';
import {
  FIRST_SUCCESS_AIM_MS,
  FIRST_SUCCESS_WORST_AIM_MS,
  REFERENCE_RESTART_MS,
  type Recovery,
  WRITE_P99_AIM_MS,
} from './recovery.js';

/**
 * Every answer while the database is away or starting comes within 2 s (NEO4J_CONNECT_TIMEOUT_MS) beyond the
 * request's own work: a refusal or a lost connection within this (0.5 s for its own work).
 */
export const OUTAGE_BOUND_MS = 2_500;

/** An aim on a machine slower than the reference one: scaled by Neo4j's own restart time in the same run. */
export function scaledAim(aimMs: number, neo4jRestartMs: number): number {
  const slower = Number.isFinite(neo4jRestartMs) ? neo4jRestartMs / REFERENCE_RESTART_MS : Number.NaN;
  return aimMs * Math.max(1, slower);
}

/** What one run measured. */
export interface FaultMeasures {
  /** Answer times of the attempts begun during the outage: refused (503 or a lost connection), and served. */
  outageRefusedMs: number[];
  outageServedMs: number[];
  readyzDuringOutage: number;
  acknowledged: number;
  present: number;
  unconverged: number;
  duplicates: string[];
  ownConflicts: number;
  reused: number;
  other5xx: number;
  /** From Neo4j accepting connections to the first successful write. */
  firstSuccessMs: number;
  /** From Neo4j's start to its accepting connections, in this run. */
  neo4jRestartMs: number;
  writesAfter: number;
  errorRecords: number;
  errorLines: string[];
}

export type FaultCheck = [what: string, ok: boolean, detail: string];

const max = (xs: number[]) => (xs.length === 0 ? Number.NaN : Math.max(...xs));
const s = (ms: number) => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(2)} s` : 'not measured');

export function faultChecks(m: FaultMeasures): FaultCheck[] {
  const served = OUTAGE_BOUND_MS + WRITE_P99_AIM_MS;
  const firstBound = scaledAim(FIRST_SUCCESS_WORST_AIM_MS, m.neo4jRestartMs);
  const within = (xs: number[], bound: number) => xs.length > 0 && !(max(xs) > bound);
  return [
    [
      `every refusal begun during the outage within ${OUTAGE_BOUND_MS} ms (and some were)`,
      within(m.outageRefusedMs, OUTAGE_BOUND_MS),
      `${m.outageRefusedMs.length} refused, max ${s(max(m.outageRefusedMs))}`,
    ],
    [
      `every request begun during the outage and served within ${served} ms (the bound and the write p99 aim; and some were)`,
      within(m.outageServedMs, served),
      `${m.outageServedMs.length} served, max ${s(max(m.outageServedMs))}`,
    ],
    [
      '/readyz never said 200 while the database was away or starting',
      m.readyzDuringOutage === 0,
      `${m.readyzDuringOutage} times`,
    ],
    [
      'every acknowledged write is in Neo4j (and some were acknowledged)',
      m.acknowledged > 0 && m.present === m.acknowledged,
      `${m.present} of ${m.acknowledged}`,
    ],
    ['every write converged to an answer', m.unconverged === 0, `${m.unconverged} unanswered`],
    [
      'no second entity from a retried creation',
      m.duplicates.length === 0,
      m.duplicates.slice(0, 3).join(', '),
    ],
    [
      'no attribute_def_already_exists for a retried own declaration',
      m.ownConflicts === 0,
      `${m.ownConflicts}`,
    ],
    ['no idempotency_key_reused', m.reused === 0, `${m.reused}`],
    ['no 5xx but 503', m.other5xx === 0, `${m.other5xx}`],
    [
      `the first successful write within ${s(firstBound)} of Neo4j accepting connections (the aim of ${s(FIRST_SUCCESS_WORST_AIM_MS)}, scaled by Neo4j's restart of ${s(m.neo4jRestartMs)} against ${s(REFERENCE_RESTART_MS)})`,
      atMost('first success', m.firstSuccessMs, firstBound) === null,
      s(m.firstSuccessMs),
    ],
    ['the traffic went on after ready', m.writesAfter > 0, `${m.writesAfter} writes`],
    ['the service logged no error', m.errorRecords === 0, m.errorLines.slice(0, 2).join(' | ')],
  ];
}

export const faultVerdict = (m: FaultMeasures): Verdict =>
  verdictOf(faultChecks(m).map(([what, ok, detail]) => !ok && `${what}: ${detail}`));

/**
 * Over the runs of a --runs N (or CI's one run): the median first success and the median write p99 after it
 * within their aims, scaled by the median of Neo4j's restarts; at least one run measured.
 */
export function recoveriesVerdict(runs: readonly Recovery[]): Verdict {
  const median = (xs: number[]) =>
    percentile(
      [...xs].sort((a, b) => a - b),
      50,
    );
  const restart = median(runs.map((r) => r.neo4jRestartMs));
  return verdictOf([
    runs.length === 0 && 'no recovery was measured',
    ...runs.map(
      (r, i) =>
        !(Number.isFinite(r.firstSuccessMs) && Number.isFinite(r.neo4jRestartMs)) &&
        `run ${i + 1}: its first success or Neo4j's restart was not measured`,
    ),
    runs.length > 0 &&
      atMost(
        'the median first success',
        median(runs.map((r) => r.firstSuccessMs)),
        scaledAim(FIRST_SUCCESS_AIM_MS, restart),
      ),
    runs.length > 0 &&
      atMost(
        'the median write p99 after the first success',
        median(runs.map((r) => r.after.p99)),
        scaledAim(WRITE_P99_AIM_MS, restart),
      ),
  ]);
}
