// The request bodies with rules of their own: a declaration (with the JSON Schema conditions that tie its fields
// together, for the document), the metamodel as a file and a plan's steps; the reasons of the declaration rules.

import { z } from 'zod';
import {
  DefinitionSummary,
  FieldChange,
  guid,
  named,
  PlanCarry,
  WithdrawImpact,
} from '../../contract/wire.js';
import { REASONS, type Reason } from '../../errors.js';
import {
  MAX_ALLOWED_VALUE_LENGTH,
  MAX_ALLOWED_VALUES,
  MAX_ATTRIBUTE_DEFS,
  MAX_MULTI_VALUES,
  MAX_STRING_VALUE,
} from '../../model/limits.js';
import { CARDINALITIES, VALUE_TYPES } from '../../model/value-types.js';
import type { DeclarationField } from '../../resolvers/declaration.js';
import {
  MAX_FORMER_NAMES,
  MODEL_FORMAT,
  MODEL_MAX_TYPES,
  PLAN_ACTIONS,
  PLAN_MAX_IMPACTS,
} from '../../resolvers/model.js';
import { nameField, refusing, typeName } from './fields.js';

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
    renamed_from: z
      .union([typeName, z.array(typeName).min(1).max(MAX_FORMER_NAMES)])
      .optional()
      .describe(
        `For a plan: when \`name\` resolves to no type, the type the first of these names that resolves resolves to is renamed to \`name\`. One name or a list (at most ${MAX_FORMER_NAMES}), most recent first, as an export with former names writes it.`,
      ),
    attributes: z
      .array(ModelAttribute)
      .max(MAX_ATTRIBUTE_DEFS)
      .optional()
      .describe(
        "Its definitions, by name. Left out, the document does not manage the type's definitions: a plan neither withdraws nor declares any (it may still create or rename the type). `[]` states that it has none: every live one is withdrawn.",
      ),
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
    looks_like_rename_of: z
      .string()
      .optional()
      .describe(
        'create_type: a type of yours the document does not list has definitions of exactly these names: likely a rename written by hand (add `renamed_from: <that name>` to rename it instead of creating another).',
      ),
    attribute: z.string().optional().describe('The definition concerned.'),
    spec: ModelSpecDoc.optional().describe('The definition as the document states it.'),
    ref_type_guid: z
      .string()
      .nullable()
      .optional()
      .describe(
        'A reference declared: the guid its allowed_ref_type names now; null for a type the plan creates or renames to that name.',
      ),
    current: DefinitionSummary.optional().describe('The live definition as the tenant has it, summarised.'),
    changes: z
      .array(FieldChange)
      .optional()
      .describe("redeclare_attribute: how the document's specification differs from the live one."),
    impact: WithdrawImpact.nullable()
      .optional()
      .describe(
        `What withdrawing removes (a withdrawal's dry run); null past the first ${PLAN_MAX_IMPACTS} withdrawals of a plan.`,
      ),
    blocked: z
      .object({ reason: z.enum(REASONS), message: z.string() })
      .optional()
      .describe('Applying the step now would be refused with this reason.'),
    carry: PlanCarry.nullable()
      .optional()
      .describe(
        `redeclare_attribute: what carrying the stored values to the definition stated anew keeps and refuses; null past the first ${PLAN_MAX_IMPACTS} withdrawals of a plan.`,
      ),
  }),
);

// ——— Routes ———

/** The reasons of the declaration rules that need no database (checkDeclaration): a declaration's and a plan's. */
export const DECLARATION_RULE_REASONS: Reason[] = [
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
