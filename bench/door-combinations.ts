// The door storm's combinations: shapes that each hold up alone, run at once, as an attacker with several tenants
// and clients would: the heaviest memory shapes together, slow senders beside heavy readers, floods of new tenants
// and of requests without a verified token beside the victim. bench/door-storm.ts runs them after the single shapes,
// on the production heap, under the same ceilings (RSS, the victim, /healthz) and each part under its own verdict.
import { ANSWER_BUDGETS } from './door-checks.js';
import { DOOR_SHAPES, type DoorSetup, type DoorShape } from './door-shapes.js';
import { type DoorShapeResult, runDoorShape } from './door-traffic.js';
import { shapeVerdict } from './door-verdict.js';

export interface DoorCombination {
  name: string;
  label: string;
  /** The shapes run at once (bench/door-shapes.ts names). */
  shapes: string[];
}

export const DOOR_COMBINATIONS: DoorCombination[] = [
  {
    name: 'memory-at-once',
    label:
      'four tenants abandoning 6 MB bodies, two planning the 50,000-definition document, 4 MB histories and listings, at once',
    shapes: ['bodies-abandoned-6mb', 'plan-50000-two-tenants', 'history-4mb', 'attributes-4mb'],
  },
  {
    name: 'trickles-beside-readers',
    label:
      'six tenants trickling uploads beside heavy readers (GraphQL definitions of 4 MB types, 4 MB histories)',
    shapes: ['uploads-trickled', 'graphql-definitions', 'history-4mb'],
  },
  {
    name: 'floods-beside-victim',
    label: 'new tenants by the thousand and requests without a verified token, beside the type pages',
    shapes: ['tenants-new-flood', 'unverified-flood', 'type-pages'],
  },
];

/** A combination's shapes. */
export function partsOf(combination: DoorCombination): DoorShape[] {
  return combination.shapes.map((name) => {
    const shape = DOOR_SHAPES.find((s) => s.name === name);
    if (!shape) throw new Error(`${combination.name}: no shape ${name}`);
    return shape;
  });
}

/**
 * A combination as one shape for the storm's report and its verdicts: its answers are its parts' ("part: answer"),
 * what it expects is theirs, and it must get through as its most lenient part must, over all its requests (each
 * part's answers are judged on their own too: runCombination).
 */
export function combinationShape(combination: DoorCombination): DoorShape {
  const parts = partsOf(combination);
  return {
    name: combination.name,
    label: combination.label,
    doors: [...new Set(parts.flatMap((p) => p.doors))],
    expected: parts.flatMap((p) => p.expected.map((k) => `${p.name}: ${k}`)),
    through: Math.min(...parts.map((p) => p.through)),
    requests: parts.reduce((n, p) => n + p.requests, 0),
    concurrency: parts.reduce((n, p) => n + p.concurrency, 0),
    request: () => {
      throw new Error('a combination sends its parts’ requests');
    },
  };
}

/** Runs a combination's shapes at once: the whole as one result, and each part's verdict. */
export async function runCombination(
  port: number,
  setup: DoorSetup,
  combination: DoorCombination,
  minMs: number,
  maxMs: number,
): Promise<{ result: DoorShapeResult; reasons: string[] }> {
  const parts = partsOf(combination);
  const results = await Promise.all(parts.map((p) => runDoorShape(port, setup, p, minMs, maxMs)));
  const reasons = parts.flatMap((p, i) =>
    shapeVerdict(p, results[i] as DoorShapeResult, ANSWER_BUDGETS).reasons.map(
      (r) => `${combination.name}: ${r}`,
    ),
  );
  const answers: Record<string, number> = {};
  const unexpected: Record<string, number> = {};
  results.forEach((r, i) => {
    const part = (parts[i] as DoorShape).name;
    for (const [k, n] of Object.entries(r.answers)) answers[`${part}: ${k}`] = n;
    for (const [k, n] of Object.entries(r.unexpected)) unexpected[`${part}: ${k}`] = n;
  });
  const most = (pick: (r: DoorShapeResult) => number) => Math.max(...results.map(pick));
  return {
    reasons,
    result: {
      name: combination.name,
      label: combination.label,
      doors: combinationShape(combination).doors,
      requests: results.reduce((n, r) => n + r.requests, 0),
      concurrency: results.reduce((n, r) => n + r.concurrency, 0),
      answers,
      unexpected,
      ms: most((r) => r.ms),
      answerMs: {
        p50: most((r) => r.answerMs.p50),
        p99: most((r) => r.answerMs.p99),
        max: most((r) => r.answerMs.max),
      },
      largestAnswer: most((r) => r.largestAnswer),
      mostStatements: most((r) => r.mostStatements),
      from: Math.min(...results.map((r) => r.from)),
      to: most((r) => r.to),
    },
  };
}
