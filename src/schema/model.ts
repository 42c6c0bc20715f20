// GraphQL for the metamodel as code: the tenant's model document and the plan of a document (the same resolvers as
// REST's GET /entities/model and POST /entities/model/plan).
import type { z } from 'zod';
import {
  ModelAttribute,
  type ModelPlan,
  ModelPlan as ModelPlanRow,
  PlanBlocked,
  PlanStep,
} from '../contract/model-document.js';
import {
  components,
  DefinitionSummary,
  descriptionOf,
  FieldChange,
  PlanCarry,
  WithdrawImpact,
} from '../contract/wire.js';
import { refuse } from '../errors.js';
import {
  type PlanAction as Action,
  GRAPHQL_PLAN_MAX_DOCUMENT_BYTES,
  PLAN_ACTION_DESCRIPTIONS,
} from '../model/plans.js';
import { exportModel, planModel } from '../resolvers/model.js';
import { builder } from './builder.js';
import { measureAnswer } from './limits.js';
import { rowDescription, rowFields } from './row-fields.js';

const PlanAction = builder.enumType('ModelPlanAction', {
  description: 'What a plan step does.',
  values: Object.fromEntries(
    Object.entries(PLAN_ACTION_DESCRIPTIONS).map(([action, description]) => [action, { description }]),
  ) as Record<Action, { description: string }>,
});

const Impact = builder.objectRef<z.output<typeof WithdrawImpact>>('ModelPlanImpact').implement({
  description: 'What withdrawing a definition removes (its dry run).',
  fields: (t) => rowFields(t, WithdrawImpact.shape),
});

const Blocked = builder.objectRef<z.output<typeof PlanBlocked>>('ModelPlanBlocked').implement({
  description: 'Why applying a step now would be refused.',
  fields: (t) =>
    rowFields(t, PlanBlocked.shape, {
      // a refusal reason, as REST sends it (the reasons are listed in the docs, not as a GraphQL enum)
      reason: t.exposeString('reason', { description: rowDescription(PlanBlocked.shape.reason) }),
    }),
});

const Carry = builder.objectRef<z.output<typeof PlanCarry>>('ModelPlanCarry').implement({
  description: descriptionOf(PlanCarry),
  fields: (t) => rowFields(t, PlanCarry.shape),
});

const step = PlanStep.shape;
/** A field GraphQL carries as JSON: what the row says of it, and the shape it holds. */
const jsonDescription = (key: 'spec' | 'current' | 'changes', shape: z.ZodType) =>
  `${rowDescription(step[key])} (${components.get(shape)?.id}: ${descriptionOf(shape)})`;

const Step = builder.objectRef<PlanStep>('ModelPlanStep').implement({
  description: descriptionOf(PlanStep),
  fields: (t) =>
    rowFields(t, step, {
      action: t.field({
        type: PlanAction,
        description: rowDescription(step.action),
        resolve: (s) => s.action,
      }),
      type_guid: t.exposeID('type_guid', { nullable: true, description: rowDescription(step.type_guid) }),
      spec: t.field({
        type: 'JSON',
        nullable: true,
        description: jsonDescription('spec', ModelAttribute),
        resolve: (s) => s.spec ?? null,
      }),
      ref_type_guid: t.id({
        nullable: true,
        description: rowDescription(step.ref_type_guid),
        resolve: (s) => s.ref_type_guid ?? null,
      }),
      current: t.field({
        type: 'JSON',
        nullable: true,
        description: jsonDescription('current', DefinitionSummary),
        resolve: (s) => s.current ?? null,
      }),
      changes: t.field({
        type: 'JSON',
        nullable: true,
        description: jsonDescription('changes', FieldChange),
        resolve: (s) => s.changes ?? null,
      }),
      texts: t.field({
        type: 'JSON',
        nullable: true,
        description: rowDescription(step.texts),
        resolve: (s) => s.texts ?? null,
      }),
      impact: t.field({
        type: Impact,
        nullable: true,
        description: rowDescription(step.impact),
        resolve: (s) => s.impact ?? null,
      }),
      blocked: t.field({
        type: Blocked,
        nullable: true,
        description: rowDescription(step.blocked),
        resolve: (s) => s.blocked ?? null,
      }),
      carry: t.field({
        type: Carry,
        nullable: true,
        description: rowDescription(step.carry),
        resolve: (s) => s.carry ?? null,
      }),
    }),
});

const Unchanged = builder.objectRef<ModelPlan['unchanged']>('ModelPlanUnchanged').implement({
  description: rowDescription(ModelPlanRow.shape.unchanged),
  fields: (t) => rowFields(t, ModelPlanRow.shape.unchanged.shape),
});

const Plan = builder.objectRef<ModelPlan>('ModelPlan').implement({
  description: descriptionOf(ModelPlanRow),
  fields: (t) =>
    rowFields(t, ModelPlanRow.shape, {
      steps: t.field({
        type: [Step],
        description: rowDescription(ModelPlanRow.shape.steps),
        resolve: (p) => p.steps,
      }),
      unchanged: t.field({
        type: Unchanged,
        description: rowDescription(ModelPlanRow.shape.unchanged),
        resolve: (p) => p.unchanged,
      }),
      drift: t.field({
        type: 'JSON',
        description: rowDescription(ModelPlanRow.shape.drift),
        resolve: (p) => p.drift,
      }),
      redeclaring: t.field({
        type: 'JSON',
        description: rowDescription(ModelPlanRow.shape.redeclaring),
        resolve: (p) => p.redeclaring,
      }),
    }),
});

builder.queryFields((t) => ({
  model: t.field({
    type: 'JSON',
    description:
      "The tenant's metamodel as one document (ModelDocument in the OpenAPI document; JSON Schema at /schemas/metamodel.json): types by name with their live definitions, in a stable order. Refusals: model_too_large.",
    args: {
      formerNames: t.arg.boolean({
        required: false,
        description:
          'A renamed type carries renamed_from, the name it had before its last rename (a plan elsewhere then renames rather than creates).',
      }),
    },
    resolve: (_root, args, ctx) => exportModel(ctx, { formerNames: args.formerNames === true }),
  }),
  modelPlan: t.field({
    type: Plan,
    description: `What applying a model document would change (writes nothing). A document of at most ${GRAPHQL_PLAN_MAX_DOCUMENT_BYTES.toLocaleString('en-US')} bytes (larger: model_too_large; REST plans up to the body limit). Refusals: invalid_model, model_too_large, and the reasons of a declaration (e.g. unknown_value_type) for a definition the document states.`,
    args: {
      document: t.arg({
        type: 'JSON',
        required: true,
        description: 'A model document (format entity-metamodel/v1).',
      }),
    },
    resolve: (_root, args, ctx) => {
      // (counted as its JSON text, each object and list a byte more, before it is read; the count stops past the bound)
      if (
        measureAnswer(args.document, GRAPHQL_PLAN_MAX_DOCUMENT_BYTES, []) > GRAPHQL_PLAN_MAX_DOCUMENT_BYTES
      ) {
        throw refuse(
          'model_too_large',
          `The document is larger than ${GRAPHQL_PLAN_MAX_DOCUMENT_BYTES.toLocaleString('en-US')} bytes, the most a GraphQL operation plans; plan it with POST /entities/model/plan.`,
        );
      }
      return planModel(ctx, args.document);
    },
  }),
}));
