// Admission of requests, shared fairly between tenants: a tenant runs at most `maxRunningPerTenant` requests at once,
// and the expensive ones also reserve memory (bytes) from a budget before they run: a request states what it may hold
// at most (its door's budget, model/doors.ts); it runs once that much is free, its tenant holds less than its share and
// runs fewer than its limit, else it waits in its tenant's queue. Freed room goes to the tenants in turn (round robin),
// so a tenant with a hundred queued requests waits behind one with a single request only once; a tenant's queue is
// bounded (past it: tenant_busy, 429), and so is the wait (tenant_busy when its own requests held its turns,
// server_busy, 503, when everyone's did). One tenant's flood thus never holds more than its few requests' work in the
// event loop and the database at a time. A grant from the queue reaches its holder in a later turn of the event loop,
// as slots.ts explains.
// Over 300 lines: one ledger (the room, the tenants' shares and running counts, their queues) whose grants, waits and
// dispatch all read and change it.

import { refuse } from './errors.js';
import type { LoopShare } from './loop-share.js';

/** The request gave up waiting for its turn (its client went away): it takes none, and nobody waits for it. */
export class AdmissionAbandoned extends Error {
  constructor() {
    super('The request went away while it waited for its turn.');
    this.name = 'AdmissionAbandoned';
  }
}

export interface AdmissionOptions {
  /** Bytes the requests running at once may reserve together. */
  capacity: number;
  /** Most one tenant may hold at once (default: half the capacity). */
  maxPerTenant?: number;
  /**
   * Most one request takes from the room, however much it states (default: the capacity less half a tenant's share,
   * the least a heavy request reserves in app/admission.ts): a request that may hold more than its tenant's share
   * runs with no other such request beside it, yet leaves room for other tenants' heavy requests. (Taking all of it,
   * one plan whose client read its answer slowly, or sent its body slowly, held every other tenant's heavy requests
   * until they were refused.)
   */
  maxRoom?: number;
  /** Requests one tenant may have waiting (default 1,000: a waiting request holds its socket, not its body). */
  maxQueuedPerTenant?: number;
  /** Requests one tenant may run at once (default: no limit). */
  maxRunningPerTenant?: number;
  /** Longest wait for a turn, in ms. */
  queueTimeoutMs: number;
  /** Holds back a tenant whose requests hold the event loop while others wait on it (loop-share.ts). */
  share?: LoopShare;
}

interface Waiter {
  /** What it counts against its tenant's share. */
  bytes: number;
  /** What it takes from the room free (more than its share when it states more: it then runs alone). */
  room: number;
  /** When it began to wait (performance clock, ms). */
  since: number;
  grant: () => void;
  timer: NodeJS.Timeout;
}

export class Admission {
  readonly capacity: number;
  readonly maxPerTenant: number;
  readonly maxRoom: number;
  readonly maxQueuedPerTenant: number;
  readonly maxRunningPerTenant: number;
  private free: number;
  private readonly held = new Map<string, number>();
  private readonly running = new Map<string, number>();
  private readonly waiting = new Map<string, Waiter[]>();
  /** When each tenant held back to a gap last started a request (performance clock, ms). */
  private readonly lastStart = new Map<string, number>();
  /** Wakes the queue when a held-back tenant's gap has passed. */
  private wakeTimer: NodeJS.Timeout | undefined;
  /** Tenants with waiters, in the order they get their next turn. */
  private readonly turns: string[] = [];
  /** Requests refused (tenant_busy, server_busy), for the metrics. */
  refused = 0;

  constructor(private readonly options: AdmissionOptions) {
    this.capacity = options.capacity;
    this.maxPerTenant = options.maxPerTenant ?? Math.max(1, Math.floor(options.capacity / 2));
    this.maxRoom = Math.max(
      this.maxPerTenant,
      options.maxRoom ?? options.capacity - Math.ceil(this.maxPerTenant / 2),
    );
    this.maxQueuedPerTenant = options.maxQueuedPerTenant ?? 1_000;
    this.maxRunningPerTenant = options.maxRunningPerTenant ?? Number.POSITIVE_INFINITY;
    this.free = options.capacity;
  }

  /** Bytes reserved now. */
  get inUse() {
    return this.capacity - this.free;
  }

  /** Requests waiting now. */
  get queued() {
    let n = 0;
    for (const list of this.waiting.values()) n += list.length;
    return n;
  }

  /** Bytes `tenant` holds now. */
  heldBy(tenant: string) {
    return this.held.get(tenant) ?? 0;
  }

  /**
   * Resolves with a release function once `bytes` are reserved for `tenant`. A request stating more than a tenant's
   * share counts the share against its tenant (it then runs alone for its tenant) but takes what it states from the
   * room, at most maxRoom: no two requests that may hold more than a tenant's share run at once, whoever's. (Counted
   * as its share only, two tenants' 60 MB plans ran at once on 32 MiB each.) Release is idempotent. Rejects with tenant_busy
   * when the tenant's queue is full, when the wait passes the queue timeout: with tenant_busy if its tenant's own
   * requests held its turns, else server_busy; and with
   * AdmissionAbandoned when `signal` aborts while it waits (its place in the queue is given up at once).
   */
  acquire(tenant: string, bytes: number, signal?: AbortSignal): Promise<() => void> {
    const amount = Math.max(0, Math.min(Math.ceil(bytes), this.maxPerTenant));
    const room = Math.max(amount, Math.min(Math.ceil(bytes), this.maxRoom));
    return new Promise((resolve, reject) => {
      const grant = (later: boolean) => {
        this.free -= room;
        this.held.set(tenant, this.heldBy(tenant) + amount);
        this.running.set(tenant, this.runningBy(tenant) + 1);
        this.started(tenant, amount);
        let released = false;
        const release = () => {
          if (released) return;
          released = true;
          this.free += room;
          const left = this.heldBy(tenant) - amount;
          if (left > 0) this.held.set(tenant, left);
          else this.held.delete(tenant);
          const runs = this.runningBy(tenant) - 1;
          if (runs > 0) this.running.set(tenant, runs);
          else this.running.delete(tenant);
          this.dispatch();
        };
        if (later) setImmediate(() => resolve(release));
        else resolve(release);
      };
      // At once only when nobody waits: a newcomer never overtakes a request already waiting.
      if (this.turns.length === 0 && this.fits(tenant, amount, room)) {
        grant(false);
        return;
      }
      if (signal?.aborted) {
        reject(new AdmissionAbandoned());
        return;
      }
      const list = this.waiting.get(tenant) ?? [];
      if (list.length >= this.maxQueuedPerTenant) {
        this.refused += 1;
        reject(
          refuse(
            'tenant_busy',
            `This tenant has ${list.length} expensive requests waiting for their turn; try again shortly.`,
            1,
          ),
        );
        return;
      }
      /** Takes the waiter out of its queue (a timeout, an abandoned wait); false when it was granted already. */
      const leave = () => {
        clearTimeout(waiter.timer);
        signal?.removeEventListener('abort', onAbort);
        const queue = this.waiting.get(tenant);
        const at = queue?.indexOf(waiter) ?? -1;
        if (!queue || at < 0) return false;
        queue.splice(at, 1);
        this.options.share?.waits(tenant, amount, false);
        if (queue.length === 0) this.forget(tenant);
        this.dispatch();
        return true;
      };
      const onAbort = () => {
        if (leave()) reject(new AdmissionAbandoned());
      };
      const waiter: Waiter = {
        bytes: amount,
        room,
        since: performance.now(),
        grant: () => {
          clearTimeout(waiter.timer);
          signal?.removeEventListener('abort', onAbort);
          this.options.share?.waits(tenant, amount, false);
          grant(true);
        },
        timer: setTimeout(() => {
          // Whose requests kept it waiting: its own tenant's (at its share or its running limit, or held back to a
          // spacing), or everyone's; read before leaving, since leaving lets the queue move on.
          const own = this.atOwnBound(tenant, amount) || (this.options.share?.spacingOf(tenant) ?? 0) > 0;
          if (!leave()) return;
          this.refused += 1;
          reject(
            own
              ? refuse(
                  'tenant_busy',
                  "This tenant's own requests have held all its turns for as long as one may wait; try again shortly.",
                  1,
                )
              : refuse(
                  'server_busy',
                  'Too many expensive requests are running or waiting; try again shortly.',
                  1,
                ),
          );
        }, this.options.queueTimeoutMs),
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      list.push(waiter);
      this.options.share?.waits(tenant, amount, true);
      if (list.length === 1) {
        this.waiting.set(tenant, list);
        this.turns.push(tenant);
      }
      this.dispatch();
    });
  }

  /** Requests `tenant` runs now. */
  runningBy(tenant: string) {
    return this.running.get(tenant) ?? 0;
  }

  /** `tenant`'s request was answered with `bytes`: the answer weighs in its share of the event loop. */
  answered(tenant: string, bytes: number) {
    this.options.share?.answered(tenant, bytes);
  }

  /** Starts watching the event loop's share (when given one): a tenant's eased gap lets its waiters start. */
  start() {
    this.options.share?.start(() => this.dispatch());
  }

  stop() {
    this.options.share?.stop();
    clearTimeout(this.wakeTimer);
  }

  private started(tenant: string, amount: number) {
    const share = this.options.share;
    if (!share) return;
    share.started(tenant, amount);
    if (share.gapOf(tenant) > 0) this.lastStart.set(tenant, performance.now());
    else this.lastStart.delete(tenant);
  }

  /**
   * Milliseconds before `tenant` may start a request of `amount` (reserved memory), when it is held back to a spacing
   * between its starts (loop-share.ts), counted from its last start. (While the database is away nobody is spaced.)
   * A light request (reserving nothing) that has waited half the queue timeout starts without it: spacing alone never
   * makes one time out (300 requests waiting on one Idempotency-Key all get its answer). A request reserving memory
   * (a heavy door's, a large body's) keeps its spacing however long its tenant's queue, and is refused with
   * tenant_busy at its timeout: waived for them, a deep queue of plans ran back to back, their spacing void.
   * (Refused at once instead of waiting, a flood's clients sent again at once: thousands of refusals a second cost
   * the thread more than the waits, which hold no body and no database connection.)
   */
  private startsIn(tenant: string, amount: number, since = performance.now()): number {
    const spacing = this.options.share?.spacingOf(tenant) ?? 0;
    const last = this.lastStart.get(tenant);
    if (spacing === 0 || last === undefined) return 0;
    const startAt =
      amount === 0 ? Math.min(last + spacing, since + this.options.queueTimeoutMs / 2) : last + spacing;
    return Math.max(0, startAt - performance.now());
  }

  /** Whether `tenant`'s own running requests leave no room for one more of `amount` (its share, its running limit). */
  private atOwnBound(tenant: string, amount: number) {
    const limit = Math.min(this.maxRunningPerTenant, this.options.share?.runningLimitOf(tenant) ?? Infinity);
    return this.heldBy(tenant) + amount > this.maxPerTenant || this.runningBy(tenant) >= limit;
  }

  /**
   * In how many ms `tenant` may start another request: 0 now, Infinity while its own requests hold its share of memory
   * or of running requests (one of them ending dispatches again), else the rest of its gap. One reading of the clock
   * decides both whether it runs and when to look again: two readings let a gap end between them, and the waiter was
   * passed over with no wake-up set.
   */
  private waitOf(tenant: string, amount: number, since?: number) {
    return this.atOwnBound(tenant, amount) ? Number.POSITIVE_INFINITY : this.startsIn(tenant, amount, since);
  }

  private fits(tenant: string, amount: number, room: number) {
    return this.free >= room && this.waitOf(tenant, amount) === 0;
  }

  private forget(tenant: string) {
    this.waiting.delete(tenant);
    const at = this.turns.indexOf(tenant);
    if (at >= 0) this.turns.splice(at, 1);
  }

  /**
   * Starts the waiting requests that reserve no room, behind a head waiting for room (the first in turn), each tenant's
   * in its order; returns in how many ms one held back by its tenant's spacing may start (Infinity: none).
   */
  private grantRoomless(): number {
    let soonest = Number.POSITIVE_INFINITY;
    for (let k = 1; k < this.turns.length; ) {
      const tenant = this.turns[k] as string;
      const list = this.waiting.get(tenant) as Waiter[];
      const head = list[0] as Waiter;
      const wait = head.room > 0 ? Number.POSITIVE_INFINITY : this.waitOf(tenant, head.bytes, head.since);
      if (wait > 0) {
        soonest = Math.min(soonest, wait);
        k += 1;
        continue;
      }
      list.shift();
      if (list.length === 0) {
        this.waiting.delete(tenant);
        this.turns.splice(k, 1);
      }
      head.grant();
    }
    return soonest;
  }

  /**
   * Gives freed memory to waiting tenants in turn. A tenant at its share is passed over; a head that does not fit
   * in what is free stops the round (it is served first when enough is freed: large requests are not starved by
   * small ones behind them).
   */
  private dispatch() {
    let passed = 0;
    let soonest = Number.POSITIVE_INFINITY;
    while (this.turns.length > 0 && passed < this.turns.length) {
      const tenant = this.turns[0] as string;
      const list = this.waiting.get(tenant) as Waiter[];
      const head = list[0] as Waiter;
      const wait = this.waitOf(tenant, head.bytes, head.since);
      if (wait > 0) {
        soonest = Math.min(soonest, wait);
        this.turns.push(this.turns.shift() as string);
        passed += 1;
        continue;
      }
      if (this.free < head.room) {
        // It keeps its place and is served first when enough is freed; requests that reserve no room take none from
        // it, and run meanwhile (a light request waited seconds behind another tenant's plan waiting for room).
        soonest = Math.min(soonest, this.grantRoomless());
        break;
      }
      passed = 0;
      this.turns.shift();
      list.shift();
      if (list.length === 0) this.waiting.delete(tenant);
      else this.turns.push(tenant);
      head.grant();
    }
    if (soonest !== Number.POSITIVE_INFINITY && this.wakeTimer === undefined) {
      this.wakeTimer = setTimeout(() => {
        this.wakeTimer = undefined;
        this.dispatch();
      }, Math.ceil(soonest));
      this.wakeTimer.unref();
    }
  }
}
