// The verdicts of the storms, the load test, the fuzzer and the benchmark share one rule: a verdict fails when its
// measurement is missing (no probe, no case, no admitted request, a number that is not a number, an empty phase),
// with its reason, never passes on it. The helpers here state that rule once; each tool's verdict calls them, and so
// do the planted-failure tests (test/unit/verdicts-*.test.ts), which run the same code on a bad result.

/** A verdict: passed when no reason fails it. */
export interface Verdict {
  ok: boolean;
  reasons: string[];
}

export const verdictOf = (reasons: readonly (string | null | undefined | false)[]): Verdict => {
  const kept = reasons.filter((r): r is string => typeof r === 'string' && r !== '');
  return { ok: kept.length === 0, reasons: kept };
};

/**
 * `value` at most `bound`: a reason when it is past it, and when either is not a finite number (a measurement that
 * did not happen must not read as one that held).
 */
export function atMost(what: string, value: number, bound: number, unit = 'ms'): string | null {
  if (!Number.isFinite(value)) return `${what} was not measured (${String(value)})`;
  if (!Number.isFinite(bound)) return `${what}: its bound was not measured (${String(bound)})`;
  return value > bound ? `${what} ${value.toFixed(1)} ${unit}, past ${bound.toFixed(1)} ${unit}` : null;
}

/** `value` at least `bound`, with the same rule for a missing number. */
export function atLeast(what: string, value: number, bound: number, unit = ''): string | null {
  if (!Number.isFinite(value)) return `${what} was not measured (${String(value)})`;
  if (!Number.isFinite(bound)) return `${what}: its bound was not measured (${String(bound)})`;
  const u = unit === '' ? '' : ` ${unit}`;
  return value < bound ? `${what} ${value}${u}, under ${bound}${u}` : null;
}

/** A count of cases that must not be zero: what was checked over nothing proves nothing. */
export const someCases = (what: string, cases: number): string | null =>
  Number.isFinite(cases) && cases > 0 ? null : `${what}: nothing was checked (${cases} cases)`;
