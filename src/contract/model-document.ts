// The metamodel as a document, and what the service answers about one: a declaration (with the JSON Schema
// conditions that tie its fields together), a definition, a type and a whole document as a file states them, a
// plan's steps, a plan and an apply's report. Each field is declared here once, with its description: the OpenAPI
// document, the GraphQL objects of a plan, the resolvers' types and the CLI's read them.
// Over 300 lines: the document and the answers about it are read together, and the declaration's conditions are
// what editors and fuzzers check a document against.

import { z } from 'zod';
import { REASONS } from '../errors.js';
import {
  MAX_ALLOWED_VALUE_LENGTH,
  MAX_ALLOWED_VALUES,
  MAX_ATTRIBUTE_DEFS,
  MAX_DESCRIPTION_LENGTH,
  MAX_DISPLAY_NAME_LENGTH,
  MAX_FORMER_NAMES,
  MAX_MULTI_VALUES,
  MAX_STRING_VALUE,
} from '../model/limits.js';
import {
  MODEL_FORMAT,
  MODEL_MAX_TYPES,
  PLAN_ACTION_DESCRIPTIONS,
  PLAN_ACTIONS,
  PLAN_MAX_IMPACTS,
} from '../model/plans.js';
import { CARDINALITIES, VALUE_TYPES } from '../model/value-types.js';
import { nameField, refusing, typeName } from './refusing-fields.js';
import { DefinitionSummary, FieldChange, guid, named, PlanCarry, WithdrawImpact } from './wire.js';

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
      description: z
        .string()
        .max(MAX_DESCRIPTION_LENGTH)
        .nullish()
        .describe(
          `What the attribute is for, for people: at most ${MAX_DESCRIPTION_LENGTH.toLocaleString('en-US')} characters once trimmed, line breaks and tabs allowed, no other control or invisible characters (invalid_field). Changeable in place.`,
        ),
      display_name: z
        .string()
        .max(MAX_DISPLAY_NAME_LENGTH)
        .nullish()
        .describe(
          `A label for people (the name stays the key): at most ${MAX_DISPLAY_NAME_LENGTH} characters once trimmed, one line, no control or invisible characters (invalid_field). Changeable in place.`,
        ),
    })
    .meta(DECLARE_CONDITIONS),
);

/** A declaration's field, optional: sent, it replaces the stored one (null resets it to its default). */
const changed = <T extends z.ZodType>(schema: T) => schema.optional();
const D = DeclareBody.shape;

export const EvolveBody = named(
  'EvolveAttribute',
  'A change of a live definition in place: the declaration fields to change (the name is in the path). A field sent replaces the stored one, null resets it to its default (no enumeration, no default, false); a field left out is kept. Only changes every stored value survives are made in place (attribute_change_not_in_place otherwise); the merged definition is checked by the declaration rules.',
  z.strictObject({
    value_type: changed(D.value_type).describe(
      'Kind of value: only the one it has (it cannot change in place).',
    ),
    cardinality: changed(D.cardinality).describe('Only the one it has (it cannot change in place).'),
    allowed_values: changed(D.allowed_values).describe(
      'The enumeration: a superset of the current one (values added), or null for none (any value).',
    ),
    allowed_ref_type: changed(D.allowed_ref_type).describe(
      'Only the one it has (it cannot change in place).',
    ),
    required: changed(D.required).describe(
      'false (or null) drops the requirement; true only if it was required.',
    ),
    default_value: changed(D.default_value).describe(
      'Another default (applied to instances created from now on), or null for none.',
    ),
    filterable: changed(D.filterable).describe('entity_ref only: turns filtering on or off.'),
    description: changed(D.description).describe('Another description, or null for none.'),
    display_name: changed(D.display_name).describe('Another display name, or null for none.'),
  }),
);

// ——— The metamodel as a document ———

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
    description: z
      .string()
      .max(MAX_DESCRIPTION_LENGTH)
      .optional()
      .describe('What the type is for, for people (at most 1,000 characters); left out: none.'),
    display_name: z
      .string()
      .max(MAX_DISPLAY_NAME_LENGTH)
      .optional()
      .describe('A label for people (at most 256 characters); left out: none.'),
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
    $schema: z
      .string()
      .optional()
      .describe(
        "The JSON Schema of the document (/schemas/metamodel.json), for editors; read by no plan (the CLI's JSON export writes it).",
      ),
    format: z.literal(MODEL_FORMAT).describe('The document format and its version.'),
    types: z.array(ModelType).max(MODEL_MAX_TYPES),
  }),
);

/** Why applying a step now would be refused. */
export const PlanBlocked = z.object({
  reason: z.enum(REASONS).describe('The refusal reason the step would get.'),
  message: z.string().describe('Human-readable text; do not branch on it.'),
});

export const PlanStep = named(
  'ModelPlanStep',
  'One change a plan would make, in the order to apply it.',
  z.object({
    action: z.enum(PLAN_ACTIONS).describe(
      Object.entries(PLAN_ACTION_DESCRIPTIONS)
        .map(([action, what]) => `\`${action}\`: ${what}`)
        .join(' '),
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
    spec: ModelAttribute.optional().describe('The definition as the document states it.'),
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
    blocked: PlanBlocked.optional().describe('Applying the step now would be refused with this reason.'),
    texts: z
      .object({ description: z.string().nullable(), display_name: z.string().nullable() })
      .optional()
      .describe(
        "describe_type: the type's description and display name as the document states them (null: none).",
      ),
    carry: PlanCarry.nullable()
      .optional()
      .describe(
        `redeclare_attribute: what carrying the stored values to the definition stated anew keeps and refuses; null past the first ${PLAN_MAX_IMPACTS} withdrawals of a plan.`,
      ),
  }),
);
export type PlanStep = z.output<typeof PlanStep>;

/** A definition as export writes it and a plan step carries it: the fields at their default left out, never null. */
export type ModelAttributeSpec = {
  [K in keyof z.output<typeof ModelAttribute>]: Exclude<z.output<typeof ModelAttribute>[K], null>;
};
export type ModelDocument = z.output<typeof ModelDocument>;

/** A type of the tenant a plan leaves as it is, with how many live definitions it has. */
const DriftType = z.object({
  name: z.string().describe("The type's name in the tenant."),
  type_guid: z.string().describe('The type.'),
  attributes: z.number().int().describe('Its live definitions declared by callers.'),
});

export const PlanDrift = z
  .object({
    types: z
      .array(DriftType)
      .describe(
        `Types an export would list (user-defined, or carrying your definitions) that the document does not name, by any name: left alone (a plan never deletes a type). At most ${MODEL_MAX_TYPES}, in name order.`,
      ),
    unmanaged: z
      .array(DriftType)
      .describe(
        'Types the document lists without `attributes`: their definitions are left alone, whatever they are.',
      ),
    more: z.boolean().describe(`More types than ${MODEL_MAX_TYPES} are not named: the list stops there.`),
  })
  .describe(
    'What the tenant has that the document does not mention (its drift), left alone: `types` and `unmanaged`, each type `{name, type_guid, attributes}`, and `more`. Definitions of a type the document lists with `attributes` but not the definition are withdraw_attribute steps instead: withdrawn only with allow_withdraw.',
  );
export type PlanDrift = z.output<typeof PlanDrift>;

/** A definition a carried redeclaration will declare as the document states it. */
const PlanRedeclaring = z.object({
  type: z.string().describe("The type's name in the document."),
  type_guid: z.string().describe('The type.'),
  attribute: z.string().describe('The definition.'),
  ends_after: z.string().nullable().describe('The earliest the redeclaration can end.'),
});

export const ModelPlan = z
  .object({
    tenant: z.string().describe("The tenant the plan is for: your token's."),
    based_on: z
      .string()
      .describe(
        "The tenant's model version the plan was computed from: send it to apply, which then acts only on that state (any change of the tenant's metamodel since, by anyone, changes it).",
      ),
    steps: z.array(PlanStep).describe('The steps, in the order to apply them.'),
    unchanged: z
      .object({
        types: z.number().int().describe('Types of the document the tenant has under that name.'),
        attributes: z.number().int().describe('Definitions the tenant has as stated.'),
      })
      .describe('Types and definitions of the document the tenant already has as stated.'),
    drift: PlanDrift,
    redeclaring: z
      .array(PlanRedeclaring)
      .describe(
        'Definitions the document states as a redeclaration under way will declare them (its values being carried): nothing to do, but the tenant matches only once the service has declared them.',
      ),
  })
  .describe('What applying a model document would change; no steps when the tenant matches it.');
export type ModelPlan = z.output<typeof ModelPlan>;

export const ApplyRequest = z.strictObject({
  document: ModelDocument,
  allow_withdraw: z
    .boolean()
    .optional()
    .describe('Withdraw (and redeclare) definitions the document does not list or states differently.'),
  based_on: z
    .string()
    .optional()
    .describe("The plan's `based_on`: apply only to the state the plan was made from."),
  expect_tenant: z.string().optional().describe('Apply only if the token is for this tenant.'),
});

/** What an apply did; `matches` when the tenant now matches the document. */
export const ApplyReport = z.object({
  tenant: z.string(),
  based_on: z.string().describe('The model version the steps were applied to.'),
  model_version: z.string().describe('The model version they left.'),
  applied: z.array(PlanStep),
  carrying: z
    .array(PlanStep)
    .describe("Redeclarations carrying values: declared anew by the service after the purge's grace."),
  waiting: z
    .array(PlanStep)
    .describe('Declarations of names still being purged: apply again once they are free.'),
  remaining: z.array(PlanStep).describe('Steps not applied (stopped, or more to come).'),
  more: z.boolean().describe('More steps are due than one request runs: apply again.'),
  stopped: z
    .object({ step: PlanStep, reason: z.enum(REASONS), message: z.string() })
    .nullable()
    .describe('The step refused on the way (a race), with its reason.'),
  redeclaring: z
    .array(PlanRedeclaring)
    .describe("Definitions already being redeclared as the document states them (the plan's `redeclaring`)."),
  matches: z
    .boolean()
    .describe('The tenant matches the document (nothing carrying, being redeclared, waiting or remaining).'),
});
export type ApplyReport = z.output<typeof ApplyReport>;
