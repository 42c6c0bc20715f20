// Reads tenants' model versions for requests, sharing one database read between all requests waiting at once.
//
// The rule that keeps reads exact: a request may share a version read that STARTED AFTER IT ARRIVED, never one
// already under way (that one may have read the version before a write the request must see was acknowledged).
// So at most one read is in flight; requests arriving meanwhile wait together for the next one, which starts the
// moment the current one ends and reads every tenant they asked for in one statement (an index seek each). Under
// load a round trip serves dozens of requests; alone, a request pays one round trip, as without sharing.
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

  constructor(private readonly db: Executor) {}

  /** The tenant's model version, read by a statement that starts after this call. */
  read(tenant: string): Promise<SharedRead> {
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
    try {
      const { value: versions, bookmarks } = await this.db.readLatest(
        (run) => readModelVersions(run, [...batch.keys()]),
        { timeoutMs: READ_TIMEOUT_MS },
      );
      const share = 1 / waiters;
      for (const [tenant, list] of batch) {
        const version = versions.get(tenant) ?? '';
        for (const w of list) w.resolve({ version, share, bookmarks });
      }
    } catch (e) {
      for (const list of batch.values()) for (const w of list) w.reject(e);
    }
  }

  stats(): VersionReaderStats {
    return { reads: this.reads, requests: this.requests };
  }
}
