// The headers a tenant's write takes: which requests take an Idempotency-Key and what the key looks like, the
// X-Change-Reason, and the mark of a replayed answer. The one statement the service's hooks, the OpenAPI document
// and the CLI all read (http/idempotency-key.ts keeps the keys; this is only the wire's part).

export const IDEMPOTENCY_HEADER = 'idempotency-key';
/** Why the caller makes a write's change (recorded with it); taken by every write of a tenant. */
export const CHANGE_REASON_HEADER = 'x-change-reason';
export const REPLAYED_HEADER = 'idempotent-replayed';
export const IDEMPOTENCY_KEY_MAX = 255;

/** A key as sent: quoted (a structured-field string without escapes) or bare; the OpenAPI document's pattern. */
export const IDEMPOTENCY_KEY_PATTERN = `^("[\\x20\\x21\\x23-\\x5B\\x5D-\\x7E]{1,${IDEMPOTENCY_KEY_MAX}}"|[\\x21\\x23-\\x5B\\x5D-\\x7E]{1,${IDEMPOTENCY_KEY_MAX}})$`;

/**
 * Whether a request takes an Idempotency-Key: the writes of tenants (POST, PATCH, DELETE), not operators' routes
 * (/admin). `path` is a route or a request path.
 */
export const takesIdempotencyKey = (method: string, path: string) =>
  isTenantWrite(method, path) && !KEYLESS_WRITES.has(path);

/** Whether a request is a write of a tenant (POST, PATCH, DELETE, not /admin): it takes X-Change-Reason. */
export const isTenantWrite = (method: string, path: string) =>
  (method === 'POST' || method === 'PATCH' || method === 'DELETE') && !path.startsWith('/admin');

/**
 * Writes that take no Idempotency-Key (one sent is refused, idempotency_key_not_supported): applying a model runs
 * many transactions, which one stored answer cannot stand for, and is idempotent by itself (applying the same
 * document again changes nothing).
 */
export const KEYLESS_WRITES: ReadonlySet<string> = new Set(['/entities/model/apply']);
