// Which instance ran which scheduled firing of the daily purge, from the instances' pino records.
//
// The records do not name the firing they belong to: 'daily purge started' carries only its time, and an instance
// that finds the lease taken logs nothing. So firings are told apart by time: the schedule fires every
// `periodMs` (a divisor of a minute, so firings fall on multiples of it since the epoch), a run belongs to the
// firing at or before its 'started' record, and an instance that was up at a firing and logged no run for it
// skipped it. That holds while a run's 'started' record comes less than a period after its firing. Should the
// service name the firing (a `firing` field, ISO time, on 'daily purge started' and on a 'daily purge skipped'
// record), that field is used instead.
import type { ServiceInstance } from './instances.js';

export interface FiringReport {
  ok: boolean;
  /** Firings of the schedule while the instances ran. */
  firings: number;
  detail: string;
  problems: string[];
}

const clock = (epochMs: number) => new Date(epochMs).toISOString().slice(11, 19);

export function analysePurgeFirings(
  instances: ServiceInstance[],
  periodMs: number,
  /** Epoch ms of the kill, if one instance was killed. */
  killedAt: number | undefined,
): FiringReport {
  const firingOf = (t: number) => Math.floor(t / periodMs) * periodMs;
  const up = (i: ServiceInstance, t: number) =>
    i.readySince > 0 && i.readySince <= t && (i.until ?? Infinity) > t;
  const from = Math.min(...instances.map((i) => i.readySince).filter((t) => t > 0));
  const to = Math.max(...instances.map((i) => i.until ?? Date.now()));

  const firings = new Map<
    number,
    { ran: { name: string; started: number; finished?: number }[]; skipped: string[] }
  >();
  for (let t = Math.ceil(from / periodMs) * periodMs; t < to; t += periodMs) {
    firings.set(t, { ran: [], skipped: [] });
  }
  for (const i of instances) {
    for (const run of i.purgeRuns) {
      const t = run.firing ?? firingOf(run.started);
      const f = firings.get(t) ?? { ran: [], skipped: [] };
      f.ran.push({ name: i.name, started: run.started, finished: run.finished });
      firings.set(t, f);
    }
  }
  const skips = new Map(instances.map((i) => [i.name, 0]));
  const runs = new Map(instances.map((i) => [i.name, 0]));
  let one = 0;
  let none = 0;
  let finished = 0;
  let afterKill = 0;
  let ranAfterKill = 0;
  const problems: string[] = [];
  for (const [t, f] of [...firings].sort((a, b) => a[0] - b[0])) {
    for (const i of instances) {
      if ((up(i, t) || i.purgeSkips.includes(t)) && !f.ran.some((r) => r.name === i.name)) {
        f.skipped.push(i.name);
        skips.set(i.name, skips.get(i.name)! + 1);
      }
    }
    for (const r of f.ran) {
      runs.set(r.name, runs.get(r.name)! + 1);
      if (r.finished !== undefined) finished += 1;
    }
    if (f.ran.length === 0) none += 1;
    else if (f.ran.length === 1) one += 1;
    else {
      // When each run started and finished, in ms after the firing: runs one after the other show a lease that
      // was free again when the later instance asked for it.
      const runs = [...f.ran]
        .sort((a, b) => a.started - b.started)
        .map(
          (r) =>
            `${r.name} started +${r.started - t} ms, ` +
            (r.finished === undefined ? 'not finished' : `finished +${r.finished - t} ms`),
        );
      problems.push(
        `firing ${clock(t)}: ran on ${runs.join('; ')}${f.skipped.length > 0 ? `; skipped by ${f.skipped.join(', ')}` : ''}`,
      );
    }
    if (killedAt !== undefined && t > killedAt) {
      afterKill += 1;
      if (f.ran.length > 0) ranAfterKill += 1;
    }
  }
  const total = [...runs.values()].reduce((a, b) => a + b, 0);
  if (total === 0) problems.push('no firing ran the job');

  // Runs of two instances at the same time: an instance logs 'started' after taking the lease and 'finished'
  // before releasing it, so overlapping records mean both held the lease at once (a run never finished ends,
  // at the latest, when its instance stopped).
  const spans = instances
    .flatMap((i) =>
      i.purgeRuns.map((r) => ({ name: i.name, from: r.started, to: r.finished ?? i.until ?? r.started })),
    )
    .sort((a, b) => a.from - b.from);
  let overlaps = 0;
  for (let a = 0; a < spans.length; a++) {
    for (let b = a + 1; b < spans.length && spans[b]!.from <= spans[a]!.to; b++) {
      const [x, y] = [spans[a]!, spans[b]!];
      if (x.name === y.name) continue;
      overlaps += 1;
      problems.unshift(
        `at once: ${x.name} ran ${clock(x.from)}.${String(x.from % 1000).padStart(3, '0')} to ` +
          `+${x.to - x.from} ms, ${y.name} started +${y.from - x.from} ms after it (both held the lease)`,
      );
    }
  }
  const perInstance = instances
    .map((i) => `${i.name} ran ${runs.get(i.name)}, skipped ${skips.get(i.name)}`)
    .join('; ');
  return {
    firings: firings.size,
    ok: problems.length === 0,
    detail:
      `${firings.size} firings of every ${periodMs / 1000} s while instances ran: ${one} ran on one instance, ` +
      `${none} on none, ${firings.size - one - none} on more than one; ${total} runs, ${finished} finished ` +
      `(${perInstance}); ${overlaps} pairs of runs on two instances at once` +
      (killedAt === undefined ? '' : `; after the kill ${ranAfterKill} of ${afterKill} firings ran`),
    problems,
  };
}
