// The pieces the REST routes are made of: the common parameters (guid, dry_run, page_size and cursor, log times),
// and what a route declares (RouteDoc). How a field's failure maps to its reason, and names as a document states
// them, are the contract's (contract/refusing-fields.ts).

import { z } from 'zod';
import { refusing } from '../../contract/refusing-fields.js';
import { guid } from '../../contract/wire.js';
import type { Reason } from '../../errors.js';
import type { DoorBudget } from '../../model/doors.js';
import { PAGES } from '../../model/pages.js';
import { positiveUpTo } from '../decimal.js';

// ——— Inputs ———

/**
 * What a guid path parameter refers to: the reason the route gives for a guid that resolves nothing (the spec's,
 * kept for one that is not even guid-shaped) and the words that tell a caller what to send instead.
 */
export interface GuidParameter {
  unknown: Reason;
  /** What the path takes, in words ("an entity type's guid"). */
  takes: string;
  /** Where to go instead, given the segment sent (null when too long to repeat). */
  instead: (segment: string | null) => string;
}
/** The guid path parameters of the route table, read by the router (rest/route.ts). */
export const guidParameters = z.registry<GuidParameter>();

const guidParameter = (what: string, meta: GuidParameter) => {
  const schema = guid(what);
  guidParameters.add(schema, meta);
  return schema;
};

/** A path parameter holding an entity type's guid. */
export const typeGuidParam = () =>
  guidParameter('Entity type guid.', {
    unknown: 'unknown_entity_type',
    takes: "an entity type's guid",
    // A type's name in a guid's place is the usual slip: the by-name route answers the type and its guid.
    instead: (segment) =>
      `Read the type by its name with GET /entities/types/by-name/${segment === null ? '{name}' : encodeURIComponent(segment)}, and use its guid.`,
  });
/** A path parameter holding an entity's guid. */
export const entityGuidParam = () =>
  guidParameter('Entity guid.', {
    unknown: 'not_found',
    takes: "an entity's guid",
    instead: () =>
      'Entity types are listed at GET /entities/types, and the entities of a type at GET /entities?type_guid={guid}.',
  });

export const guidParams = z.object({ guid: typeGuidParam() });
/** A flag of the query: `true`, `1` or empty turn it on; `false`, `0` or leaving it out, off. */
export const queryFlag = (description: string) =>
  refusing(
    z
      .enum(['true', 'false', '1', '0', ''])
      .optional()
      .describe(description)
      .transform((v) => v === 'true' || v === '1' || v === ''),
    { reason: 'invalid_field' },
  );

export const dryRun = refusing(
  z
    .enum(['true', 'false', '1', '0', ''])
    .optional()
    .describe('`true` (or `1`, or empty) validates and reports without writing.')
    // What the handler gets: whether this is a dry run (the document shows the accepted spellings).
    .transform((v) => v === 'true' || v === '1' || v === ''),
  { reason: 'invalid_field' },
);
export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'OPTIONS';

export interface Answer {
  description: string;
  /** DATA of the success envelope; absent for answers that are not the JSON envelope. */
  data?: z.ZodType;
  /** A whole body that is not the envelope (metrics text, the OpenAPI document). */
  raw?: { contentType: string; schema: z.ZodType };
  /** The same answer in another media type the client may ask for with Accept. */
  alternative?: { contentType: string; schema: z.ZodType };
}

export interface RouteDoc {
  method: Method;
  /** Fastify path pattern (`:param`); the document shows it as `{param}`. */
  path: string;
  operationId: string;
  tag:
    | 'Entity types'
    | 'Attributes'
    | 'History'
    | 'Model as code'
    | 'Entities'
    | 'Platform'
    | 'Operations'
    | 'GraphQL';
  summary: string;
  description?: string;
  /**
   * `bearer`: a user token; `platform`: a token with role platform; `operator`: an operator's token (both checked
   * before the input, so a caller without the right gets 403 whatever it sends); `metrics`: operator or
   * METRICS_TOKEN; `none`.
   */
  auth: 'bearer' | 'platform' | 'operator' | 'metrics' | 'none';
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodType;
  /** An absent body counts as `{}` (operator calls with nothing to say). */
  bodyOptional?: true;
  /**
   * The resolver checks the body with its own rules and reasons (the GraphQL door sends it the same value): the
   * schema documents it, the router passes it on as sent.
   */
  bodyCheckedByResolver?: true;
  /** Success answers by HTTP status. */
  answers: Record<number, Answer>;
  /** Reasons this route refuses with, beyond those every route may give (see COMMON_REFUSALS). */
  refusals: Reason[];
  /** The body of a refusal, when it is not the plain envelope (`Refusal`). */
  refusalSchema?: z.ZodType;
  /**
   * Conditional requests on a type (rest/conditions.ts): `if-match`, a write that takes If-Match (a stale version
   * is 412 precondition_failed); `if-none-match`, a read that answers with the type's ETag and 304 when
   * If-None-Match names it.
   */
  preconditions?: 'if-match' | 'if-none-match';
  /** What one request may cost at most (model/doors.ts): set from contract/budgets.ts by the route table. */
  budget?: DoorBudget;
}

export const route = <const R extends RouteDoc>(r: R) => r;

export const pageSizeField = refusing(
  z
    .string()
    .regex(new RegExp(positiveUpTo(PAGES.max)), { error: `must be a whole number from 1 to ${PAGES.max}` })
    .optional()
    .describe(`Rows per page, 1 to ${PAGES.max} (default ${PAGES.default}); at most 9 decimal digits.`),
  { reason: 'invalid_page_size' },
);
/** The query of a keyset-paged list: its cursor and page size. */
export const pageQuery = (cursor: string) =>
  z.looseObject({
    cursor: refusing(z.string().optional().describe(cursor), { reason: 'invalid_cursor' }),
    page_size: pageSizeField,
  });
/** Epoch milliseconds, or an RFC 3339 time (UTC or with an offset). */
export const LOG_TIME =
  /^([0-9]{1,15}|[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{1,9})?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9]))$/;
export const LOG_TIME_TEXT = 'Epoch milliseconds, or an RFC 3339 time such as 2026-01-31T12:00:00Z.';
export const LOG_TIME_ERROR = 'must be epoch milliseconds or an RFC 3339 time such as 2026-01-31T12:00:00Z';

/** Text that parses as a JSON object (GET /graphql's variables and extensions). */
export const jsonObjectText = z
  .string()
  .refine((text) => {
    try {
      const value: unknown = JSON.parse(text);
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    } catch {
      return false;
    }
  }, 'must be the JSON text of an object')
  // The document shows it as a parameter whose content is a JSON object (OpenAPI `content`, not `schema`).
  .meta({ contentMediaType: 'application/json', contentSchema: { type: 'object' } });
