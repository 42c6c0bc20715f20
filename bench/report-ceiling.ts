// The bench's targets for reads against what they could be at best, measured in the same run: the cached reads
// against the memory ceiling (m), the filtered entity pages against the raw driver's same query (a).
import { CEILING_READS, FILTERS, find, fixed, type Report, TARGETS, type TargetCheck, x2 } from './report.js';

/**
 * The cached reads held to the memory ceiling measured in the same run: at every connection count, their req/s at
 * least TARGETS.ceilingRatio of (m)'s; at 16 connections, their p99 within TARGETS.ceilingP99Ms. A figure not measured
 * (no (m) beside it) misses.
 */
export function ceilingChecks(r: Report): TargetCheck[] {
  return CEILING_READS.flatMap((id) =>
    r.settings.levels.flatMap((level) => {
      const m = find(r, id, 'service', level);
      if (!m) return [];
      const ceiling = find(r, id, 'm', level);
      const ratio = ceiling && ceiling.rps > 0 ? m.rps / ceiling.rps : null;
      const checks: TargetCheck[] = [
        {
          scenario: id,
          name: `${id} at ${level} connections: >= ${TARGETS.ceilingRatio}x the memory ceiling (m)`,
          met: ratio !== null && ratio >= TARGETS.ceilingRatio,
          detail: `${fixed(m.rps, 0)} vs ${fixed(ceiling?.rps, 0)} req/s = ${x2(ratio)}; version reads ${fixed(m.versionReadsPerRequest, 4)} per request`,
        },
      ];
      if (level === TARGETS.ceilingP99Connections) {
        checks.push({
          scenario: id,
          name: `${id} at ${level} connections: p99 <= ${TARGETS.ceilingP99Ms} ms`,
          met: Number.isFinite(m.p99) && m.p99 <= TARGETS.ceilingP99Ms,
          detail: `p99 ${fixed(m.p99, 2)} ms (the ceiling's ${fixed(ceiling?.p99, 2)} ms)`,
        });
      }
      return checks;
    }),
  );
}

/** Filtered entity pages at least as fast as the raw driver's same query (a), at 16 and 64 connections. */
export function filterChecks(r: Report): TargetCheck[] {
  return FILTERS.flatMap((id) =>
    TARGETS.filterLevels.flatMap((level) => {
      const m = find(r, id, 'service', level);
      if (!m) return [];
      const a = find(r, id, 'a', level);
      const ratio = a && a.rps > 0 ? m.rps / a.rps : null;
      return [
        {
          scenario: id,
          name: `${id} at ${level} connections: >= ${TARGETS.filterRatioToDriver}x baseline (a)`,
          met: ratio !== null && ratio >= TARGETS.filterRatioToDriver,
          detail: `${fixed(m.rps, 0)} vs ${fixed(a?.rps, 0)} req/s = ${x2(ratio)}`,
        },
      ];
    }),
  );
}
