// The purge: removes withdrawn definitions' stored values in bounded batches (in the background after a
// withdrawal, and in the daily job), then removes definitions whose data is gone. One instance at a time per
// definition and for the daily job, by leases in Neo4j; progress is kept per batch, so a restart loses nothing.
// Over 300 lines: the background pass, the daily job and their leases share one lease-and-batch loop, kept in one
// place so that the at-most-one-runner rule is read (and changed) once.

import cron from 'node-cron';
import type { Logger } from 'pino';
import type { PurgeReport as WirePurgeReport } from '../contract/wire.js';
import {
  CARRY_SAMPLES,
  type CarriedItem,
  type CarryDecisions,
  type CarryRefusal,
  type CarryState,
  readCarry,
  readCarryBatch,
  writeCarryBatch,
} from '../db/carry.js';
import type { ChangeAuthor } from '../db/changes.js';
import type { Executor } from '../db/executor.js';
import { removeExpiredIdempotencyRecords } from '../db/idempotency-records.js';
import {
  acquireLease,
  findCarrying,
  findWithdrawn,
  purgeBatch,
  releaseLease,
  removeDefinition,
  startPass,
  type WithdrawnDefinition,
} from '../db/purge.js';
import type { Run } from '../db/run.js';
import { isStorageAway } from '../db/storage-policy.js';

export interface PurgeOptions {
  db: Executor;
  logger: Logger;
  instanceId: string;
  /** Instances per batch. */
  batchSize?: number;
  /** Seconds a curation write begun before a withdrawal may still commit (see transaction timeout). */
  graceSeconds: number;
  /** Told of progress: values removed by a batch, definitions removed, definitions left pending by a daily run. */
  onProgress?: (p: { valuesRemoved: number; definitionsRemoved: number; pending?: number }) => void;
  /**
   * Redeclarations that carry their values (resolvers/carry.ts): what a batch keeps and removes, and what ends a
   * carry once its pass is done. Without them, a carrying definition waits.
   */
  carry?: {
    judge(state: CarryState, items: readonly CarriedItem[]): CarryDecisions;
    complete(guid: string): Promise<unknown>;
  };
}

/**
 * Where a daily run stands, told to a per-call listener (see runDailyJob): first once the run holds its lease and
 * knows which withdrawn definitions it will go through, then after every batch and every finished definition.
 */
export interface PurgeProgress {
  /** Withdrawn definitions this run goes through. */
  definitions_total: number;
  /** Of those, how many it has finished with (removed, or left pending). */
  definitions_done: number;
  /** Of those, how many it removed. */
  definitions_removed: number;
  /** Stored values removed so far by this run. */
  values_removed: number;
  /** Batches (transactions) run so far. */
  batches: number;
}

/** A run's report as sent, and whether it was skipped (another instance held the lease; refused, never sent). */
export type PurgeReport = WirePurgeReport & { skipped?: 'another_instance_is_running' };

export interface Purger {
  /** Starts removing withdrawn definitions' data in the background (no-op when already running). */
  kick(): void;
  /**
   * The daily job: finishes the data removal and removes definitions whose data is gone; all tenants, or one.
   * `onProgress`, if given, is told where this run stands (not called when the run is skipped); it must not
   * throw (if it does, the error is logged and the run goes on).
   */
  runDailyJob(
    /** Only this tenant's definitions; `author`: who runs it by hand (an operator), for the change records. */
    scope?: { tenant?: string; author?: ChangeAuthor },
    onProgress?: (p: PurgeProgress) => void,
    /** The scheduled time of a cron firing (ISO, to the second): each firing runs on one instance only. */
    firing?: string,
  ): Promise<PurgeReport>;
  /**
   * Removes expired Idempotency-Key records (all tenants), taking them out of their tenants' ledgers; one instance
   * per firing. Returns how many it removed (0 when another instance holds the sweep).
   */
  sweepExpiredKeys(firing?: string): Promise<number>;
  /** Resolves when the background removal started by kick() is idle. */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

const JOB_LEASE = 'purge-daily';
const SWEEP_LEASE = 'idempotency-sweep';
/** Expired idempotency records removed per statement by the daily run. */
const IDEMPOTENCY_BATCH = 5_000;
const DEF_LEASE_SECONDS = 120;
/** After a failed look at the carries (the database away), the purger looks again this much later. */
const CARRY_RETRY_MS = 10_000;
/** The daily job's lease, renewed after every definition: an instance killed mid-run blocks the job this long. */
const JOB_LEASE_SECONDS = 120;

export function createPurger(options: PurgeOptions): Purger {
  const { db, logger, instanceId } = options;
  const batchSize = options.batchSize ?? 5_000;
  let background: Promise<void> | null = null;
  /** The carry loop under way, and whether it should look again when done. */
  let carrying: Promise<void> | null = null;
  let carryAgain = false;
  /** The wake-up for the next carry whose grace is not over yet, and when it fires (ms since the epoch). */
  let wake: { timer: NodeJS.Timeout; at: number } | null = null;
  /** Daily runs under way (stop() waits for them, so their lease is released before the driver closes). */
  const daily = new Set<Promise<unknown>>();
  let again = false;
  let stopped = false;

  /** Runs passes over one definition's instances until a pass completes; returns values removed and batches. */
  async function drain(
    def: WithdrawnDefinition,
    requireFinal: boolean,
    onBatch?: (valuesRemoved: number) => void,
  ) {
    const lease = `purge-def:${def.guid}`;
    if (!(await db.write((run) => acquireLease(run, lease, instanceId, DEF_LEASE_SECONDS)))) {
      return { removed: 0, batches: 0, complete: false };
    }
    let removed = 0;
    let batches = 0;
    try {
      const carried = def.carrying ? await db.read((run) => readCarry(run, def.guid)) : null;
      if (def.carrying && (!carried || !options.carry)) return { removed, batches, complete: false };
      let current = def;
      // A pass that began before the grace period ended may have missed a late write: run one more then.
      if ((requireFinal && !current.passIsFinal) || (!current.passCompleted && current.cursor === '')) {
        await db.write((run) => startPass(run, current.guid));
        current = { ...current, cursor: '' };
      } else if (current.passCompleted) {
        return { removed, batches, complete: true };
      }
      for (;;) {
        if (stopped) return { removed, batches, complete: false };
        const cursor = current.cursor;
        const step: {
          scanned: number;
          removed: number;
          cursor: string;
          found: boolean;
          refusals?: CarryRefusal[];
        } = carried
          ? await db.write((run) => carryBatch(run, carried, cursor))
          : await db.write((run) => purgeBatch(run, current, cursor, batchSize));
        current = { ...current, cursor: step.cursor };
        batches += 1;
        removed += step.removed;
        if (step.refusals && step.refusals.length > 0) {
          // Every value the new definition refuses is reported (the change record lists the first CARRY_SAMPLES).
          logger.info(
            { definition: def.guid, tenant: def.tenant, attribute: def.name, refused: step.refusals },
            'carried values refused',
          );
        }
        options.onProgress?.({ valuesRemoved: step.removed, definitionsRemoved: 0 });
        onBatch?.(step.removed);
        if (batches % 20 === 0) {
          logger.info({ definition: def.guid, batches, removed }, 'purge in progress');
        }
        if (!step.found || step.scanned < batchSize) break;
        if (batches % 10 === 0)
          await db.write((run) => acquireLease(run, lease, instanceId, DEF_LEASE_SECONDS));
      }
      logger.info({ definition: def.guid, batches, removed }, 'purge pass complete');
      return { removed, batches, complete: true };
    } finally {
      await db.write((run) => releaseLease(run, lease, instanceId)).catch(() => {});
    }
  }

  /**
   * One batch of a carry's pass: the values of the next instances judged against the new definition, kept or
   * removed, the pass advanced, in one transaction.
   */
  async function carryBatch(run: Run, state: CarryState, cursor: string) {
    const items = await readCarryBatch(run, {
      tenant: state.tenant,
      typeGuid: state.typeGuid,
      nameKey: state.nameKey,
      cursor,
      batch: batchSize,
    });
    const decisions = (options.carry as NonNullable<PurgeOptions['carry']>).judge(state, items);
    state.refusals = decisions.samples.slice(0, CARRY_SAMPLES);
    const next = items[items.length - 1]?.guid ?? cursor;
    await writeCarryBatch(run, {
      tenant: state.tenant,
      guid: state.guid,
      nameKey: state.nameKey,
      decisions,
      next,
      complete: items.length < batchSize,
    });
    return {
      scanned: items.length,
      removed: decisions.refused,
      cursor: next,
      found: true,
      refusals: decisions.refusals,
    };
  }

  /** A carry whose grace is over: its one pass, then its end (the new definition declared). */
  async function carryOn(def: WithdrawnDefinition) {
    const result = await drain(def, true);
    if (result.complete && options.carry) {
      const outcome = await options.carry.complete(def.guid);
      logger.info({ definition: def.guid, outcome }, 'carried redeclaration done');
    }
    return result;
  }

  async function backgroundLoop() {
    do {
      again = false;
      const pending = await db.read((run) => findWithdrawn(run, options.graceSeconds));
      for (const def of pending) {
        if (stopped) return;
        // Carries have a loop of their own (carryLoop).
        if (def.carrying || def.passCompleted) continue;
        await drain(def, false);
      }
    } while (again && !stopped);
  }

  /**
   * Redeclarations carrying values whose grace is over, found by their own index and run beside the background
   * removal: a carry never waits behind the backlog of ordinary withdrawals. Each runs its one pass, then its end.
   */
  async function carryLoop() {
    do {
      carryAgain = false;
      const found = await db.read((run) => findCarrying(run, options.graceSeconds));
      // The first carry still in its grace: this instance looks again when it ends, whoever withdrew it and whether
      // or not this process was running then (a restart loses no time).
      const waiting = found.filter((d) => !d.graceOver);
      if (waiting.length > 0) wakeIn(Math.min(...waiting.map((d) => d.graceLeftMs)));
      for (const def of found.filter((d) => d.graceOver)) {
        if (stopped) return;
        await carryOn(def);
      }
    } while (carryAgain && !stopped);
  }

  /** Kicks the purger `ms` from now (and a little after, so that the grace is over), unless it is kicked sooner. */
  function wakeIn(ms: number) {
    const at = Date.now() + Math.max(0, ms) + 250;
    if (stopped || (wake && wake.at <= at)) return;
    if (wake) clearTimeout(wake.timer);
    const timer = setTimeout(() => {
      wake = null;
      purger.kick();
    }, at - Date.now());
    timer.unref();
    wake = { timer, at };
  }

  const purger: Purger = {
    kick() {
      if (stopped) return;
      if (options.carry) {
        if (carrying) carryAgain = true;
        else {
          carrying = carryLoop()
            .catch((err) => {
              logFailure(logger, err, 'carried redeclarations', 'they are looked at again in 10 s');
              // (A database away, say: the carries in their grace are not known, so the next look is set here.)
              wakeIn(CARRY_RETRY_MS);
            })
            .finally(() => {
              carrying = null;
            });
        }
      }
      if (background) {
        again = true;
        return;
      }
      background = backgroundLoop()
        .catch((err) => logFailure(logger, err, 'background purge', 'the daily job will finish it'))
        .finally(() => {
          background = null;
        });
    },

    sweepExpiredKeys: sweepKeys,

    async idle() {
      while (background || carrying) await (background ?? carrying);
    },

    runDailyJob(scope = {}, onProgress, firing) {
      const running = dailyJob(scope, onProgress, firing);
      daily.add(running);
      return running.finally(() => daily.delete(running));
    },

    async stop() {
      stopped = true;
      if (wake) clearTimeout(wake.timer);
      wake = null;
      while (background || carrying) await (background ?? carrying);
      await Promise.allSettled([...daily]);
    },
  };
  return purger;

  /**
   * Expired idempotency records, all tenants, in batches until none is left, under the sweep's lease (the sweep and
   * a daily run never remove the same records at once).
   */
  async function sweepKeys(firing?: string) {
    if (
      !(await db.write((run) =>
        acquireLease(run, SWEEP_LEASE, instanceId, JOB_LEASE_SECONDS, firing ?? null),
      ))
    ) {
      return 0;
    }
    try {
      let removed = 0;
      for (let batch = IDEMPOTENCY_BATCH; batch === IDEMPOTENCY_BATCH && !stopped; ) {
        batch = await db.write((run) => removeExpiredIdempotencyRecords(run, IDEMPOTENCY_BATCH));
        removed += batch;
      }
      return removed;
    } finally {
      await db.write((run) => releaseLease(run, SWEEP_LEASE, instanceId)).catch(() => {});
    }
  }

  async function dailyJob(
    scope: { tenant?: string; author?: ChangeAuthor },
    onProgress: ((p: PurgeProgress) => void) | undefined,
    firing: string | undefined,
  ): Promise<PurgeReport> {
    const tenant = scope.tenant ?? null;
    const jobLease = tenant === null ? JOB_LEASE : `${JOB_LEASE}:${tenant}`;
    const report: PurgeReport = { removed: [], values_removed: 0, batches: 0, pending: 0 };
    if (
      !(await db.write((run) => acquireLease(run, jobLease, instanceId, JOB_LEASE_SECONDS, firing ?? null)))
    ) {
      logger.info(
        { ...(firing ? { firing } : {}), reason: 'another_instance_is_running' },
        'daily purge skipped',
      );
      return { ...report, skipped: 'another_instance_is_running' };
    }
    const progress: PurgeProgress = {
      definitions_total: 0,
      definitions_done: 0,
      definitions_removed: 0,
      values_removed: 0,
      batches: 0,
    };
    const tell = () => {
      if (!onProgress) return;
      try {
        onProgress({ ...progress });
      } catch (err) {
        logger.warn({ err }, 'purge progress listener failed');
      }
    };
    try {
      const pending = await db.read((run) => findWithdrawn(run, options.graceSeconds, tenant));
      logger.info(
        { withdrawn: pending.length, scoped: tenant !== null, ...(firing ? { firing } : {}) },
        'daily purge started',
      );
      progress.definitions_total = pending.length;
      tell();
      const onBatch = (valuesRemoved: number) => {
        progress.values_removed += valuesRemoved;
        progress.batches += 1;
        tell();
      };
      for (const def of pending) {
        if (stopped) break;
        if (def.carrying) {
          // A carry ends with its new declaration, not a removal: its own pass, when its grace is over.
          const result = def.graceOver ? await carryOn(def) : { removed: 0, batches: 0, complete: false };
          report.values_removed += result.removed;
          report.batches += result.batches;
          if (!result.complete) report.pending += 1;
          progress.definitions_done += 1;
          tell();
          continue;
        }
        const result = await drain(def, true, onBatch);
        report.values_removed += result.removed;
        report.batches += result.batches;
        const [fresh] = (await db.read((run) => findWithdrawn(run, options.graceSeconds, def.tenant))).filter(
          (d) => d.guid === def.guid,
        );
        if (!(fresh?.passCompleted && fresh.passIsFinal)) {
          report.pending += 1;
          progress.definitions_done += 1;
          tell();
          continue;
        }
        const gone = await db.write((run) => removeDefinition(run, def.guid, scope.author));
        if (gone) {
          options.onProgress?.({ valuesRemoved: 0, definitionsRemoved: 1 });
          report.removed.push({
            guid: def.guid,
            type_guid: def.owner_guid,
            name: def.name,
            values_removed: Number(gone.values_removed ?? 0),
          });
          progress.definitions_removed += 1;
        }
        progress.definitions_done += 1;
        tell();
        await db.write((run) => acquireLease(run, jobLease, instanceId, JOB_LEASE_SECONDS));
      }
      // Idempotency records past their 24 h (db/idempotency-records.ts), all tenants, by a run for all tenants only (the
      // sweep removes them more often).
      const keysRemoved = tenant === null ? await sweepKeys() : 0;
      logger.info(
        {
          removed: report.removed.length,
          pending: report.pending,
          idempotency_keys_removed: keysRemoved,
          ...(firing ? { firing } : {}),
        },
        'daily purge finished',
      );
      if (tenant === null)
        options.onProgress?.({ valuesRemoved: 0, definitionsRemoved: 0, pending: report.pending });
      return report;
    } finally {
      await db.write((run) => releaseLease(run, jobLease, instanceId)).catch(() => {});
    }
  }
}

/**
 * Expired Idempotency-Keys are swept this often (node-cron), so that a tenant's cap counts the keys of about the last
 * 24 hours, not of up to two days as the daily job alone would leave; the background purge is kicked as often (a
 * carry waits for no sweep: the purger wakes itself at the end of the first grace it finds pending, see carryLoop).
 */
export const KEY_SWEEP_CRON = '7,17,27,37,47,57 * * * *';

/** The firing of a cron task, named by its scheduled time to the second: every instance names it alike. */
const firingOf = (date: Date) => new Date(Math.floor(date.getTime() / 1000) * 1000).toISOString();

/** Registers the daily job and the key sweep; returns stop(). */
export function schedulePurge(expression: string, purger: Purger, logger: Logger) {
  const task = cron.schedule(expression, (context) => {
    purger
      .runDailyJob({}, undefined, firingOf(context.date))
      .catch((err) => logFailure(logger, err, 'daily purge', 'the next firing runs it'));
  });
  const sweep = cron.schedule(KEY_SWEEP_CRON, (context) => {
    purger
      .sweepExpiredKeys(firingOf(context.date))
      .catch((err) => logFailure(logger, err, 'idempotency key sweep', 'the next firing runs it'));
    // Withdrawals another instance left (it stopped before kicking its purger again) go on.
    purger.kick();
  });
  return {
    stop: () => {
      task.stop();
      sweep.stop();
    },
  };
}

/**
 * A purge that could not run because the database is unreachable or the service is still warming up on it (every
 * transaction is refused then, see db/readiness.ts) is a warning without a stack: readiness already reports the
 * outage, and the work is left for later. Any other failure is an error.
 */
export function logFailure(logger: Logger, err: unknown, what: string, later: string) {
  if (isStorageAway(err)) {
    logger.warn({ reason: 'storage_unavailable' }, `${what} not run: ${(err as Error).message} (${later})`);
  } else {
    logger.error({ err }, `${what} failed; ${later}`);
  }
}
