// The load test's report: traffic per operation (statuses, reasons, latency, queries) and each invariant.
import { percentile } from '../../bench/lib.js';
import { outcomes } from './invariants.js';
import { dbQueries, latencies, OPS, reasons, sent, statuses } from './state.js';

/** A percentile of an ascending list (bench/lib's nearest rank), 0 for none. */
export const pct = (sorted: number[], p: number) => (sorted.length === 0 ? 0 : percentile(sorted, p));
export const pad = (s: string | number, n: number) => String(s).padStart(n);

/** What the report needs of a run's traffic (autocannon's result has it; so has the --instances N runner's). */
export interface TrafficSummary {
  duration: number;
  errors: number;
  timeouts: number;
  '2xx': number;
  '4xx': number;
  '5xx': number;
  latency: { p50: number; p99: number; max: number };
  requests: { total: number; average: number };
}

export function printTraffic(result: TrafficSummary, cpuNote: string) {
  console.log('\n== traffic ==');
  console.log(
    `${result.requests.total} answers in ${result.duration.toFixed(1)} s: ${result.requests.average.toFixed(0)} req/s; ` +
      `latency p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, max ${result.latency.max} ms`,
  );
  console.log(
    `2xx ${result['2xx']}, 4xx ${result['4xx']}, 5xx ${result['5xx']}, ` +
      `connection errors ${result.errors} (timeouts ${result.timeouts}); ${cpuNote}`,
  );
  console.log(
    `\n${'operation'.padEnd(10)}${pad('sent', 7)}${pad('2xx', 7)}${pad('4xx', 7)}${pad('5xx', 5)}` +
      `${pad('p50 ms', 8)}${pad('p99 ms', 8)}${pad('q/req', 7)}  refusals`,
  );
  for (const op of OPS) {
    const byStatus = [...statuses.get(op)!];
    const count = (lo: number) =>
      byStatus.filter(([s]) => s >= lo && s < lo + 100).reduce((sum, [, n]) => sum + n, 0);
    const sorted = [...latencies.get(op)!].sort((a, b) => a - b);
    const refusals = [...reasons.get(op)!]
      .sort((a, b) => b[1] - a[1])
      .map(([r, n]) => `${r}: ${n}`)
      .join(', ');
    const perAnswer = sorted.length === 0 ? 0 : dbQueries.get(op)! / sorted.length;
    console.log(
      `${op.padEnd(10)}${pad(sent.get(op)!, 7)}${pad(count(200), 7)}${pad(count(400), 7)}${pad(count(500), 5)}` +
        `${pad(pct(sorted, 50).toFixed(0), 8)}${pad(pct(sorted, 99).toFixed(0), 8)}` +
        `${pad(perAnswer.toFixed(1), 7)}  ${refusals || '-'}`,
    );
  }
}

export function printOutcomes() {
  console.log('\n== invariants ==');
  for (const o of outcomes) {
    const verdict = !o.ok ? 'FAILED' : o.cases > 0 ? 'OK' : 'FAILED (nothing checked)';
    console.log(`invariant ${o.name}: ${verdict} (${o.detail}; ${o.cases} cases)`);
    for (const p of o.problems.slice(0, 5)) console.log(`    ${p}`);
    if (o.problems.length > 5) console.log(`    ... ${o.problems.length - 5} more`);
  }
}
