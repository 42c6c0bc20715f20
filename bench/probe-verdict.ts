// A probe's window (bench/health-probe.ts: /healthz, or a tenant's own request timed meanwhile) and its verdict.
// The latency figures count only the probes answered 200: a fast 503 or a reset must not make the service look
// quick. A probe due while another was outstanding is sent as soon as that one ends, and its latency runs from when it
// was due, so a stall counts for every probe it delayed (no coordinated omission); such probes are counted as late.
import { percentile } from './lib.js';
import { atMost, type Verdict, verdictOf } from './verdict.js';

export interface ProbeSample {
  /** When the probe was due (ms since the epoch, performance.timeOrigin + now()). */
  at: number;
  /** From when it was due to its answer (or its failure), in ms. */
  ms: number;
  /** HTTP status, or "error:…" / "timeout". */
  outcome: string;
  /** Due while the previous probe was unanswered: sent when that one ended. */
  late: boolean;
}

export interface ProbeWindow {
  /** Probes due in the window. */
  probes: number;
  /** Those answered 200, over which the latency figures run. */
  served: number;
  failures: number;
  /** Probes due while the previous one was unanswered (sent late; their latency counts from when they were due). */
  late: number;
  /** Connections the probe opened (1 at its start; more only when the service closed its keep-alive one). */
  connections: number;
  over100ms: number;
  /** Of the probes answered 200 (NaN when none was). */
  p50: number;
  p99: number;
  max: number;
  /** Failure outcomes by kind. */
  failed: Record<string, number>;
}

/** The probes due in [from, to) (epoch ms), and the connections opened then. */
export function probeWindow(
  samples: readonly ProbeSample[],
  connectedAt: readonly number[],
  from: number,
  to: number,
): ProbeWindow {
  const inWindow = samples.filter((s) => s.at >= from && s.at < to);
  const served = inWindow.filter((s) => s.outcome === '200');
  const ms = served.map((s) => s.ms).sort((x, y) => x - y);
  const failed: Record<string, number> = {};
  for (const s of inWindow) if (s.outcome !== '200') failed[s.outcome] = (failed[s.outcome] ?? 0) + 1;
  return {
    probes: inWindow.length,
    served: served.length,
    failures: inWindow.length - served.length,
    late: inWindow.filter((s) => s.late).length,
    connections: connectedAt.filter((t) => t >= from && t < to).length,
    over100ms: ms.filter((x) => x > 100).length,
    p50: percentile(ms, 50),
    p99: percentile(ms, 99),
    max: ms[ms.length - 1] ?? Number.NaN,
    failed,
  };
}

/** What a window is held to: a ceiling on its p99 and/or its max (ms). */
export interface ProbeCeiling {
  p99?: number;
  max?: number;
}

/**
 * A window fails when no probe was due in it (a dead probe), when any probe failed (a refusal, a reset, a timeout:
 * the service did not serve it), or when its latency passes a ceiling or is not a number.
 */
export function probeVerdict(what: string, w: ProbeWindow, ceiling: ProbeCeiling): Verdict {
  const failedText = Object.entries(w.failed)
    .map(([k, n]) => `${n}x ${k}`)
    .join(', ');
  return verdictOf([
    w.probes === 0 && `${what}: no probe in the window (the probe is dead or was never due)`,
    w.failures > 0 && `${what}: ${w.failures} of ${w.probes} probes failed (${failedText})`,
    ceiling.p99 !== undefined && atMost(`${what} p99`, w.p99, ceiling.p99),
    ceiling.max !== undefined && atMost(`${what} max`, w.max, ceiling.max),
  ]);
}

/** One line of a window for the reports: its count, failures and late probes always shown. */
export function probeText(w: ProbeWindow): string {
  const f = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '-');
  return `p50 ${f(w.p50)} p99 ${f(w.p99)} max ${f(w.max)} ms (${w.served} of ${w.probes} served, ${w.failures} failed, ${w.late} late)`;
}
