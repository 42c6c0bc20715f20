// The event loop shared between tenants. Admission (fairness/admission.ts) bounds how many requests a tenant runs at once,
// but the service has one thread: a tenant flooding a door (refusals, replays, small pages, or heavy reads) keeps up
// to TENANT_CONCURRENCY requests in every turn of the event loop, and another tenant's request, which waits one turn
// at each of its steps (its socket, its token, its read), waits behind all of them each time. So, when the loop lags
// and one tenant's requests weigh far more than any other active tenant's, that tenant is held back: it runs
// HELD_RUNNING request at a time, and its requests start a spacing apart: a gap, growing fourfold at each lagging
// tick (from FIRST_GAP_MS to MAX_GAP_MS), times what its last request to end moved through the thread (one, plus one
// per 64 KiB of its body read and its answer written; at most MAX_SPACING_MS): a megabyte answer or body holds the
// loop for milliseconds in one piece, so a tenant sending them waits in proportion, and another tenant's request
// meets at most one of them at a time. For dominance a request weighs that, plus one per MiB of memory it reserves
// (a heavy door's).
// Every CALM_TICKS calm ticks in a row (a second) halve every gap (below FIRST_GAP_MS: gone): a hold eased faster
// lets the flood back in bursts, which make the other tenants' worst answers. A
// tenant alone is never held back and a held one is let go once it has been alone for CALM_TICKS ticks (nobody waits
// behind it), nor are tenants of like load held back (none dominates). A held-back tenant's requests wait in its
// admission queue (in memory, holding no database connection), within the admission's queue bound and timeout.
export interface LoopShareOptions {
  /** A tick whose longest event-loop delay passes this (ms) lags. */
  lagHighMs?: number;
  /** A tick whose longest delay stays under this (ms) is calm. */
  lagLowMs?: number;
  /** How many times the next tenant's load a tenant must bring to be held back. */
  dominance?: number;
  /**
   * Whether holding back applies now (default: always). Not while the database is away or the service warms up:
   * requests are then refused after a short hold of their own (db/readiness.ts), and spaced ones would reach the
   * database together the moment it is ready.
   */
  active?: () => boolean;
}

/** How often the loop's delay is read and the holds adjusted, in ms. */
export const LOOP_SHARE_TICK_MS = 100;
/** The first and the longest gap between two starts of a held-back tenant's requests, in ms. */
export const FIRST_GAP_MS = 2;
export const MAX_GAP_MS = 100;
/** The longest spacing between two starts of a held-back tenant's requests (its gap times a request's weight), in ms. */
export const MAX_SPACING_MS = 2_000;
/** Requests a held-back tenant runs at once at most (its TENANT_CONCURRENCY otherwise). */
export const HELD_RUNNING = 1;
/** Calm ticks in a row that ease every hold by one step. */
export const CALM_TICKS = 10;
/** The loop's delay is how late a timer of this period fires (ms). */
const PROBE_MS = 5;
/** Weight of the latest tick in a tenant's load (the rest is its past: about a second of memory). */
const RECENT = 0.3;
/** Below this load per tick (a request every second) a tenant is no longer active. */
const ACTIVE = 0.1;
/** A request's weight grows by one per this many bytes it reserves, and by one per ANSWER_WEIGHT_BYTES it answers. */
const WEIGHT_BYTES = 1024 * 1024;
export const ANSWER_WEIGHT_BYTES = 64 * 1024;

/** What a request reserving `bytes` weighs in its tenant's load, starting or waiting: one, plus one a MiB. */
const weightOf = (bytes: number) => 1 + bytes / WEIGHT_BYTES;

interface Usage {
  /** Weight of the requests started in the current tick. */
  tick: number;
  /** Weight started per tick, a moving average. */
  average: number;
  /** Weight of the last request to end: 1, plus one per ANSWER_WEIGHT_BYTES that crossed the thread for it. */
  last: number;
}

export class LoopShare {
  private readonly usage = new Map<string, Usage>();
  /** The gap between two starts of each held-back tenant's requests, in ms. */
  private readonly gaps = new Map<string, number>();
  /**
   * The weight of each tenant's requests waiting for their turn (fairness/admission.ts tells), counted in its load: a held
   * tenant's throughput falls below a light tenant's once spaced (and fades between plans spaced seconds apart), so
   * by throughput alone the tenant it was held for would become the heaviest and be held in its place; its demand
   * does not fall. A tenant gone quiet has none waiting, and its load fades as anyone's.
   */
  private readonly waitingWeight = new Map<string, number>();
  private readonly lagHighMs: number;
  private readonly lagLowMs: number;
  private readonly dominance: number;
  private calm = 0;
  /** Ticks in a row with fewer than two tenants active. */
  private alone = 0;
  private probe: NodeJS.Timeout | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Ticks that held a tenant back further, for the metrics. */
  heldBack = 0;

  private readonly active: () => boolean;

  constructor(options: LoopShareOptions = {}) {
    this.active = options.active ?? (() => true);
    this.lagHighMs = options.lagHighMs ?? 6;
    this.lagLowMs = options.lagLowMs ?? 3;
    this.dominance = options.dominance ?? 4;
  }

  /** Least time between two starts of `tenant`'s requests now, in ms (0: none). */
  gapOf(tenant: string): number {
    if (this.gaps.size === 0 || !this.active()) return 0;
    return this.gaps.get(tenant) ?? 0;
  }

  /**
   * Least time between two starts of `tenant`'s requests now, in ms (0: none): its gap times the weight of its last
   * request to end, at most MAX_SPACING_MS. A held-back tenant answered megabytes at a time thus waits in proportion
   * to what each answer held the loop for, not one gap per request however large.
   */
  spacingOf(tenant: string): number {
    const gap = this.gapOf(tenant);
    if (gap === 0) return 0;
    return Math.min(MAX_SPACING_MS, gap * (this.usage.get(tenant)?.last ?? 1));
  }

  /** Most requests `tenant` may run at once now: HELD_RUNNING while it is held back, else no bound of this share's. */
  runningLimitOf(tenant: string): number {
    return this.gapOf(tenant) > 0 ? HELD_RUNNING : Number.POSITIVE_INFINITY;
  }

  /** Tenants held back now, with their gap in ms. */
  held(): ReadonlyMap<string, number> {
    return this.gaps;
  }

  /** A request of `tenant` reserving `bytes` waits for its turn (`waiting: true`), or stops waiting (false). */
  waits(tenant: string, bytes: number, waiting: boolean) {
    const weight = weightOf(bytes) * (waiting ? 1 : -1);
    const total = (this.waitingWeight.get(tenant) ?? 0) + weight;
    if (total > 1e-9) this.waitingWeight.set(tenant, total);
    else this.waitingWeight.delete(tenant);
  }

  /** A request of `tenant` reserving `bytes` starts. */
  started(tenant: string, bytes: number) {
    this.usageOf(tenant).tick += weightOf(bytes);
  }

  /**
   * A request of `tenant` ended, `bytes` having crossed the one thread for it (its body read and parsed, its answer
   * serialised and written).
   */
  answered(tenant: string, bytes: number) {
    const u = this.usageOf(tenant);
    const weight = Math.max(0, bytes) / ANSWER_WEIGHT_BYTES;
    u.tick += weight;
    u.last = 1 + weight;
  }

  private usageOf(tenant: string): Usage {
    let u = this.usage.get(tenant);
    if (!u) {
      u = { tick: 0, average: 0, last: 1 };
      this.usage.set(tenant, u);
    }
    return u;
  }

  /**
   * Adjusts the holds after a tick whose longest event-loop delay was `lagMs`; says whether a hold eased (waiting
   * requests may now start).
   */
  tick(lagMs: number): boolean {
    let top: [string, number] | undefined;
    let next = 0;
    for (const [tenant, u] of this.usage) {
      u.average = RECENT * u.tick + (1 - RECENT) * u.average;
      u.tick = 0;
      const load = u.average + (this.waitingWeight.get(tenant) ?? 0);
      if (load < ACTIVE) {
        this.usage.delete(tenant);
        continue;
      }
      if (!top || load > top[1]) {
        if (top) next = Math.max(next, top[1]);
        top = [tenant, load];
      } else next = Math.max(next, load);
    }
    // Ticks in a row with fewer than two tenants active: a tenant alone for CALM_TICKS is let go, however slowly its
    // hold would ease (nobody waits behind it). Not at once: a tenant sending a request a second or less drops out of
    // the active ones between its requests, and each would then meet the flood unheld.
    this.alone = next === 0 ? this.alone + 1 : 0;
    if (!this.active() || this.alone >= CALM_TICKS) {
      // Nothing is held back meanwhile, and nothing is left held back for when it ends.
      const eased = this.gaps.size > 0;
      this.gaps.clear();
      this.calm = 0;
      return eased && this.active();
    }
    if (lagMs > this.lagHighMs && top && next > 0 && top[1] > this.dominance * next) {
      const [tenant] = top;
      const gap = this.gaps.get(tenant);
      this.gaps.set(tenant, gap === undefined ? FIRST_GAP_MS : Math.min(MAX_GAP_MS, gap * 4));
      this.heldBack += 1;
      this.calm = 0;
      return false;
    }
    if (lagMs >= this.lagLowMs || this.gaps.size === 0) {
      this.calm = 0;
      return false;
    }
    this.calm += 1;
    if (this.calm < CALM_TICKS) return false;
    this.calm = 0;
    for (const [tenant, gap] of this.gaps) {
      if (gap < 2 * FIRST_GAP_MS) this.gaps.delete(tenant);
      else this.gaps.set(tenant, gap / 2);
    }
    return true;
  }

  /** Reads the event loop's delay every tick and adjusts the holds; `eased` runs when a hold eased. */
  start(eased: () => void) {
    if (this.timer) return;
    // (perf_hooks' monitorEventLoopDelay does not see a callback that blocks the loop on this Node.js: a timer's
    // lateness does.)
    let last = performance.now();
    let lagMs = 0;
    this.probe = setInterval(() => {
      const at = performance.now();
      lagMs = Math.max(lagMs, at - last - PROBE_MS);
      last = at;
    }, PROBE_MS);
    this.timer = setInterval(() => {
      const lag = lagMs;
      lagMs = 0;
      if (this.tick(lag)) eased();
    }, LOOP_SHARE_TICK_MS);
    this.probe.unref();
    this.timer.unref();
  }

  stop() {
    clearInterval(this.probe);
    clearInterval(this.timer);
    this.probe = undefined;
    this.timer = undefined;
  }
}
