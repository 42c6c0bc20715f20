// --instances N: the traffic over the instances (one killed halfway), its summary and the checks across them.

import { performance } from 'node:perf_hooks';
import type { Driver } from 'neo4j-driver';
import {
  afterKill,
  type Client,
  cluster,
  clusterLatencies,
  clusterTotals,
  crossCursor,
  leaseHoldersBefore,
  readYourWrite,
  startTraffic,
  type Tally,
  withdrawalRefusal,
} from './cluster.js';
import { killInstance } from './instances.js';
import { outcomes, rows } from './invariants.js';
import { CONNECTIONS, PURGE_PERIOD_SECONDS, SECONDS } from './options.js';
import { analysePurgeFirings } from './purge-firings.js';
import { clientLoop } from './read-backs.js';
import { pad, pct, type TrafficSummary } from './report.js';

export async function runClusterTraffic(): Promise<TrafficSummary> {
  const { instances } = cluster!;
  const clients: Client[] = Array.from({ length: CONNECTIONS }, (_, index) => ({
    index,
    instance: instances[index % instances.length]!,
    moved: false,
  }));
  startTraffic();
  const started = performance.now();
  const killTimer = setTimeout(() => {
    const victim = instances[instances.length - 1]!;
    cluster!.killedAfter = (performance.now() - started) / 1000;
    cluster!.victim = victim;
    afterKill.clientsOnVictim = clients.filter((c) => c.instance === victim).length;
    killInstance(victim);
    console.log(
      `  ${cluster!.killedAfter.toFixed(1)} s: killed ${victim.name} (SIGKILL, pid ${victim.child.pid})`,
    );
  }, SECONDS * 500);
  try {
    await Promise.all(clients.map((c) => clientLoop(c, started + SECONDS * 1000)));
  } finally {
    clearTimeout(killTimer);
  }
  const duration = (performance.now() - started) / 1000;
  const sorted = [...clusterLatencies].sort((a, b) => a - b);
  const byClass = (cls: number) => clusterTotals.byClass.get(cls) ?? 0;
  return {
    duration,
    errors: clusterTotals.errors,
    timeouts: clusterTotals.timeouts,
    '2xx': byClass(2),
    '4xx': byClass(4),
    '5xx': byClass(5),
    latency: {
      p50: Math.round(pct(sorted, 50)),
      p99: Math.round(pct(sorted, 99)),
      max: Math.round(sorted[sorted.length - 1] ?? 0),
    },
    requests: { total: clusterTotals.answered, average: clusterTotals.answered / duration },
  };
}

export function printInstances(cpuDuringTraffic: (number | null)[]) {
  const { instances, counts, victim, killedAfter } = cluster!;
  console.log('\n== instances ==');
  console.log(
    'requests per instance: in the setup (writes and their read-backs); in the traffic, operations and the checks ' +
      'after them, and how they were answered; CPU during the traffic',
  );
  console.log(
    `\n${'instance'.padEnd(10)}${pad('pid', 8)}${pad('port', 7)}${pad('setup', 7)}${pad('traffic', 9)}${pad('ops', 7)}` +
      `${pad('checks', 8)}${pad('2xx', 7)}${pad('4xx', 7)}${pad('5xx', 5)}${pad('no answer', 11)}${pad('CPU s', 7)}  state`,
  );
  for (const instance of instances) {
    const c = counts[instance.index]!;
    const cpu = cpuDuringTraffic[instance.index];
    const state =
      instance === victim
        ? `killed after ${killedAfter?.toFixed(1)} s of traffic`
        : instance.unexpectedExit
          ? `exited by itself (${instance.unexpectedExit})`
          : 'ran to the end';
    console.log(
      `${instance.name.padEnd(10)}${pad(instance.child.pid ?? '-', 8)}${pad(instance.port, 7)}${pad(c.setup, 7)}` +
        `${pad(c.traffic + c.checks, 9)}${pad(c.traffic, 7)}${pad(c.checks, 8)}` +
        `${pad(c.byClass.get(2) ?? 0, 7)}${pad(c.byClass.get(4) ?? 0, 7)}${pad(c.byClass.get(5) ?? 0, 5)}` +
        `${pad(c.connectionErrors, 11)}${pad(cpu === null || cpu === undefined ? '-' : (cpu / 1000).toFixed(1), 7)}  ${state}`,
    );
  }
}

export async function checkCluster(driver: Driver) {
  const { instances, victim, killedAfter } = cluster!;
  const noted = (t: Tally, what: string) => t.notes.get(what) ?? 0;
  /** How many checks went through another instance, and how many through the writer (none other alive). */
  const where = (t: Tally) =>
    `${t.checked - t.same} through another instance, ${t.same} through the same one (the kill left no other)`;
  /** The notes other than `except`, each "; n what". */
  const asides = (t: Tally, ...except: string[]) =>
    [...t.notes]
      .filter(([what]) => !except.includes(what))
      .map(([what, n]) => `; ${n} ${what}`)
      .join('');
  const kinds = ['type', 'declaration', 'withdrawal', 'entity'];
  outcomes.push({
    name: 'cross-instance-read-your-write',
    ok: readYourWrite.failed === 0 && readYourWrite.checked > 0,
    detail:
      `${readYourWrite.checked} acknowledged writes read back at once (${noted(readYourWrite, 'type')} type creates, ` +
      `${noted(readYourWrite, 'declaration')} declarations, ${noted(readYourWrite, 'withdrawal')} withdrawals, ` +
      `${noted(readYourWrite, 'entity')} entity creates; the load renames nothing): ${where(readYourWrite)}; ` +
      `${readYourWrite.failed} not found as written${asides(readYourWrite, ...kinds)}`,
    problems: readYourWrite.samples,
    cases: readYourWrite.checked,
  });
  outcomes.push({
    name: 'cross-instance-cursor',
    ok: crossCursor.failed === 0 && crossCursor.checked > 0,
    detail:
      `${crossCursor.checked} next pages asked at once with the cursor another instance issued: ${where(crossCursor)}; ` +
      `${crossCursor.failed} refused or out of order${asides(crossCursor)}`,
    problems: crossCursor.samples,
    cases: crossCursor.checked,
  });
  outcomes.push({
    name: 'cross-instance-withdrawal-refuses-writes',
    ok:
      withdrawalRefusal.failed === 0 &&
      (noted(withdrawalRefusal, 'withdrawal') === 0 || withdrawalRefusal.checked > 0),
    detail:
      `${noted(withdrawalRefusal, 'withdrawal')} acknowledged withdrawals, each followed at once by a curation write ` +
      `with a value for it on every other instance: ${withdrawalRefusal.checked} writes, ${where(withdrawalRefusal)}; ` +
      `${withdrawalRefusal.checked - withdrawalRefusal.failed} refused with 400 unknown_attribute, ` +
      `${withdrawalRefusal.failed} not${asides(withdrawalRefusal, 'withdrawal')}`,
    problems: withdrawalRefusal.samples,
    cases: withdrawalRefusal.checked,
  });

  const firings = analysePurgeFirings(instances, PURGE_PERIOD_SECONDS * 1000, victim?.until);
  // Every instance has stopped: a lease still held was left behind, by the killed instance or by a run that a
  // shutdown cut, and keeps every other instance from that job until it expires (an hour for the daily job).
  // Reported, then released, so that a shared NEO4J_URI is not left blocked.
  const left = await rows(
    driver,
    `MATCH (l:JobLease) WHERE l.until > datetime() AND NOT l.holder IN $before
     RETURN l.name AS name, l.holder AS holder, toString(l.until) AS until, l.until.epochMillis AS untilMs
     ORDER BY name`,
    { before: leaseHoldersBefore },
  );
  let leaseNote = '';
  if (left.length > 0) {
    leaseNote = `; ${left.length} leases still held after every instance stopped`;
    const daily = left.find((l) => l.name === 'purge-daily');
    if (daily) {
      // Taken for an hour: the run that took it is the one that logged 'daily purge started' right after.
      const taken = Number(daily.untilMs) - 3_600_000;
      const [by] = instances
        .flatMap((i) => i.purgeRuns.map((run) => ({ i, run })))
        .filter(({ run }) => run.started >= taken && run.started < taken + PURGE_PERIOD_SECONDS * 1000)
        .sort((a, b) => a.run.started - b.run.started);
      const cut = !by
        ? ' by a run that logged nothing (cut before its first record)'
        : by.i === victim
          ? ` by ${by.i.name}'s run, which the kill cut`
          : by.run.finished === undefined || by.run.finished >= (by.i.until ?? Number.POSITIVE_INFINITY)
            ? ` by ${by.i.name}'s run, still going when ${by.i.name} was told to stop (SIGTERM)`
            : ` by ${by.i.name}'s run`;
      leaseNote += `, among them purge-daily, taken at ${new Date(taken).toISOString().slice(11, 19)}${cut}: no firing runs before ${daily.until}`;
    }
    leaseNote += ' (released now)';
  }
  await rows(
    driver,
    `UNWIND $left AS x MATCH (l:JobLease {name: x.name}) WHERE l.holder = x.holder
     SET l.holder = null, l.until = null`,
    { left: left.map(({ name, holder }) => ({ name, holder })) },
  );
  outcomes.push({
    name: 'one-purge-runner-per-firing',
    ok: firings.ok,
    detail: `${firings.detail}${leaseNote}`,
    problems: firings.problems,
    cases: firings.firings,
  });

  if (victim) {
    const unexpected = instances.filter((i) => i.unexpectedExit);
    const ok =
      afterKill.survivorErrors === 0 &&
      afterKill.survivorConnectionErrors === 0 &&
      afterKill.misrouted === 0 &&
      afterKill.movedClients === afterKill.clientsOnVictim &&
      (afterKill.movedClients === 0 || afterKill.movedRequests > 0) &&
      unexpected.length === 0;
    outcomes.push({
      name: 'survivors-serve-after-kill',
      ok,
      detail:
        `${victim.name} killed after ${killedAfter?.toFixed(1)} s of traffic; ${afterKill.survivorRequests} requests ` +
        `to the survivors after the kill, ${afterKill.survivorErrors} answered 5xx or not at all ` +
        `(${afterKill.survivorConnectionErrors} survivor requests without answer in the whole run); ` +
        `${afterKill.cut} requests in flight to ${victim.name} cut, ${afterKill.misrouted} sent to it afterwards; ` +
        `${afterKill.movedClients} of its ${afterKill.clientsOnVictim} clients moved to the survivors and sent ` +
        `${afterKill.movedRequests} requests there` +
        (unexpected.length > 0 ? `; exited by themselves: ${unexpected.map((i) => i.name).join(', ')}` : ''),
      problems: afterKill.samples,
      cases: afterKill.survivorRequests,
    });
  }
}
