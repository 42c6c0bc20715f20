// Applying a model document, in the service, for every client: check everything, then act. The plan is computed
// again (resolvers/model.ts); apply refuses to start, writing nothing, when any step would be refused now, when it
// would withdraw definitions the caller did not allow, when the tenant is not the one the caller expects, or when the
// tenant's model is no longer the one the caller's plan was made from (`based_on`). Then each step runs through the
// ordinary rules, each in its own transaction, under a guard: every transaction first locks the tenant's model
// version and finds it as this apply left it, so nothing another caller commits slips between two steps. A step
// refused on the way (a race) stops the apply, with what was done and what remains; applying again finishes it.
// A change every stored value survives is made in place, at once (resolvers/evolution.ts); any other redeclaration
// withdraws the definition and carries its values to the new one (resolvers/carry.ts): it is done by the service once
// the purge's grace has passed; apply says it is waiting for that.

import type { RequestContext } from '../context.js';
import { type ApplyReport, ApplyRequest } from '../contract/model-document.js';
import { callerChangesSince, type ModelMark, readModelMark, versionTag } from '../db/model-version.js';
import { AppError, bodyObject, isAppError, refuse } from '../errors.js';
import { declareAttribute, withdrawAttribute } from './attributes.js';
import { createOrGetEntityType, findEntityTypeByName, renameEntityType } from './entity-types.js';
import { evolveAttribute } from './evolution.js';
import { type ModelPlan, type PlanStep, planModel } from './model.js';
import { describeEntityType } from './type-texts.js';

export type { ApplyReport };

/**
 * Steps one apply request runs at most: past them it stops (`more`), and the caller applies again with the version
 * it left (a document of thousands of definitions is applied in rounds, each a request of bounded work).
 */
export const APPLY_MAX_STEPS = 500;

/** An apply's request as sent (REST body, GraphQL arguments under the same names): its fields checked here. */
export function checkApplyRequest(sent: unknown) {
  const body = bodyObject(sent);
  for (const field of Object.keys(body)) {
    if (!Object.hasOwn(ApplyRequest.shape, field)) {
      throw refuse('unknown_field', `Unknown field "${field}".`);
    }
  }
  const optional = <T>(field: string, type: 'string' | 'boolean'): T | undefined => {
    const v = body[field];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== type) throw refuse('invalid_field', `"${field}" must be a ${type}.`);
    return v as T;
  };
  if (body.document === undefined)
    throw refuse('invalid_field', '"document" is required (a model document).');
  return {
    document: body.document,
    allowWithdraw: optional<boolean>('allow_withdraw', 'boolean') ?? false,
    basedOn: optional<string>('based_on', 'string'),
    expectTenant: optional<string>('expect_tenant', 'string'),
  };
}

const withdraws = (s: PlanStep) => s.action === 'withdraw_attribute' || s.action === 'redeclare_attribute';
/** A declaration of a name being purged: not an error, a wait. */
const waitsForPurge = (s: PlanStep) => s.blocked?.reason === 'attribute_def_withdrawn';

/**
 * The plan, and the tenant's model mark read right after it. The model may change in between (the service's own
 * change, a carry ending or the purge, is enough); a caller that pinned no version (`based_on`) wants the document
 * applied to the state there is, so the plan is made again (at most three times) rather than refused.
 */
async function planAndMark(ctx: RequestContext, document: unknown, replan: boolean) {
  for (let attempt = 1; ; attempt += 1) {
    const plan: ModelPlan = await planModel(ctx, document);
    const mark = await ctx.db.read((run) => readModelMark(run, ctx.viewer.tenant));
    if (!replan || attempt >= 3 || versionTag(mark.version) === plan.based_on) return { plan, mark };
  }
}

/** Checks everything, then acts: see the module's comment. */
export async function applyModel(
  ctx: RequestContext,
  input: { document: unknown; allowWithdraw?: boolean; basedOn?: string; expectTenant?: string },
): Promise<ApplyReport> {
  const tenant = ctx.viewer.tenant;
  if (input.expectTenant !== undefined && input.expectTenant !== tenant) {
    throw refuse(
      'tenant_mismatch',
      `This token is for tenant "${tenant}", not "${input.expectTenant}": nothing was applied.`,
    ).with({ tenant });
  }
  const { plan, mark } = await planAndMark(ctx, input.document, input.basedOn === undefined);
  if (input.basedOn !== undefined && input.basedOn !== plan.based_on) {
    throw refuse(
      'model_changed',
      "The tenant's model changed since the plan was made: nothing was applied. Plan again, review, apply.",
    ).with({ tenant, based_on: plan.based_on });
  }
  const blocked = plan.steps.filter((s) => s.blocked && !waitsForPurge(s));
  const withdrawals = input.allowWithdraw ? [] : plan.steps.filter(withdraws);
  if (blocked.length > 0 || withdrawals.length > 0) {
    const parts = [
      ...(blocked.length > 0 ? [`${blocked.length} step(s) would be refused now`] : []),
      ...(withdrawals.length > 0
        ? [`${withdrawals.length} step(s) withdraw definitions (allow them to apply)`]
        : []),
    ];
    throw refuse('plan_not_applicable', `Nothing was applied: ${parts.join('; ')}.`).with({
      tenant,
      based_on: plan.based_on,
      blocked,
      withdrawals,
    });
  }

  const toApply = plan.steps.filter((s) => !waitsForPurge(s));
  const report: ApplyReport = {
    tenant,
    based_on: plan.based_on,
    model_version: plan.based_on,
    applied: [],
    carrying: [],
    waiting: plan.steps.filter(waitsForPurge),
    remaining: [],
    more: false,
    stopped: null,
    redeclaring: plan.redeclaring,
    matches: false,
  };
  // Every transaction of the steps: the tenant's model as this apply left it, else the apply stops. The service's
  // own changes meanwhile (the purge removing a withdrawn definition, a carry declaring its new definition) are not
  // another caller's: they do not stop it.
  let expected: ModelMark = mark;
  if (versionTag(expected.version) !== plan.based_on) {
    throw refuse(
      'model_changed',
      "The tenant's model changed while the plan was made: nothing was applied.",
    ).with({
      tenant,
      based_on: versionTag(expected.version),
    });
  }
  ctx.writes.guard = {
    async before(run) {
      const now = await readModelMark(run, tenant, true);
      if (now.version !== expected.version && (await callerChangesSince(run, tenant, expected)) > 0) {
        throw refuse('model_changed', "Another change of the tenant's model came between two steps.");
      }
    },
    async after(run) {
      expected = await readModelMark(run, tenant);
    },
  };
  try {
    for (const [i, step] of toApply.entries()) {
      if (i >= APPLY_MAX_STEPS) {
        report.more = true;
        report.remaining = toApply.slice(i);
        break;
      }
      try {
        await applyStep(ctx, step);
      } catch (e) {
        if (!isAppError(e)) throw e;
        report.stopped = { step, reason: e.reason, message: e.message };
        report.remaining = toApply.slice(i);
        break;
      }
      report.applied.push(step);
      if (step.action === 'redeclare_attribute') report.carrying.push(step);
    }
  } finally {
    ctx.writes.guard = undefined;
  }
  report.model_version = versionTag(expected.version);
  report.matches =
    report.remaining.length === 0 &&
    report.carrying.length === 0 &&
    report.waiting.length === 0 &&
    report.redeclaring.length === 0;
  return report;
}

/** A type named in a step: its guid, or (a type an earlier step created or renamed) the one its name resolves to. */
async function typeOf(ctx: RequestContext, step: PlanStep, name = step.type, guid = step.type_guid) {
  if (guid) return guid;
  const found = await findEntityTypeByName(ctx, name);
  if (!found) throw refuse('unknown_entity_type', `No type is named "${name}".`);
  return found.guid;
}

async function applyStep(ctx: RequestContext, step: PlanStep) {
  switch (step.action) {
    case 'create_type': {
      await createOrGetEntityType(ctx, step.type);
      return;
    }
    case 'rename_type': {
      await renameEntityType(ctx, step.type_guid as string, step.type);
      return;
    }
    case 'describe_type': {
      await describeEntityType(ctx, await typeOf(ctx, step), step.texts ?? {});
      return;
    }
    case 'withdraw_attribute': {
      await withdrawAttribute(ctx, await typeOf(ctx, step), step.attribute as string);
      return;
    }
    case 'evolve_attribute': {
      const spec = step.spec as NonNullable<PlanStep['spec']>;
      // The whole specification, fields at their default included: the change in place makes it exactly this.
      await evolveAttribute(ctx, await typeOf(ctx, step), step.attribute as string, {
        value_type: spec.value_type,
        cardinality: spec.cardinality,
        allowed_values: spec.allowed_values ?? null,
        required: spec.required ?? false,
        default_value: spec.default_value ?? null,
        ...(spec.value_type === 'entity_ref' ? { filterable: spec.filterable ?? false } : {}),
        description: spec.description ?? null,
        display_name: spec.display_name ?? null,
      });
      return;
    }
    case 'redeclare_attribute':
    case 'declare_attribute': {
      const spec: Record<string, unknown> = { ...step.spec };
      if (spec.allowed_ref_type !== undefined) {
        spec.allowed_ref_type = await typeOf(
          ctx,
          step,
          String(spec.allowed_ref_type),
          step.ref_type_guid ?? null,
        );
      }
      const type = await typeOf(ctx, step);
      if (step.action === 'declare_attribute') await declareAttribute(ctx, type, spec);
      else await withdrawAttribute(ctx, type, step.attribute as string, { carry: spec });
      return;
    }
  }
  throw new AppError('invalid_model', `Unknown step ${String((step as PlanStep).action)}.`);
}
