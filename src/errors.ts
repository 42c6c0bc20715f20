// Refusals: one error type carrying the spec's reason code and HTTP status, rendered by REST and GraphQL.

/** Every refusal reason, in the order the README table groups them (spec, contract, project). */
export const REASONS = [
  // spec
  'attribute_def_already_exists',
  'attribute_def_withdrawn',
  'type_instances_managed',
  'too_many_attribute_defs',
  'too_many_allowed_values',
  'base_type_not_owner',
  'unknown_entity_type',
  'unknown_value_type',
  'invalid_cardinality',
  'allowed_values_not_supported',
  'allowed_ref_type_not_supported',
  'allowed_ref_type_required',
  'filterable_not_supported',
  'referent_not_found',
  'ref_type_mismatch',
  'empty_value',
  'invalid_page_size',
  'invalid_cursor',
  'invalid_bookmark',
  'request_too_large',
  // contract
  'unauthenticated',
  'not_authorized',
  // project (documented in the README's reason table)
  'invalid_json',
  'invalid_body',
  'invalid_field',
  'unknown_field',
  'unsupported_media_type',
  'request_timeout',
  'name_too_long',
  'not_found',
  'method_not_allowed',
  'not_acceptable',
  'type_not_user_defined',
  'invalid_idempotency_key',
  'idempotency_key_reused',
  'idempotency_key_not_supported',
  'type_name_taken',
  'type_referenced',
  'managed_type_blocked',
  'invalid_allowed_value',
  'duplicate_allowed_value',
  'invalid_default_value',
  'default_value_not_allowed',
  'attribute_def_not_found',
  'attribute_defs_too_large',
  'type_not_creatable',
  'unknown_attribute',
  'invalid_value',
  'value_not_allowed',
  'required_value_missing',
  'too_many_identifiers',
  'invalid_filter',
  'too_many_filters',
  'too_many_filter_guids',
  'attribute_not_filterable',
  'concurrent_change',
  'purge_already_running',
  'invalid_model',
  'model_too_large',
  'invalid_url',
  'uri_too_long',
  'invalid_request',
  'headers_too_large',
  'json_too_deep',
  'json_too_large',
  'server_busy',
  // GraphQL operation bounds (schema/armor.ts, schema/limits.ts)
  'query_too_deep',
  'too_many_aliases',
  'too_many_tokens',
  'too_many_directives',
  'query_too_costly',
  'result_too_large',
  'query_timeout',
  'operation_not_supported',
  'storage_unavailable',
  'storage_busy',
  'internal_error',
] as const;

export type Reason = (typeof REASONS)[number];

export class AppError extends Error {
  constructor(
    readonly reason: Reason,
    readonly status: number,
    message: string,
    /** Seconds a client should wait before trying again (a Retry-After header), on a 503. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const refuse = {
  badRequest: (reason: Reason, message: string) => new AppError(reason, 400, message),
  notFound: (reason: Reason, message: string) => new AppError(reason, 404, message),
  conflict: (reason: Reason, message: string) => new AppError(reason, 409, message),
  unauthenticated: (message = 'A valid bearer token is required.') =>
    new AppError('unauthenticated', 401, message),
  notAuthorized: (message = 'You are not allowed to do this.') =>
    new AppError('not_authorized', 403, message),
  storageBusy: () =>
    new AppError(
      'storage_busy',
      503,
      'The database is too busy to take this request now; try again shortly.',
      1,
    ),
  storageUnavailable: (retryAfterSeconds = 1, message = 'The database is unreachable; try again shortly.') =>
    new AppError('storage_unavailable', 503, message, retryAfterSeconds),
};

export const isAppError = (e: unknown): e is AppError => e instanceof AppError;

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
 * SERVICE_UNAVAILABLE when the service or its database cannot take it now, INTERNAL_SERVER_ERROR for a fault, and
 * BAD_USER_INPUT for every other refusal of what the caller sent. `extensions.reason` stays the precise reason.
 */
function graphqlCode(reason: Reason, status: number): string {
  if (reason === 'internal_error') return 'INTERNAL_SERVER_ERROR';
  if (OPERATION_BOUND_REASONS.has(reason)) return 'GRAPHQL_VALIDATION_FAILED';
  if (status === 401) return 'UNAUTHENTICATED';
  if (status === 403) return 'FORBIDDEN';
  if (status >= 500) return 'SERVICE_UNAVAILABLE';
  return 'BAD_USER_INPUT';
}

/** What a refusal carries in a GraphQL error's `extensions`: its reason and its GraphQL code. */
export const refusalExtensions = (reason: Reason, status = 400) => ({
  reason,
  code: graphqlCode(reason, status),
});
