// Registers a REST route from its entry in the contract (schemas.ts): the path comes from the document, and the
// params, query and body are checked against its schemas before the handler runs, each failure refused with the
// reason its field names (invalid_field unless the contract says otherwise).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { type AppError, refuse } from '../errors.js';
import { replayed, takeKeyedTurn } from '../http/idempotency-key.js';
import { assertOperator } from '../resolvers/admin.js';
import { assertPlatform } from '../resolvers/dashboards.js';
import { GUID_SHAPE } from '../resolvers/feed-filter.js';
import { guidParameters } from './route-table/fields.js';
import { type RouteDoc, refusals } from './schemas.js';

type Part<S> = S extends z.ZodType ? z.output<S> : undefined;

export interface Input<R extends RouteDoc> {
  params: Part<R['params']>;
  query: Part<R['query']>;
  /** As sent when the resolver checks it (bodyCheckedByResolver). */
  body: R['bodyCheckedByResolver'] extends true ? unknown : Part<R['body']>;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function refusalFor(schema: z.ZodType, value: unknown, issues: z.core.$ZodIssue[], part: string): AppError {
  const unknownKeys = issues.find((i) => i.code === 'unrecognized_keys');
  if (unknownKeys) return refuse('unknown_field', `Unknown field "${unknownKeys.keys[0]}".`);
  const issue = issues[0] as z.core.$ZodIssue;
  const field = issue.path[0];
  if (field === undefined || !isObject(value)) {
    return part === 'body'
      ? refuse('invalid_body', 'The request body must be a JSON object.')
      : refuse('invalid_field', `The ${part} is malformed.`);
  }
  const shape = (schema as z.ZodObject).shape as Record<PropertyKey, z.ZodType> | undefined;
  // The refusal of the innermost field along the issue's path that states one (a list inside a list item has its
  // own), else the top field's.
  const meta =
    innermostRefusal(shape?.[field], issue.path.slice(1)) ??
    (shape?.[field] ? refusals.get(shape[field]) : undefined);
  const given = value[field as string];
  if ((given === undefined || given === null) && meta?.missing) {
    return refuse(
      meta.missing,
      meta.missing === 'empty_value' ? `"${String(field)}" is empty.` : `"${String(field)}" is required.`,
    );
  }
  if (issue.code === 'too_big' && issue.origin === 'array' && meta?.tooMany) {
    return refuse(meta.tooMany, `"${String(field)}" has more than ${issue.maximum} entries.`);
  }
  const where = part === 'query' ? 'Query parameter' : part === 'params' ? 'Path parameter' : 'Field';
  // A pattern's own text is no help to a person: a field without a message of its own is said not to match its
  // documented form (the OpenAPI document states it).
  const detail =
    Array.isArray(given) && part === 'query' && !isList(shape?.[field])
      ? 'must be given once'
      : issue.code === 'invalid_format' && issue.format === 'regex' && /\/.*\//.test(issue.message)
        ? 'is not in the form the API documents for it (/openapi.json)'
        : issue.message;
  return refuse(meta?.reason ?? 'invalid_field', `${where} "${String(field)}": ${detail}.`);
}

/** The refusal stated by the innermost schema along `path` below `schema` (object fields and list items). */
function innermostRefusal(schema: z.ZodType | undefined, path: readonly PropertyKey[]) {
  let found: ReturnType<typeof refusals.get>;
  let current = schema;
  for (const step of path) {
    let def = current?.def as
      | { type: string; innerType?: z.ZodType; element?: z.ZodType; shape?: Record<PropertyKey, z.ZodType> }
      | undefined;
    while (def?.type === 'optional' || def?.type === 'nullable') def = def.innerType?.def as typeof def;
    current = def?.type === 'array' ? def.element : def?.type === 'object' ? def.shape?.[step] : undefined;
    if (current === undefined) break;
    if (def?.type === 'array') continue;
    found = refusals.get(current) ?? found;
  }
  return found;
}

/** The first key of `value` a strict object schema does not know (found without building any issue list). */
function firstUnknownKey(schema: z.ZodType, value: unknown): string | undefined {
  const def = (schema as z.ZodObject).def;
  if (def?.type !== 'object' || def.catchall?._zod.def.type !== 'never' || !isObject(value)) return undefined;
  for (const key in value) if (!Object.hasOwn(def.shape, key)) return key;
  return undefined;
}

function check(schema: z.ZodType | undefined, value: unknown, part: string) {
  if (schema === undefined) return undefined;
  // A body with a million unknown keys is refused at the first one, not after zod lists them all.
  const unknownKey = firstUnknownKey(schema, value);
  if (unknownKey !== undefined) throw refuse('unknown_field', `Unknown field "${unknownKey}".`);
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw refusalFor(schema, value, result.error.issues, part);
}

/** True when `schema` (optional or not) is a list. */
function isList(schema: z.ZodType | undefined): boolean {
  let def = schema?.def as { type: string; innerType?: z.ZodType } | undefined;
  while (def?.type === 'optional' || def?.type === 'nullable') def = def.innerType?.def as typeof def;
  return def?.type === 'array';
}

/**
 * A query parameter documented as a list may be given once or repeated (`where=a&where=b`); given once, the query
 * string parser makes it a string, here a list of one.
 */
function withLists(schema: z.ZodObject | undefined, query: unknown): unknown {
  if (!schema || !isObject(query)) return query;
  let listed: Record<string, unknown> | undefined;
  for (const [field, fieldSchema] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
    if (typeof query[field] === 'string' && isList(fieldSchema)) {
      listed ??= { ...query };
      listed[field] = [query[field]];
    }
  }
  return listed ?? query;
}

/** Longest part of a path segment a refusal quotes back. */
const QUOTED_SEGMENT_CHARS = 64;

/**
 * Path parameters the route table declares as guids hold guids: a segment that is not guid-shaped (a type's name
 * where its guid goes, or a path one letter off that another route's `{guid}` caught) resolves nothing, so it is
 * refused with the route's reason for an unknown guid, and the message says what was wrong and what to send.
 */
function checkGuidShapes(schema: z.ZodObject | undefined, params: unknown) {
  if (schema === undefined || !isObject(params)) return params;
  for (const [field, fieldSchema] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
    const meta = guidParameters.get(fieldSchema);
    const segment = params[field];
    if (meta === undefined || typeof segment !== 'string' || GUID_SHAPE.test(segment)) continue;
    const whole = segment.length <= QUOTED_SEGMENT_CHARS;
    const quoted = whole ? segment : `${segment.slice(0, QUOTED_SEGMENT_CHARS)}…`;
    throw refuse(
      meta.unknown,
      `${JSON.stringify(quoted)} is not a guid: this path takes ${meta.takes}. ${meta.instead(whole ? segment : null)}`,
    );
  }
  return params;
}

/** The checked params, query and body of a request, in that order (a bad path is reported before a bad body). */
export function inputOf<R extends RouteDoc>(doc: R, req: FastifyRequest): Input<R> {
  const body = req.body === undefined && doc.bodyOptional ? {} : req.body;
  return {
    params: checkGuidShapes(doc.params, check(doc.params, req.params, 'params')),
    query: check(doc.query, withLists(doc.query, req.query), 'query'),
    body: doc.bodyCheckedByResolver ? body : check(doc.body, body, 'body'),
  } as Input<R>;
}

/** Registers `doc` on `app`; the handler gets the request's checked input. */
export function route<R extends RouteDoc>(
  app: FastifyInstance,
  doc: R,
  handler: (req: FastifyRequest, reply: FastifyReply, input: Input<R>) => Promise<unknown>,
) {
  app.route({
    method: doc.method,
    url: doc.path,
    // Read by the admission (app/admission.ts) and the answer's checks (app/http-hooks.ts).
    config: { budget: doc.budget },
    handler: async (req, reply) => {
      // Who may call comes before what they sent: without the right, any body is 403 (the resolvers check again).
      if (doc.auth === 'operator') assertOperator(req.ctx);
      else if (doc.auth === 'platform') assertPlatform(req.ctx);
      // Only then a stored answer, if it was sent with its Idempotency-Key (a caller not allowed gets its own 403).
      const stored = await takeKeyedTurn(req, reply);
      if (stored) return replayed(reply, stored);
      return handler(req, reply, inputOf(doc, req));
    },
  });
}
