// The REST contract as data: each route's path, parameters, body and answers as zod schemas. The router checks
// requests' shapes with these schemas (rest/route.ts) and the OpenAPI document is generated from them (openapi.ts),
// so the document cannot drift from what the service accepts. The rules themselves stay in resolvers/, shared with
// GraphQL; a body whose rules a resolver checks whole (bodyCheckedByResolver) is documented here and checked there.
// Over 300 lines: it is the whole REST contract, one entry per route, read in one place by the router, the
// OpenAPI document, the conformance test and the fuzzer.

import { z } from 'zod';
import { AttributeRow, EntityTypeRow, guid, named, PurgeReport } from '../contract/wire.js';
import { CHANGE_KINDS } from '../db/changes.js';
import { REASONS, type Reason } from '../errors.js';
import { MAX_ATTRIBUTE_DEFS } from '../model/limits.js';
import { MAX_NAME_LENGTH, nameKey } from '../model/names.js';
import { PAGES } from '../model/pages.js';
import { PLATFORM_ATTRIBUTE_NAMES } from '../model/system-types.js';
import { CARDINALITIES, VALUE_TYPES } from '../model/value-types.js';
import { CHANGE_PAGE_MAX_BYTES } from '../resolvers/changes.js';
import type { DeclarationField } from '../resolvers/declaration.js';
import { MAX_LOOKUP_IDENTIFIERS } from '../resolvers/entities.js';
import { FILTER_SCAN_WINDOW, MAX_FILTER_CONDITIONS, MAX_FILTER_GUIDS } from '../resolvers/entity-list.js';
import {
  MODEL_FORMAT,
  MODEL_MAX_DEFINITION_BYTES,
  MODEL_MAX_DEFINITIONS,
  MODEL_MAX_TYPES,
  PLAN_ACTIONS,
  PLAN_MAX_IMPACTS,
} from '../resolvers/model.js';
import {
  MAX_ALLOWED_VALUE_LENGTH,
  MAX_ALLOWED_VALUES,
  MAX_MULTI_VALUES,
  MAX_STRING_VALUE,
} from '../resolvers/values.js';
import { positiveUpTo } from './decimal.js';

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
const refusing = <T extends z.ZodType>(schema: T, meta: FieldRefusals): T => {
  refusals.add(schema, meta);
  return schema;
};

/**
 * What a name must look like, for the document only (the service's own checks, with their distinct reasons, are in
 * model/names.ts): once the spaces JavaScript's trim() removes are gone, 1 to 256 characters, the first and last
 * not spaces, and no C0/C1 control characters. Every class is spelled out, so that it means the same to any regex
 * engine (a fuzzer's included).
 */
const NAME_SPACE =
  '\\t\\n\\u000b\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';
const NAME_CONTROL = '\\u0000-\\u001f\\u007f-\\u009f';
const NAME_EDGE = `[^${NAME_CONTROL}${NAME_SPACE}]`;
const NAME_DOC = {
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
const PLATFORM_NAME_DOC = {
  pattern: `^[${NAME_SPACE}]*(?:${[...PLATFORM_ATTRIBUTE_NAMES].map(keyPattern).join('|')})[${NAME_SPACE}]*$`,
};

/** A name field: absent or null is empty_value, anything but a string invalid_field (the rest in cleanName). */
const nameField = (description: string) =>
  refusing(z.string().describe(description).meta(NAME_DOC), {
    reason: 'invalid_field',
    missing: 'empty_value',
  });

// ——— Rows ———

const AttributeState = z
  .enum(['live', 'withdrawn'])
  .describe('`withdrawn`: its stored values are being removed; the daily job then removes the definition.');

export const Entity = named(
  'Entity',
  'An entity (instance of a type) with the values of its type’s live attributes, keyed by attribute name.',
  z.object({
    guid: guid('Identifier of the entity (random UUID).'),
    name: z.string().describe('Entity name.'),
    type_guid: guid('Its entity type.'),
    values: z
      .record(z.string(), z.unknown())
      .describe('Attribute name → value; attributes without value are absent.'),
  }),
);

const EntitySummary = z.object({ guid: z.string(), name: z.string(), type_guid: z.string() });

const GraphQLResult = named(
  'GraphQLResult',
  'A GraphQL response (not the REST envelope).',
  z.looseObject({
    data: z.record(z.string(), z.unknown()).nullish(),
    errors: z
      .array(
        z.looseObject({
          message: z.string(),
          path: z.array(z.union([z.string(), z.number()])).optional(),
          extensions: z
            .looseObject({ reason: z.enum(REASONS).optional().describe('The refusal reason, as in REST.') })
            .optional(),
        }),
      )
      .optional(),
  }),
);

const GraphQLRefusal = named(
  'GraphQLRefusal',
  'A request to /graphql refused before it ran (no token, a body over the limit): the envelope, with the same refusal as GraphQL `errors`; or a GraphQL response refusing the document.',
  z.looseObject({
    STATUS: z.literal('FAIL').optional(),
    MESSAGE: z.string().optional(),
    DATA: z.object({ reason: z.enum(REASONS) }).optional(),
    errors: z.array(
      z.looseObject({
        message: z.string(),
        extensions: z.looseObject({ reason: z.enum(REASONS).optional() }).optional(),
      }),
    ),
  }),
);

export const ChangeRow = named(
  'ChangeRow',
  'One change of the metamodel, written in the same transaction as the change itself.',
  z.object({
    id: z.string().describe('Stable identifier of the record (`<shard>-<sequence>`).'),
    at: z.string().describe('When the change was made (ISO 8601 date-time, UTC, to the microsecond).'),
    kind: z
      .enum(CHANGE_KINDS)
      .describe(
        '`type_created`, `type_renamed`, `type_deleted` (its live definitions withdrawn with it, listed in `before.withdrawn_attributes`), `managed_type_set_up` (a managed type set up or brought in step by its feature), `attribute_declared`, `attribute_withdrawn`, `attribute_removed` (by the daily purge, once its data was gone).',
      ),
    type_guid: z.string().describe('The type changed, or whose definition changed.'),
    attribute_guid: z.string().nullable().describe('The definition changed; null for a change of the type.'),
    actor: z
      .string()
      .nullable()
      .describe("The `sub` of the caller's token; null for the purge's own changes."),
    request_id: z
      .string()
      .nullable()
      .describe("The request's id (its `x-request-id` answer header); null for the purge's own changes."),
    before: z
      .record(z.string(), z.unknown())
      .nullable()
      .describe('What changed, as it was (type or definition fields); null when it did not exist.'),
    after: z
      .record(z.string(), z.unknown())
      .nullable()
      .describe('What changed, as it is now; null when it no longer exists.'),
  }),
);

// ——— Envelopes ———

export const Refusal = named(
  'Refusal',
  'A refused request: STATUS FAIL and a machine-readable reason. Clients branch on DATA.reason, never MESSAGE.',
  z.object({
    STATUS: z.literal('FAIL'),
    MESSAGE: z.string().describe('Human-readable text; do not branch on it.'),
    DATA: z.object({
      reason: z.enum(REASONS).describe('Why the request was refused (see the reasons table).'),
    }),
  }),
);

/** The success envelope around a route's DATA. */
export const success = <T extends z.ZodType>(data: T) =>
  z.object({
    STATUS: z.literal('SUCCESS'),
    MESSAGE: z.literal('').describe('Empty on success.'),
    DATA: data,
  });

// ——— Inputs ———

const guidParams = z.object({ guid: guid('Entity type guid.') });
const dryRun = refusing(
  z
    .enum(['true', 'false', '1', '0', ''])
    .optional()
    .describe('`true` (or `1`, or empty) validates and reports without writing.')
    // What the handler gets: whether this is a dry run (the document shows the accepted spellings).
    .transform((v) => v === 'true' || v === '1' || v === ''),
  { reason: 'invalid_field' },
);
const typeName = nameField('Type name (trimmed; letter case ignored when compared).');

/** A value of each scalar type, as the document can say it (a date's calendar is checked by the service). */
const SCALAR_VALUE_DOC = {
  string: { type: 'string', maxLength: MAX_STRING_VALUE },
  number: { type: 'number' },
  boolean: { type: 'boolean' },
  date: {
    type: 'string',
    pattern:
      '^[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])(?:[Tt ](?:[01][0-9]|2[0-3]):[0-5][0-9]:(?:[0-5][0-9]|60)(?:\\.[0-9]{1,9})?(?:[Zz]|[+-][0-9]{2}:[0-9]{2}))?$',
  },
  json: { not: { type: 'null' } },
} as const;
/** A JSON Schema condition: `then` applies where `condition` holds, `otherwise` (if given) elsewhere. */
const ifThen = (condition: object, then: object, otherwise?: object) => ({
  if: condition,
  then,
  ...(otherwise ? { else: otherwise } : {}),
});
const whenValueType = (valueType: string) => ({
  properties: { value_type: { const: valueType } },
  required: ['value_type'],
});
/** A default of a definition whose one value looks like `value`: the value (single) or a list of them (multi). */
const defaultDoc = (value: object, distinct = false) =>
  ifThen(
    { properties: { cardinality: { const: 'multi' } }, required: ['cardinality'] },
    {
      properties: {
        default_value: {
          anyOf: [
            { type: 'null' },
            {
              type: 'array',
              maxItems: MAX_MULTI_VALUES,
              items: value,
              ...(distinct ? { uniqueItems: true } : {}),
            },
          ],
        },
      },
    },
    { properties: { default_value: { anyOf: [{ type: 'null' }, value] } } },
  );
/**
 * The declaration rules that depend on value_type and cardinality, as JSON Schema conditions, for editors and
 * fuzzers (the service's own checks, each with its reason, are in resolvers/attributes.ts): allowed_ref_type
 * required for entity_ref and refused otherwise, filterable for entity_ref only, allowed_values for scalar types
 * only (distinct values of the type), default_value of the type and cardinality. What a schema cannot say is left
 * to the service: a default must be one of the allowed_values when there are some (default_value_not_allowed), and
 * an enumerated json value is at most MAX_ALLOWED_VALUE_LENGTH characters of JSON text (invalid_allowed_value).
 */
const DECLARE_CONDITIONS = {
  allOf: [
    ifThen(
      whenValueType('entity_ref'),
      {
        required: ['allowed_ref_type'],
        properties: { allowed_ref_type: { type: 'string' }, allowed_values: { type: 'null' } },
      },
      { properties: { allowed_ref_type: { type: 'null' }, filterable: { type: 'null' } } },
    ),
    ifThen(whenValueType('entity_ref'), defaultDoc({ type: 'string', minLength: 1, maxLength: 256 }, true)),
    ...Object.entries(SCALAR_VALUE_DOC).flatMap(([valueType, value]) => [
      ifThen(whenValueType(valueType), {
        properties: {
          allowed_values: {
            anyOf: [
              { type: 'null' },
              {
                type: 'array',
                maxItems: MAX_ALLOWED_VALUES,
                uniqueItems: true,
                items: valueType === 'string' ? { ...value, maxLength: MAX_ALLOWED_VALUE_LENGTH } : value,
              },
            ],
          },
        },
      }),
      ifThen(whenValueType(valueType), defaultDoc(value)),
    ]),
  ],
};

export const DeclareBody = named(
  'DeclareAttribute',
  'An attribute declaration. Every malformed combination is refused with its own reason; unknown fields are refused.',
  z
    .strictObject({
      name: nameField('Attribute name, unique within the type.'),
      value_type: refusing(z.enum(VALUE_TYPES).describe('Kind of value.'), {
        reason: 'unknown_value_type',
        missing: 'unknown_value_type',
      }),
      cardinality: refusing(z.enum(CARDINALITIES).describe('One value or a list.'), {
        reason: 'invalid_cardinality',
        missing: 'invalid_cardinality',
      }),
      allowed_values: refusing(
        z
          .array(z.unknown())
          .max(MAX_ALLOWED_VALUES)
          .nullish()
          .describe(`Enumerated values, distinct, at most ${MAX_ALLOWED_VALUES}; scalar types only.`),
        { reason: 'invalid_field' },
      ),
      allowed_ref_type: guid(
        'Type the reference points at; required for entity_ref, refused otherwise.',
      ).nullish(),
      required: z.boolean().nullish().describe('Whether instances must carry a value (default false).'),
      default_value: z
        .unknown()
        .optional()
        .describe('Applied when an instance is created without a value; an entity guid for references.'),
      filterable: z
        .boolean()
        .nullish()
        .describe('entity_ref only (default false); refused when sent on others.'),
    } satisfies Record<DeclarationField, z.ZodType>)
    .meta(DECLARE_CONDITIONS),
);

// ——— The metamodel as a document (issue #13) ———

export const ModelAttribute = named(
  'ModelAttribute',
  'An attribute definition as a model document states it: the declaration fields, the referenced type by name, fields at their default left out.',
  DeclareBody.extend({
    allowed_ref_type: z
      .string()
      .nullish()
      .describe('Name of the type the reference points at (entity_ref only).'),
  }).meta(DECLARE_CONDITIONS),
);

export const ModelType = named(
  'ModelType',
  'A type of a model document, with its live attribute definitions.',
  z.strictObject({
    name: typeName,
    renamed_from: typeName
      .optional()
      .describe(
        'For a plan: when `name` resolves to no type, the type this name resolves to is renamed to `name`.',
      ),
    attributes: z
      .array(ModelAttribute)
      .max(MAX_ATTRIBUTE_DEFS)
      .optional()
      .describe('Its definitions, by name.'),
  }),
);

export const ModelDocument = named(
  'ModelDocument',
  `A tenant's metamodel as one document (\`${MODEL_FORMAT}\`): its user-defined types and any type carrying definitions declared by callers, in normalised-name order, each with its live definitions in name order. Types are referenced by name, never by guid, so a document moves between tenants and environments.`,
  z.strictObject({
    format: z.literal(MODEL_FORMAT).describe('The document format and its version.'),
    types: z.array(ModelType).max(MODEL_MAX_TYPES),
  }),
);

const ModelSpecDoc = ModelAttribute;
export const PlanStep = named(
  'ModelPlanStep',
  'One change a plan would make, in the order to apply it.',
  z.object({
    action: z
      .enum(PLAN_ACTIONS)
      .describe(
        '`create_type`, `rename_type`, `withdraw_attribute` (live, not in the document), `redeclare_attribute` (its specification differs: definitions are immutable, so it is withdrawn, then declared again once the daily purge has removed its data), `declare_attribute`.',
      ),
    type: z.string().describe("The type's name in the document."),
    type_guid: z.string().nullable().describe('The type; null for one the plan creates.'),
    from: z.string().optional().describe("rename_type: the type's current name."),
    attribute: z.string().optional().describe('The definition concerned.'),
    spec: ModelSpecDoc.optional().describe('The definition as the document states it.'),
    ref_type_guid: z
      .string()
      .nullable()
      .optional()
      .describe(
        'A reference declared: the guid its allowed_ref_type names now; null for a type the plan creates or renames to that name.',
      ),
    current: ModelSpecDoc.optional().describe('The live definition, as the tenant has it.'),
    impact: z
      .object({ instances: z.number(), values: z.number() })
      .nullable()
      .optional()
      .describe(
        `What withdrawing removes (a withdrawal's dry run); null past the first ${PLAN_MAX_IMPACTS} withdrawals of a plan.`,
      ),
    blocked: z
      .object({ reason: z.enum(REASONS), message: z.string() })
      .optional()
      .describe('Applying the step now would be refused with this reason.'),
  }),
);

// ——— Routes ———

/** The reasons of the declaration rules that need no database (checkDeclaration): a declaration's and a plan's. */
const DECLARATION_RULE_REASONS: Reason[] = [
  'too_many_allowed_values',
  'unknown_value_type',
  'invalid_cardinality',
  'allowed_values_not_supported',
  'allowed_ref_type_not_supported',
  'allowed_ref_type_required',
  'filterable_not_supported',
  'empty_value',
  'name_too_long',
  'invalid_field',
  'unknown_field',
  'invalid_allowed_value',
  'duplicate_allowed_value',
  'invalid_default_value',
  'default_value_not_allowed',
];

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
}

const route = <const R extends RouteDoc>(r: R) => r;

const pageSizeField = refusing(
  z
    .string()
    .regex(new RegExp(positiveUpTo(PAGES.max)))
    .optional()
    .describe(`Rows per page, 1 to ${PAGES.max} (default ${PAGES.default}); at most 9 decimal digits.`),
  { reason: 'invalid_page_size' },
);
/** The query of a keyset-paged list: its cursor and page size. */
const pageQuery = (cursor: string) =>
  z.looseObject({
    cursor: refusing(z.string().optional().describe(cursor), { reason: 'invalid_cursor' }),
    page_size: pageSizeField,
  });
/** Epoch milliseconds, or an RFC 3339 time (UTC or with an offset). */
const LOG_TIME =
  /^([0-9]{1,15}|[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{1,9})?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9]))$/;
const LOG_TIME_TEXT = 'Epoch milliseconds, or an RFC 3339 time such as 2026-01-31T12:00:00Z.';

/** Text that parses as a JSON object (GET /graphql's variables and extensions). */
const jsonObjectText = z
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

/** What /graphql answers when the operation ran (refusals inside it included). */
const GRAPHQL_ANSWERS: Record<number, Answer> = {
  200: {
    description: 'A GraphQL response.',
    raw: { contentType: 'application/json', schema: GraphQLResult },
  },
};

export const ROUTES = {
  createEntityType: route({
    method: 'POST',
    path: '/entities/types',
    operationId: 'createEntityType',
    tag: 'Entity types',
    summary: 'Create an entity type (create-or-get)',
    description:
      'Names are compared trimmed and ignoring letter case; a name that resolves returns that type with `created: false` and writes nothing. Unknown fields are ignored.',
    auth: 'bearer',
    body: z.looseObject({ name: typeName }),
    answers: {
      201: {
        description: 'Created.',
        data: z.object({ entity_type: EntityTypeRow, created: z.literal(true) }),
      },
      200: {
        description: 'The name already resolved to a type; nothing was written.',
        data: z.object({ entity_type: EntityTypeRow, created: z.literal(false) }),
      },
    },
    refusals: ['empty_value', 'name_too_long', 'invalid_field', 'type_instances_managed'],
  }),
  listEntityTypes: route({
    method: 'GET',
    path: '/entities/types',
    operationId: 'listEntityTypes',
    tag: 'Entity types',
    summary: 'List entity types',
    description: 'System and user-defined types together, in normalised-name order, keyset-paged.',
    auth: 'bearer',
    query: pageQuery('Opaque `next_cursor` from a previous page.'),
    answers: {
      200: {
        description: 'A page of types.',
        data: z.object({
          entity_types: z.array(EntityTypeRow),
          next_cursor: z.string().nullable().describe('Cursor of the next page; null on the last page.'),
        }),
      },
    },
    refusals: ['invalid_cursor', 'invalid_page_size'],
  }),
  getEntityType: route({
    method: 'GET',
    path: '/entities/types/:guid',
    operationId: 'getEntityType',
    tag: 'Entity types',
    summary: 'Read one entity type',
    auth: 'bearer',
    params: guidParams,
    answers: { 200: { description: 'The type.', data: z.object({ entity_type: EntityTypeRow }) } },
    refusals: ['unknown_entity_type'],
  }),
  getEntityTypeByName: route({
    method: 'GET',
    path: '/entities/types/by-name/:name',
    operationId: 'getEntityTypeByName',
    tag: 'Entity types',
    summary: 'Read one entity type by its name',
    description:
      'The name is compared as create-or-get compares it (trimmed, letter case ignored), and a name a type was created under keeps resolving to it after a rename. Percent-encode the name in the path (`/` as `%2F`). Nothing is ever created.',
    auth: 'bearer',
    params: z.object({ name: z.string().describe('Type name.').meta(NAME_DOC) }),
    answers: { 200: { description: 'The type.', data: z.object({ entity_type: EntityTypeRow }) } },
    refusals: ['unknown_entity_type', 'empty_value', 'name_too_long', 'invalid_field'],
  }),
  typeHistory: route({
    method: 'GET',
    path: '/entities/types/:guid/history',
    operationId: 'typeHistory',
    tag: 'History',
    summary: "A type's change history, newest first",
    description:
      "Every change of the type and of its attribute definitions: who (the token's sub), when, what, the request id, and before/after. Keyset-paged with signed cursors bound to the tenant, like type pages. A type's history outlives it: a deleted type's history is still read by its guid, and a type recreated under its name (same guid) continues it.",
    auth: 'bearer',
    params: guidParams,
    query: pageQuery('Opaque `next_cursor` from a previous page of this history.'),
    answers: {
      200: {
        description: 'A page of changes, newest first.',
        data: z.object({
          changes: z.array(ChangeRow),
          next_cursor: z
            .string()
            .nullable()
            .describe('Cursor of the next (older) page; null on the last page.'),
        }),
      },
    },
    refusals: ['unknown_entity_type', 'invalid_cursor', 'invalid_page_size'],
  }),
  listChanges: route({
    method: 'GET',
    path: '/entities/changes',
    operationId: 'listChanges',
    tag: 'History',
    summary: "The tenant's change feed, oldest first",
    description: `Every change of the tenant's metamodel, oldest first, each exactly once over successive pages: send each page's \`next_cursor\` as \`after\` to get the changes made since (an empty page keeps the same cursor; poll with it). Without \`after\`, the feed starts at the tenant's first change. Changes made one after another (the second after the first was committed) come in that order; a page carries at most \`page_size\` changes and about ${CHANGE_PAGE_MAX_BYTES / 1024 / 1024} MB of before/after.`,
    auth: 'bearer',
    query: z.looseObject({
      after: refusing(
        z.string().optional().describe('Opaque `next_cursor` of the last page read; none for the start.'),
        { reason: 'invalid_cursor' },
      ),
      page_size: pageSizeField,
    }),
    answers: {
      200: {
        description: 'The next changes, oldest first.',
        data: z.object({
          changes: z.array(ChangeRow),
          next_cursor: z.string().describe('Where to resume: send it as `after` next time (never null).'),
          has_more: z
            .boolean()
            .describe('More changes were ready than this page carries: ask again at once.'),
        }),
      },
    },
    refusals: ['invalid_cursor', 'invalid_page_size'],
  }),
  exportModel: route({
    method: 'GET',
    path: '/entities/model',
    operationId: 'exportModel',
    tag: 'Model as code',
    summary: "The tenant's metamodel as one document (export)",
    description: `Types by name and their live definitions, in a stable order; the document round-trips: planned and applied on an empty tenant, it exports again the same. Its JSON Schema is at \`/schemas/metamodel.json\`. A model of more than ${MODEL_MAX_TYPES} types or ${MODEL_MAX_DEFINITIONS.toLocaleString('en-US')} definitions, or whose enumerations and defaults pass ${MODEL_MAX_DEFINITION_BYTES / 1024 / 1024} MiB, is refused (\`model_too_large\`) before it is read.`,
    auth: 'bearer',
    answers: { 200: { description: 'The document.', data: z.object({ model: ModelDocument }) } },
    refusals: ['model_too_large'],
  }),
  planModel: route({
    method: 'POST',
    path: '/entities/model/plan',
    operationId: 'planModel',
    tag: 'Model as code',
    summary: 'What applying a model document would change (plan)',
    description:
      "Compares the document with the tenant and lists the steps that would make the tenant match it, in the order to apply them, each through its ordinary endpoint: types to create or rename, definitions to withdraw (with their dry-run impact), to redeclare (a changed specification) and to declare. Types the document does not list are left alone. Writes nothing. Each declaration is checked with the declare endpoint's own rules and reasons; a malformed document is `invalid_model`.",
    auth: 'bearer',
    body: ModelDocument,
    bodyCheckedByResolver: true,
    answers: {
      200: {
        description: 'The plan; no steps when the tenant already matches the document.',
        data: z.object({
          steps: z.array(PlanStep),
          unchanged: z
            .object({ types: z.number(), attributes: z.number() })
            .describe('Types and definitions of the document the tenant already has as stated.'),
        }),
      },
    },
    refusals: ['invalid_model', ...DECLARATION_RULE_REASONS],
  }),
  metamodelSchema: route({
    method: 'GET',
    path: '/schemas/metamodel.json',
    operationId: 'metamodelSchema',
    tag: 'Model as code',
    summary: 'JSON Schema of a model document, for editors (no token)',
    auth: 'none',
    answers: {
      200: {
        description: 'JSON Schema (draft 2020-12).',
        raw: { contentType: 'application/json', schema: z.record(z.string(), z.unknown()) },
      },
    },
    refusals: [],
  }),
  renameEntityType: route({
    method: 'PATCH',
    path: '/entities/types/:guid',
    operationId: 'renameEntityType',
    tag: 'Entity types',
    summary: 'Rename a user-defined type',
    description: 'The guid stays. System, managed and connector types are refused.',
    auth: 'bearer',
    params: guidParams,
    body: z.looseObject({ name: typeName }),
    answers: { 200: { description: 'Renamed.', data: z.object({ entity_type: EntityTypeRow }) } },
    refusals: [
      'unknown_entity_type',
      'empty_value',
      'name_too_long',
      'invalid_field',
      'type_not_user_defined',
      'type_name_taken',
      'type_instances_managed',
    ],
  }),
  deleteEntityType: route({
    method: 'DELETE',
    path: '/entities/types/:guid',
    operationId: 'deleteEntityType',
    tag: 'Entity types',
    summary: 'Delete a user-defined type',
    description:
      'Withdraws its live definitions; its entities remain. Recreating the name gives the same guid back.',
    auth: 'bearer',
    params: guidParams,
    answers: {
      200: {
        description: 'Deleted.',
        data: z.object({ guid: z.string(), deleted: z.literal(true) }),
      },
    },
    refusals: ['unknown_entity_type', 'type_not_user_defined', 'type_referenced'],
  }),
  declareAttribute: route({
    method: 'POST',
    path: '/entities/types/:guid/attributes',
    operationId: 'declareAttribute',
    tag: 'Attributes',
    summary: 'Declare an attribute definition on a type',
    description: `At most ${MAX_ATTRIBUTE_DEFS} live definitions per type. With \`dry_run\` nothing is written.`,
    auth: 'bearer',
    params: guidParams,
    query: z.looseObject({ dry_run: dryRun }),
    body: DeclareBody,
    bodyCheckedByResolver: true,
    answers: {
      201: {
        description: 'Declared.',
        data: z.object({
          attribute: AttributeRow,
          usage: z
            .object({ declared: z.number(), limit: z.literal(MAX_ATTRIBUTE_DEFS) })
            .describe('Live definitions on the type after this one, and the limit.'),
        }),
      },
      200: {
        description: 'Dry run: the declaration is valid; nothing was written.',
        data: z.object({
          dry_run: z.literal(true),
          attribute: AttributeRow,
          usage: z.object({ declared: z.number(), limit: z.literal(MAX_ATTRIBUTE_DEFS) }),
        }),
      },
    },
    refusals: [
      'unknown_entity_type',
      'base_type_not_owner',
      'attribute_def_already_exists',
      'attribute_def_withdrawn',
      'too_many_attribute_defs',
      'attribute_defs_too_large',
      ...DECLARATION_RULE_REASONS,
      'referent_not_found',
      'ref_type_mismatch',
    ],
  }),
  listAttributes: route({
    method: 'GET',
    path: '/entities/types/:guid/attributes',
    operationId: 'listAttributes',
    tag: 'Attributes',
    summary: 'List the attributes applying to a type',
    description:
      'The five platform attributes (owner_type null) first, then the type’s own live definitions by name. Not paged.',
    auth: 'bearer',
    params: guidParams,
    answers: {
      200: { description: 'The attributes.', data: z.object({ attributes: z.array(AttributeRow) }) },
    },
    refusals: ['unknown_entity_type'],
  }),
  withdrawAttribute: route({
    method: 'DELETE',
    path: '/entities/attributes/:typeGuid/:name',
    operationId: 'withdrawAttribute',
    tag: 'Attributes',
    summary: 'Withdraw a live attribute definition (curation API)',
    description:
      'Its stored values start being removed and it leaves the listing; the daily job removes the definition.',
    auth: 'bearer',
    params: z.object({
      typeGuid: guid('Entity type guid.'),
      name: z
        .string()
        .describe('Attribute name; not a platform attribute (the platform owns those).')
        .meta({ ...NAME_DOC, not: PLATFORM_NAME_DOC }),
    }),
    query: z.looseObject({ dry_run: dryRun }),
    answers: {
      200: {
        description: 'Withdrawn; or, with `dry_run`, what withdrawing would affect.',
        data: z.union([
          z.object({
            attribute: AttributeRow.extend({ state: AttributeState }),
            withdrawn: z.literal(true),
          }),
          z.object({
            dry_run: z.literal(true),
            attribute: AttributeRow.extend({ state: AttributeState }),
            impact: z
              .object({ instances: z.number(), values: z.number() })
              .describe('Instances carrying a value, and values stored.'),
          }),
        ]),
      },
    },
    refusals: [
      'unknown_entity_type',
      'attribute_def_not_found',
      'attribute_def_withdrawn',
      'base_type_not_owner',
      'empty_value',
      'name_too_long',
      'invalid_field',
    ],
  }),
  createEntity: route({
    method: 'POST',
    path: '/entities',
    operationId: 'createEntity',
    tag: 'Entities',
    summary: 'Create an entity of a type (curation)',
    description: 'Values are validated against the type’s live definitions; defaults are applied.',
    auth: 'bearer',
    bodyCheckedByResolver: true,
    body: z.looseObject({
      type_guid: refusing(z.string().min(1).describe('Its entity type.'), {
        reason: 'invalid_field',
        missing: 'invalid_field',
      }),
      name: nameField('Entity name.'),
      values: z
        .record(z.string().meta(NAME_DOC), z.unknown())
        .nullish()
        .describe('Attribute name → value (letter case ignored); null means no value.'),
    }),
    answers: { 201: { description: 'Created.', data: z.object({ entity: Entity }) } },
    refusals: [
      'unknown_entity_type',
      'type_not_creatable',
      'unknown_attribute',
      'invalid_value',
      'value_not_allowed',
      'required_value_missing',
      'referent_not_found',
      'ref_type_mismatch',
      'concurrent_change',
      'empty_value',
      'name_too_long',
      'invalid_field',
    ],
  }),
  getEntity: route({
    method: 'GET',
    path: '/entities/:guid',
    operationId: 'getEntity',
    tag: 'Entities',
    summary: 'Read one entity with its values',
    auth: 'bearer',
    params: z.object({ guid: guid('Entity guid.') }),
    answers: { 200: { description: 'The entity.', data: z.object({ entity: Entity }) } },
    refusals: ['not_found'],
  }),
  listEntities: route({
    method: 'GET',
    path: '/entities',
    operationId: 'listEntities',
    tag: 'Entities',
    summary: 'The entities of a type, filtered by their references',
    description: `Entities of exactly the type \`type_guid\`, in name order (then guid), keyset-paged with signed cursors bound to your tenant, like type pages. Each \`where\` is one condition, \`<attribute>:<guid>[,<guid>...]\`: the entity refers to any of those entities through that filterable reference attribute (\`tags\` on every type, or an \`entity_ref\` declared \`filterable: true\`); the attribute is what comes before the last colon. Several conditions must all hold (the same attribute twice: both). At most ${MAX_FILTER_CONDITIONS} conditions of at most ${MAX_FILTER_GUIDS} guids each. A page reads one index in order: with one condition or none it is always full until the last; with several, a page examines at most ${FILTER_SCAN_WINDOW.toLocaleString('en-US')} matches of one condition, so it can carry fewer rows than \`page_size\` (even none) and still a \`next_cursor\`: follow it until it is null. A withdrawn attribute's references stop matching when it is withdrawn (\`attribute_def_withdrawn\`), not when the purge removes them.`,
    auth: 'bearer',
    query: pageQuery('Opaque `next_cursor` from a previous page of the same listing.').extend({
      type_guid: refusing(guid('The entity type whose entities are listed.'), {
        reason: 'invalid_field',
        missing: 'invalid_field',
      }),
      where: refusing(
        z
          .array(
            z
              .string()
              .regex(/^.+:[^:,]+(,[^:,]+)*$/)
              .describe('`<attribute>:<guid>[,<guid>...]`'),
          )
          .max(MAX_FILTER_CONDITIONS)
          .optional()
          .describe(
            `Conditions (repeat the parameter), at most ${MAX_FILTER_CONDITIONS}; each \`<attribute>:<guid>[,<guid>...]\` with at most ${MAX_FILTER_GUIDS} guids.`,
          ),
        { reason: 'invalid_filter', tooMany: 'too_many_filters' },
      ),
    }),
    answers: {
      200: {
        description: 'A page of entities.',
        data: z.object({
          entities: z.array(EntitySummary),
          next_cursor: z
            .string()
            .nullable()
            .describe('Cursor of the next page; null when the listing is complete.'),
        }),
      },
    },
    refusals: [
      'unknown_entity_type',
      'invalid_field',
      'invalid_filter',
      'too_many_filters',
      'too_many_filter_guids',
      'unknown_attribute',
      'attribute_not_filterable',
      'attribute_def_withdrawn',
      'empty_value',
      'name_too_long',
      'invalid_cursor',
      'invalid_page_size',
    ],
  }),
  lookup: route({
    method: 'POST',
    path: '/entities/lookup',
    operationId: 'lookupIdentifiers',
    tag: 'Entities',
    summary: 'Resolve many identifiers in one call',
    description: 'An unknown identifier (or another tenant’s) resolves to null.',
    auth: 'bearer',
    body: z.looseObject({
      identifiers: refusing(
        z
          .array(z.string())
          .max(MAX_LOOKUP_IDENTIFIERS)
          .describe(`Entity guids, at most ${MAX_LOOKUP_IDENTIFIERS}.`),
        { reason: 'invalid_field', missing: 'invalid_field', tooMany: 'too_many_identifiers' },
      ),
    }),
    answers: {
      200: {
        description: 'One entry per identifier, in order.',
        data: z.object({
          entries: z.array(z.object({ identifier: z.string(), entity: EntitySummary.nullable() })),
        }),
      },
    },
    refusals: ['invalid_field', 'too_many_identifiers'],
  }),
  writeDashboard: route({
    method: 'POST',
    path: '/platform/dashboards',
    operationId: 'writeDashboardRow',
    tag: 'Platform',
    summary: 'Write a dashboard catalog row (role platform)',
    description: 'Idempotent per dashboard name. The first one sets up the managed `dashboard` type.',
    auth: 'platform',
    body: z.looseObject({ name: typeName }),
    answers: Object.fromEntries(
      [
        [201, 'A new row.'],
        [200, 'The row existed.'],
      ].map(([status, description]) => [
        status,
        {
          description: description as string,
          data: z.object({
            entity: EntitySummary.extend({ values: z.record(z.string(), z.unknown()).optional() }),
            created: z.boolean(),
            entity_type: EntityTypeRow,
            type_set_up: z.boolean().describe('Whether this call set up the managed type.'),
          }),
        },
      ]),
    ) as Record<number, Answer>,
    refusals: ['not_authorized', 'managed_type_blocked', 'empty_value', 'name_too_long', 'invalid_field'],
  }),
  purge: route({
    method: 'POST',
    path: '/admin/jobs/purge',
    operationId: 'runPurge',
    tag: 'Operations',
    summary: 'Run the daily purge job now (operators)',
    auth: 'operator',
    bodyOptional: true,
    body: z.looseObject({
      tenant: refusing(z.string().min(1).nullish().describe('Only this tenant (default: all).'), {
        reason: 'invalid_field',
      }),
    }),
    answers: {
      200: {
        description: 'What the run removed.',
        data: PurgeReport,
        alternative: {
          contentType: 'application/x-ndjson',
          schema: z
            .string()
            .describe(
              'With `Accept: application/x-ndjson`: one JSON object per line, `{"progress": {definitions_total, definitions_done, definitions_removed, values_removed, batches}}` while the job runs, then the ordinary envelope as the last line (SUCCESS with the report, or FAIL with DATA.reason). Refusals before the job starts are ordinary envelope answers.',
            ),
        },
      },
    },
    refusals: ['not_authorized', 'invalid_field', 'purge_already_running'],
  }),
  logs: route({
    method: 'GET',
    path: '/admin/logs',
    operationId: 'recentLogs',
    tag: 'Operations',
    summary: 'Recent server log entries (operators)',
    auth: 'operator',
    query: z.looseObject({
      level: refusing(
        z
          .string()
          .regex(/^(trace|debug|info|warn|error|fatal|[0-9]{1,3})$/)
          .optional()
          .describe('Minimum level: trace … fatal, or a pino number.'),
        { reason: 'invalid_field' },
      ),
      since: refusing(z.string().regex(LOG_TIME).optional().describe(LOG_TIME_TEXT), {
        reason: 'invalid_field',
      }),
      until: refusing(z.string().regex(LOG_TIME).optional().describe(LOG_TIME_TEXT), {
        reason: 'invalid_field',
      }),
      limit: refusing(
        z
          .string()
          .regex(/^([1-9][0-9]{0,2}|1000)$/)
          .optional()
          .describe('Most entries, 1 to 1000 (default 100).'),
        { reason: 'invalid_field' },
      ),
    }),
    answers: {
      200: {
        description: 'Matching entries, oldest first.',
        data: z.object({
          total: z.number().describe('Entries matching before the limit.'),
          entries: z.array(z.record(z.string(), z.unknown())).describe('pino log entries.'),
        }),
      },
    },
    refusals: ['not_authorized', 'invalid_field'],
  }),
  engineCache: route({
    method: 'GET',
    path: '/admin/engine-cache',
    operationId: 'engineCacheDiagnostic',
    tag: 'Operations',
    summary: 'Engine cache diagnostic (operators)',
    auth: 'operator',
    answers: {
      200: {
        description: 'What is cached, hits, misses and size.',
        data: z.object({
          entries: z.number(),
          maxEntries: z.number(),
          bytes: z.number().describe('Approximate memory the cached definitions hold.'),
          maxBytes: z.number().describe('The byte budget (least recently used entries leave first).'),
          hits: z.number(),
          misses: z.number(),
          evictions: z.number(),
          invalidations: z.number(),
          cached: z
            .array(
              z.object({
                type_guid: z.string(),
                version: z.string(),
                attributes: z.number(),
                bytes: z.number(),
              }),
            )
            .describe('The most recent entries: type, its definitions version, and the definitions held.'),
          model_cache: z
            .object({
              entries: z.number(),
              bytes: z.number().describe('Approximate memory the model cache holds.'),
              maxBytes: z.number().describe('Its byte budget (least recently used entries leave first).'),
              maxTenantBytes: z
                .number()
                .describe("Most one tenant's entries may hold (its own oldest leave first past it)."),
              tenants: z.number().describe('Tenants with entries.'),
              hits: z.number(),
              misses: z.number(),
              evictions: z.number(),
              invalidations: z
                .number()
                .describe(
                  'Entries replaced by one read at another model version (a metamodel write came between).',
                ),
              byKind: z
                .record(
                  z.string(),
                  z.object({ hits: z.number(), misses: z.number(), entries: z.number(), bytes: z.number() }),
                )
                .describe('The same per kind of read (type_page, type, type_name, attributes, ...).'),
              tenants_by_size: z
                .array(z.object({ tenant_hash: z.string(), entries: z.number(), bytes: z.number() }))
                .describe('The tenants holding most memory, named by a keyed hash (never in clear).'),
            })
            .describe('Metamodel reads served from memory, validated by the tenant model version.'),
          model_versions: z
            .object({
              reads: z.number().describe('Statements that read model versions.'),
              requests: z.number().describe('Requests they answered (each statement is shared).'),
            })
            .describe('The shared model-version reads.'),
        }),
      },
    },
    refusals: ['not_authorized'],
  }),
  metrics: route({
    method: 'GET',
    path: '/metrics',
    operationId: 'metrics',
    tag: 'Operations',
    summary: 'Prometheus metrics (operators, or METRICS_TOKEN)',
    auth: 'metrics',
    answers: {
      200: { description: 'Prometheus text format.', raw: { contentType: 'text/plain', schema: z.string() } },
    },
    refusals: ['not_authorized'],
  }),
  healthz: route({
    method: 'GET',
    path: '/healthz',
    operationId: 'liveness',
    tag: 'Operations',
    summary: 'Liveness (no token)',
    auth: 'none',
    answers: { 200: { description: 'The process serves.', data: z.object({ status: z.literal('ok') }) } },
    refusals: [],
  }),
  readyz: route({
    method: 'GET',
    path: '/readyz',
    operationId: 'readiness',
    tag: 'Operations',
    summary: 'Readiness (no token): 503 while Neo4j is unreachable',
    auth: 'none',
    answers: { 200: { description: 'Neo4j answers.', data: z.object({ status: z.literal('ready') }) } },
    refusals: ['storage_unavailable'],
  }),
  openapi: route({
    method: 'GET',
    path: '/openapi.json',
    operationId: 'openapi',
    tag: 'Operations',
    summary: 'This document (no token); an interactive reference is at /docs',
    auth: 'none',
    answers: {
      200: {
        description: 'OpenAPI 3.1 document.',
        raw: { contentType: 'application/json', schema: z.record(z.string(), z.unknown()) },
      },
    },
    refusals: [],
  }),
  graphqlGet: route({
    method: 'GET',
    path: '/graphql',
    operationId: 'graphqlGet',
    tag: 'GraphQL',
    summary: 'GraphQL over GET (queries only); GraphiQL when a browser asks for HTML',
    description:
      'With `Accept: text/html` (a browser) this is GraphiQL, served without a token; paste your token into its headers editor as `{"Authorization": "Bearer …"}`. Tokens are never read from URLs.',
    auth: 'bearer',
    query: z.looseObject({
      query: refusing(z.string().min(1).describe('The GraphQL document.'), {
        reason: 'invalid_field',
        missing: 'invalid_field',
      }),
      variables: refusing(jsonObjectText.optional().describe('JSON text of the variables (an object).'), {
        reason: 'invalid_field',
      }),
      operationName: refusing(
        z.string().optional().describe('Operation to run when the document has several.'),
        { reason: 'invalid_field' },
      ),
      extensions: refusing(
        jsonObjectText.optional().describe('JSON text of the request extensions (an object).'),
        { reason: 'invalid_field' },
      ),
    }),
    answers: GRAPHQL_ANSWERS,
    refusals: ['invalid_field', 'not_acceptable'],
    refusalSchema: GraphQLRefusal,
  }),
  graphqlPost: route({
    method: 'POST',
    path: '/graphql',
    operationId: 'graphqlPost',
    tag: 'GraphQL',
    summary: 'GraphQL',
    description:
      'Refusals are GraphQL errors with the REST reason in `extensions.reason`. Depth, aliases, tokens and cost are bounded.',
    auth: 'bearer',
    body: z.strictObject({
      query: refusing(z.string().min(1).describe('The GraphQL document.'), {
        reason: 'invalid_field',
        missing: 'invalid_field',
      }),
      variables: refusing(z.record(z.string(), z.unknown()).nullish().describe('The variables.'), {
        reason: 'invalid_field',
      }),
      operationName: refusing(
        z.string().nullish().describe('Operation to run when the document has several.'),
        { reason: 'invalid_field' },
      ),
      extensions: refusing(z.record(z.string(), z.unknown()).nullish().describe('Request extensions.'), {
        reason: 'invalid_field',
      }),
    }),
    answers: GRAPHQL_ANSWERS,
    refusals: ['invalid_field', 'unknown_field', 'not_acceptable'],
    refusalSchema: GraphQLRefusal,
  }),
} satisfies Record<string, RouteDoc>;

/** Reasons any authenticated route may refuse with, whatever it does. */
export const COMMON_REFUSALS: Reason[] = [
  'unauthenticated',
  'invalid_bookmark',
  // A path or query the router cannot decode (bad percent-encoding), refused before any route runs.
  'invalid_url',
  'storage_unavailable',
  'storage_busy',
  'internal_error',
];
/** Reasons any route with a body may refuse with before a handler runs (body.ts). */
export const BODY_REFUSALS: Reason[] = [
  'request_too_large',
  'request_timeout',
  'json_too_deep',
  'json_too_large',
  'invalid_json',
  'invalid_body',
  'unsupported_media_type',
];
