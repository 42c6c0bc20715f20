// The routes of the metamodel as a file: export, plan, apply, and the document's JSON Schema.

import { z } from 'zod';
import { ApplyReport, ApplyRequest, ModelDocument, ModelPlan } from '../../contract/model-document.js';
import { MAX_ATTRIBUTE_DEFS } from '../../model/limits.js';
import { MODEL_MAX_DEFINITION_BYTES, MODEL_MAX_DEFINITIONS, MODEL_MAX_TYPES } from '../../model/plans.js';
import { APPLY_MAX_STEPS } from '../../resolvers/model-apply.js';
import { DECLARATION_RULE_REASONS } from './bodies.js';
import { queryFlag, type RouteDoc, route } from './fields.js';

export const MODEL_ROUTES = {
  exportModel: route({
    method: 'GET',
    path: '/entities/model',
    operationId: 'exportModel',
    tag: 'Model as code',
    summary: "The tenant's metamodel as one document (export)",
    description: `Types by name and their live definitions, in a stable order; the document round-trips: planned and applied on an empty tenant, it exports again the same. Its JSON Schema is at \`/schemas/metamodel.json\`. A model of more than ${MODEL_MAX_TYPES} types or ${MODEL_MAX_DEFINITIONS.toLocaleString('en-US')} definitions, or whose enumerations and defaults pass ${MODEL_MAX_DEFINITION_BYTES / 1024 / 1024} MiB, is refused (\`model_too_large\`) before it is read.`,
    auth: 'bearer',
    query: z.looseObject({
      former_names: queryFlag(
        '`true`: a renamed type carries `renamed_from`, the name it had before its last rename, so that a plan on a tenant still holding it under that name renames it instead of creating another.',
      ),
    }),
    answers: { 200: { description: 'The document.', data: z.object({ model: ModelDocument }) } },
    refusals: ['model_too_large'],
  }),
  planModel: route({
    method: 'POST',
    path: '/entities/model/plan',
    operationId: 'planModel',
    tag: 'Model as code',
    summary: 'What applying a model document would change (plan)',
    description: `Compares the document with the tenant and lists the steps that would make the tenant match it, in the order to apply them, each through its ordinary endpoint: types to create or rename, definitions to withdraw (with their dry-run impact), to redeclare (a changed specification, with how it differs) and to declare. Types the document does not list are left alone. Writes nothing. Each declaration is checked with the declare endpoint's own rules and reasons; a malformed document is \`invalid_model\`, a type listing more than ${MAX_ATTRIBUTE_DEFS} definitions \`too_many_attribute_defs\`. Bounded like the export: the definitions of the types the document names are counted before they are read, and more than ${MODEL_MAX_DEFINITIONS.toLocaleString('en-US')} of them, or more than ${MODEL_MAX_DEFINITION_BYTES / 1024 / 1024} MiB of their enumerations and defaults, is refused (\`model_too_large\`). Steps show stored definitions summarised (enumerations counted, long defaults sized), so the answer grows with the document, not with what the tenant stores.`,
    auth: 'bearer',
    body: ModelDocument,
    bodyCheckedByResolver: true,
    answers: {
      200: {
        description: 'The plan; no steps when the tenant already matches the document.',
        data: ModelPlan,
      },
    },
    refusals: ['invalid_model', 'model_too_large', 'too_many_attribute_defs', ...DECLARATION_RULE_REASONS],
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
    body: ApplyRequest,
    answers: {
      200: {
        description: 'What was applied; `matches` when the tenant now matches the document.',
        data: ApplyReport,
      },
    },
    refusals: [
      'invalid_model',
      'model_too_large',
      'too_many_attribute_defs',
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
} satisfies Record<string, RouteDoc>;
