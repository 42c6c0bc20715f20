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
  'concurrent_change',
  'purge_already_running',
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
    ),
  storageUnavailable: () =>
    new AppError('storage_unavailable', 503, 'The database is unreachable; try again shortly.'),
};

export const isAppError = (e: unknown): e is AppError => e instanceof AppError;
