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
  return new PurgeRunner(options);
}

/** One step of a pass: instances scanned, values removed, where the next step starts, refused carried values. */
interface PassStep {
  scanned: number;
  removed: number;
  cursor: string;
  found: boolean;
  refusals?: CarryRefusal[];
}

/** What draining a definition did. */
interface Drained {
  removed: number;
  batches: number;
  complete: boolean;
}

/** A daily run's report, its progress and how to tell its listener, as its definitions are gone through. */
interface DailyRun {
  report: PurgeReport;
  progress: PurgeProgress;
  tell: () => void;
  author?: ChangeAuthor;
  jobLease: string;
}

class PurgeRunner implements Purger {
  private readonly db: Executor;
  private readonly logger: Logger;
  private readonly instanceId: string;
  private readonly batchSize: number;
  private background: Promise<void> | null = null;
  /** The carry loop under way, and whether it should look again when done. */
  private carrying: Promise<void> | null = null;
  private carryAgain = false;
  /** The wake-up for the next carry whose grace is not over yet, and when it fires (ms since the epoch). */
  private wake: { timer: NodeJS.Timeout; at: number } | null = null;
  /** Daily runs under way (stop() waits for them, so their lease is released before the driver closes). */
  private readonly daily = new Set<Promise<unknown>>();
  private again = false;
  private stopped = false;

  constructor(private readonly options: PurgeOptions) {
    this.db = options.db;
    this.logger = options.logger;
    this.instanceId = options.instanceId;
    this.batchSize = options.batchSize ?? 5_000;
  }

  kick() {
    if (this.stopped) return;
    if (this.options.carry) {
      if (this.carrying) this.carryAgain = true;
      else {
        this.carrying = this.carryLoop()
          .catch((err) => {
            logFailure(this.logger, err, 'carried redeclarations', 'they are looked at again in 10 s');
            // (A database away, say: the carries in their grace are not known, so the next look is set here.)
            this.wakeIn(CARRY_RETRY_MS);
          })
          .finally(() => {
            this.carrying = null;
          });
      }
    }
    if (this.background) {
      this.again = true;
      return;
    }
    this.background = this.backgroundLoop()
      .catch((err) => logFailure(this.logger, err, 'background purge', 'the daily job will finish it'))
      .finally(() => {
        this.background = null;
      });
  }

  async idle() {
    while (this.background || this.carrying) await (this.background ?? this.carrying);
  }

  runDailyJob(
    scope: { tenant?: string; author?: ChangeAuthor } = {},
    onProgress?: (p: PurgeProgress) => void,
    firing?: string,
  ) {
    const running = this.dailyJob(scope, onProgress, firing);
    this.daily.add(running);
    return running.finally(() => this.daily.delete(running));
  }

  async stop() {
    this.stopped = true;
    if (this.wake) clearTimeout(this.wake.timer);
    this.wake = null;
    await this.idle();
    await Promise.allSettled([...this.daily]);
  }

  /**
   * Expired idempotency records, all tenants, in batches until none is left, under the sweep's lease (the sweep and
   * a daily run never remove the same records at once).
   */
  async sweepExpiredKeys(firing?: string) {
    const { db, instanceId } = this;
    if (
      !(await db.write((run) =>
        acquireLease(run, SWEEP_LEASE, instanceId, JOB_LEASE_SECONDS, firing ?? null),
      ))
    ) {
      return 0;
    }
    try {
      let removed = 0;
      for (let batch = IDEMPOTENCY_BATCH; batch === IDEMPOTENCY_BATCH && !this.stopped; ) {
        batch = await db.write((run) => removeExpiredIdempotencyRecords(run, IDEMPOTENCY_BATCH));
        removed += batch;
      }
      return removed;
    } finally {
      await db.write((run) => releaseLease(run, SWEEP_LEASE, instanceId)).catch(() => {});
    }
  }

  /** Runs passes over one definition's instances until a pass completes; returns values removed and batches. */
  private async drain(
    def: WithdrawnDefinition,
    requireFinal: boolean,
    onBatch?: (valuesRemoved: number) => void,
  ): Promise<Drained> {
    const { db, instanceId } = this;
    const lease = `purge-def:${def.guid}`;
    if (!(await db.write((run) => acquireLease(run, lease, instanceId, DEF_LEASE_SECONDS)))) {
      return { removed: 0, batches: 0, complete: false };
    }
    try {
      const carried = def.carrying ? await db.read((run) => readCarry(run, def.guid)) : null;
      if (def.carrying && (!carried || !this.options.carry))
        return { removed: 0, batches: 0, complete: false };
      let current = def;
      // A pass that began before the grace period ended may have missed a late write: run one more then.
      if ((requireFinal && !current.passIsFinal) || (!current.passCompleted && current.cursor === '')) {
        await db.write((run) => startPass(run, current.guid));
        current = { ...current, cursor: '' };
      } else if (current.passCompleted) {
        return { removed: 0, batches: 0, complete: true };
      }
      return await this.pass(current, lease, carried, onBatch);
    } finally {
      await db.write((run) => releaseLease(run, lease, instanceId)).catch(() => {});
    }
  }

  /** Batches from the definition's cursor until its pass is done, the lease renewed every ten. */
  private async pass(
    def: WithdrawnDefinition,
    lease: string,
    carried: CarryState | null,
    onBatch?: (valuesRemoved: number) => void,
  ): Promise<Drained> {
    const { db, logger, batchSize } = this;
    let cursor = def.cursor;
    let removed = 0;
    let batches = 0;
    for (;;) {
      if (this.stopped) return { removed, batches, complete: false };
      const from = cursor;
      const step: PassStep = carried
        ? await db.write((run) => this.carryBatch(run, carried, from))
        : await db.write((run) => purgeBatch(run, { ...def, cursor: from }, from, batchSize));
      cursor = step.cursor;
      batches += 1;
      removed += step.removed;
      if (step.refusals && step.refusals.length > 0) {
        // Every value the new definition refuses is reported (the change record lists the first CARRY_SAMPLES).
        logger.info(
          { definition: def.guid, tenant: def.tenant, attribute: def.name, refused: step.refusals },
          'carried values refused',
        );
      }
      this.options.onProgress?.({ valuesRemoved: step.removed, definitionsRemoved: 0 });
      onBatch?.(step.removed);
      if (batches % 20 === 0) logger.info({ definition: def.guid, batches, removed }, 'purge in progress');
      if (!step.found || step.scanned < batchSize) break;
      if (batches % 10 === 0)
        await db.write((run) => acquireLease(run, lease, this.instanceId, DEF_LEASE_SECONDS));
    }
    logger.info({ definition: def.guid, batches, removed }, 'purge pass complete');
    return { removed, batches, complete: true };
  }

  /**
   * One batch of a carry's pass: the values of the next instances judged against the new definition, kept or
   * removed, the pass advanced, in one transaction.
   */
  private async carryBatch(run: Run, state: CarryState, cursor: string): Promise<PassStep> {
    const { batchSize } = this;
    const items = await readCarryBatch(run, {
      tenant: state.tenant,
      typeGuid: state.typeGuid,
      nameKey: state.nameKey,
      cursor,
      batch: batchSize,
    });
    const decisions = (this.options.carry as NonNullable<PurgeOptions['carry']>).judge(state, items);
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
  private async carryOn(def: WithdrawnDefinition) {
    const result = await this.drain(def, true);
    if (result.complete && this.options.carry) {
      const outcome = await this.options.carry.complete(def.guid);
      this.logger.info({ definition: def.guid, outcome }, 'carried redeclaration done');
    }
    return result;
  }

  private async backgroundLoop() {
    do {
      this.again = false;
      const pending = await this.db.read((run) => findWithdrawn(run, this.options.graceSeconds));
      for (const def of pending) {
        if (this.stopped) return;
        // Carries have a loop of their own (carryLoop).
        if (def.carrying || def.passCompleted) continue;
        await this.drain(def, false);
      }
    } while (this.again && !this.stopped);
  }

  /**
   * Redeclarations carrying values whose grace is over, found by their own index and run beside the background
   * removal: a carry never waits behind the backlog of ordinary withdrawals. Each runs its one pass, then its end.
   */
  private async carryLoop() {
    do {
      this.carryAgain = false;
      const found = await this.db.read((run) => findCarrying(run, this.options.graceSeconds));
      // The first carry still in its grace: this instance looks again when it ends, whoever withdrew it and whether
      // or not this process was running then (a restart loses no time).
      const waiting = found.filter((d) => !d.graceOver);
      if (waiting.length > 0) this.wakeIn(Math.min(...waiting.map((d) => d.graceLeftMs)));
      for (const def of found.filter((d) => d.graceOver)) {
        if (this.stopped) return;
        await this.carryOn(def);
      }
    } while (this.carryAgain && !this.stopped);
  }

  /** Kicks the purger `ms` from now (and a little after, so that the grace is over), unless it is kicked sooner. */
  private wakeIn(ms: number) {
    const at = Date.now() + Math.max(0, ms) + 250;
    if (this.stopped || (this.wake && this.wake.at <= at)) return;
    if (this.wake) clearTimeout(this.wake.timer);
    const timer = setTimeout(() => {
      this.wake = null;
      this.kick();
    }, at - Date.now());
    timer.unref();
    this.wake = { timer, at };
  }

  private async dailyJob(
    scope: { tenant?: string; author?: ChangeAuthor },
    onProgress: ((p: PurgeProgress) => void) | undefined,
    firing: string | undefined,
  ): Promise<PurgeReport> {
    const { db, logger, instanceId } = this;
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
      await this.dailyDefinitions(tenant, { report, progress, tell, author: scope.author, jobLease }, firing);
      // Idempotency records past their 24 h (db/idempotency-records.ts), all tenants, by a run for all tenants only (the
      // sweep removes them more often).
      const keysRemoved = tenant === null ? await this.sweepExpiredKeys() : 0;
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
        this.options.onProgress?.({ valuesRemoved: 0, definitionsRemoved: 0, pending: report.pending });
      return report;
    } finally {
      await db.write((run) => releaseLease(run, jobLease, instanceId)).catch(() => {});
    }
  }

  /** The daily run's withdrawn definitions, one after the other, its lease renewed after each. */
  private async dailyDefinitions(tenant: string | null, daily: DailyRun, firing: string | undefined) {
    const { db, options } = this;
    const pending = await db.read((run) => findWithdrawn(run, options.graceSeconds, tenant));
    this.logger.info(
      { withdrawn: pending.length, scoped: tenant !== null, ...(firing ? { firing } : {}) },
      'daily purge started',
    );
    daily.progress.definitions_total = pending.length;
    daily.tell();
    for (const def of pending) {
      if (this.stopped) break;
      const renew = await this.dailyDefinition(def, daily);
      daily.progress.definitions_done += 1;
      daily.tell();
      if (renew)
        await db.write((run) => acquireLease(run, daily.jobLease, this.instanceId, JOB_LEASE_SECONDS));
    }
  }

  /**
   * One withdrawn definition of a daily run: its final pass, then its removal once its data is gone (a carry: its
   * own pass and its new declaration, when its grace is over). Whether the run's lease is renewed after it.
   */
  private async dailyDefinition(def: WithdrawnDefinition, daily: DailyRun): Promise<boolean> {
    const { report, progress } = daily;
    if (def.carrying) {
      // A carry ends with its new declaration, not a removal: its own pass, when its grace is over.
      const result = def.graceOver ? await this.carryOn(def) : { removed: 0, batches: 0, complete: false };
      report.values_removed += result.removed;
      report.batches += result.batches;
      if (!result.complete) report.pending += 1;
      return false;
    }
    const result = await this.drain(def, true, (valuesRemoved) => {
      progress.values_removed += valuesRemoved;
      progress.batches += 1;
      daily.tell();
    });
    report.values_removed += result.removed;
    report.batches += result.batches;
    const [fresh] = (
      await this.db.read((run) => findWithdrawn(run, this.options.graceSeconds, def.tenant))
    ).filter((d) => d.guid === def.guid);
    if (!(fresh?.passCompleted && fresh.passIsFinal)) {
      report.pending += 1;
      return false;
    }
    const gone = await this.db.write((run) => removeDefinition(run, def.guid, daily.author));
    if (gone) {
      this.options.onProgress?.({ valuesRemoved: 0, definitionsRemoved: 1 });
      report.removed.push({
        guid: def.guid,
        type_guid: def.owner_guid,
        name: def.name,
        values_removed: Number(gone.values_removed ?? 0),
      });
      progress.definitions_removed += 1;
    }
    return true;
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
