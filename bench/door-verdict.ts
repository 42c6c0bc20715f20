// The door storm's verdicts, pure: what a shape's answers must be (each one its shape expects, and a share of them
// answered by the door itself, never shed), what its probe windows must be (served, and under their ceilings), and
// what must hold after the storm (no request past its door's budget, the key cap reached and kept, nothing
// acknowledged lost, no token logged). bench/door-storm.ts calls them on its measurements; the integration test of
// the doors (test/integration/door-storm.test.ts) on a short run of every shape; test/unit/verdicts-storm.test.ts on
// planted bad results.
import { type DoorShape, SHED } from './door-shapes.js';
import { type ProbeWindow, probeVerdict } from './probe-verdict.js';
import { atMost, type Verdict, verdictOf } from './verdict.js';

/** What the verdict reads of a shape's run (bench/door-traffic.ts DoorShapeResult). */
export interface ShapeAnswers {
  requests: number;
  /** Answers by "status reason". */
  answers: Record<string, number>;
  /** The largest answer (bytes). */
  largestAnswer: number;
}

/** An answer as its door gave it ("part: 429 tenant_busy" of a combination's part is "429 tenant_busy"). */
const answerOf = (key: string) => (key.includes(': ') ? key.slice(key.indexOf(': ') + 2) : key);

/** Requests answered by their door: one of the shape's expected answers other than a shed one. */
export const throughCount = (shape: Pick<DoorShape, 'expected'>, answers: Record<string, number>) =>
  Object.entries(answers)
    .filter(([k]) => shape.expected.includes(k) && !SHED.includes(answerOf(k)))
    .reduce((sum, [, n]) => sum + n, 0);

/** The least number of a shape's requests that must get through: its share, and never fewer than one. */
export const throughNeeded = (shape: Pick<DoorShape, 'through'>, requests: number) =>
  Math.max(1, Math.ceil(shape.through * requests));

/**
 * A shape's answers: some were sent; each is one its shape expects; at least its `through` share (and one) answered
 * by the door rather than shed; none larger than its door states (when the shape attacks one door).
 */
export function shapeVerdict(
  shape: Pick<DoorShape, 'name' | 'expected' | 'through' | 'doors'>,
  r: ShapeAnswers,
  answerBudgets: Record<string, number | undefined> = {},
): Verdict {
  const unexpected = Object.entries(r.answers).filter(([k]) => !shape.expected.includes(k));
  const through = throughCount(shape, r.answers);
  const needed = throughNeeded(shape, r.requests);
  const budget = shape.doors.length === 1 ? answerBudgets[shape.doors[0] as string] : undefined;
  return verdictOf([
    !(shape.through > 0 && shape.through <= 1) &&
      `${shape.name}: states ${shape.through} as what must get through (a share in (0, 1])`,
    r.requests === 0 && `${shape.name}: no request was sent`,
    unexpected.length > 0 &&
      `${shape.name}: unexpected answers ${JSON.stringify(Object.fromEntries(unexpected))}`,
    r.requests > 0 &&
      through < needed &&
      `${shape.name}: ${through} of ${r.requests} requests answered by the door (not shed), fewer than ${needed}`,
    budget !== undefined &&
      r.largestAnswer > budget &&
      `${shape.name}: an answer of ${r.largestAnswer} bytes, past ${shape.doors[0]}'s ${budget}`,
  ]);
}

/** The storm's latency ceilings and targets (door-storm.ts TARGETS). */
export interface WindowLimits {
  victimCeilingMs: number;
  healthCeilingMs: number;
  healthMs: number;
}

/**
 * A shape's probe windows: the victim's and /healthz's must have been probed, every probe served, and their
 * latency (of the probes served) under the ceilings: failures. The targets (the victim within `victimBound`, twice its
 * quiet p99; /healthz within its target): missed, reported apart.
 */
export function windowsVerdict(
  name: string,
  victim: ProbeWindow,
  health: ProbeWindow,
  limits: WindowLimits,
  victimBound: number,
): { failures: string[]; missed: string[] } {
  const failures = [
    ...probeVerdict(`${name}: the victim`, victim, { p99: limits.victimCeilingMs }).reasons,
    ...probeVerdict(`${name}: /healthz`, health, { max: limits.healthCeilingMs }).reasons,
  ];
  const missed = [
    atMost(`${name}: victim p99`, victim.p99, victimBound),
    atMost(`${name}: /healthz max`, health.max, limits.healthMs),
  ].filter((m): m is string => m !== null);
  return { failures, missed };
}

/** The quiet window before the shapes: both probes alive and served, the victim's p99 a number (its targets' base). */
export const quietVerdict = (victim: ProbeWindow, health: ProbeWindow): Verdict =>
  verdictOf([
    ...probeVerdict('quiet: the victim', victim, {}).reasons,
    ...probeVerdict('quiet: /healthz', health, {}).reasons,
    !Number.isFinite(victim.p99) && 'quiet: the victim has no p99 to set its targets by',
  ]);

/** The run as a whole: shapes ran (as many as asked), the process alive, its RSS sampled and under its ceiling. */
export function runVerdict(r: {
  asked: number;
  ran: number;
  alive: boolean;
  tail: string;
  rssMaxMb: number;
  rssCeilingMb: number;
}): Verdict {
  return verdictOf([
    r.asked === 0 && 'no shape was asked for (--shapes names none)',
    r.ran < r.asked && `${r.ran} of ${r.asked} shapes ran`,
    !r.alive && `the service died: ${r.tail}`,
    !(r.rssMaxMb > 0) && "the service's RSS was never sampled",
    r.rssMaxMb >= r.rssCeilingMb &&
      `the service's RSS reached ${r.rssMaxMb.toFixed(0)} MB (ceiling ${r.rssCeilingMb})`,
  ]);
}

/** What the after-storm checks read (bench/door-checks.ts gathers it from the service and the database). */
export interface AfterStorm {
  /** `metamodel_door_over_budget_total{…}` lines whose value is not 0. */
  overBudget: string[];
  /** Whether the stray token (its payload or signature) was found in the service's log. */
  strayLogged: boolean;
  /** Entities named by the 300 requests on one key (when that shape ran). */
  oneKeyEntities?: number;
  /** The many-keys shape (when it ran): creates acknowledged, refused at the key cap, and the types found. */
  manyKeys?: { created: number; exhausted: number; listed: number; requests: number; cap: number };
}

export function afterStormVerdict(a: AfterStorm): Verdict {
  const k = a.manyKeys;
  return verdictOf([
    a.overBudget.length > 0 && `requests past their door's budget: ${a.overBudget.join('; ')}`,
    a.strayLogged && 'the stray token reached the log',
    a.oneKeyEntities !== undefined &&
      a.oneKeyEntities !== 1 &&
      `300 requests on one key wrote ${a.oneKeyEntities} entities, not 1`,
    k !== undefined && k.created === 0 && 'no keyed create was acknowledged',
    k !== undefined &&
      k.created > k.cap &&
      `${k.created} keyed creates acknowledged, past the tenant's cap of ${k.cap}`,
    k !== undefined &&
      k.requests > k.cap &&
      k.exhausted === 0 &&
      `${k.requests} keyed requests past a cap of ${k.cap}, none refused idempotency_keys_exhausted`,
    k !== undefined &&
      k.listed < k.created &&
      `${k.created} keyed creates acknowledged, ${k.listed} types found`,
  ]);
}
