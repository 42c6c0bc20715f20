// The pieces the REST routes are made of: how a field's schema failure maps to a refusal reason, names as the
// document states them, the common parameters (guid, dry_run, page_size and cursor, log times), and what a route
// declares (RouteDoc).

import { z } from 'zod';
import { guid } from '../../contract/wire.js';
import type { Reason } from '../../errors.js';
import type { DoorBudget } from '../../model/doors.js';
import { INVISIBLE, MAX_NAME_LENGTH, nameKey } from '../../model/names.js';
import { PAGES } from '../../model/pages.js';
import { PLATFORM_ATTRIBUTE_NAMES } from '../../model/system-types.js';
import { positiveUpTo } from '../decimal.js';

/**
 * The refusal a field's schema failure maps to: `reason` when the value is wrong, `missing` when absent/null,
 * `tooMany` when a list is longer than its maximum (checked before its elements, so a long list costs nothing).
 */
export interface FieldRefusals {
  reason?: Reason;
  missing?: Reason;
  tooMany?: Reason;
}
export const refusals = z.registry<FieldRefusals>();

/** A field refused with `reason` when malformed (and with `missing` when absent or null, if given). */
export const refusing = <T extends z.ZodType>(schema: T, meta: FieldRefusals): T => {
  refusals.add(schema, meta);
  return schema;
};

/**
 * What a name must look like, for the document only (the service's own checks, with their distinct reasons, are in
 * model/names.ts): once the spaces JavaScript's trim() removes are gone, 1 to 256 characters, the first and last
 * not spaces, no C0/C1 control characters and no invisible or direction-changing ones (those outside the BMP are
 * refused too; the pattern leaves them to the service). Every class is spelled out, so that it means the same to any
 * regex engine (a fuzzer's included).
 */
const NAME_SPACE =
  '\\t\\n\\u000b\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';
/** The invisible and direction-changing characters of the BMP a name may not hold (model/names.ts), as ranges. */
function invisibleRanges(): string {
  const hex = (c: number) => `\\u${c.toString(16).padStart(4, '0')}`;
  const ranges: string[] = [];
  let start: number | null = null;
  for (let code = 0; code <= 0x10000; code += 1) {
    const hidden =
      code < 0x10000 && (code < 0xd800 || code > 0xdfff) && INVISIBLE.test(String.fromCharCode(code));
    if (hidden && start === null) start = code;
    if (!hidden && start !== null) {
      ranges.push(start === code - 1 ? hex(start) : `${hex(start)}-${hex(code - 1)}`);
      start = null;
    }
  }
  return ranges.join('');
}
const NAME_CONTROL = `\\u0000-\\u001f\\u007f-\\u009f${invisibleRanges()}`;
const NAME_EDGE = `[^${NAME_CONTROL}${NAME_SPACE}]`;
export const NAME_DOC = {
  minLength: 1,
  pattern: `^[${NAME_SPACE}]*${NAME_EDGE}(?:[^${NAME_CONTROL}]{0,${MAX_NAME_LENGTH - 2}}${NAME_EDGE})?[${NAME_SPACE}]*$`,
};
/** A character for a regex, as `\uXXXX` outside ASCII letters and digits so the document stays plain ASCII. */
const regexChar = (ch: string) =>
  /^[a-zA-Z0-9]$/.test(ch) ? ch : `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** Every BMP character whose key (nameKey) is plain ASCII letters, by that key (scanned once, at load). */
const ASCII_FOLDS = new Map<string, string[]>();
for (let code = 0; code <= 0xffff; code += 1) {
  if (code >= 0xd800 && code <= 0xdfff) continue;
  const ch = String.fromCharCode(code);
  const folded = nameKey(ch);
  if (/^[a-z]+$/.test(folded)) ASCII_FOLDS.set(folded, [...(ASCII_FOLDS.get(folded) ?? []), ch]);
}

/**
 * A pattern matching exactly the names whose key (nameKey: upper- then lower-cased) is `key`, when `key` is plain
 * ASCII letters: every character folding to a letter or a run of letters (the long s, the dotless i, the sharp s
 * for "ss", the fi ligature...) is spelled out, since the service compares keys, not spellings.
 */
function keyPattern(key: string): string {
  const from = (i: number): string => {
    if (i === key.length) return '';
    const branches: string[] = [];
    for (const [folded, chars] of ASCII_FOLDS) {
      if (!key.startsWith(folded, i)) continue;
      const rest = from(i + folded.length);
      const here = chars.map(regexChar).join(folded.length === 1 ? '' : '|');
      branches.push(folded.length === 1 ? `[${here}]${rest}` : `(?:${here})${rest}`);
    }
    return branches.length === 1 ? (branches[0] as string) : `(?:${branches.join('|')})`;
  };
  return from(0);
}

/**
 * The names of the platform attributes (domain, env, tags, classification, groups) as the service reads a name:
 * trimmed, letter case and case folds ignored. Withdrawing one is refused (base_type_not_owner), so the withdraw
 * path's name says `not` these.
 */
export const PLATFORM_NAME_DOC = {
  pattern: `^[${NAME_SPACE}]*(?:${[...PLATFORM_ATTRIBUTE_NAMES].map(keyPattern).join('|')})[${NAME_SPACE}]*$`,
};

/** A name field: absent or null is empty_value, anything but a string invalid_field (the rest in cleanName). */
export const nameField = (description: string) =>
  refusing(z.string().describe(description).meta(NAME_DOC), {
    reason: 'invalid_field',
    missing: 'empty_value',
  });

// ——— Rows ———

// ——— Inputs ———

export const guidParams = z.object({ guid: guid('Entity type guid.') });
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
export const typeName = nameField('Type name (trimmed; letter case ignored when compared).');
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
