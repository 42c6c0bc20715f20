// How the service behaves while Neo4j is unreachable or starting (issue #17): answer fast, never wait on driver
// retries. One circuit breaker per driver (cockatiel), shared by every request:
//
//   closed     statements run; a transaction failing on a transient error (deadlock, lock timeout) is retried with
//              backoff; one failing because the database is unreachable is retried once at most, and only when
//              its commit was not sent (its outcome is then known: not applied).
//   open       after BREAKER_FAILURES consecutive unavailability failures: every statement is refused at once with
//              503 storage_unavailable and Retry-After, without touching the driver.
//   half-open  HALF_OPEN_AFTER_MS later, one statement is let through to probe the database; the others wait for
//              its outcome (bounded by the connect timeout). Its success closes the breaker and lets them run; its
//              failure opens it again and refuses them.
//
// The driver's own retry loop (executeRead/executeWrite, up to maxTransactionRetryTime) is not used: it retries an
// unreachable database with backoff, and a request would wait through all of it for its 503.
import { BrokenCircuitError, CircuitState, ConsecutiveBreaker, circuitBreaker, handleWhen } from 'cockatiel';
import neo4j, { type Driver, Neo4jError } from 'neo4j-driver';
import { AppError, refuse } from '../errors.js';

export const BREAKER_FAILURES = 3;
export const HALF_OPEN_AFTER_MS = 1_000;
/** Transient failures (deadlocks, lock timeouts) are retried for up to this long, as the driver did. */
export const TRANSIENT_RETRY_MS = 5_000;

const UNAVAILABLE_CODES = new Set(['ServiceUnavailable', 'SessionExpired']);

/** The database cannot be reached, or is not (yet) serving: what the breaker counts. */
export function isUnavailable(error: unknown): boolean {
  if (!(error instanceof Neo4jError)) return false;
  return (
    UNAVAILABLE_CODES.has(error.code) ||
    error.code.startsWith('Neo.TransientError.General.DatabaseUnavailable') ||
    error.code === 'Neo.ClientError.Database.DatabaseNotFound'
  );
}

/**
 * The database away, as the driver says it (isUnavailable) or as the refusal the service answers with meanwhile
 * (storage_unavailable: unreachable, or the service warming up on it): what the background jobs wait out.
 */
export function isStorageAway(error: unknown): boolean {
  return isUnavailable(error) || (error instanceof AppError && error.reason === 'storage_unavailable');
}

/** A failure worth running the whole transaction again for: transient, and not the database being away. */
const isTransient = (error: unknown) => neo4j.isRetryableError(error as Error) && !isUnavailable(error);

export interface StoragePolicy {
  /**
   * Runs one transaction (`attempt`, called again for each retry) under the breaker, with the retries above.
   * `attempt` calls `committing()` just before it sends its commit: after that, an unavailability failure is not
   * retried (the write may have been applied). Reads never call it.
   */
  run<T>(attempt: (committing: () => void) => Promise<T>): Promise<T>;
  readonly state: 'closed' | 'open' | 'half-open';
  /** Seconds a client should wait before retrying (Retry-After). */
  retryAfterSeconds(): number;
  /**
   * Calls `listener` whenever a transaction finds the database unreachable (readiness.ts listens); returns what
   * stops it.
   */
  onUnavailable(listener: () => void): () => void;
}

const policies = new WeakMap<Driver, StoragePolicy>();

/** The policy of a driver: one breaker for every executor over it. */
export function storagePolicyOf(driver: Driver): StoragePolicy {
  let policy = policies.get(driver);
  if (!policy) {
    policy = createStoragePolicy();
    policies.set(driver, policy);
  }
  return policy;
}

export function createStoragePolicy(
  options: { failures?: number; halfOpenAfterMs?: number; transientRetryMs?: number } = {},
): StoragePolicy {
  const halfOpenAfterMs = options.halfOpenAfterMs ?? HALF_OPEN_AFTER_MS;
  const transientRetryMs = options.transientRetryMs ?? TRANSIENT_RETRY_MS;
  const breaker = circuitBreaker(handleWhen(isUnavailable), {
    halfOpenAfter: halfOpenAfterMs,
    breaker: new ConsecutiveBreaker(options.failures ?? BREAKER_FAILURES),
  });
  let openedAt = 0;
  breaker.onBreak(() => {
    openedAt = Date.now();
  });
  const unavailableListeners = new Set<() => void>();
  const retryAfterSeconds = () => Math.max(1, Math.ceil((openedAt + halfOpenAfterMs - Date.now()) / 1000));

  /** One transaction, retried while transient (backoff from 20 ms, doubling to 1 s) within transientRetryMs. */
  const withRetries = async <T>(attempt: (committing: () => void) => Promise<T>): Promise<T> => {
    const started = Date.now();
    let unavailableRetried = false;
    for (let n = 0; ; n += 1) {
      let reached = false;
      try {
        return await attempt(() => {
          reached = true;
        });
      } catch (error) {
        if (isUnavailable(error)) for (const listener of unavailableListeners) listener();
        if (isTransient(error) && Date.now() - started < transientRetryMs) {
          const delay = Math.min(1_000, 20 * 2 ** n) * (0.8 + Math.random() * 0.4);
          await new Promise((r) => setTimeout(r, delay));
          continue;
        }
        // A pooled connection the database dropped (restarted) fails on first use: one immediate retry on a new
        // connection, when no commit was sent, before counting it as the database being away.
        if (isUnavailable(error) && !reached && !unavailableRetried) {
          unavailableRetried = true;
          continue;
        }
        throw error;
      }
    }
  };

  return {
    async run(attempt) {
      try {
        return await breaker.execute(() => withRetries(attempt));
      } catch (error) {
        if (error instanceof BrokenCircuitError) throw refuse.storageUnavailable(retryAfterSeconds());
        throw error;
      }
    },
    get state() {
      const s = breaker.state;
      return s === CircuitState.Closed ? 'closed' : s === CircuitState.HalfOpen ? 'half-open' : 'open';
    },
    retryAfterSeconds,
    onUnavailable(listener) {
      unavailableListeners.add(listener);
      return () => unavailableListeners.delete(listener);
    },
  };
}
