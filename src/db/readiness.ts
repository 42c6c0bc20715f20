// Ready means ready (issue #17): /readyz says 200 only once the database answers AND the service has warmed what
// its hot paths need on it (warmup.ts: every hot statement planned by Neo4j, the connection pool filled). A
// restarted Neo4j has no query plans and a cold JIT: the first writes after it comes back are slow, so a database
// that answers is not yet a service that is ready.
//
//   down     the database did not answer (at start, or since a statement, the probe or the heartbeat found it
//            unreachable): a recovery loop probes it every PROBE_INTERVAL_MS;
//   warming  it answered; the warm-up runs (again, if the database went away meanwhile);
//   ready    warmed since the database last went away. /readyz still probes it each time.
//
// Transactions are admitted when ready (admit): while down they are refused with 503 storage_unavailable and
// Retry-After, rather than piling onto a cold database that is still starting.
// While warming, a few at a time are served once the warm-up has planned statements, each refused (rolled back) at
// its first statement the warm-up has not run yet as the transaction sends it (planKey): a keyed write is served as
// soon as its own statements are planned, not only when every hot path is. For RAMP_MS after ready, a few
// transactions at a time.
// Over 300 lines: one state machine (down, warming, ready) and the admission it gates (the hold, the ramp), which
// share its state.
import type { Logger } from 'pino';
import { AppError, refuse } from '../errors.js';
import type { Observe, Turn } from './executor.js';
import { isStorageAway, isUnavailable } from './storage-policy.js';

export type ReadinessState = 'down' | 'warming' | 'ready';

/** How often the recovery loop probes a database that is away. */
export const PROBE_INTERVAL_MS = 200;
/**
 * While ready, the database is probed this often when no transaction was let in since the last time (the heartbeat):
 * a Neo4j restarted while the service was idle is otherwise never seen away. Nothing fails, so the service would stay
 * ready on a database with no plans, and requests arriving after it would all run on the cold JVM, each planning its
 * own statements; with the heartbeat the service warms up first (npm run bench:quiet-restart). Neo4j takes seconds
 * to start again, so a probe a second finds it away.
 */
export const HEARTBEAT_MS = 1_000;
/** A warm-up or a probe failing for another reason than the database being away is logged at most this often. */
const WARN_EVERY_MS = 60_000;

/** A gate that opens at most once per `ms`: true the first time, then only `ms` or more after it last said true. */
function oncePer(ms: number): () => boolean {
  let last = Number.NEGATIVE_INFINITY;
  return () => {
    const now = Date.now();
    if (now - last < ms) return false;
    last = now;
    return true;
  };
}

/** A transaction that arrives while the service is not ready waits this long for it before it is refused. */
export const ADMIT_WAIT_MS = 250;
/**
 * For RAMP_MS after the service becomes ready again after an outage, at most RAMP_CONCURRENCY transactions run at
 * once; one that finds none free waits for one at most ADMIT_WAIT_MS, then is refused like a transaction arriving
 * while warming (503, Retry-After). A database just warmed by one rehearsal is still compiling: let in all at once
 * (clients back from their Retry-After, and a retry storm), writes run past the outage bound; a few at a time, they
 * run at the speed the warm-up measured, and the others come back after their Retry-After.
 */
export const RAMP_MS = 5_000;
export const RAMP_CONCURRENCY = 4;
/**
 * While warming, at most this many transactions at once (of the ramp's turns): they run beside the warm-up's
 * planning on a JVM just started, and more at once slow both them and the warm-up.
 */
export const WARMING_CONCURRENCY = 2;
/** /readyz answers within this bound, waiting for a warm-up under way at most this long. */
export const READY_CHECK_MS = 2_000;

/** What a probe that did not answer within its time rejects with. */
export class ProbeTimeout extends Error {
  constructor(ms: number) {
    super(`the database did not answer within ${ms} ms`);
    this.name = 'ProbeTimeout';
  }
}

export interface WarmupReport {
  ms: number;
  /** How long each round of the warm-up took. */
  roundsMs: number[];
  /** Statements it ran (in every round together). */
  statements: number;
}

export interface ReadinessOptions {
  /**
   * Resolves when the database answers (a connection opened and a database served); rejects with ProbeTimeout when
   * it does not within `timeoutMs`.
   */
  probe(timeoutMs: number): Promise<void>;
  /**
   * Warms the hot paths, telling `planned` of each statement it has run (planned by Neo4j); rejects when the database
   * failed it (the loop tries again).
   */
  warm(planned: Observe): Promise<WarmupReport>;
  /**
   * Goes on warming after ready, in the background, beside the requests (told of the first warm-up, and asked to stop
   * by `stopped`: the database was found away since, or the app is closing); its failure is the database's absence,
   * which readiness handles.
   */
  keepWarming?: (first: WarmupReport, stopped: () => boolean) => Promise<WarmupReport>;
  logger: Logger;
  /** Told of each warm-up that made the service ready. */
  onReady?: (report: WarmupReport) => void;
  probeIntervalMs?: number;
  /** How often an idle service probes the database while ready (HEARTBEAT_MS; 0: never). */
  heartbeatMs?: number;
  /** How long after each ready the ramp holds (RAMP_MS; 0: no ramp). */
  rampMs?: number;
  rampConcurrency?: number;
}

/**
 * A statement as Neo4j plans it: its text, and whether its transaction had changed anything before it (a plan for
 * the one variant is not used for the other: the same text is planned anew, which is slow on a cold database).
 */
const planKey = (cypher: string, changed: boolean) => `${changed ? 'changed' : 'fresh'} ${cypher}`;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

export class Readiness {
  private current: ReadinessState = 'down';
  /** Bumped each time the database is found away: a warm-up begun before that does not make the service ready. */
  private losses = 0;
  private loop: Promise<void> | undefined;
  private waiters: (() => void)[] = [];
  /** The /readyz probe in flight, shared by every check meanwhile. */
  private probing: Promise<void> | undefined;
  private stopped = false;
  private readonly interval: number;

  constructor(private readonly options: ReadinessOptions) {
    this.interval = options.probeIntervalMs ?? PROBE_INTERVAL_MS;
    this.heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
    this.rampMs = options.rampMs ?? RAMP_MS;
    this.rampConcurrency = options.rampConcurrency ?? RAMP_CONCURRENCY;
  }

  private readonly rampMs: number;
  private readonly heartbeatMs: number;
  private heartbeat: NodeJS.Timeout | undefined;
  /** When (performance.now()) a transaction was last let in, or asked to be: the heartbeat probes only after a pause. */
  private lastAdmitted = Number.NEGATIVE_INFINITY;
  private readonly rampConcurrency: number;
  /** Until when (performance.now()) the ramp holds, and the transactions running under it. */
  private rampUntil = 0;
  private rampRunning = 0;
  /** Transactions waiting for a turn: those of requests already under way first (see rampTurn), each in arrival order. */
  private readonly rampWaiters: { handOver: () => void; continuing: boolean }[] = [];

  /**
   * The statements the warm-up has run since the database was last found away, each in the variant Neo4j planned
   * (planKey). While the warm-up goes on, a transaction that sends only these, as they were planned, is served (see
   * admit).
   */
  private planned = new Set<string>();
  /** The tenants with a transaction let in while warming (one each). */
  private readonly warmingTenants = new Set<string>();
  /**
   * A turn under the ramp (RAMP_MS), or while warming: a release to call when the transaction ends, or undefined when
   * the ramp ended while this waited; refused when no turn came within ADMIT_WAIT_MS. A transaction of a request that
   * has had one before (`continuing`: a keyed write looks its key up, then writes) waits ahead of the requests not
   * begun yet: in arrival order, each would wait for a turn up to ADMIT_WAIT_MS for each of its transactions, and the
   * writes just after ready would be slow under a retry storm (or refused halfway, their first reads spent).
   */
  private async rampTurn(
    limit = this.rampConcurrency,
    continuing = false,
  ): Promise<(() => undefined) | undefined> {
    if (this.rampRunning < limit) {
      this.rampRunning += 1;
    } else {
      const handedOver = await new Promise<boolean>((resolve) => {
        const waiter = {
          handOver: () => {
            clearTimeout(timer);
            resolve(true);
          },
          continuing,
        };
        const timer = setTimeout(() => {
          this.rampWaiters.splice(this.rampWaiters.indexOf(waiter), 1);
          resolve(false);
        }, ADMIT_WAIT_MS);
        if (continuing) {
          const firstNew = this.rampWaiters.findIndex((w) => !w.continuing);
          this.rampWaiters.splice(firstNew === -1 ? this.rampWaiters.length : firstNew, 0, waiter);
        } else this.rampWaiters.push(waiter);
      });
      if (!handedOver) {
        if (performance.now() >= this.rampUntil && this.current === 'ready') return undefined;
        throw this.refusal();
      }
    }
    let released = false;
    return () => {
      if (released) return undefined;
      released = true;
      const next = this.rampWaiters.shift();
      if (next) next.handOver();
      else this.rampRunning -= 1;
      return undefined;
    };
  }

  get state(): ReadinessState {
    return this.current;
  }

  /** Begins the recovery loop (at start-up): probe, warm, ready; and the heartbeat (HEARTBEAT_MS). */
  start() {
    this.recover();
    if (this.heartbeatMs > 0 && !this.heartbeat) {
      this.heartbeat = setInterval(() => this.beat(), this.heartbeatMs);
      this.heartbeat.unref();
    }
  }

  /**
   * One heartbeat: while ready, and no transaction was let in for a heartbeat's time (a transaction that finds the
   * database away says so itself), the database is probed as /readyz probes it (the shared probe: a connection from
   * the pool, reset), its failure read as /readyz reads it (probeFailed).
   */
  private beat() {
    if (this.current !== 'ready' || this.stopped) return;
    if (performance.now() - this.lastAdmitted < this.heartbeatMs) return;
    const losses = this.losses;
    this.sharedProbe(READY_CHECK_MS).catch((error: unknown) => this.probeFailed(error, losses));
  }

  /**
   * A probe's failure while ready (the heartbeat's, or /readyz's), read by the rule a transaction's failure is read by
   * (storage-policy.ts): unreachable as the driver says it (refused, reset: isUnavailable), down, and warmed again when
   * it is back. No answer within its bound: nothing (a busy database is not made to warm up again). Any other failure
   * (credentials refused, say) is not taken for an outage: a warning, at most one a minute. A failure counts for
   * nothing once the service is closing, or has been found away since the probe began (`losses`).
   */
  private probeFailed(error: unknown, losses: number) {
    if (this.stopped || this.losses !== losses || this.current !== 'ready') return;
    if (isUnavailable(error)) this.lost();
    else if (!(error instanceof ProbeTimeout) && this.probeWarning()) {
      this.options.logger.warn({ err: error }, 'the database probe failed; still ready');
    }
  }

  /** A probe that failed other than by the database being away or slow: warned of at most once a minute. */
  private readonly probeWarning = oncePer(WARN_EVERY_MS);

  /** The database was found unreachable: not ready until it answers again and is warmed. */
  lost() {
    this.losses += 1;
    this.planned = new Set();
    if (this.current === 'ready')
      this.options.logger.warn('database unreachable: not ready until it is back and warmed');
    this.current = 'down';
    this.recover();
  }

  /**
   * For /readyz: true when ready and the database answers the probe now. When not ready, waits for a recovery
   * under way within READY_CHECK_MS, so that a service started a moment ago is ready by the first probe.
   */
  async check(boundMs = READY_CHECK_MS): Promise<boolean> {
    const started = Date.now();
    if (this.current !== 'ready') {
      this.recover();
      await Promise.race([this.loop, sleep(boundMs)]);
      // (read again: the loop may have changed it while this waited)
      if ((this.current as ReadinessState) !== 'ready') return false;
    }
    const losses = this.losses;
    try {
      await this.sharedProbe(Math.max(1, boundMs - (Date.now() - started)));
      return true;
    } catch (error) {
      // Not ready for this probe, whatever failed; down only when unreachable (probeFailed): a busy database, or one
      // that refuses the service's credentials, is not made to warm up again.
      this.probeFailed(error, losses);
      return false;
    }
  }

  /**
   * Lets a transaction start (the executor asks before each): when ready, or while warming once the warm-up has
   * planned statements (a few at a time, each sending only those); otherwise it is refused after a hold with 503
   * storage_unavailable and Retry-After. A database that is away or still starting gets no pile of requests.
   * (Requests held for the warm-up instead would be released all at once when it ends, and be slow in their turn.)
   */
  async admit(tenant?: string, continuing = false): Promise<Turn | undefined> {
    this.lastAdmitted = performance.now();
    if (this.current === 'ready') {
      // (see RAMP_MS: the first seconds after ready, a few transactions at a time)
      if (performance.now() >= this.rampUntil) return undefined;
      const release = await this.rampTurn(this.rampConcurrency, continuing);
      return release ? { release } : undefined;
    }
    // (one transaction at a time per tenant: clients that ignore Retry-After, sending again as soon as their answer
    // comes, would take the turns from those that honour it, and other tenants' with them, and the first success
    // would come later)
    if (this.current === 'warming' && this.planned.size > 0 && !(tenant && this.warmingTenants.has(tenant))) {
      // Serving while warming: a few transactions at a time (WARMING_CONCURRENCY of the ramp's turns), each refused
      // at its first statement the warm-up has not run yet (rolled back: 503 and Retry-After, as if it had come a
      // moment earlier). A write whose statements the warm-up has run is as fast as after ready; one that would plan
      // its own on the cold database would wait behind the warm-up's. (Waiting there for the warm-up instead brings
      // the first success no sooner: the turns go to transactions waiting, not to those whose statements were
      // planned, and the writes served just after it are slower.)
      // A transaction refused so gives its turn back at once, and its refusal is held ADMIT_WAIT_MS after, like the
      // others below: a client ignoring Retry-After would otherwise send it again at once, again and again, each
      // time running its first statements on the database the warm-up needs.
      if (tenant) this.warmingTenants.add(tenant);
      let release: (() => undefined) | undefined;
      try {
        release = await this.rampTurn(Math.min(WARMING_CONCURRENCY, this.rampConcurrency), continuing);
      } catch (refusal) {
        if (tenant) this.warmingTenants.delete(tenant);
        throw refusal;
      }
      const planned = this.planned;
      let refused = false;
      let released = false;
      return {
        release: () => {
          if (released) return undefined;
          released = true;
          release?.();
          if (tenant) this.warmingTenants.delete(tenant);
          return refused ? sleep(ADMIT_WAIT_MS) : undefined;
        },
        check: (cypher, changed) => {
          if (this.current === 'ready' || (planned === this.planned && planned.has(planKey(cypher, changed))))
            return;
          refused = true;
          // (a statement's text is the service's own, never tenant data)
          this.options.logger.debug(
            { statement: cypher.slice(0, 100) },
            'warming: refused at a statement not planned yet',
          );
          throw this.refusal();
        },
      };
    }
    // The refusal is held ADMIT_WAIT_MS: clients that ignore Retry-After get four answers a second each, not
    // thousands (a retry storm costs timers, not the CPU the warm-up and Neo4j need). It is a refusal even when the
    // service became ready meanwhile: the requests held are not let in all at once onto a database just warmed
    // (they would be slow, and the first success no sooner), but come back after their Retry-After, spread by the
    // clients' jitter.
    await sleep(ADMIT_WAIT_MS);
    throw this.refusal();
  }

  /** Why the service is not ready, as the 503 it answers (a refused transaction, and /readyz). */
  refusal() {
    return refuse.storageUnavailable(
      1,
      this.current === 'down'
        ? 'The database is unreachable; try again shortly.'
        : 'The database is back; the service is warming up on it. Try again shortly.',
    );
  }

  /** Resolves once ready (at once when it is). */
  whenReady(): Promise<void> {
    if (this.current === 'ready') return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Resolves once the background warm-up under way, if any, has ended (at once when none is). */
  async backgroundSettled(): Promise<void> {
    await this.background;
  }

  /** Ends the loop (the app is closing); resolves once a warm-up under way has finished. */
  async stop() {
    this.stopped = true;
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    await this.loop;
    await this.background;
    // (a heartbeat's probe under way: the driver is closed after this)
    await this.probing?.catch(() => {});
  }

  /**
   * One probe at a time for /readyz, whoever asks: the route needs no token, so a flood of it costs the database
   * one statement in flight, not one per request. (A probe begun just before a caller arrived answers for it too:
   * readiness is a state sampled every few seconds, not a read that must follow a write.)
   */
  private sharedProbe(timeoutMs: number): Promise<void> {
    if (!this.probing) {
      const probing = this.options.probe(timeoutMs);
      this.probing = probing;
      const done = () => {
        if (this.probing === probing) this.probing = undefined;
      };
      probing.then(done, done);
    }
    return this.probing;
  }

  private recover() {
    if (this.loop || this.stopped) return;
    const loop = this.run();
    this.loop = loop;
    void loop.finally(() => {
      if (this.loop === loop) this.loop = undefined;
    });
  }

  /** The background rounds after ready (keepWarming), until the database is found away or the app closes. */
  private warmOn(first: WarmupReport, losses: number) {
    const keep = this.options.keepWarming;
    if (!keep) return;
    const stopped = () => this.stopped || this.losses !== losses;
    // After an outage the first requests have the database to themselves while the ramp lasts: the background
    // rounds' cold statements (a throwaway tenant's set-up first) would make them wait on a just-warmed JVM.
    const until = this.rampUntil;
    const afterRamp = async () => {
      while (!stopped() && performance.now() < until) await sleep(Math.min(100, until - performance.now()));
    };
    const background = afterRamp()
      .then(() => keep(first, stopped))
      .then(
        (report) => {
          if (report.roundsMs.length > first.roundsMs.length) {
            this.options.logger.info(report, 'background warm-up done');
          }
        },
        (error: unknown) => this.options.logger.debug({ err: error }, 'background warm-up stopped'),
      );
    this.background = background;
  }

  /** The background warm-up under way, if any (stop() waits for it). */
  private background: Promise<void> | undefined;

  /** A warm-up's failure warned of at most once a minute, and the failures since the last warning (a failure repeating
   * each round is not each logged). */
  private readonly warmupWarning = oncePer(WARN_EVERY_MS);
  private failuresSinceWarned = 0;

  /**
   * A database away or busy is what this loop waits out (its probe failing, or the warm-up finding it away): a debug
   * line. Any other failure of the warm-up (a statement the database refuses) would keep the service unready for
   * ever, its /readyz saying the database is away: a warning, at most one a minute (messages vary from round to
   * round, e.g. with the throwaway tenant's ids), with the count of failures it stands for.
   */
  private logFailure(error: unknown, warming: boolean) {
    const expected =
      !warming ||
      error instanceof ProbeTimeout ||
      isStorageAway(error) ||
      (error instanceof AppError && error.reason === 'storage_busy');
    if (expected) {
      this.options.logger.debug({ err: error }, 'database not ready yet');
      return;
    }
    this.failuresSinceWarned += 1;
    if (!this.warmupWarning()) return;
    const failures = this.failuresSinceWarned;
    this.failuresSinceWarned = 0;
    this.options.logger.warn({ err: error, failures }, 'warm-up failed: not ready; trying again');
  }

  private async run() {
    while (!this.stopped) {
      const losses = this.losses;
      let probed = false;
      try {
        await this.options.probe(READY_CHECK_MS);
        probed = true;
        this.current = 'warming';
        const planned = this.planned;
        // (a loss or a failed warm-up replaces the set: what this warm-up reports afterwards counts for nothing)
        const report = await this.options.warm((cypher, changed) => {
          if (planned === this.planned) planned.add(planKey(cypher, changed));
        });
        if (this.losses === losses && !this.stopped) {
          // The loop ends here: a loss from now on starts another at once.
          this.loop = undefined;
          this.current = 'ready';
          // (after an outage only: a service just started is sent its first requests by load balancers that
          // probe it, and by clients that set up as it starts, which expect no refusal once it is ready)
          if (losses > 0) this.rampUntil = performance.now() + this.rampMs;
          this.options.logger.info(report, 'database warmed: ready');
          this.options.onReady?.(report);
          for (const resolve of this.waiters.splice(0)) resolve();
          this.warmOn(report, losses);
          return;
        }
      } catch (error) {
        this.current = 'down';
        // (what the failed warm-up ran is not counted on: the database may have restarted under it)
        this.planned = new Set();
        this.logFailure(error, probed);
      }
      if (!this.stopped) await sleep(this.interval);
    }
  }
}
