// The REST contract's shared shapes: the envelope, and the rows the service sends, as zod schemas. The OpenAPI
// document is generated from them (rest/schemas.ts names the routes around them), and every TypeScript type of a
// row is derived from them, for the service, the CLI, the load test and the tests alike.
// Over 300 lines: every row of the contract in one place, each field declared once with its description.
import { z } from 'zod';
import { CHANGE_KIND_DESCRIPTIONS, CHANGE_KINDS } from '../model/changes.js';
import {
  IMPACT_SCAN_MAX,
  MAX_ALLOWED_VALUES,
  MAX_FORMER_NAMES,
  MAX_FORMER_NAMES_JSON_BYTES,
  MAX_MULTI_VALUES,
} from '../model/limits.js';
import { TYPE_ORIGIN_NAMES } from '../model/origins.js';
import { CARDINALITIES, VALUE_TYPES } from '../model/value-types.js';
import { FormerNameRow } from './former-names.js';
import { guid, named } from './named.js';

/** Page sizes of the paged lists (`page_size`): part of the contract, so a client can ask for the largest page. */
export { PAGES } from '../model/pages.js';
export { FormerNameRow, RELEASE_FORMER_NAME } from './former-names.js';
export { components, descriptionOf, guid, named } from './named.js';

/** Every REST answer: `{STATUS, MESSAGE, DATA}`; a refusal has STATUS FAIL and `DATA.reason`. */
export interface Envelope<D = Record<string, unknown>> {
  STATUS: 'SUCCESS' | 'FAIL';
  MESSAGE: string;
  DATA: D;
}

/** The media type of the purge's progress stream: one JSON object per line, the envelope last. */
export const NDJSON = 'application/x-ndjson';

// Each field of a type is declared here once: the stored type (db/entity-types.ts), the REST row, the GraphQL object
// (schema/row-fields.ts) and their descriptions derive from it.
export const EntityTypeRow = named(
  'EntityTypeRow',
  'A class of catalog entities (datasource, table, dashboard, or a type a caller invents). Fields that do not apply to a type are left out of a REST row (never sent as false or null) and are null in GraphQL.',
  z.object({
    guid: guid(
      'Identifier: a UUID derived from the tenant and the (normalised) name the type was created under, so a type deleted and recreated under that name gets the same guid back. Kept by a rename.',
    ),
    name: z
      .string()
      .describe(
        'Type name as first spelt (trimmed). Names are unique per tenant, compared trimmed, NFC-composed and case-folded.',
      ),
    origin: z
      .enum(TYPE_ORIGIN_NAMES)
      .describe(
        'Where the type comes from: `user_defined` for types you create, `system` for shipped ones, `connector` for reported ones.',
      ),
    catalog_level: z
      .literal(true)
      .optional()
      .describe(
        "True: the type's entities are rows in the Entity Catalog table. Set on the built-in levels, managed types and user-defined types.",
      ),
    vocabulary: z
      .literal(true)
      .optional()
      .describe(
        "True: the type's entities are values picked in an attribute cell, not table rows (domain, env, tag, classification, group).",
      ),
    label: z.string().optional().describe('Display name of the built-in levels and managed types.'),
    icon: z
      .string()
      .optional()
      .describe('Key the client maps to an icon (built-in levels and managed types).'),
    parent_type: guid(
      'The catalog level one step above (database → datasource, schema → database, table → schema, column → table); none on datasource and every other type. A guid in REST rows, the type itself in GraphQL.',
    ).optional(),
    creatable: z
      .literal(false)
      .optional()
      .describe(
        'False on managed types (dashboard): creating an instance through the curation API is refused with type_not_creatable.',
      ),
    name_locked_hint: z
      .string()
      .optional()
      .describe("Managed types: text to show where an instance's name cannot be edited."),
    description: z
      .string()
      .optional()
      .describe(
        'What the type is for, for people (at most 1,000 characters; PATCH /entities/types/{guid}); none when not set.',
      ),
    display_name: z
      .string()
      .optional()
      .describe('A label for people (at most 256 characters; the name stays the key); none when not set.'),
    created_at: z.iso
      .datetime()
      .optional()
      .describe(
        'When the type was created (ISO 8601 date-time, UTC); for a type deleted and created again under its name, when it was created again.',
      ),
    former_names: z
      .array(FormerNameRow)
      .optional()
      .describe(
        `The names the type had before its renames, most recent first (at most ${MAX_FORMER_NAMES}, and as many as fit ${MAX_FORMER_NAMES_JSON_BYTES.toLocaleString('en-US')} bytes of JSON: the oldest go first; none on a type never renamed), with when each was left. The name it was created under keeps resolving to it (create-or-get by that name answers this type) until it is released (POST /entities/types/{guid}/former-names/release); the others are free.`,
      ),
    version: z
      .string()
      .describe(
        'The type\'s version: it changes with every change of its row or of its live definitions (a rename, a declaration, a withdrawal), and is the same on every instance. REST sends it as the weak ETag (`W/"<version>"`) of the type and of its attribute listing and takes it back in `If-Match`; GraphQL mutations take it as `ifVersion`. A write given an older one is refused with precondition_failed.',
      ),
  }),
);

export type EntityTypeRow = z.output<typeof EntityTypeRow>;

// Each field of a definition is declared here once: the REST row, the GraphQL object (schema/attribute.ts, through
// schema/row-fields.ts) and their descriptions derive from it.
export const AttributeRow = named(
  'AttributeDefinition',
  'Declares that instances of a type may carry a value of a kind under a name. Never renamed. Changed in place only where every stored value survives the change (values added to its enumeration, required dropped, filterable, its default: PATCH …/attributes/{name}); any other change is a redeclaration (withdrawn and declared anew, its values carried, through a model document). As listed, every field is present on every row.',
  z.object({
    guid: guid('Identifier of the definition.'),
    name: z
      .string()
      .describe('Attribute name as declared (trimmed), unique within the owning type (letter case ignored).'),
    // A nullable field is described as a whole, so that the OpenAPI document carries the description too.
    owner_type: z
      .string()
      .nullable()
      .describe(
        'Owning type; null for the platform attributes (`origin: system`), which the framework owns.',
      ),
    value_type: z
      .enum(VALUE_TYPES)
      .describe(
        `Kind of value: one of ${VALUE_TYPES.map((v) => `\`${v}\``).join(', ')}; \`entity_ref\` is a reference to an entity.`,
      ),
    cardinality: z
      .enum(CARDINALITIES)
      .describe(
        `\`single\`: one value; \`multi\`: a list of up to ${MAX_MULTI_VALUES.toLocaleString('en-US')} values.`,
      ),
    allowed_values: z
      .array(z.unknown())
      .nullable()
      .describe(
        `Enumerated values (scalar types only, at most ${MAX_ALLOWED_VALUES.toLocaleString('en-US')}); null when none.`,
      ),
    allowed_ref_type: z
      .string()
      .nullable()
      .describe('The type an entity_ref attribute points at; null on other value types.'),
    required: z.boolean().describe('Whether instances must carry a value (false unless declared true).'),
    default_value: z
      .unknown()
      .describe(
        'Applied when an instance is created without a value; an entity guid (or list of guids) for references; null when none.',
      ),
    filterable: z
      .boolean()
      .describe(
        'Whether the attribute can be filtered on; only entity_ref attributes can be filterable (false on the others).',
      ),
    origin: z
      .enum(['system', 'user_defined'])
      .describe('`system` for the platform attributes, `user_defined` for declared ones.'),
    description: z
      .string()
      .nullable()
      .describe(
        'What the attribute is for, as declared for people (at most 1,000 characters); null when none.',
      ),
    display_name: z
      .string()
      .nullable()
      .describe('A label for people (at most 256 characters; the name stays the key); null when none.'),
    redeclaring: z
      .object({
        since: z
          .string()
          .nullable()
          .describe('When the redeclaration began (the old definition was withdrawn).'),
        ends_after: z
          .string()
          .nullable()
          .describe(
            "The earliest it can end: the purge's grace after it began; the carry's pass over the instances follows.",
          ),
      })
      .nullable()
      .describe(
        'Being redeclared, its values carried to the definition stated anew: the row shows the definition as it will be (the old one is withdrawn, the new one declared when the carry ends); null otherwise.',
      ),
  }),
);

export type AttributeRow = z.output<typeof AttributeRow>;

// Each field of a change record is declared here once: the REST row and the GraphQL object (schema/history.ts) derive
// from it.
export const ChangeRow = named(
  'ChangeRow',
  'One change of the metamodel, written in the same transaction as the change itself: who, when, what, and what it was before and after.',
  z.object({
    id: z.string().describe('Stable identifier of the record (`<shard>-<sequence>`).'),
    at: z.string().describe('When the change was made (ISO 8601 date-time, UTC, to the microsecond).'),
    kind: z
      .enum(CHANGE_KINDS)
      .describe(
        `What the change did: ${CHANGE_KINDS.map((k) => `\`${k}\`: ${CHANGE_KIND_DESCRIPTIONS[k]}`).join(' ')}`,
      ),
    type_guid: z.string().describe('The type changed, or whose definition changed.'),
    attribute_guid: z
      .string()
      .nullable()
      .describe('The attribute definition changed; null for a change of the type itself.'),
    actor: z
      .string()
      .nullable()
      .describe("The `sub` of the caller's token; null for the purge's own changes."),
    request_id: z
      .string()
      .nullable()
      .describe("The request's id (its `x-request-id` answer header); null for the purge's own changes."),
    reason: z
      .string()
      .nullable()
      .describe(
        "Why the change was made, as its caller said (the `X-Change-Reason` header, a mutation's `reason`); null when it did not.",
      ),
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

/** A change as both APIs render it. */
export type ChangeRow = z.output<typeof ChangeRow>;

export const PurgeReport = named(
  'PurgeReport',
  'What a run of the daily purge job removed.',
  z.object({
    removed: z
      .array(
        z.object({ guid: z.string(), type_guid: z.string(), name: z.string(), values_removed: z.number() }),
      )
      .describe(
        'Withdrawn definitions removed, each with the values removed since its withdrawal (by the background purge and by this run).',
      ),
    values_removed: z
      .number()
      .describe(
        "Stored values this run's batches removed (most are removed in the background before the run).",
      ),
    batches: z.number().describe('Removal batches run.'),
    pending: z.number().describe('Withdrawn definitions still waiting (their grace period has not passed).'),
  }),
);

export type PurgeReport = z.output<typeof PurgeReport>;

// ——— What a plan step says about a stored definition ———

/** Values and lengths a plan shows (resolvers/model-summaries.ts applies them). */
export const PLAN_SUMMARY = {
  /** A default shown as it is when its JSON text is at most this long; past it, only its length. */
  maxDefaultChars: 256,
  /** Examples of allowed values added and removed that a step shows, each way. */
  sampleValues: 10,
  /** JSON text of the examples a whole plan shows; past it, steps give counts only. */
  maxSampleChars: 1024 * 1024,
} as const;

export const DefinitionSummary = named(
  'DefinitionSummary',
  `A stored definition as a plan step shows it: its specification with the enumeration counted (not listed) and a default longer than ${PLAN_SUMMARY.maxDefaultChars} characters of JSON given by its length, so that a plan's answer grows with the document sent, not with what the tenant stores.`,
  z.object({
    name: z.string(),
    value_type: z.enum(VALUE_TYPES),
    cardinality: z.enum(CARDINALITIES),
    allowed_values_count: z.number().optional().describe('Entries of its enumeration (absent: none).'),
    allowed_ref_type: z.string().optional().describe('Name of the type a reference points at.'),
    required: z.literal(true).optional(),
    default_value: z
      .unknown()
      .optional()
      .describe(`Its default, when its JSON text is at most ${PLAN_SUMMARY.maxDefaultChars} characters.`),
    default_value_chars: z
      .number()
      .optional()
      .describe("The default's JSON text length, when too long to show (default_value is then absent)."),
    filterable: z.literal(true).optional(),
  }),
);
export type DefinitionSummary = z.output<typeof DefinitionSummary>;

export const FieldChange = named(
  'FieldChange',
  `How one field of a definition's specification differs between the tenant (from) and the document (to). For \`allowed_values\`: how many values are added and removed, with up to ${PLAN_SUMMARY.sampleValues} of each as examples (at most ${PLAN_SUMMARY.maxSampleChars / 1024 / 1024} MiB of examples in a whole plan; past it, counts only).`,
  z.object({
    field: z.enum([
      'value_type',
      'cardinality',
      'allowed_values',
      'allowed_ref_type',
      'required',
      'default_value',
      'filterable',
      'description',
      'display_name',
    ]),
    from: z.unknown().optional().describe('The value now (absent: none, or too long to show).'),
    to: z.unknown().optional().describe('The value in the document (absent: none, or too long to show).'),
    from_chars: z.number().optional().describe('A default too long to show: its JSON text length now.'),
    to_chars: z
      .number()
      .optional()
      .describe('A default too long to show: its JSON text length in the document.'),
    added_count: z.number().optional().describe('allowed_values: values the document adds.'),
    removed_count: z.number().optional().describe('allowed_values: values the document removes.'),
    added: z.array(z.unknown()).optional().describe('allowed_values: the first values added.'),
    removed: z.array(z.unknown()).optional().describe('allowed_values: the first values removed.'),
    reordered: z
      .literal(true)
      .optional()
      .describe('allowed_values: the same values, listed in another order.'),
  }),
);
export type FieldChange = z.output<typeof FieldChange>;

export const WithdrawImpact = named(
  'WithdrawImpact',
  `What withdrawing a definition removes: the instances carrying a value and the values stored, counted over at most ${IMPACT_SCAN_MAX.toLocaleString('en-US')} instances of the type.`,
  z.object({
    instances: z.number().int().describe('Instances carrying a value.'),
    values: z.number().int().describe('Values stored.'),
    complete: z
      .boolean()
      .describe(
        'False when the type has more instances than one count reads: the figures are a lower bound.',
      ),
  }),
);

/** What carrying a redeclared definition's values would do, counted like a withdrawal's impact. */
export const PlanCarry = named(
  'ModelPlanCarry',
  "What a redeclaration's carry would do with the stored values.",
  z.object({
    values: z.number().int().describe('Stored values the definition stated anew accepts: written back.'),
    refused: z.number().int().describe('Stored values it refuses: reported, not written back.'),
    complete: z
      .boolean()
      .describe('False when the count stopped at its bound (the counts are then lower bounds).'),
  }),
);
