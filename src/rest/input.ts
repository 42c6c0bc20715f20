// Shape checks for REST input (JSON types of fields); the rules themselves live in resolvers/.
import { refuse } from '../errors.js';

export type JsonObject = Record<string, unknown>;

export function bodyObject(body: unknown): JsonObject {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw refuse.badRequest('invalid_body', 'The request body must be a JSON object.');
  }
  return body as JsonObject;
}

/** A string field; absent or null gives undefined, another JSON type is refused with invalid_field. */
export function stringField(body: JsonObject, field: string): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw refuse.badRequest('invalid_field', `"${field}" must be a string.`);
  return value;
}

/** A single query-string value; a repeated parameter is refused with the given reason. */
export function queryValue(
  query: unknown,
  name: string,
  reasonIfRepeated: Parameters<typeof refuse.badRequest>[0],
) {
  const value = (query as Record<string, unknown> | undefined)?.[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw refuse.badRequest(reasonIfRepeated, `"${name}" must be given once.`);
  return value;
}
