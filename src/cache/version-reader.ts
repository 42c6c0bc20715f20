// Reads tenants' model versions for requests: from a read lease while one holds, else by one database read shared
// between all requests waiting at once.
//
// The guarantee: a write acknowledged by any replica is seen by every read that arrives after the acknowledgement, on
// every replica. Leases keep it (Gray and Cheriton, "Leases", 1989): a version read that STARTED at T0 may answer the
// tenant's requests arriving before T0 + leaseMs (this process's monotonic clock), and a write that changes a model
// is acknowledged only once leaseMs + LEASE_MARGIN_MS have passed since it committed (app/http-hooks.ts). A request
// arriving after that acknowledgement holds a lease only if the lease's read started after the commit, so it saw the
// write. The margin covers the two clocks running at different rates. Without a lease, a request may share a read
// that started after it arrived, never one already under way: at most one read is in flight; requests arriving
// meanwhile wait together for the next, which reads every tenant they asked for in one statement (an index seek
// each). So a tenant's version is read at most once a lease, whatever the request rate.
// On a Neo4j cluster the read goes to the leader (which has every committed write), and what it saw travels on
// as bookmarks; a request carrying its client's bookmark reads its version alone, with that bookmark.
import type { Executor } from '../db/executor.js';
import { readModelVersions } from '../db/model-version.js';

interface Waiter {
  resolve(read: SharedRead): void;
  reject(error: unknown): void;
}

/** A version as read for one request, and the share of the statement the request is counted for. */
export interface SharedRead {
  version: string;
  /** 1 / the requests that shared the statement. */
  share: number;
  /**
   * What the read saw, as Neo4j bookmarks: the request's later reads wait for them, so that on a cluster a lagging
   * follower cannot answer a load with data older than the version (the read itself runs on the leader).
   */
  bookmarks: string[];
}

export interface VersionReaderStats {
  /** Statements sent. */
  reads: number;
  /** Requests answered by them. */
  requests: number;
  /** Requests answered from a lease, with no statement. */
  leased: number;
}

/**
 * Added to the lease a write waits out before its acknowledgement: the clocks of two replicas may run at different
 * rates (by far less than this over a lease); a read's start and a commit's end are both taken on the safe side.
 */
export const LEASE_MARGIN_MS = 5;

/** Leases kept at most: past it, the expired ones are dropped (a tenant's lease lasts a few tens of milliseconds). */
const MAX_LEASES = 10_000;

interface Lease {
  read: SharedRead;
  /** Until when it answers (performance clock, ms): its read's start plus leaseMs. */
  until: number;
}

/** Most tenants one statement reads; more waiting tenants are read by the next statements. */
const MAX_TENANTS_PER_READ = 500;
/** A version read is a single index seek per tenant; one that takes longer is a database in trouble. */
const READ_TIMEOUT_MS = 5_000;

export class VersionReader {
  private waiting = new Map<string, Waiter[]>();
  private inFlight = false;
  private reads = 0;
  private requests = 0;
  private leased = 0;
  private readonly leases = new Map<string, Lease>();
  /** Tenants whose lease a read is renewing (queued or in flight). */
  private readonly renewing = new Set<string>();

  /** `leaseMs`: how long a read answers its tenant's requests (0: every request reads). */
  constructor(
    private readonly db: Executor,
    readonly leaseMs = 0,
  ) {}

  /** How long a write that changed a model waits, after its commit, before it is acknowledged. */
  get writeWaitMs() {
    return this.leaseMs > 0 ? this.leaseMs + LEASE_MARGIN_MS : 0;
  }

  /** The tenant's model version: from a lease that holds, else read by a statement that starts after this call. */
  read(tenant: string): Promise<SharedRead> {
    const lease = this.leases.get(tenant);
    const now = performance.now();
    if (lease && now < lease.until) {
      this.leased += 1;
      // Past half its life, a lease in use is renewed ahead (a read of its own, nobody waiting on it): the tenant's
      // requests go on from memory instead of waiting, every lease, for a round trip.
      if (now > lease.until - this.leaseMs / 2 && !this.renewing.has(tenant)) this.renew(tenant);
      return Promise.resolve({ ...lease.read, share: 0 });
    }
    return new Promise((resolve, reject) => {
      const list = this.waiting.get(tenant);
      if (list) list.push({ resolve, reject });
      else this.waiting.set(tenant, [{ resolve, reject }]);
      if (!this.inFlight) {
        this.inFlight = true;
        // Requests arriving in the same turn of the event loop join this read.
        queueMicrotask(() => void this.drain());
      }
    });
  }

  /** Reads the tenant's version with the next statement, for its lease alone. */
  private renew(tenant: string) {
    this.renewing.add(tenant);
    if (!this.waiting.has(tenant)) this.waiting.set(tenant, []);
    if (!this.inFlight) {
      this.inFlight = true;
      queueMicrotask(() => void this.drain());
    }
  }

  /** Reads for the waiting requests, one statement at a time, until none is waiting. */
  private async drain(): Promise<void> {
    while (this.waiting.size > 0) await this.readBatch();
    this.inFlight = false;
  }

  private async readBatch(): Promise<void> {
    let batch: Map<string, Waiter[]>;
    if (this.waiting.size <= MAX_TENANTS_PER_READ) {
      batch = this.waiting;
      this.waiting = new Map();
    } else {
      batch = new Map();
      for (const [tenant, list] of this.waiting) {
        batch.set(tenant, list);
        this.waiting.delete(tenant);
        if (batch.size === MAX_TENANTS_PER_READ) break;
      }
    }
    let waiters = 0;
    for (const list of batch.values()) waiters += list.length;
    this.reads += 1;
    this.requests += waiters;
    const startedAt = performance.now();
    try {
      const { value: versions, bookmarks } = await this.db.readLatest(
        (run) => readModelVersions(run, [...batch.keys()]),
        { timeoutMs: READ_TIMEOUT_MS },
      );
      const share = waiters > 0 ? 1 / waiters : 0;
      for (const [tenant, list] of batch) {
        const version = versions.get(tenant) ?? '';
        this.lease(tenant, { version, share, bookmarks }, startedAt);
        for (const w of list) w.resolve({ version, share, bookmarks });
      }
    } catch (e) {
      for (const list of batch.values()) for (const w of list) w.reject(e);
    } finally {
      for (const tenant of batch.keys()) this.renewing.delete(tenant);
    }
  }

  /** Keeps a read as the tenant's lease from its start (only a later read's replaces it). */
  private lease(tenant: string, read: SharedRead, startedAt: number) {
    if (this.leaseMs <= 0) return;
    const until = startedAt + this.leaseMs;
    if ((this.leases.get(tenant)?.until ?? 0) >= until) return;
    if (this.leases.size >= MAX_LEASES) {
      const now = performance.now();
      for (const [t, l] of this.leases) if (l.until <= now) this.leases.delete(t);
    }
    if (this.leases.size < MAX_LEASES) this.leases.set(tenant, { read, until });
  }

  /** Ends the tenant's lease: this process committed a change of its model (its next reads read again). */
  forget(tenant: string) {
    this.leases.delete(tenant);
  }

  stats(): VersionReaderStats {
    return { reads: this.reads, requests: this.requests, leased: this.leased };
  }
}
