// The routes of entity types: create-or-get, pages, by guid and by name, rename, delete; their history and the
// change feed; the metamodel as a file (export, plan, JSON Schema).

import { z } from 'zod';
import { ChangeRow, EntityTypeRow } from '../../contract/wire.js';
import { REASONS } from '../../errors.js';
import { CHANGE_PAGE_MAX_BYTES } from '../../resolvers/changes.js';
import { MODEL_MAX_DEFINITION_BYTES, MODEL_MAX_DEFINITIONS, MODEL_MAX_TYPES } from '../../resolvers/model.js';
import { APPLY_MAX_STEPS } from '../../resolvers/model-apply.js';
import { DECLARATION_RULE_REASONS, ModelDocument, PlanStep } from './bodies.js';
import {
  guidParams,
  NAME_DOC,
  pageQuery,
  pageSizeField,
  type RouteDoc,
  refusing,
  route,
  typeName,
} from './fields.js';

export const TYPE_ROUTES = {
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
    description: `Compares the document with the tenant and lists the steps that would make the tenant match it, in the order to apply them, each through its ordinary endpoint: types to create or rename, definitions to withdraw (with their dry-run impact), to redeclare (a changed specification, with how it differs) and to declare. Types the document does not list are left alone. Writes nothing. Each declaration is checked with the declare endpoint's own rules and reasons; a malformed document is \`invalid_model\`. Bounded like the export: the definitions of the types the document names are counted before they are read, and more than ${MODEL_MAX_DEFINITIONS.toLocaleString('en-US')} of them, or more than ${MODEL_MAX_DEFINITION_BYTES / 1024 / 1024} MiB of their enumerations and defaults, is refused (\`model_too_large\`). Steps show stored definitions summarised (enumerations counted, long defaults sized), so the answer grows with the document, not with what the tenant stores.`,
    auth: 'bearer',
    body: ModelDocument,
    bodyCheckedByResolver: true,
    answers: {
      200: {
        description: 'The plan; no steps when the tenant already matches the document.',
        data: z.object({
          tenant: z.string().describe("The tenant the plan is for: your token's."),
          based_on: z
            .string()
            .describe(
              "The tenant's model version the plan was computed from: send it to apply, which then acts only on that state.",
            ),
          steps: z.array(PlanStep),
          unchanged: z
            .object({ types: z.number(), attributes: z.number() })
            .describe('Types and definitions of the document the tenant already has as stated.'),
        }),
      },
    },
    refusals: ['invalid_model', 'model_too_large', ...DECLARATION_RULE_REASONS],
  }),
  applyModel: route({
    method: 'POST',
    path: '/entities/model/apply',
    operationId: 'applyModel',
    tag: 'Model as code',
    summary: 'Make the tenant match a model document (apply): check everything, then act',
    description: `Plans the document again and refuses to start, writing nothing, when a step would be refused now, when it would withdraw definitions and \`allow_withdraw\` is not true, when \`expect_tenant\` is not your tenant, or when the tenant's model changed since the plan whose \`based_on\` you send (\`plan_not_applicable\` listing the steps, \`tenant_mismatch\`, \`model_changed\`). Then applies the steps in order through the ordinary rules, each in its own transaction, none of another caller's changes between two of them; a step refused on the way stops it, with what was done and what remains (apply again to finish). A redeclaration withdraws the definition and carries its values to the one stated anew: the service declares it once the purge's grace has passed, keeping every stored value the new definition accepts and reporting those it refuses (in its history record). At most ${APPLY_MAX_STEPS} steps per request: past them, \`more\` is true and you apply again, \`based_on\` the \`model_version\` this one left. Send \`X-Change-Reason\` to record why (a file, a commit).`,
    auth: 'bearer',
    bodyCheckedByResolver: true,
    body: z.strictObject({
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
    }),
    answers: {
      200: {
        description: 'What was applied; `matches` when the tenant now matches the document.',
        data: z.object({
          tenant: z.string(),
          based_on: z.string().describe('The model version the steps were applied to.'),
          model_version: z.string().describe('The model version they left.'),
          applied: z.array(PlanStep),
          carrying: z
            .array(PlanStep)
            .describe(
              "Redeclarations carrying values: declared anew by the service after the purge's grace.",
            ),
          waiting: z
            .array(PlanStep)
            .describe('Declarations of names still being purged: apply again once they are free.'),
          remaining: z.array(PlanStep).describe('Steps not applied (stopped, or more to come).'),
          more: z.boolean().describe('More steps are due than one request runs: apply again.'),
          stopped: z
            .object({ step: PlanStep, reason: z.enum(REASONS), message: z.string() })
            .nullable()
            .describe('The step refused on the way (a race), with its reason.'),
          matches: z
            .boolean()
            .describe('The tenant matches the document (nothing carrying, waiting or remaining).'),
        }),
      },
    },
    refusals: [
      'invalid_model',
      'model_too_large',
      'plan_not_applicable',
      'model_changed',
      'tenant_mismatch',
      'unknown_field',
      ...DECLARATION_RULE_REASONS,
    ],
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
} satisfies Record<string, RouteDoc>;
