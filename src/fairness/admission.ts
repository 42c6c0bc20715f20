// Admission of requests, shared fairly between tenants: a tenant runs at most `maxRunningPerTenant` requests at once,
// and requests hold memory (bytes) from a budget, the room: a request's lease grows as it needs it (its body as the
// bytes arrive, then its door's stated bound, model/doors.ts), each growth granted once that much is free and its
// tenant holds less than its share, else it waits in its tenant's queue. Freed room goes to the tenants in turn (round
// robin), so a tenant with a hundred queued requests waits behind one with a single request only once; a tenant's
// queue is bounded (past it: tenant_busy, 429), and so is the wait (tenant_busy when its own requests held its turns,
// server_busy, 503, when everyone's did). Leases that hold memory and wait for more could wait on each other forever
// (bodies read in part): the youngest of them is refused so that the oldest goes on (breakDeadlock). One tenant's
// flood thus never holds more than its few requests' work in the event loop and the database at a time. A grant from
// the queue reaches its holder in a later turn of the event loop, as fairness/slots.ts explains.
// Over 300 lines: one ledger (the room, the tenants' shares and running counts, their queues) whose grants, waits and
// dispatch all read and change it.

import { refuse } from '../errors.js';
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
   * one plan whose client reads its answer slowly, or sends its body slowly, would hold every other tenant's heavy
   * requests until they are refused.)
   */
  maxRoom?: number;
  /** Requests one tenant may have waiting (default 1,000: a waiting request holds its socket, not its body). */
  maxQueuedPerTenant?: number;
  /** Requests one tenant may run at once while another tenant runs or waits for a turn (default: no limit). */
  maxRunningPerTenant?: number;
  /** Requests that run at once, all tenants together (default: no limit); past it, requests wait their turn. */
  maxRunning?: number;
  /** Longest wait for a turn, in ms. */
  queueTimeoutMs: number;
  /** Holds back a tenant whose requests hold the event loop while others wait on it (fairness/loop-share.ts). */
  share?: LoopShare;
}

/** A request's growing reservation (Admission.lease). */
export interface AdmissionLease {
  /** What it states it holds now. */
  readonly bytes: number;
  /** Takes `more` bytes for it: at once, or once room is free (its tenant's turn kept); rejects as acquire does. */
  grow(more: number, signal?: AbortSignal): Promise<void>;
  /** Gives back all it holds; a growth granted after this is given back at once. */
  release(): void;
}

/** What a lease holds now, counted (its share of its tenant's, its room), and when it was made (its age). */
interface Holder {
  born: number;
  amount: number;
  room: number;
}

interface Waiter {
  tenant: string;
  /** What it counts against its tenant's share. */
  bytes: number;
  /** What it takes from the room free (more than its share when it states more: it then runs alone). */
  room: number;
  /** Whether it starts a request (counted as running), or grows a lease. */
  counts: boolean;
  /** Whether its tenant's limit holds it whoever waits (a write), or only while another tenant runs or waits. */
  capped: boolean;
  /** When it began to wait (performance clock, ms). */
  since: number;
  /** The lease it grows, if it grows one. */
  holder?: Holder;
  grant: () => void;
  /** Refuses it (it has left its queue). */
  fail: (error: Error) => void;
}

const tenantBusy = () =>
  refuse(
    'tenant_busy',
    "This tenant's own requests have held all its turns for as long as one may wait; try again shortly.",
    1,
  );
const serverBusy = () =>
  refuse('server_busy', 'Too many expensive requests are running or waiting; try again shortly.', 1);

export class Admission {
  readonly capacity: number;
  readonly maxPerTenant: number;
  readonly maxRoom: number;
  readonly maxQueuedPerTenant: number;
  readonly maxRunningPerTenant: number;
  readonly maxRunning: number;
  /** Requests running now, all tenants together. */
  private runningAll = 0;
  /** Requests running now that are held to the tenant's limit whoever waits (writes), per tenant. */
  private readonly cappedRunning = new Map<string, number>();
  private free: number;
  private readonly held = new Map<string, number>();
  private readonly running = new Map<string, number>();
  private readonly waiting = new Map<string, Waiter[]>();
  /** Leases holding memory, per tenant. */
  private readonly holders = new Map<string, number>();
  /** Leases made so far: a lease's number is its age. */
  private leasesMade = 0;
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
    this.maxRunning = options.maxRunning ?? Number.POSITIVE_INFINITY;
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
   * as its share only, two tenants' large plans would run at once on a share each.) Release is idempotent. Rejects
   * with tenant_busy when the tenant's queue is full, when the wait passes the queue timeout: with tenant_busy if its
   * tenant's own requests held its turns, else server_busy; and with AdmissionAbandoned when `signal` aborts while it
   * waits (its place in the queue is given up at once).
   */
  acquire(tenant: string, bytes: number, signal?: AbortSignal, capped = false): Promise<() => void> {
    const { amount, room } = this.measure(bytes);
    return this.take(tenant, amount, room, true, signal, undefined, capped);
  }

  /** What a request stating `bytes` counts against its tenant (amount) and takes from the room. */
  private measure(bytes: number) {
    const amount = Math.max(0, Math.min(Math.ceil(bytes), this.maxPerTenant));
    return { amount, room: Math.max(amount, Math.min(Math.ceil(bytes), this.maxRoom)) };
  }

  /**
   * A reservation that grows with what its request holds (its body as the bytes arrive, then its door's stated
   * memory), counted as one request's: its tenant counts at most its share for it, whatever it grows to, so a
   * request never waits for room its own earlier growth holds. It runs no request of its own (no running count).
   */
  lease(tenant: string): AdmissionLease {
    const holder: Holder = { born: this.leasesMade++, amount: 0, room: 0 };
    const releases: (() => void)[] = [];
    let total = 0;
    let ended = false;
    return {
      get bytes() {
        return total;
      },
      grow: async (more: number, signal?: AbortSignal) => {
        const before = this.measure(total);
        const after = this.measure(total + more);
        const amount = after.amount - before.amount;
        const room = after.room - before.room;
        const release = await this.take(tenant, amount, room, false, signal, holder);
        if (ended) return release();
        if (total === 0) this.holding(tenant, 1);
        total += more;
        holder.amount += amount;
        holder.room += room;
        releases.push(release);
      },
      release: () => {
        ended = true;
        if (total > 0) this.holding(tenant, -1);
        for (const release of releases.splice(0)) release();
        total = 0;
        holder.amount = 0;
        holder.room = 0;
      },
    };
  }

  private holding(tenant: string, by: number) {
    const n = (this.holders.get(tenant) ?? 0) + by;
    if (n > 0) this.holders.set(tenant, n);
    else this.holders.delete(tenant);
  }

  /** Takes `amount` of `tenant`'s share and `room` of the room (a running request too when `counts`). */
  private take(
    tenant: string,
    amount: number,
    room: number,
    counts: boolean,
    signal?: AbortSignal,
    holder?: Holder,
    capped = false,
  ): Promise<() => void> {
    return new Promise((resolve, reject) => {
      const grant = (later: boolean) => {
        const release = this.grantNow(tenant, amount, room, counts, capped);
        if (later) setImmediate(() => resolve(release));
        else resolve(release);
      };
      // At once only when nobody waits: a newcomer never overtakes a request already waiting.
      if (this.turns.length === 0 && this.fits(tenant, amount, room, counts, capped)) return grant(false);
      if (signal?.aborted) return reject(new AdmissionAbandoned());
      const queued = this.waiting.get(tenant)?.length ?? 0;
      if (queued >= this.maxQueuedPerTenant) {
        this.refused += 1;
        const message = `This tenant has ${queued} expensive requests waiting for their turn; try again shortly.`;
        return reject(refuse('tenant_busy', message, 1));
      }
      const since = performance.now();
      const waiter: Waiter = {
        tenant,
        bytes: amount,
        counts,
        capped,
        room,
        since,
        holder,
        grant: () => grant(true),
        fail: reject,
      };
      this.enqueue(waiter, signal);
    });
  }

  /** Takes what a request was granted from the ledger; returns its release (idempotent). */
  private grantNow(tenant: string, amount: number, room: number, counts: boolean, capped: boolean) {
    this.free -= room;
    this.held.set(tenant, this.heldBy(tenant) + amount);
    if (capped) this.cappedRunning.set(tenant, (this.cappedRunning.get(tenant) ?? 0) + 1);
    if (counts) {
      this.running.set(tenant, this.runningBy(tenant) + 1);
      this.runningAll += 1;
      this.started(tenant, amount);
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.free += room;
      const left = this.heldBy(tenant) - amount;
      if (left > 0) this.held.set(tenant, left);
      else this.held.delete(tenant);
      if (capped) {
        const left = (this.cappedRunning.get(tenant) ?? 1) - 1;
        if (left > 0) this.cappedRunning.set(tenant, left);
        else this.cappedRunning.delete(tenant);
      }
      if (counts) {
        this.runningAll -= 1;
        const runs = this.runningBy(tenant) - 1;
        if (runs > 0) this.running.set(tenant, runs);
        else this.running.delete(tenant);
      }
      this.dispatch();
    };
  }

  /** Puts a waiter in its tenant's queue, with its timeout and its client's going away; then dispatches. */
  private enqueue(waiter: Waiter, signal?: AbortSignal) {
    const { tenant, bytes: amount, counts, grant, fail } = waiter;
    const onAbort = () => {
      if (this.leave(waiter)) waiter.fail(new AdmissionAbandoned());
    };
    const timer = setTimeout(() => {
      // Whose requests kept it waiting: its own tenant's (at its share, running its limit or more, or held back to a
      // spacing), or everyone's; read before leaving, since leaving lets the queue move on.
      const own =
        this.atOwnBound(tenant, amount, counts, waiter.capped) ||
        (this.options.share?.spacingOf(tenant) ?? 0) > 0 ||
        (counts && this.runningBy(tenant) >= this.maxRunningPerTenant);
      if (!this.leave(waiter)) return;
      this.refused += 1;
      waiter.fail(own ? tenantBusy() : serverBusy());
    }, this.options.queueTimeoutMs);
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    waiter.grant = () => {
      done();
      this.options.share?.waits(tenant, amount, false);
      grant();
    };
    waiter.fail = (error) => {
      done();
      fail(error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const list = this.waiting.get(tenant) ?? [];
    // A lease's growth is for a request already running (holding its turn): it goes before its tenant's requests
    // waiting to start, which could otherwise wait for turns only its own ending frees.
    const before = counts ? -1 : list.findIndex((w) => w.counts);
    if (before < 0) list.push(waiter);
    else list.splice(before, 0, waiter);
    this.options.share?.waits(tenant, amount, true);
    if (list.length === 1) {
      this.waiting.set(tenant, list);
      this.turns.push(tenant);
    }
    this.dispatch();
  }

  /** Takes a waiter out of its queue (a timeout, an abandoned wait, a refusal); false when it was granted already. */
  private leave(waiter: Waiter): boolean {
    const queue = this.waiting.get(waiter.tenant);
    const at = queue?.indexOf(waiter) ?? -1;
    if (!queue || at < 0) return false;
    queue.splice(at, 1);
    this.options.share?.waits(waiter.tenant, waiter.bytes, false);
    if (queue.length === 0) this.forget(waiter.tenant);
    this.dispatch();
    return true;
  }

  /**
   * Memory that could be waited for forever: leases that hold memory and wait for more (bodies read in part, each
   * waiting for the room or its tenant's share that the others hold) wait on each other. When what the oldest such
   * wait needs cannot come from what running requests hold, the youngest lease holding memory and waiting itself is
   * refused (wound-wait, as databases break lock cycles): of the same tenant when its tenant's share stops the oldest
   * (tenant_busy), of any tenant when the room does (server_busy). Its release dispatches again.
   */
  private breakDeadlock() {
    const stuck: Waiter[] = [];
    for (const list of this.waiting.values()) {
      for (const w of list) if (w.holder && w.holder.amount + w.holder.room > 0) stuck.push(w);
    }
    if (stuck.length < 2) return;
    stuck.sort((a, b) => (a.holder as Holder).born - (b.holder as Holder).born);
    const oldest = stuck[0] as Waiter;
    const mine = stuck.filter((w) => w.tenant === oldest.tenant);
    const sum = (ws: Waiter[], key: 'amount' | 'room') =>
      ws.reduce((n, w) => n + (w.holder as Holder)[key], 0);
    // What running requests hold comes back when they end; what the stuck leases hold does not, unless one is refused.
    const shareStops = sum(mine, 'amount') + oldest.bytes > this.maxPerTenant;
    const roomStops = sum(stuck, 'room') + oldest.room > this.capacity;
    if (!shareStops && !roomStops) return;
    const victims = (shareStops ? mine : stuck).filter((w) => w !== oldest);
    const victim = victims[victims.length - 1];
    if (!victim || !this.leave(victim)) return;
    this.refused += 1;
    victim.fail(
      refuse(
        shareStops ? 'tenant_busy' : 'server_busy',
        shareStops
          ? "This tenant's requests hold all of its share of memory and each waits for more; the newest was refused: try again shortly."
          : 'Requests hold all the memory and each waits for more; the newest was refused: try again shortly.',
        1,
      ),
    );
  }

  /** Requests of `tenant` holding memory now (a lease grown past nothing: a large body, a heavy door's). */
  holdersOf(tenant: string) {
    return this.holders.get(tenant) ?? 0;
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
   * between its starts (fairness/loop-share.ts), counted from its last start. (While the database is away nobody is spaced.)
   * A light request (reserving nothing) that has waited half the queue timeout starts without it: spacing alone never
   * makes one time out (300 requests waiting on one Idempotency-Key all get its answer). A request reserving memory
   * (a heavy door's, a large body's) keeps its spacing however long its tenant's queue, and is refused with
   * tenant_busy at its timeout: waived for them, a deep queue of plans would run back to back, their spacing void.
   * (Refused at once instead of waiting, a flood's clients would send again at once: a stream of refusals costs the
   * thread more than the waits, which hold no body and no database connection.)
   */
  private startsIn(tenant: string, amount: number, since = performance.now()): number {
    const spacing = this.options.share?.spacingOf(tenant) ?? 0;
    const last = this.lastStart.get(tenant);
    if (spacing === 0 || last === undefined) return 0;
    const startAt =
      amount === 0 ? Math.min(last + spacing, since + this.options.queueTimeoutMs / 2) : last + spacing;
    return Math.max(0, startAt - performance.now());
  }

  /**
   * Whether `tenant`'s own running requests leave no room for one more of `amount` (its share, its running limit).
   * The running limit is work-conserving: it holds a tenant only while another tenant runs or waits for a turn, so a
   * tenant alone may use every turn there is (maxRunning); a tenant held back by the loop's share is held always.
   */
  private atOwnBound(tenant: string, amount: number, counts = true, capped = false) {
    if (this.heldBy(tenant) + amount > this.maxPerTenant) return true;
    if (!counts) return false;
    if (capped && (this.cappedRunning.get(tenant) ?? 0) >= this.maxRunningPerTenant) return true;
    const held = this.options.share?.runningLimitOf(tenant) ?? Infinity;
    const limit = this.othersActive(tenant) ? Math.min(this.maxRunningPerTenant, held) : held;
    return this.runningBy(tenant) >= limit;
  }

  /**
   * Whether a tenant other than `tenant` runs requests or has some waiting for their turn. (Counting only the waiting
   * ones, a tenant that took every turn while alone would keep them when another came, whose request would find no
   * turn free and wait behind requests waiting inside for memory.)
   */
  othersActive(tenant: string): boolean {
    if (this.running.size > (this.running.has(tenant) ? 1 : 0)) return true;
    for (const other of this.turns) if (other !== tenant) return true;
    return false;
  }

  /**
   * In how many ms `tenant` may start another request: 0 now, Infinity while its own requests hold its share of memory
   * or of running requests (one of them ending dispatches again), else the rest of its gap. One reading of the clock
   * decides both whether it runs and when to look again: two readings could let a gap end between them, and the
   * waiter be passed over with no wake-up set.
   */
  private waitOf(tenant: string, amount: number, since?: number, counts = true, capped = false) {
    if (this.atOwnBound(tenant, amount, counts, capped)) return Number.POSITIVE_INFINITY;
    // (a lease's growth starts no request: no spacing between starts holds it)
    return counts ? this.startsIn(tenant, amount, since) : 0;
  }

  private fits(tenant: string, amount: number, room: number, counts: boolean, capped: boolean) {
    if (counts && this.runningAll >= this.maxRunning) return false;
    return this.free >= room && this.waitOf(tenant, amount, undefined, counts, capped) === 0;
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
      const full = head.counts && this.runningAll >= this.maxRunning;
      const wait =
        head.room > 0 || full
          ? Number.POSITIVE_INFINITY
          : this.waitOf(tenant, head.bytes, head.since, head.counts, head.capped);
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
      const wait = this.waitOf(tenant, head.bytes, head.since, head.counts, head.capped);
      // (every turn taken: a request waiting to start waits for one to end; a lease's growth goes on)
      if (wait > 0 || (head.counts && this.runningAll >= this.maxRunning)) {
        soonest = Math.min(soonest, wait > 0 ? wait : Number.POSITIVE_INFINITY);
        this.turns.push(this.turns.shift() as string);
        passed += 1;
        continue;
      }
      if (this.free < head.room) {
        // It keeps its place and is served first when enough is freed; requests that reserve no room take none from
        // it, and run meanwhile (so a light request does not wait behind another tenant's plan waiting for room).
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
    this.breakDeadlock();
    if (soonest !== Number.POSITIVE_INFINITY && this.wakeTimer === undefined) {
      this.wakeTimer = setTimeout(() => {
        this.wakeTimer = undefined;
        this.dispatch();
      }, Math.ceil(soonest));
      this.wakeTimer.unref();
    }
  }
}
