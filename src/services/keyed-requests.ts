// Requests under an Idempotency-Key (IETF draft "The Idempotency-Key HTTP Header Field"; Stripe's behaviour), from
// the door's side: who a key belongs to, requests with one key taking turns in memory, the stored answer replayed
// to its owner, and the bounds that keep keys from being turned into a weapon.
//
// - A key belongs to its tenant AND the token's subject: another caller sending the same key has another key.
// - It is looked up at the door, after authentication, authorization, admission and (GraphQL) the operation's cost
//   check, like a fresh request: a caller not allowed the operation gets its own refusal, never the stored answer.
// - Requests with one key at once take turns in this process, in memory: the first looks the key up and, when it
//   has no answer yet, runs; the others wait for it without holding a database connection (nor a body of their
//   own: theirs is the same as the first's, byte for byte, or they are refused at once), then get its stored
//   answer. Only an instance's first request per key reaches the database, where the key's uniqueness constraint
//   orders instances. A request whose body differs from the one ahead reads the key's stored answer: it is replayed
//   when it is this request's, else the request is refused (idempotency_key_reused).
// - Stored answers are bounded (IDEMPOTENCY_LIMITS.maxAnswerBytes): a keyed write whose answer is larger is rolled
//   back and refused (idempotency_answer_too_large); nothing is written, nothing stored.
// - A tenant holds at most maxKeysPerTenant keys and maxBytesPerTenant bytes of stored answers (the ledger in
//   db/idempotency-records.ts); past either, a new key is refused (idempotency_keys_exhausted, 429) until keys expire.

import type { Executor } from '../db/executor.js';
import { type IdempotencyRecord, type KeyOwner, readIdempotencyState } from '../db/idempotency-records.js';
import { refuse } from '../errors.js';

export interface IdempotencyLimits {
  maxAnswerBytes: number;
  maxKeysPerTenant: number;
  maxBytesPerTenant: number;
  maxWaitingPerTenant: number;
  waitMs: number;
}

/** The defaults; a deployment may set the per-tenant caps (IDEMPOTENCY_TENANT_MAX_KEYS, IDEMPOTENCY_TENANT_MAX_MB). */
export const IDEMPOTENCY_LIMITS: IdempotencyLimits = {
  /** Largest answer stored under a key (a declaration's 1,000 allowed values of 1 KB fit). */
  maxAnswerBytes: 2 * 1024 * 1024,
  /** Keys one tenant may hold at once (each kept 24 h). */
  maxKeysPerTenant: 10_000,
  /** Bytes of stored answers one tenant may hold at once. */
  maxBytesPerTenant: 64 * 1024 * 1024,
  /** Requests of one tenant waiting, in this process, for another request with their key. */
  maxWaitingPerTenant: 256,
  /** The longest a request waits for another with its key before it is refused (storage_busy, retry). */
  waitMs: 30_000,
};

/** A stored answer, as it is sent again. */
export interface StoredAnswer {
  status: number;
  contentType: string;
  body: string;
}

interface InFlight {
  fingerprint: string;
  /** The first request's body: requests waiting on the key send the same one and keep no copy of their own. */
  body: unknown;
  /** Resolves when the request ends: with the answer stored under the key, or undefined when none was. */
  done: Promise<StoredAnswer | undefined>;
}

const reused = () =>
  refuse(
    'idempotency_key_reused',
    'This Idempotency-Key was sent with another request (method, path or body); use a new key for a new request.',
  );

/** A stored answer, refused (idempotency_key_reused) when it was stored for another request than this one. */
export function answerFor(fingerprint: string, record: IdempotencyRecord): StoredAnswer {
  if (record.fingerprint !== fingerprint) throw reused();
  return { status: record.status, contentType: record.contentType, body: record.body };
}

/** The live record of a key (null: none, or expired), read on the request's executor. */
export async function storedRecordOf(db: Executor, owner: KeyOwner): Promise<IdempotencyRecord | null> {
  return (await db.readOne((run) => readIdempotencyState(run, owner))).record;
}

/** What the door does next: send a stored answer again, or run the request with its key claimed by its write. */
export type KeyedStart =
  | { replay: StoredAnswer }
  | {
      replay?: undefined;
      /** The body to run with (a waiter's is the first request's, the same bytes). */
      body: unknown;
      /**
       * Called once the request has ended, with the answer its write stored under the key (the requests waiting for
       * it get that answer), or with none (the next one runs). Later calls do nothing.
       */
      end: (stored?: StoredAnswer) => void;
    };

export class KeyedRequests {
  private readonly inFlight = new Map<string, InFlight>();
  private readonly waiting = new Map<string, number>();

  constructor(private readonly limits: IdempotencyLimits = IDEMPOTENCY_LIMITS) {}

  /** Requests waiting for another with their key, in this process (for a test or a gauge). */
  get waitingNow() {
    let n = 0;
    for (const count of this.waiting.values()) n += count;
    return n;
  }

  /**
   * Takes the key's turn for this request: waits (in memory) while another request with the key runs here, then
   * looks the key up. Returns its stored answer, or leaves the request to run (the caller sets the scope that makes
   * its write claim the key, and calls `end` when its answer has gone).
   */
  async start(db: Executor, owner: KeyOwner, fingerprint: string, body: unknown): Promise<KeyedStart> {
    const id = `${owner.tenant}\u0000${owner.subject}\u0000${owner.key}`;
    let sent = body;
    for (let ahead = this.inFlight.get(id); ahead; ahead = this.inFlight.get(id)) {
      if (ahead.fingerprint !== fingerprint) {
        // Another request ahead: this one is a reuse of the key, unless the key's stored answer is this request's
        // (the one ahead is then a reuse being refused, not the key's first request): an exact resend arriving while
        // another request with its key was being looked up was refused.
        const record = await storedRecordOf(db, owner);
        if (record?.fingerprint === fingerprint) return { replay: answerFor(fingerprint, record) };
        throw reused();
      }
      sent = ahead.body;
      const stored = await this.waitFor(owner.tenant, ahead);
      if (stored) return { replay: stored };
    }
    let end!: (stored?: StoredAnswer) => void;
    let claiming = false;
    const done = new Promise<StoredAnswer | undefined>((resolve) => {
      end = (stored) => {
        if (this.inFlight.get(id)?.done === done) this.inFlight.delete(id);
        if (claiming) {
          claiming = false;
          this.claiming(owner.tenant, -1);
        }
        resolve(stored);
      };
    });
    this.inFlight.set(id, { fingerprint, body: sent, done });
    try {
      const { record, usage } = await db.readOne((run) => readIdempotencyState(run, owner));
      if (record) {
        const replay = answerFor(fingerprint, record);
        end(replay);
        return { replay };
      }
      // (keys being claimed here count too: requests checked at once would each find the last key free)
      const keys = usage.keys + (this.claims.get(owner.tenant) ?? 0);
      if (keys >= this.limits.maxKeysPerTenant || usage.bytes >= this.limits.maxBytesPerTenant) {
        throw refuse(
          'idempotency_keys_exhausted',
          `This tenant holds ${keys.toLocaleString('en-US')} Idempotency-Keys with ${usage.bytes.toLocaleString('en-US')} bytes of stored answers; at most ${this.limits.maxKeysPerTenant.toLocaleString('en-US')} keys and ${this.limits.maxBytesPerTenant.toLocaleString('en-US')} bytes are kept (24 hours each). Send the request without a key, or later.`,
          3600,
        );
      }
      claiming = true;
      this.claiming(owner.tenant, 1);
      return { body: sent, end };
    } catch (e) {
      end();
      throw e;
    }
  }

  /** New keys of `tenant` being claimed by requests of this process (not yet in its ledger). */
  private readonly claims = new Map<string, number>();

  private claiming(tenant: string, by: number) {
    const n = (this.claims.get(tenant) ?? 0) + by;
    if (n > 0) this.claims.set(tenant, n);
    else this.claims.delete(tenant);
  }

  /** Waits for the request ahead to end; its stored answer, if it stored one. */
  private async waitFor(tenant: string, ahead: InFlight): Promise<StoredAnswer | undefined> {
    const waiting = this.waiting.get(tenant) ?? 0;
    if (waiting >= this.limits.maxWaitingPerTenant) {
      throw refuse(
        'tenant_busy',
        `${waiting} requests of this tenant are waiting for others with their Idempotency-Key; try again shortly.`,
        1,
      );
    }
    this.waiting.set(tenant, waiting + 1);
    let timer: NodeJS.Timeout | undefined;
    try {
      const late = Symbol('late');
      const outcome = await Promise.race([
        ahead.done,
        new Promise<typeof late>((resolve) => {
          timer = setTimeout(() => resolve(late), this.limits.waitMs);
        }),
      ]);
      if (outcome === late) {
        throw refuse(
          'storage_busy',
          'Another request with this Idempotency-Key is still running; try again shortly.',
          1,
        );
      }
      return outcome;
    } finally {
      clearTimeout(timer);
      const left = (this.waiting.get(tenant) ?? 1) - 1;
      if (left > 0) this.waiting.set(tenant, left);
      else this.waiting.delete(tenant);
    }
  }
}
