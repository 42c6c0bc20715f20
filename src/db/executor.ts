// All database access goes through here: managed read/write transactions, one session per unit of work,
// driver errors mapped to domain errors in one place, and a per-request count of queries sent.
// Over 300 lines: it is the one place every transaction passes (house style), keyed writes included.
import neo4j, {
  type Driver,
  Neo4jError,
  type QueryResult,
  type Session,
  type Transaction,
} from 'neo4j-driver';
import { refuse } from '../errors.js';
import { type RequestTrace, tracedStatement } from '../telemetry/tracing.js';
import {
  claimIdempotencyKey,
  IdempotencyKeyTaken,
  type IdempotencyScope,
  storeIdempotentAnswer,
} from './idempotency-records.js';
import type { Row, Run } from './run.js';
import { isUnavailable, storagePolicyOf } from './storage-policy.js';

export class ConstraintViolation extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConstraintViolation';
  }
}

export interface QueryStats {
  /** Statements sent (a statement shared between requests counts as each one's share of it). */
  queries: number;
  /**
   * Bookmarks every later session of the request waits for (a Neo4j cluster: a follower answers only once it has
   * applied them): the client's Neo4j-Bookmark, and the one of the model version read.
   */
  bookmarks?: string[];
  /** The bookmarks of the request's last committed write, for its Neo4j-Bookmark response header. */
  written?: string[];
  /** The request's trace, when tracing is on: each statement gets a span under its current span. */
  trace?: RequestTrace;
  /** Transactions the storage policy ran again after a transient error (each sends its statements again). */
  retries?: number;
  /**
   * When the request's last transaction that changed its tenant's model committed (performance clock, ms): its
   * answer waits out every replica's read lease before it is sent (cache/version-reader.ts).
   */
  modelCommittedAt?: number;
}

/** A time limit reads of one request must keep (a GraphQL query's budget). */
export interface Deadline {
  /** Milliseconds left, or undefined when there is no limit (now). */
  remainingMs(): number | undefined;
  /** The error a read stopped by the limit fails with. */
  expire(): Error;
}

const isTimeout = (e: unknown) =>
  e instanceof Neo4jError && e.code.startsWith('Neo.ClientError.Transaction.TransactionTimedOut');

export interface TxOptions {
  /** Server-side transaction timeout. */
  timeoutMs?: number;
}

export interface Executor {
  read<T>(work: (run: Run) => Promise<T>, options?: TxOptions): Promise<T>;
  write<T>(work: (run: Run) => Promise<T>, options?: TxOptions): Promise<T>;
  /**
   * A read of ONE statement as an auto-commit transaction: one network round trip instead of two (BEGIN with the
   * statement, then COMMIT), about 20% more reads per second. Retried like a managed transaction on transient
   * errors (safe: it only reads). A read sending several statements uses `read`.
   */
  readOne<T>(work: (run: Run) => Promise<T>, options?: TxOptions): Promise<T>;
  /**
   * A read of ONE statement (auto-commit) on the cluster's leader, which has every committed write, with the
   * bookmarks that stand for what it saw: a session given them waits until its server has applied as much.
   * (On a single server the same as readOne.)
   */
  readLatest<T>(
    work: (run: Run) => Promise<T>,
    options?: TxOptions,
  ): Promise<{ value: T; bookmarks: string[] }>;
  /**
   * Runs `effect` once the request's write is committed: at once, unless a write under an Idempotency-Key is
   * waiting for its answer (then right after its commit, and never if it is rolled back). For what a write sets off
   * outside its transaction (the background purge, cache invalidation).
   */
  afterCommit(effect: () => void): void;
  /** An executor sharing the driver and its admission for one request (see RequestOptions). */
  forRequest(options: RequestOptions): Executor;
  readonly stats: QueryStats;
}

/**
 * What one request's executor carries: its statements are counted in `stats`; with `deadline`, reads get the time it
 * has left as their transaction timeout, and a read stopped by that timeout fails with `deadline.expire()`; with
 * `idempotency`, its write is kept open until its answer is stored with it; with `guard`, every write transaction
 * of the request runs `guard.before` first and `guard.after` last, inside it (a precondition and what follows it).
 */
export interface RequestOptions {
  stats: QueryStats;
  /**
   * Metadata of every transaction of the request, read when each begins: Neo4j's query log and `SHOW TRANSACTIONS`
   * (its `metaData`) tie a statement to the request that ran it.
   */
  metadata?: () => TransactionMetadata;
  deadline?: Deadline;
  /**
   * The request's tenant: while the service warms up, one tenant runs one transaction at a time (readiness.ts), so
   * that one tenant's clients (ignoring Retry-After, or many subjects of it) do not take every turn.
   */
  tenant?: string;
  idempotency?: () => IdempotencyScope | undefined;
  guard?: () => WriteGuard | undefined;
}

/** Statements every write transaction of a request runs first and last, inside it (its first may refuse it). */
export interface WriteGuard {
  before(run: Run): Promise<void>;
  after(run: Run): Promise<void>;
}

/** What a transaction tells Neo4j about where it comes from (never tenant data: ids and route templates only). */
export interface TransactionMetadata {
  /** The request's id (its x-request-id), or the background job's run. */
  request_id: string;
  /** The route template (`POST /entities/types`), or the background job (`purge`, `warm-up`). */
  operation: string;
}

export interface ExecutorOptions extends Partial<RequestOptions> {
  database?: string;
  /**
   * Asked before each transaction; throws to refuse it, or returns what to call when it has ended (the app's
   * readiness: readiness.ts).
   */
  admit?: (tenant: string | undefined, continuing: boolean) => undefined | Turn | Promise<undefined | Turn>;
  /**
   * Told of each statement run to its end, and whether its transaction had changed anything before it (the warm-up:
   * what Neo4j has planned, and in which of its two variants; readiness.ts).
   */
  observe?: Observe;
  /** The executor of one request (forRequest): its transactions after the first are of a request under way. */
  oneRequest?: boolean;
}

/** A transaction let in by admission: `release` when it has ended; `check` throws for a statement it may not send. */
export interface Turn {
  /** Gives the turn back; a promise when the refusal that ended the transaction is to be held until it settles. */
  release(): undefined | Promise<void>;
  /**
   * Refuses (throws) a statement not allowed yet: while the service warms up, one the warm-up has not planned as the
   * transaction sends it (`changed`: the transaction has changed something before it).
   */
  check?: (cypher: string, changed: boolean) => void;
}

/**
 * Told of a statement run: its text, and whether its transaction had changed anything before it. Neo4j keeps a plan
 * per statement text, parameter types and that: the same text is planned anew in the other variant.
 */
export type Observe = (cypher: string, changed: boolean) => void;

/** Whether a transaction has changed anything yet, and its tenant's model (shared by the runs of one transaction). */
interface TxState {
  changed: boolean;
  model?: boolean;
}

/** Driver errors as domain errors: constraint violations, unavailability, and overload (a 503, never a 500). */
export function mapDriverError(error: unknown): unknown {
  if (error instanceof Neo4jError) {
    if (error.code === 'Neo.ClientError.Schema.ConstraintValidationFailed') {
      return new ConstraintViolation(error.message);
    }
    if (isUnavailable(error)) return refuse.storageUnavailable();
    // A statement stopped by its transaction timeout: the database could not serve it in time.
    if (isTimeout(error)) return refuse.storageBusy();
    // All pooled connections stayed busy past the acquisition timeout, or a transient error (deadlock, lock
    // timeout) outlasted the managed transaction's retries.
    if (
      error.message.startsWith('Connection acquisition timed out') ||
      error.code.startsWith('Neo.TransientError')
    ) {
      return refuse.storageBusy();
    }
  }
  return error;
}

/**
 * A Run over `send` (a transaction's or a session's run) that counts the statement and returns plain rows. `tx`
 * follows whether the transaction has changed anything yet (one per transaction).
 */
const counted =
  (
    stats: QueryStats,
    send: (cypher: string, params: Record<string, unknown>) => Promise<QueryResult>,
    turn?: Pick<Turn, 'check'>,
    observe?: Observe,
    tx: TxState = { changed: false },
  ): Run =>
  async (cypher, params = {}) => {
    const changed = tx.changed;
    turn?.check?.(cypher, changed);
    stats.queries += 1;
    const result = stats.trace
      ? await tracedStatement(stats.trace, cypher, () => send(cypher, params))
      : await send(cypher, params);
    if (result.summary.counters.containsUpdates()) {
      tx.changed = true;
      // (a statement that records a change gives the model a new version: db/changes.ts recordChange)
      if (params.changeKind !== undefined) tx.model = true;
    }
    observe?.(cypher, changed);
    return result.records.map((r) => r.toObject() as Row);
  };

const txConfig = (options: TxOptions | undefined, metadata: TransactionMetadata | undefined) =>
  options?.timeoutMs || metadata
    ? {
        ...(options?.timeoutMs ? { timeout: options.timeoutMs } : {}),
        ...(metadata ? { metadata } : {}),
      }
    : undefined;

/** What every transaction of an executor goes through: its policy (admission, breaker, retries), sessions, counting. */
function plumbing(driver: Driver, options: ExecutorOptions) {
  const { database, deadline, admit, guard, metadata, observe, tenant } = options;
  /** A transaction's configuration: its timeout, and the request's metadata. */
  const config = (o: TxOptions | undefined) => txConfig(o, metadata?.());
  const stats: QueryStats = options.stats ?? { queries: 0 };
  /** A write's work with the request's guard around it, inside the same transaction. */
  const guarded =
    <T>(work: (run: Run) => Promise<T>) =>
    async (run: Run) => {
      const g = guard?.();
      if (!g) return work(run);
      await g.before(run);
      const value = await work(run);
      await g.after(run);
      return value;
    };
  /** Options of a read: the caller's, else the time the deadline leaves. */
  const readOptions = (options: TxOptions | undefined): TxOptions | undefined => {
    if (options || !deadline) return options;
    const left = deadline.remainingMs();
    return left === undefined ? undefined : { timeoutMs: left };
  };
  const readFailure = (e: unknown) =>
    deadline && isTimeout(e) && deadline.remainingMs() !== undefined ? deadline.expire() : mapDriverError(e);
  /** A read, its failure mapped (the deadline's, or a domain error). */
  const reading = async <T>(read: () => Promise<T>): Promise<T> => {
    try {
      return await read();
    } catch (e) {
      throw readFailure(e);
    }
  };
  const runner = (tx: Transaction, turn: Turn | undefined, state: TxState) =>
    counted(stats, (cypher, params) => tx.run(cypher, params), turn, observe, state);
  /** After a commit: when it changed the model, the moment (its answer waits out the replicas' read leases). */
  const committed = (state: TxState) => {
    if (state.model) stats.modelCommittedAt = performance.now();
  };
  // Every transaction goes through the driver's breaker and retries (storage-policy.ts), not the driver's own,
  // once the app admits it (it refuses while the database is away or its warm-up runs).
  const breaker = storagePolicyOf(driver);
  // (a request's executor: whether one of its transactions was let in already, so that the next one is of a request
  // under way; the app's own, shared by work outside requests, never says so)
  let admittedBefore = false;
  const policy = {
    async run<T>(attempt: (committing: () => void, turn: Turn | undefined) => Promise<T>): Promise<T> {
      const turn = await admit?.(tenant, admittedBefore);
      if (options.oneRequest) admittedBefore = true;
      let attempts = 0;
      try {
        return await breaker.run((committing) => {
          attempts += 1;
          if (attempts > 1) stats.retries = (stats.retries ?? 0) + 1;
          return attempt(committing, turn);
        });
      } finally {
        const held = turn?.release();
        if (held) await held;
      }
    },
  };

  const session = (mode: 'READ' | 'WRITE') =>
    driver.session({
      database,
      defaultAccessMode: mode === 'READ' ? neo4j.session.READ : neo4j.session.WRITE,
      ...(stats.bookmarks && stats.bookmarks.length > 0 ? { bookmarks: stats.bookmarks } : {}),
    });
  return { config, stats, guarded, readOptions, reading, runner, committed, policy, session };
}

/** An executor's three ways to run work: one auto-commit statement, an explicit transaction, a keyed write. */
function transactions(p: ReturnType<typeof plumbing>, observe: Observe | undefined) {
  const { config, stats, readOptions, runner, committed, policy, session } = p;
  /** One statement as an auto-commit transaction in a session of `mode` (a read: safe to run again). */
  const autoCommit = <T>(
    mode: 'READ' | 'WRITE',
    work: (run: Run) => Promise<T>,
    options: TxOptions | undefined,
  ): Promise<{ value: T; bookmarks: string[] }> =>
    policy.run(async (_, turn) => {
      const s = session(mode);
      let sent = 0;
      try {
        const value = await work(
          counted(
            stats,
            (cypher, params) => {
              sent += 1;
              if (sent > 1) throw new Error('readOne runs one statement; use read for several.');
              return s.run(cypher, params, config(readOptions(options)));
            },
            turn,
            observe,
          ),
        );
        return { value, bookmarks: s.lastBookmarks() };
      } finally {
        await s.close();
      }
    });

  /** `work` in an explicit transaction of `mode`, committed; run again by the policy on transient failures. */
  const transaction = <T>(
    mode: 'READ' | 'WRITE',
    work: (run: Run) => Promise<T>,
    options: TxOptions | undefined,
  ) =>
    policy.run(async (committing, turn) => {
      const s = session(mode);
      try {
        const tx = s.beginTransaction(config(options));
        const state: TxState = { changed: false };
        try {
          const value = await work(runner(tx, turn, state));
          committing();
          await tx.commit();
          committed(state);
          return { value, bookmarks: s.lastBookmarks() };
        } catch (e) {
          if (tx.isOpen()) await tx.rollback().catch(() => {});
          throw e;
        }
      } finally {
        await s.close();
      }
    });

  /**
   * A write under an Idempotency-Key: the key is claimed by the transaction's first statement, and the transaction
   * is left open (`scope.open`) until the request's answer is stored in it and committed (app/http-hooks.ts, on
   * send). One write per request: the answer stands for it (a keyed GraphQL operation has one mutation field).
   */
  const keyedWrite = <T>(
    scope: IdempotencyScope,
    work: (run: Run) => Promise<T>,
    options: TxOptions | undefined,
  ) => {
    return policy.run(async (_, turn) => {
      // A request writes again only when its earlier attempt wrote nothing (a resolver trying anew after the
      // definitions changed under it): that attempt's transaction, holding only the claim, is rolled back.
      const earlier = scope.open;
      scope.open = undefined;
      await earlier?.rollback();
      const s = session('WRITE');
      const tx = s.beginTransaction(config(options));
      const state: TxState = { changed: false };
      const run = runner(tx, turn, state);
      try {
        try {
          await claimIdempotencyKey(run, scope, scope.fingerprint);
        } catch (e) {
          if (e instanceof Neo4jError && e.code === 'Neo.ClientError.Schema.ConstraintValidationFailed') {
            scope.taken = true;
            throw new IdempotencyKeyTaken();
          }
          throw e;
        }
        const value = await work(run);
        scope.open = {
          async commit(answer) {
            try {
              await storeIdempotentAnswer(run, scope, answer);
              await tx.commit();
              committed(state);
              for (const effect of scope.afterCommit?.splice(0) ?? []) effect();
              return s.lastBookmarks();
            } finally {
              scope.afterCommit = undefined;
              if (tx.isOpen()) await tx.rollback().catch(() => {});
              await s.close();
            }
          },
          async rollback() {
            scope.afterCommit = undefined;
            if (tx.isOpen()) await tx.rollback().catch(() => {});
            await s.close();
          },
        };
        return value;
      } catch (e) {
        if (tx.isOpen()) await tx.rollback().catch(() => {});
        await s.close();
        throw e;
      }
    });
  };
  return { autoCommit, transaction, keyedWrite };
}

export function createExecutor(driver: Driver, options: ExecutorOptions = {}) {
  const { database, idempotency, admit, observe } = options;
  const p = plumbing(driver, options);
  const { stats, guarded, readOptions, reading } = p;
  const { autoCommit, transaction, keyedWrite } = transactions(p, observe);
  const executor: Executor = {
    stats,
    read(work, options) {
      return reading(async () => (await transaction('READ', work, readOptions(options))).value);
    },
    readOne(work, options) {
      return reading(async () => (await autoCommit('READ', work, options)).value);
    },
    readLatest(work, options) {
      return reading(() => autoCommit('WRITE', work, options));
    },
    async write(work, options) {
      const scope = idempotency?.();
      if (scope) {
        try {
          return await keyedWrite(scope, guarded(work), options);
        } catch (e) {
          throw mapDriverError(e);
        }
      }
      try {
        const { value, bookmarks } = await transaction('WRITE', guarded(work), options);
        stats.written = bookmarks;
        return value;
      } catch (e) {
        throw mapDriverError(e);
      }
    },
    afterCommit(effect) {
      const scope = idempotency?.();
      if (!scope?.open) return effect();
      scope.afterCommit ??= [];
      scope.afterCommit.push(effect);
    },
    forRequest(request) {
      return createExecutor(driver, { database, admit, observe, ...request, oneRequest: true });
    },
  };
  return executor;
}

/**
 * A rehearsal: `work` gets an executor whose every statement (reads, writes, auto-commit reads) runs in ONE write
 * transaction, rolled back at the end whatever happens. Nothing is written, and nothing a write sets off after its
 * commit runs. For the warm-up (app/warmup.ts): the hot statements planned and run by Neo4j without effect.
 *
 * Neo4j keeps a plan per statement text, parameter types and whether the transaction has changed anything yet. In
 * the one transaction, every statement after its first change is planned only as a keyed write sends it (after its
 * key's claim), never as a read or an unkeyed write's first statements send it: those would plan theirs anew on the
 * cold database after ready. So each such statement is also sent once in a fresh transaction, rolled back: a read's
 * as it is, beside it (a read takes no lock; a keyed write's request reads before it writes); a write's up to its
 * first change planned only (EXPLAIN: nothing changed, nothing locked), once the write is done, before the
 * rehearsal's next step: sent beside each statement, these would delay a keyed write's own statements, and keyed
 * writes are what the service's clients send most; sent only after the rehearsal's transaction, they would keep an
 * unkeyed write refused until just before ready. While the service warms up, a transaction is
 * let in only for the variants planned (readiness.ts), so each statement is told to `observe` with its variant.
 */
export async function rehearse<T>(
  driver: Driver,
  database: string | undefined,
  work: (db: Executor) => Promise<T>,
  options?: TxOptions,
  metadata?: TransactionMetadata,
  observe?: Observe,
): Promise<T> {
  const config = txConfig(options, metadata);
  /** Plans (EXPLAIN) each statement in a fresh transaction; tells `observe` of those it planned. */
  const planFresh = async (statements: [string, Record<string, unknown>][]) => {
    const fresh = new FreshTransaction(driver, database, config);
    try {
      for (const [cypher, params] of statements) {
        if (!(await fresh.run(`EXPLAIN ${cypher}`, params))) return;
        observe?.(cypher, false);
      }
    } finally {
      await fresh.close();
    }
  };
  const session = driver.session({ database, defaultAccessMode: neo4j.session.WRITE });
  try {
    const tx = session.beginTransaction(config);
    try {
      const stats: QueryStats = { queries: 0 };
      /** Whether the rehearsal's transaction has changed anything yet. */
      const state: TxState = { changed: false };
      /** The statements planned as a fresh transaction sends them (before the first change), or to be. */
      const planned = new Set<string>();
      const unit = async <V>(work: (run: Run) => Promise<V>, reading: boolean): Promise<V> => {
        const beside = reading ? new FreshTransaction(driver, database, config) : undefined;
        /** A write's statements up to its first change, planned as a fresh transaction sends them once it is done. */
        const mine: [string, Record<string, unknown>][] = [];
        let changedHere = false;
        const send = async (cypher: string, params: Record<string, unknown>) => {
          if (!state.changed) planned.add(cypher);
          else if (!changedHere && !planned.has(cypher)) {
            planned.add(cypher);
            if (!beside) mine.push([cypher, params]);
            else if (await beside.run(cypher, params)) observe?.(cypher, false);
          }
          const result = await tx.run(cypher, params);
          if (result.summary.counters.containsUpdates()) changedHere = true;
          return result;
        };
        try {
          const value = await work(counted(stats, send, undefined, observe, state));
          if (mine.length > 0) await planFresh(mine);
          return value;
        } finally {
          await beside?.close();
        }
      };
      const db: Executor = {
        stats,
        read: (w) => unit(w, true),
        readOne: (w) => unit(w, true),
        readLatest: async (w) => ({ value: await unit(w, true), bookmarks: [] }),
        write: (w) => unit(w, false),
        afterCommit() {
          // never committed
        },
        forRequest: () => db,
      };
      return await work(db);
    } finally {
      if (tx.isOpen()) await tx.rollback().catch(() => {});
    }
  } finally {
    await session.close();
  }
}

/** A fresh transaction beside a rehearsal's (begun at its first statement), rolled back when closed. */
class FreshTransaction {
  private session: Session | undefined;
  private tx: Transaction | undefined;
  private failed = false;

  constructor(
    private readonly driver: Driver,
    private readonly database: string | undefined,
    private readonly config: ReturnType<typeof txConfig>,
  ) {}

  /**
   * Sends `cypher`; false when it failed. A failure here only (it runs on what is committed, not on the rehearsal's
   * own writes) ends this transaction's part, and the rest is planned by the requests after ready; the database away
   * fails the rehearsal.
   */
  async run(cypher: string, params: Record<string, unknown>): Promise<boolean> {
    if (this.failed) return false;
    try {
      this.session ??= this.driver.session({
        database: this.database,
        defaultAccessMode: neo4j.session.WRITE,
      });
      this.tx ??= this.session.beginTransaction(this.config);
      await this.tx.run(cypher, params);
      return true;
    } catch (error) {
      if (isUnavailable(error)) throw error;
      this.failed = true;
      return false;
    }
  }

  async close() {
    if (this.tx?.isOpen()) await this.tx.rollback().catch(() => {});
    await this.session?.close();
  }
}
