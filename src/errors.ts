// Refusals: one error type carrying a refusal reason (docs/api.md#refusal-reasons) and its HTTP status, rendered by
// REST and GraphQL.

/**
 * Every refusal reason and the HTTP status it is answered with, in the order docs/api.md#refusal-reasons groups
 * them (spec, contract, project). The one place a reason's status is decided: `refuse()` and the OpenAPI document
 * read it. GraphQL answers a refusal inside a 200 with `extensions.reason`; the status here is its REST one.
 */
export const REFUSALS = {
  // spec
  attribute_def_already_exists: 409,
  attribute_def_withdrawn: 409,
  type_instances_managed: 409,
  too_many_attribute_defs: 400,
  too_many_allowed_values: 400,
  base_type_not_owner: 400,
  unknown_entity_type: 404,
  unknown_value_type: 400,
  invalid_cardinality: 400,
  allowed_values_not_supported: 400,
  allowed_ref_type_not_supported: 400,
  allowed_ref_type_required: 400,
  filterable_not_supported: 400,
  referent_not_found: 404,
  ref_type_mismatch: 400,
  empty_value: 400,
  invalid_page_size: 400,
  invalid_cursor: 400,
  invalid_bookmark: 400,
  request_too_large: 413,
  // contract
  unauthenticated: 401,
  not_authorized: 403,
  // project (documented in docs/api.md#refusal-reasons)
  invalid_json: 400,
  invalid_unicode: 400,
  invalid_body: 400,
  invalid_field: 400,
  unknown_field: 400,
  unsupported_media_type: 415,
  request_timeout: 408,
  name_too_long: 400,
  not_found: 404,
  method_not_allowed: 405,
  not_acceptable: 406,
  type_not_user_defined: 409,
  invalid_idempotency_key: 400,
  idempotency_key_reused: 422,
  idempotency_key_not_supported: 400,
  invalid_change_reason: 400,
  idempotency_answer_too_large: 422,
  idempotency_keys_exhausted: 429,
  tenant_busy: 429,
  rate_limited: 429,
  type_name_taken: 409,
  name_not_held: 409,
  invalid_precondition: 400,
  precondition_failed: 412,
  type_referenced: 409,
  managed_type_blocked: 409,
  invalid_allowed_value: 400,
  duplicate_allowed_value: 400,
  invalid_default_value: 400,
  default_value_not_allowed: 400,
  attribute_def_not_found: 404,
  attribute_change_not_in_place: 409,
  attribute_defs_too_large: 400,
  defaults_too_large: 400,
  type_not_creatable: 409,
  unknown_attribute: 400,
  invalid_value: 400,
  value_not_allowed: 400,
  required_value_missing: 400,
  too_many_identifiers: 400,
  invalid_filter: 400,
  too_many_filters: 400,
  too_many_filter_guids: 400,
  attribute_not_filterable: 400,
  concurrent_change: 409,
  purge_already_running: 409,
  invalid_model: 400,
  model_too_large: 400,
  model_changed: 409,
  plan_not_applicable: 409,
  tenant_mismatch: 409,
  invalid_url: 400,
  uri_too_long: 414,
  invalid_request: 400,
  headers_too_large: 431,
  json_too_deep: 400,
  json_too_large: 400,
  server_busy: 503,
  // GraphQL operation bounds (schema/armor.ts, schema/limits.ts)
  query_too_deep: 400,
  too_many_aliases: 400,
  too_many_tokens: 400,
  too_many_directives: 400,
  query_too_costly: 400,
  result_too_large: 400,
  query_timeout: 400,
  operation_not_supported: 400,
  storage_unavailable: 503,
  storage_busy: 503,
  internal_error: 500,
} as const satisfies Record<
  string,
  400 | 401 | 403 | 404 | 405 | 406 | 408 | 409 | 412 | 413 | 414 | 415 | 422 | 429 | 431 | 500 | 503
>;

export type Reason = keyof typeof REFUSALS;

/** Every reason, for the schemas that enumerate them. */
export const REASONS = Object.keys(REFUSALS) as [Reason, ...Reason[]];

/** The HTTP status of a refusal reason. */
export const statusOf = (reason: Reason): number => REFUSALS[reason];

/**
 * The longest message a refusal carries, in characters: a message quoting what the request sent (an unknown field's
 * name, a variable's value in GraphQL's own refusals) quotes its first characters only, then `…`: quoted whole, a
 * long name or variable would make the refusal larger than the request (escaped, a variable quoted more than once).
 */
export const MAX_MESSAGE_CHARS = 1_000;

/** `text`, cut to at most `max` characters (the cut marked with `…`). */
export const cutText = (text: string, max: number) =>
  text.length <= max ? text : `${text.slice(0, max - 1)}…`;

/** `message`, cut to MAX_MESSAGE_CHARS. */
export const boundedMessage = (message: string) => cutText(message, MAX_MESSAGE_CHARS);

export class AppError extends Error {
  readonly status: number;
  /** What the refusal says beside its reason (REST: in DATA; GraphQL: in the error's extensions). */
  details?: Record<string, unknown>;
  constructor(
    readonly reason: Reason,
    message: string,
    /** Seconds a client should wait before trying again (a Retry-After header), on a 429 or 503. */
    readonly retryAfterSeconds?: number,
  ) {
    super(boundedMessage(message));
    this.name = 'AppError';
    this.status = REFUSALS[reason];
  }

  /** The same refusal, saying `details` beside its reason. */
  with(details: Record<string, unknown>): this {
    this.details = { ...this.details, ...details };
    return this;
  }
}

/** A refusal: its status comes from REFUSALS; the named ones carry their usual message. */
export const refuse = Object.assign(
  (reason: Reason, message: string, retryAfterSeconds?: number) =>
    new AppError(reason, message, retryAfterSeconds),
  {
    unauthenticated: (message = 'A valid bearer token is required.') =>
      new AppError('unauthenticated', message),
    notAuthorized: (message = 'You are not allowed to do this.') => new AppError('not_authorized', message),
    storageBusy: () =>
      new AppError(
        'storage_busy',
        'The database is too busy to take this request now; try again shortly.',
        1,
      ),
    storageUnavailable: (
      retryAfterSeconds = 1,
      message = 'The database is unreachable; try again shortly.',
    ) => new AppError('storage_unavailable', message, retryAfterSeconds),
  },
);

export const isAppError = (e: unknown): e is AppError => e instanceof AppError;

/** What a write was sent, as an object of fields; anything else (an array, a string, null) is refused. */
export function bodyObject(sent: unknown): Record<string, unknown> {
  if (typeof sent !== 'object' || sent === null || Array.isArray(sent)) {
    throw refuse('invalid_body', 'The request body must be a JSON object.');
  }
  return sent as Record<string, unknown>;
}

/** Refusals of an operation before it runs: its shape is over a bound, or of a kind the schema does not have. */
const OPERATION_BOUND_REASONS: ReadonlySet<Reason> = new Set<Reason>([
  'query_too_deep',
  'too_many_aliases',
  'too_many_tokens',
  'too_many_directives',
  'query_too_costly',
  'operation_not_supported',
]);

/**
 * The GraphQL error code (`extensions.code`) of a refusal, from the codes GraphQL servers and their tools share
 * (Apollo's): GRAPHQL_VALIDATION_FAILED for an operation refused before it runs, UNAUTHENTICATED and FORBIDDEN,
 * SERVICE_UNAVAILABLE when the service or its database cannot take it now (a 503, or a 429: the tenant is over its
 * share), INTERNAL_SERVER_ERROR for a fault, and BAD_USER_INPUT for every other refusal of what the caller sent.
 * `extensions.reason` stays the precise reason.
 */
function graphqlCode(reason: Reason, status: number): string {
  if (reason === 'internal_error') return 'INTERNAL_SERVER_ERROR';
  if (OPERATION_BOUND_REASONS.has(reason)) return 'GRAPHQL_VALIDATION_FAILED';
  if (status === 401) return 'UNAUTHENTICATED';
  if (status === 403) return 'FORBIDDEN';
  if (status >= 500 || status === 429) return 'SERVICE_UNAVAILABLE';
  return 'BAD_USER_INPUT';
}

/** What a refusal carries in a GraphQL error's `extensions`: its reason and its GraphQL code. */
export const refusalExtensions = (reason: Reason, status = 400) => ({
  reason,
  code: graphqlCode(reason, status),
});
