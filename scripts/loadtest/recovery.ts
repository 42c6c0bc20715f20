// The fault variant's recovery figures: how soon the service serves again once Neo4j accepts connections (its first
// successful write, /readyz 200), how fast the writes of the 10 s after that are, the retry storm of clients that
// ignore Retry-After, and the summary over several runs.

import { percentile, sleep } from '../../bench/lib.js';

/**
 * How long Neo4j took to accept connections again after its start on the machine the aims were set on
 * (docs/performance.md#neo4j-restarted-under-load, the slowest of those runs): on a slower machine, measured in the
 * same run, the aims grow by the ratio of its restart to this (fault-verdict.ts scaledAim).
 */
export const REFERENCE_RESTART_MS = 4_400;
/** The aims over several runs: the median first success and the worst, and the p99 of the writes after it. */
export const FIRST_SUCCESS_AIM_MS = 5_000;
export const FIRST_SUCCESS_WORST_AIM_MS = 8_000;
export const WRITE_P99_AIM_MS = 1_000;
/** The writes measured after the first success: those begun within this. */
export const AFTER_WINDOW_MS = 10_000;
/** Clients of the retry storm: each sends its next request as soon as the last answer came, 503 or not. */
export const STORM_LOOPS = 16;

export interface TimedAttempt {
  /** When it was sent (performance.now()) and how long its answer took. */
  at: number;
  ms: number;
  status: number;
  write: boolean;
}

export interface Recovery<A extends TimedAttempt = TimedAttempt> {
  storm: boolean;
  /** The first write answered 2xx once Neo4j was back. */
  first?: A;
  /** From Neo4j accepting connections to the first write answered 2xx, and to /readyz 200 (ms). */
  firstSuccessMs: number;
  /** From Neo4j's start to its accepting connections (ms): the same run's measure of the machine's speed. */
  neo4jRestartMs: number;
  readyMs: number;
  /** Writes begun in the AFTER_WINDOW_MS after the first success and served (not refused 503, not lost). */
  after: { n: number; p50: number; p99: number; max: number };
  /** Requests the storm sent, and how many of them came back 503. */
  stormRequests: number;
  stormRefused: number;
}

/** The recovery of one run, from every attempt (the storm's excluded) and the timeline. */
export function recoveryOf<A extends TimedAttempt>(
  attempts: readonly A[],
  neo4jUp: number,
  ready: number,
  storm: { enabled: boolean; requests: number; refused: number },
  neo4jRestartMs: number,
): Recovery<A> {
  let firstAttempt: A | undefined;
  for (const a of attempts) {
    if (!a.write || a.status < 200 || a.status >= 300 || a.at + a.ms <= neo4jUp) continue;
    if (!firstAttempt || a.at + a.ms < firstAttempt.at + firstAttempt.ms) firstAttempt = a;
  }
  const first = firstAttempt ? firstAttempt.at + firstAttempt.ms : Number.NaN;
  const served = attempts
    .filter(
      (a) => a.write && a.status !== 0 && a.status !== 503 && a.at >= first && a.at < first + AFTER_WINDOW_MS,
    )
    .map((a) => a.ms)
    .sort((a, b) => a - b);
  return {
    storm: storm.enabled,
    ...(firstAttempt ? { first: firstAttempt } : {}),
    firstSuccessMs: first - neo4jUp,
    neo4jRestartMs,
    readyMs: ready - neo4jUp,
    after: {
      n: served.length,
      p50: percentile(served, 50),
      p99: percentile(served, 99),
      max: served.length > 0 ? (served[served.length - 1] as number) : Number.NaN,
    },
    stormRequests: storm.requests,
    stormRefused: storm.refused,
  };
}

/**
 * Clients that ignore Retry-After: STORM_LOOPS loops, each sending `request` again as soon as its answer came, from
 * now until `until()` says stop. Counts what they sent and how many were refused 503.
 */
export function retryStorm(request: () => Promise<number>, until: () => boolean) {
  const counts = { requests: 0, refused: 0 };
  const loops = Array.from({ length: STORM_LOOPS }, async () => {
    while (!until()) {
      const status = await request().catch(() => 0);
      counts.requests += 1;
      if (status === 503) counts.refused += 1;
      // A lost connection comes back at once too: yield so that a dead port does not spin the loop.
      if (status === 0) await sleep(1);
    }
  });
  return { counts, done: Promise.all(loops) };
}

const s = (ms: number) => (Number.isFinite(ms) ? (ms / 1000).toFixed(2) : '-');
const ms = (x: number) => (Number.isFinite(x) ? x.toFixed(0) : '-');

/** One line of the summary table. */
export const recoveryLine = (r: Recovery, i: number) =>
  `| ${i + 1} | ${r.storm ? `yes (${r.stormRequests} sent, ${r.stormRefused} refused)` : 'no'} | ${s(r.neo4jRestartMs)} | ${s(r.firstSuccessMs)} | ${s(r.readyMs)} | ${r.after.n} | ${ms(r.after.p50)} | ${ms(r.after.p99)} | ${ms(r.after.max)} |`;

/** The summary over the runs: a Markdown table, then the medians and worst against the aims. */
export function printRecoverySummary(runs: readonly Recovery[]) {
  console.log(
    '\nRecovery after Neo4j accepted connections again (s), and the writes begun in the 10 s after the first success (ms):\n',
  );
  console.log(
    '| run | retry storm | Neo4j restart | first success | /readyz 200 | writes | p50 | p99 | max |',
  );
  console.log('| --: | --- | --: | --: | --: | --: | --: | --: | --: |');
  runs.forEach((r, i) => {
    console.log(recoveryLine(r, i));
  });
  for (const storm of [false, true]) {
    const these = runs.filter((r) => r.storm === storm);
    if (these.length === 0) continue;
    const firsts = these.map((r) => r.firstSuccessMs).sort((a, b) => a - b);
    const p99s = these.map((r) => r.after.p99).sort((a, b) => a - b);
    console.log(
      `\n${storm ? 'With' : 'Without'} a retry storm, ${these.length} run(s): first success median ${s(percentile(firstsOrNaN(firsts), 50))} s, ` +
        `worst ${s(firsts[firsts.length - 1] ?? Number.NaN)} s (aims: median <= ${s(FIRST_SUCCESS_AIM_MS)}, none over ` +
        `${s(FIRST_SUCCESS_WORST_AIM_MS)}); write p99 after: median ${ms(percentile(p99s, 50))} ms, worst ` +
        `${ms(p99s[p99s.length - 1] ?? Number.NaN)} ms (aim <= ${WRITE_P99_AIM_MS}).`,
    );
  }
}

const firstsOrNaN = (xs: number[]) => (xs.some((x) => !Number.isFinite(x)) ? [Number.NaN] : xs);
