// GraphQL for the metamodel as code: the tenant's model document and the plan of a document (the same resolvers as
// REST's GET /entities/model and POST /entities/model/plan).
import type { z } from 'zod';
import {
  DefinitionSummary,
  descriptionOf,
  FieldChange,
  PlanCarry,
  WithdrawImpact,
} from '../contract/wire.js';
import {
  exportModel,
  type ModelPlan,
  type PLAN_ACTIONS,
  type PlanStep,
  planModel,
} from '../resolvers/model.js';
import { builder } from './builder.js';

const PlanAction = builder.enumType('ModelPlanAction', {
  description: 'What a plan step does.',
  values: {
    create_type: { description: 'Create a user-defined type (POST /entities/types).' },
    rename_type: { description: 'Rename a type to the name the document gives it.' },
    withdraw_attribute: { description: 'Withdraw a live definition the document does not list.' },
    redeclare_attribute: {
      description:
        'A live definition the document states differently: withdraw it, and declare it again once the daily purge has removed its data (definitions are immutable).',
    },
    declare_attribute: { description: 'Declare a definition the document lists.' },
  } satisfies Record<(typeof PLAN_ACTIONS)[number], { description: string }>,
});

const Impact = builder.objectRef<z.output<typeof WithdrawImpact>>('ModelPlanImpact').implement({
  description: 'What withdrawing a definition removes (its dry run).',
  fields: (t) => ({
    instances: t.exposeInt('instances', { description: 'Instances carrying a value.' }),
    values: t.exposeInt('values', { description: 'Values stored.' }),
    complete: t.exposeBoolean('complete', { description: WithdrawImpact.shape.complete.description }),
  }),
});

const Blocked = builder.objectRef<{ reason: string; message: string }>('ModelPlanBlocked').implement({
  description: 'Why applying a step now would be refused.',
  fields: (t) => ({
    reason: t.exposeString('reason', { description: 'The refusal reason the step would get.' }),
    message: t.exposeString('message', { description: 'Human-readable text; do not branch on it.' }),
  }),
});

const Carry = builder.objectRef<z.output<typeof PlanCarry>>('ModelPlanCarry').implement({
  description: descriptionOf(PlanCarry),
  fields: (t) => ({
    values: t.exposeInt('values', { description: PlanCarry.shape.values.description }),
    refused: t.exposeInt('refused', { description: PlanCarry.shape.refused.description }),
    complete: t.exposeBoolean('complete', { description: PlanCarry.shape.complete.description }),
  }),
});

const Step = builder.objectRef<PlanStep>('ModelPlanStep').implement({
  description: 'One change a plan would make, in the order to apply it.',
  fields: (t) => ({
    action: t.field({ type: PlanAction, description: 'What the step does.', resolve: (s) => s.action }),
    type: t.exposeString('type', { description: "The type's name in the document." }),
    typeGuid: t.exposeID('type_guid', {
      nullable: true,
      description: 'The type; null for one the plan creates.',
    }),
    from: t.string({
      nullable: true,
      description: "rename_type: the type's current name.",
      resolve: (s) => s.from ?? null,
    }),
    looksLikeRenameOf: t.string({
      nullable: true,
      description:
        'create_type: a type of yours the document does not list has definitions of exactly these names: likely a rename written by hand (add renamed_from to rename it instead).',
      resolve: (s) => s.looks_like_rename_of ?? null,
    }),
    attribute: t.string({
      nullable: true,
      description: 'The definition concerned.',
      resolve: (s) => s.attribute ?? null,
    }),
    spec: t.field({
      type: 'JSON',
      nullable: true,
      description: 'The definition as the document states it (ModelAttribute).',
      resolve: (s) => s.spec ?? null,
    }),
    refTypeGuid: t.id({
      nullable: true,
      description:
        'A reference declared: the guid its allowed_ref_type names now; null for a type the plan creates or renames to that name.',
      resolve: (s) => s.ref_type_guid ?? null,
    }),
    current: t.field({
      type: 'JSON',
      nullable: true,
      description: `The live definition as the tenant has it (DefinitionSummary): ${descriptionOf(DefinitionSummary)}`,
      resolve: (s) => s.current ?? null,
    }),
    changes: t.field({
      type: 'JSON',
      nullable: true,
      description: `redeclare_attribute: how the document's specification differs, a list of FieldChange: ${descriptionOf(FieldChange)}`,
      resolve: (s) => s.changes ?? null,
    }),
    impact: t.field({
      type: Impact,
      nullable: true,
      description: 'What withdrawing removes; null when not counted or not a withdrawal.',
      resolve: (s) => s.impact ?? null,
    }),
    blocked: t.field({
      type: Blocked,
      nullable: true,
      description: 'Applying the step now would be refused with this reason.',
      resolve: (s) => s.blocked ?? null,
    }),
    carry: t.field({
      type: Carry,
      nullable: true,
      description: `redeclare_attribute: ${descriptionOf(PlanCarry)} Null when not counted or not a redeclaration.`,
      resolve: (s) => s.carry ?? null,
    }),
  }),
});

const Unchanged = builder.objectRef<{ types: number; attributes: number }>('ModelPlanUnchanged').implement({
  description: 'What the tenant already has as the document states it.',
  fields: (t) => ({
    types: t.exposeInt('types', { description: 'Types of the document the tenant has under that name.' }),
    attributes: t.exposeInt('attributes', { description: 'Definitions the tenant has as stated.' }),
  }),
});

const Plan = builder.objectRef<ModelPlan>('ModelPlan').implement({
  description: 'What applying a model document would change; no steps when the tenant matches it.',
  fields: (t) => ({
    tenant: t.exposeString('tenant', { description: "The tenant the plan is for: your token's." }),
    basedOn: t.exposeString('based_on', {
      description:
        "The tenant's model version the plan was computed from: apply (POST /entities/model/apply) given it acts only on that state.",
    }),
    steps: t.field({
      type: [Step],
      description: 'The steps, in the order to apply them.',
      resolve: (p) => p.steps,
    }),
    unchanged: t.field({
      type: Unchanged,
      description: 'What already matches.',
      resolve: (p) => p.unchanged,
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
    description:
      'What applying a model document would change (writes nothing). Refusals: invalid_model, and the reasons of a declaration (e.g. unknown_value_type) for a definition the document states.',
    args: {
      document: t.arg({
        type: 'JSON',
        required: true,
        description: 'A model document (format entity-metamodel/v1).',
      }),
    },
    resolve: (_root, args, ctx) => planModel(ctx, args.document),
  }),
}));
