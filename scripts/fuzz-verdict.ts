// The outside fuzzer's verdict, pure: every run asked for ran, exited 0, and reported test cases that schemathesis
// generated and sent (a run that reports none tested nothing: it fails, whatever its exit code); and the service
// logged no unexpected error. scripts/fuzz.ts calls it; test/unit/verdicts-fuzz.test.ts plants each failure.
import { type Verdict, verdictOf } from '../bench/verdict.js';

export interface FuzzRun {
  name: string;
  /** schemathesis's exit code. */
  code: number;
  /** Its whole output. */
  output: string;
}

/** The count schemathesis closes its summary with ("Test cases:" then e.g. "951 generated, 951 passed, 20 skipped"). */
export function testCases(output: string): string {
  const lines = output.split('\n');
  const at = lines.findIndex((line) => line.trim() === 'Test cases:');
  return (at >= 0 && lines[at + 1]?.trim()) || 'none reported';
}

/** How many test cases a run generated (0 when its output reports none). */
export function generatedCases(output: string): number {
  const m = /(\d[\d,]*) generated/.exec(testCases(output));
  return m ? Number((m[1] as string).replaceAll(',', '')) : 0;
}

export function fuzzVerdict(asked: number, runs: readonly FuzzRun[], errorLog: readonly string[]): Verdict {
  return verdictOf([
    runs.length < asked && `${runs.length} of ${asked} runs ran`,
    ...runs.map((r) => r.code !== 0 && `${r.name}: schemathesis exited ${r.code}`),
    ...runs.map(
      (r) =>
        generatedCases(r.output) === 0 &&
        `${r.name}: no test case generated (test cases: ${testCases(r.output)})`,
    ),
    errorLog.length > 0 && `the service logged ${errorLog.length} unexpected error(s)`,
  ]);
}
