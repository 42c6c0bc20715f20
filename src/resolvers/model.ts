// The metamodel as code: the tenant's model as one document (export), and the diff between a document and the
// tenant (plan), which clients render and apply step by step through the ordinary endpoints. Both APIs call these.
// Over 300 lines: a plan is computed from the document as export writes it, so the two are kept side by side.

import { charge, type RequestContext } from '../context.js';
import type {
  ModelAttributeSpec,
  ModelDocument,
  ModelPlan,
  PlanDrift,
  PlanStep,
} from '../contract/model-document.js';
import type { FieldChange } from '../contract/wire.js';
import { countAttributeData, type DeclareFacts, type StoredAttribute } from '../db/attributes.js';
import { readFormerNames } from '../db/changes.js';
import { findTypesByGuids, listTypes, type StoredType } from '../db/entity-types.js';
import {
  measureModel,
  readModel,
  readModelDefinitions,
  readPlanFacts,
  readUnlistedTypes,
  resolveModelTypes,
} from '../db/model.js';
import { readModelVersion, versionTag } from '../db/model-version.js';
import type { Run } from '../db/run.js';
import { isAppError, type Reason, refuse } from '../errors.js';
import { TurnClock } from '../fairness/turn-clock.js';
import {
  IMPACT_SCAN_MAX,
  keptFormerNames,
  MAX_FORMER_NAMES,
  MAX_FORMER_NAMES_JSON_BYTES,
  utf8Bytes,
} from '../model/limits.js';
import { nameKey, typeGuid } from '../model/names.js';
import {
  MODEL_FORMAT,
  MODEL_MAX_DEFINITION_BYTES,
  MODEL_MAX_DEFINITIONS,
  MODEL_MAX_ROW_BYTES,
  MODEL_MAX_TYPES,
  PLAN_MAX_IMPACTS,
  PLAN_MAX_REFERENTS,
  PLAN_MAX_STEP_BYTES,
} from '../model/plans.js';
import { MANAGED_TYPES } from '../model/system-types.js';
import {
  checkNewDeclaration,
  checkRedeclarationAgainst,
  definitionRoom,
  type Room,
  roomOf,
} from './attributes.js';
import { countCarry } from './carry.js';
import type { CheckedDeclaration } from './declaration.js';
import { inPlaceBlockers } from './evolution.js';
import { type CheckedType, checkModelDocument, invalidModel } from './model-check.js';
import { attributeSpec, differences, SampleBudget, summarise } from './model-summaries.js';
import { asItWillBe, asTheyWillBe } from './redeclaring.js';
import { closestTypeNames, didYouMean, SUGGESTION_TYPES_MAX } from './type-suggestions.js';

export type { ModelPlan, PlanStep };
export { checkModelDocument };

/** The names of the types the definitions reference, by guid. */
async function referencedNames(run: Run, tenant: string, definitions: readonly StoredAttribute[]) {
  const guids = [...new Set(definitions.flatMap((a) => (a.allowed_ref_type ? [a.allowed_ref_type] : [])))];
  const types = guids.length === 0 ? [] : await findTypesByGuids(run, tenant, guids);
  const names = new Map(types.map((t) => [t.guid, t.name]));
  return (guid: string) => names.get(guid) ?? guid;
}

const modelTooLarge = (what: string) =>
  refuse('model_too_large', `The model is too large to handle as one document: ${what}.`);

/**
 * The tenant's model as one document: its user-defined types and any other type carrying definitions declared by
 * callers, in normalised-name order, each with its live definitions in name order (platform attributes left out).
 * Sized first: a model past the bounds is refused before it is read.
 */
export async function exportModel(
  ctx: RequestContext,
  options: { formerNames?: boolean } = {},
): Promise<ModelDocument> {
  const tenant = ctx.viewer.tenant;
  return ctx.db.read(async (run) => {
    const size = await measureModel(run, tenant, MODEL_MAX_TYPES);
    if (size.types > MODEL_MAX_TYPES) throw modelTooLarge(`more than ${MODEL_MAX_TYPES} types`);
    if (size.definitions > MODEL_MAX_DEFINITIONS) {
      throw modelTooLarge(`more than ${MODEL_MAX_DEFINITIONS.toLocaleString('en-US')} definitions`);
    }
    if (size.bytes > MODEL_MAX_DEFINITION_BYTES) {
      throw modelTooLarge(
        `${size.bytes.toLocaleString('en-US')} bytes (UTF-8) of enumerations and defaults (at most ${MODEL_MAX_DEFINITION_BYTES.toLocaleString('en-US')})`,
      );
    }
    const rows = size.rows + (options.formerNames ? size.types * MAX_FORMER_NAMES_JSON_BYTES : 0);
    if (rows > MODEL_MAX_ROW_BYTES) throw rowsTooLarge(rows);
    // A GraphQL operation pays for what it is about to read, before it reads it.
    charge(ctx, size.types + size.definitions, size.bytes + rows);
    // (a definition being redeclared as it will be: an export made meanwhile applies later as a no-op)
    const entries = (await readModel(run, tenant, MODEL_MAX_TYPES)).map((e) => ({
      ...e,
      live: asTheyWillBe(e.live, ctx.services.config.PURGE_GRACE_SECONDS),
    }));
    const refName = await referencedNames(
      run,
      tenant,
      entries.flatMap((e) => e.live),
    );
    // With former names, a renamed type lists what it was called before (`renamed_from`, most recent first): a plan
    // on a tenant that still has it under one of them renames it rather than creating another.
    const former = options.formerNames
      ? await readFormerNames(
          run,
          tenant,
          entries.map((e) => e.type.guid),
          MAX_FORMER_NAMES,
        )
      : new Map<string, string[]>();
    return {
      format: MODEL_FORMAT,
      types: entries.map((e) => {
        const was = keptFormerNames(
          (former.get(e.type.guid) ?? []).filter((n) => nameKey(n) !== e.type.name_key),
        );
        return {
          name: e.type.name,
          ...(was.length > 0 ? { renamed_from: was } : {}),
          ...(e.type.description ? { description: e.type.description } : {}),
          ...(e.type.display_name ? { display_name: e.type.display_name } : {}),
          attributes: e.live.map((a) => attributeSpec(a, refName)),
        };
      }),
    };
  });
}

// ——— Plan ———

/** A step's `blocked`: applying it now would be refused with `reason`. */
const blockedBy = (reason: Reason, message: string): Pick<PlanStep, 'blocked'> => ({
  blocked: { reason, message },
});

/** Two specifications alike but for the referenced type (compared apart, by what each name resolves to). */
function sameSpec(a: ModelAttributeSpec, b: ModelAttributeSpec) {
  const canonical = (s: ModelAttributeSpec) =>
    JSON.stringify([
      s.value_type,
      s.cardinality,
      s.allowed_values ?? null,
      s.required === true,
      s.default_value ?? null,
      s.filterable === true,
      s.description ?? null,
      s.display_name ?? null,
    ]);
  return canonical(a) === canonical(b);
}

/**
 * What applying the document would change, in the order to apply it: types created and renamed first (later
 * declarations may reference them), then withdrawals (freeing room under the 200 limit), then declarations.
 * Types the document does not list are left alone, and reported (`drift`). A step apply would be refused at now says so (`blocked`).
 */
export async function planModel(ctx: RequestContext, document: unknown): Promise<ModelPlan> {
  const tenant = ctx.viewer.tenant;
  const types = await checkModelDocument(document, () => charge(ctx, 0));
  const refKeys = [
    ...new Set(types.flatMap((t) => t.attributes.flatMap((a) => (a.refKey ? [a.refKey] : [])))),
  ];
  const lookups = [
    ...types.map((t) => t.key),
    ...types.flatMap((t) => t.renamedFrom.map((r) => r.key)),
    ...refKeys,
  ];
  // Each name's derived guid (a SHA-1 each), a few hundred a turn.
  const named: NamedKey[] = [];
  const guidClock = new TurnClock();
  for (const key of new Set(lookups)) {
    if (guidClock.due()) {
      charge(ctx, 0);
      await guidClock.turn();
    }
    named.push({ key, derivedGuid: typeGuid(tenant, key) });
  }
  const referents = [...new Set(types.flatMap((t) => t.attributes.flatMap((a) => a.declaration.referents)))];
  if (referents.length > PLAN_MAX_REFERENTS) {
    throw modelTooLarge(
      `its reference defaults name ${referents.length.toLocaleString('en-US')} entities (a plan resolves at most ${PLAN_MAX_REFERENTS.toLocaleString('en-US')})`,
    );
  }
  return ctx.db.read((run) => new Planner(ctx, run, types, named, referents).plan());
}

/** A name the document uses, and the guid a type created under it would get. */
interface NamedKey {
  key: string;
  derivedGuid: string;
}

/** A tenant type as the plan reads it, with its definitions. */
interface Resolved {
  type: StoredType;
  definitions: StoredAttribute[];
}

/** One entry of the document being planned: the type it resolves to, and that type as the steps so far leave it. */
interface TypeInPlan {
  t: CheckedType;
  guid: string | null;
  live: Map<string, StoredAttribute>;
  /** Definitions withdrawn (or purged from the guid a created type gets back), by name key. */
  withdrawn: Set<string>;
  /** Redeclarations carrying values, as they will be. */
  carried: Map<string, StoredAttribute>;
  /**
   * The type as the plan's steps so far would leave it, for the declaration rules (what readDeclareFacts reads for a
   * declaration on its own): apply runs withdrawals and redeclarations first, then declarations, one after another,
   * so each step is checked after those before it, and none is shown unblocked that apply would refuse halfway.
   */
  facts: DeclareFacts;
  /** Declarations checked once every withdrawal and redeclaration of the type is planned. */
  pending: { a: CheckedType['attributes'][number]; step: PlanStep }[];
}

/** What the type will hold after a step: its enumerations' and defaults' bytes added (1) or taken away (-1). */
function take(facts: DeclareFacts, room: Room, sign: 1 | -1) {
  facts.liveJsonBytes += sign * room.jsonBytes;
  facts.liveDefaultBytes += sign * room.defaultBytes;
}

/** One plan, computed inside one read transaction: the state read once, then each entry of the document in turn. */
class Planner {
  private readonly tenant: string;
  private byKey = new Map<string, Resolved | null>();
  private refName: (guid: string) => string = (g) => g;
  private referentTypes = new Map<string, string | null>();
  private purging = new Map<string, Set<string>>();
  private carryingOf = new Map<string, { count: number; json: number; defaults: number }>();
  private readonly listedTypes: Set<string>;
  private readonly samples = new SampleBudget();
  private readonly structural: PlanStep[] = [];
  private readonly withdrawals: PlanStep[] = [];
  private readonly declarations: PlanStep[] = [];
  private readonly unchanged = { types: 0, attributes: 0 };
  /** Definitions a carried redeclaration under way will declare as the document states them. */
  private readonly redeclaring: ModelPlan['redeclaring'] = [];
  /** Types listed without `attributes`: their definitions are left alone (drift the plan reports). */
  private readonly unmanaged: PlanDrift['unmanaged'] = [];
  /** The place in the document of each tenant type an entry resolves to: two entries may not name one type. */
  private readonly entryOf = new Map<string, number>();
  private impacts = 0;
  /** The tenant's types names are suggested from, once read (unknownRefType). */
  private suggestible?: Promise<readonly { name: string; name_key: string }[]>;

  constructor(
    private readonly ctx: RequestContext,
    private readonly run: Run,
    private readonly types: readonly CheckedType[],
    private readonly named: readonly NamedKey[],
    private readonly referents: readonly string[],
  ) {
    this.tenant = ctx.viewer.tenant;
    this.listedTypes = new Set(types.map((t) => t.key));
  }

  async plan(): Promise<ModelPlan> {
    const { run, tenant } = this;
    // The state the plan is computed from, read first: a change committed meanwhile changes it, and an apply given
    // this version then refuses to act (an extra refusal, never a plan applied to a state it was not made for).
    const basedOn = versionTag(await readModelVersion(run, tenant));
    await this.readState();
    // (as in checkModelDocument: made in one piece, declarations would hold the thread, so a turn every TURN_MS)
    const clock = new TurnClock();
    for (const [i, t] of this.types.entries()) {
      if (clock.due()) {
        charge(this.ctx, 0);
        await clock.turn();
      }
      await this.planType(i, t);
    }
    const drift = await driftOf(run, tenant, [...this.entryOf.keys()], this.types, this.structural);
    drift.unmanaged = this.unmanaged;
    const steps = [...this.structural, ...this.withdrawals, ...this.declarations];
    await measureSteps(steps, drift);
    return {
      tenant,
      based_on: basedOn,
      steps,
      unchanged: this.unchanged,
      drift,
      redeclaring: this.redeclaring,
    };
  }

  /** What the plan reads, counted and paid for first: the types the document names and their definitions. */
  private async readState() {
    const { run, tenant, named } = this;
    const resolved = await resolveModelTypes(run, tenant, named);
    const sizes = new Map(resolved.flatMap((r) => (r ? [[r.type.guid, r] as const] : [])));
    const { definitionCount, definitionBytes, rows } = checkPlanSizes(sizes.values());
    // A GraphQL operation pays for what the plan is about to read, before it reads it.
    charge(this.ctx, sizes.size + definitionCount, definitionBytes + rows);
    const stored =
      sizes.size === 0
        ? new Map<string, StoredAttribute[]>()
        : await readModelDefinitions(run, tenant, [...sizes.keys()]);
    this.byKey = new Map(
      named.map(({ key: k }, i) => {
        const r = resolved[i];
        return [k, r ? { type: r.type, definitions: stored.get(r.type.guid) ?? [] } : null] as const;
      }),
    );
    this.refName = await referencedNames(run, tenant, [...stored.values()].flat());
    // The entities the reference defaults name, and their types, and the definitions still being purged on the guids
    // of the types the document creates: one read for the whole document.
    const derivedOf = new Map(named.map((n) => [n.key, n.derivedGuid]));
    const createdNames = this.types
      .filter((t) => this.resolves(t) === null)
      .map((t) => ({ key: t.key, derivedGuid: derivedOf.get(t.key) as string }));
    const facts = await readPlanFacts(run, tenant, [...this.referents], createdNames);
    this.referentTypes = facts.referentTypes;
    this.purging = facts.purging;
    this.carryingOf = new Map(resolved.flatMap((r) => (r ? [[r.type.guid, r.carrying] as const] : [])));
  }

  /** The tenant type an entry resolves to: the one holding its name, else the one a former name of it names. */
  private resolves(t: CheckedType): Resolved | null {
    return (
      this.byKey.get(t.key) ??
      t.renamedFrom.map((r) => this.byKey.get(r.key) ?? null).find((c) => c !== null) ??
      null
    );
  }

  /** One entry of the document: its type's structural steps, then its definitions' steps. */
  private async planType(i: number, t: CheckedType) {
    const current = this.resolves(t);
    // Found by a former name, or by its name though renamed since (the type created under it): the document names it
    // (back) so. (No type holds the name when a former name found it.)
    const renamed = current !== null && current.type.name_key !== t.key;
    if (current) {
      // (each entry's steps are planned from the type as it is: two entries for one type, by a name and a former
      // name, would each rename it or state its definitions, and apply would undo one with the other)
      const earlier = this.entryOf.get(current.type.guid);
      if (earlier !== undefined) {
        throw invalidModel(
          `types[${i}]`,
          `names the type types[${earlier}] names ("${current.type.name}", ${current.type.guid}): list a type once`,
        );
      }
      this.entryOf.set(current.type.guid, i);
    }
    const managedName = MANAGED_TYPES.has(t.key)
      ? blockedBy('type_instances_managed', `"${t.name}" is a managed type: the platform sets it up.`)
      : {};
    if (current && renamed) this.structural.push({ ...renameStep(t.name, current.type), ...managedName });
    if (!current) {
      this.structural.push({ action: 'create_type', type: t.name, type_guid: null, ...managedName });
    } else if (!renamed) {
      this.unchanged.types += 1;
    }
    const described = describeStep(t, current?.type ?? null);
    if (described) this.structural.push(described);
    const state = this.typeInPlan(t, current);
    if (current && !t.managed) {
      this.unmanaged.push({
        name: current.type.name,
        type_guid: current.type.guid,
        attributes: state.live.size,
      });
    }
    await this.withdrawUnlisted(state);
    for (const a of t.attributes) await this.planAttribute(state, a);
    this.checkPending(state);
  }

  /** An entry's type as it stands, before the entry's steps. */
  private typeInPlan(t: CheckedType, current: Resolved | null): TypeInPlan {
    const definitions = current?.definitions ?? [];
    const live = new Map(definitions.filter((a) => a.state === 'live').map((a) => [a.name_key, a]));
    // (a type created under a name a deleted type held gets its guid back, and the definitions its deletion withdrew
    // are purged from it)
    const withdrawn = current
      ? new Set(definitions.filter((a) => a.state === 'withdrawn').map((a) => a.name_key))
      : (this.purging.get(t.key) ?? new Set<string>());
    // Redeclarations carrying values, as they will be: a document stating one so has nothing to change.
    const grace = this.ctx.services.config.PURGE_GRACE_SECONDS;
    const carried = new Map(
      definitions.filter((a) => a.carry).map((a) => [a.name_key, asItWillBe(a, grace)]),
    );
    const carrying = (current && this.carryingOf.get(current.type.guid)) || {
      count: 0,
      json: 0,
      defaults: 0,
    };
    const facts: DeclareFacts = {
      typeFound: true,
      typeNameKey: current?.type.name_key ?? t.key,
      existingState: null,
      liveCount: live.size,
      carryingCount: carrying.count,
      liveJsonBytes: carrying.json,
      liveDefaultBytes: carrying.defaults,
      refTypeFound: false,
      referents: [],
    };
    for (const a of live.values()) take(facts, definitionRoom(a), 1);
    return { t, guid: current?.type.guid ?? null, live, withdrawn, carried, facts, pending: [] };
  }

  /** A type the document manages: its live definitions the document does not list are withdrawn. */
  private async withdrawUnlisted(state: TypeInPlan) {
    const { t, live, facts, guid } = state;
    if (!t.managed) return;
    const listed = new Set(t.attributes.map((a) => a.key));
    for (const [key, a] of live) {
      if (listed.has(key)) continue;
      facts.liveCount -= 1;
      take(facts, definitionRoom(a), -1);
      this.withdrawals.push({
        action: 'withdraw_attribute',
        type: t.name,
        type_guid: guid,
        attribute: a.name,
        current: summarise(attributeSpec(a, this.refName)),
        impact: await this.impactOf(guid as string, a),
      });
    }
  }

  /** The facts of a declaration's referenced type and default's referents; its rules' options. */
  private aboutRefs(facts: DeclareFacts, d: CheckedDeclaration) {
    facts.refTypeFound = d.allowedRefType !== null && d.allowedRefType !== '';
    facts.referents = d.referents.map((g) => ({ guid: g, type_guid: this.referentTypes.get(g) ?? null }));
    return { refTypeComing: d.allowedRefType === '' };
  }

  /** A step's refusal for an allowed_ref_type that names no type, with the closest names of the document and the tenant. */
  private async unknownRefType(named: string, key: string) {
    this.suggestible ??= this.readSuggestible();
    const candidates = new Map(this.types.map((t) => [t.key, { name: t.name, name_key: t.key }]));
    for (const t of await this.suggestible) if (!candidates.has(t.name_key)) candidates.set(t.name_key, t);
    const closest = closestTypeNames(key, [...candidates.values()]);
    return blockedBy(
      'unknown_entity_type',
      `allowed_ref_type "${named}" names no type of the tenant or the document.${didYouMean(closest)}`,
    );
  }

  /** The tenant's types, read once a plan has a name to suggest for, and none past SUGGESTION_TYPES_MAX of them. */
  private async readSuggestible() {
    const rows = await listTypes(this.run, this.tenant, '', SUGGESTION_TYPES_MAX + 1);
    charge(this.ctx, rows.length);
    return rows.length > SUGGESTION_TYPES_MAX ? [] : rows;
  }

  /** One listed definition: unchanged, shown as a redeclaration under way, changed in place, redeclared or declared. */
  private async planAttribute(state: TypeInPlan, a: CheckedType['attributes'][number]) {
    const { t, guid } = state;
    const refGuid = a.refKey === null ? undefined : (this.byKey.get(a.refKey)?.type.guid ?? null);
    const refKnown = a.refKey === null || this.listedTypes.has(a.refKey) || refGuid;
    const blockedRef = refKnown
      ? {}
      : await this.unknownRefType(String(a.spec.allowed_ref_type), a.refKey as string);
    // The declaration with its referenced type resolved (a type the document creates first has no guid yet, and no
    // entity a default could name).
    const d: CheckedDeclaration = {
      ...a.declaration,
      allowedRefType: refGuid === undefined ? null : (refGuid ?? ''),
    };
    if (this.isRedeclaring(state, a, refGuid)) return;
    const existing = state.live.get(a.key);
    if (existing) {
      await this.planChange(state, a, d, existing, refGuid, blockedRef);
      return;
    }
    const step: PlanStep = {
      action: 'declare_attribute',
      type: t.name,
      type_guid: guid,
      attribute: a.spec.name,
      spec: a.spec,
      ...(refGuid === undefined ? {} : { ref_type_guid: refGuid }),
    };
    if (!refKnown) Object.assign(step, blockedRef);
    else state.pending.push({ a: { ...a, declaration: d }, step });
    this.declarations.push(step);
  }

  /** A definition not live but carried, as the document states it: nothing to change, shown as redeclaring. */
  private isRedeclaring(
    state: TypeInPlan,
    a: CheckedType['attributes'][number],
    refGuid: string | null | undefined,
  ) {
    const willBe = state.carried.get(a.key);
    if (state.live.has(a.key) || !willBe) return false;
    if ((willBe.allowed_ref_type ?? undefined) !== (refGuid ?? undefined)) return false;
    if (!sameSpec(attributeSpec(willBe, this.refName), a.spec)) return false;
    this.redeclaring.push({
      type: state.t.name,
      type_guid: state.guid as string,
      attribute: willBe.name,
      ends_after: willBe.redeclaring?.ends_after ?? null,
    });
    return true;
  }

  /** A live definition the document states otherwise: changed in place when every stored value survives, else redeclared. */
  private async planChange(
    state: TypeInPlan,
    a: CheckedType['attributes'][number],
    d: CheckedDeclaration,
    existing: StoredAttribute,
    refGuid: string | null | undefined,
    blockedRef: Pick<PlanStep, 'blocked'>,
  ) {
    const { t, guid, facts } = state;
    const now = attributeSpec(existing, this.refName);
    const sameRef = (existing.allowed_ref_type ?? undefined) === (refGuid ?? undefined);
    if (sameRef && sameSpec(now, a.spec)) {
      this.unchanged.attributes += 1;
      return;
    }
    const blocked = blockedRef.blocked
      ? blockedRef
      : blockedIf(() => checkRedeclarationAgainst(facts, d, existing, this.aboutRefs(facts, d)));
    if (!blocked.blocked) {
      take(facts, definitionRoom(existing), -1);
      take(facts, roomOf(d), 1);
    }
    const step: PlanStep = {
      action: 'redeclare_attribute',
      type: t.name,
      type_guid: guid,
      attribute: a.spec.name,
      spec: a.spec,
      ...(refGuid === undefined ? {} : { ref_type_guid: refGuid }),
      current: summarise(now),
      changes: differences(now, a.spec, sameRef, this.samples),
    };
    // Changed in place whenever every stored value survives the change (no gap, nothing to carry).
    if (sameRef && inPlaceBlockers(existing, d).length === 0) {
      this.withdrawals.push({ ...step, action: 'evolve_attribute', ...blocked });
      return;
    }
    step.impact = await this.impactOf(guid as string, existing);
    step.carry = await this.carryOf(guid as string, existing, a.spec, refGuid ?? null);
    this.withdrawals.push({ ...step, ...blocked });
  }

  /** The declarations after every withdrawal and redeclaration of the type, in the document's order. */
  private checkPending(state: TypeInPlan) {
    const { facts } = state;
    for (const { a, step } of state.pending) {
      const d = a.declaration;
      facts.existingState = state.withdrawn.has(a.key) ? 'withdrawn' : null;
      facts.existingCarrying = state.carried.has(a.key);
      const blocked = blockedIf(() => checkNewDeclaration(facts, d, this.aboutRefs(facts, d)));
      if (blocked.blocked) {
        Object.assign(step, blocked);
        continue;
      }
      facts.liveCount += 1;
      take(facts, roomOf(d), 1);
    }
  }

  /** The values a withdrawal or redeclaration would touch (the first PLAN_MAX_IMPACTS of a plan, then null). */
  private async impactOf(typeGuidValue: string, a: StoredAttribute) {
    if (this.impacts >= PLAN_MAX_IMPACTS) return null;
    this.impacts += 1;
    return countAttributeData(
      this.run,
      {
        tenant: this.tenant,
        typeGuid: typeGuidValue,
        nameKey: a.name_key,
        multi: a.cardinality === 'multi',
        reference: a.value_type === 'entity_ref',
      },
      IMPACT_SCAN_MAX,
    );
  }

  /** What carrying a redeclared definition's values would keep and refuse (counted like an impact). */
  private async carryOf(
    typeGuidValue: string,
    a: StoredAttribute,
    spec: ModelAttributeSpec,
    refGuid: string | null,
  ) {
    if (this.impacts >= PLAN_MAX_IMPACTS) return null;
    this.impacts += 1;
    const declaration: Record<string, unknown> = { ...spec };
    if (spec.allowed_ref_type !== undefined) declaration.allowed_ref_type = refGuid ?? '';
    return countCarry(this.run, { tenant: this.tenant, typeGuid: typeGuidValue, old: a, declaration });
  }
}

/** The sizes of what a plan will read, refused past the plan's bounds before it is read. */
function checkPlanSizes(sizes: Iterable<{ definitions: number; bytes: number; rows: number }>) {
  let definitionCount = 0;
  let definitionBytes = 0;
  let rows = 0;
  for (const r of sizes) {
    definitionCount += r.definitions;
    definitionBytes += r.bytes;
    rows += r.rows;
  }
  if (definitionCount > MODEL_MAX_DEFINITIONS) {
    throw modelTooLarge(
      `the types it names hold ${definitionCount.toLocaleString('en-US')} definitions (a plan reads at most ${MODEL_MAX_DEFINITIONS.toLocaleString('en-US')})`,
    );
  }
  if (definitionBytes > MODEL_MAX_DEFINITION_BYTES) {
    throw modelTooLarge(
      `the types it names hold ${definitionBytes.toLocaleString('en-US')} bytes (UTF-8) of enumerations and defaults (a plan reads at most ${MODEL_MAX_DEFINITION_BYTES.toLocaleString('en-US')})`,
    );
  }
  if (rows > MODEL_MAX_ROW_BYTES) throw rowsTooLarge(rows);
  return { definitionCount, definitionBytes, rows };
}

/**
 * The tenant's types the document does not name (its drift: left alone), read once. A type the document creates,
 * with the very definitions (by name) of one of them, is most likely a rename written by hand without
 * `renamed_from`: its step says so (the plan cannot know).
 */
async function driftOf(
  run: Run,
  tenant: string,
  listedGuids: string[],
  types: readonly CheckedType[],
  structural: PlanStep[],
): Promise<PlanDrift> {
  const unlisted = await readUnlistedTypes(run, tenant, listedGuids, MODEL_MAX_TYPES);
  const more = unlisted.length > MODEL_MAX_TYPES;
  const shown = unlisted.slice(0, MODEL_MAX_TYPES);
  const created = new Set(structural.flatMap((s) => (s.action === 'create_type' ? [s.type] : [])));
  const shapeOf = (keys: readonly string[]) => [...keys].sort().join('\u0000');
  const byShape = new Map(
    shown
      .filter((u) => u.origin === 'user_defined' && u.keys.length > 0)
      .map((u) => [shapeOf(u.keys), u.name]),
  );
  for (const t of types) {
    if (!t.managed || t.attributes.length === 0 || !created.has(t.name)) continue;
    const was = byShape.get(shapeOf(t.attributes.map((a) => a.key)));
    const step = structural.find((s) => s.action === 'create_type' && s.type === t.name);
    if (was !== undefined && step) step.looks_like_rename_of = was;
  }
  return {
    types: shown.map((u) => ({ name: u.name, type_guid: u.guid, attributes: u.keys.length })),
    unmanaged: [],
    more,
  };
}

/** Refuses a plan whose steps (and drift) pass PLAN_MAX_STEP_BYTES as JSON (measured step by step, stopping there). */
async function measureSteps(steps: readonly PlanStep[], drift: PlanDrift) {
  let bytes = 2 + utf8Bytes(JSON.stringify(drift));
  // (a plan's steps serialised in one piece would hold the thread: measured in turns, as they were planned)
  const clock = new TurnClock();
  for (const step of steps) {
    if (clock.due()) await clock.turn();
    bytes += utf8Bytes(JSON.stringify(step)) + 1;
    if (bytes > PLAN_MAX_STEP_BYTES) {
      throw modelTooLarge(
        `its ${steps.length.toLocaleString('en-US')} steps take more than ${PLAN_MAX_STEP_BYTES.toLocaleString('en-US')} bytes as JSON`,
      );
    }
  }
}

/** model_too_large for a model whose rows would take `rows` bytes (beside their texts). */
const rowsTooLarge = (rows: number) =>
  modelTooLarge(
    `its names and rows would take about ${rows.toLocaleString('en-US')} bytes beside their texts (at most ${MODEL_MAX_ROW_BYTES.toLocaleString('en-US')})`,
  );

/** A step's `blocked` when `check` refuses it with the declaration's rules as they stand. */
function blockedIf(check: () => void): Pick<PlanStep, 'blocked'> {
  try {
    check();
    return {};
  } catch (e) {
    if (!isAppError(e)) throw e;
    return { blocked: { reason: e.reason, message: e.message } };
  }
}

/** A step setting a type's description and display name, when the document states others than the type has. */
function describeStep(t: CheckedType, type: StoredType | null): PlanStep | null {
  const changes: FieldChange[] = [];
  for (const field of ['description', 'display_name'] as const) {
    const from = type?.[field] ?? null;
    if (from !== t.texts[field]) changes.push({ field, from, to: t.texts[field] });
  }
  if (changes.length === 0) return null;
  return { action: 'describe_type', type: t.name, type_guid: type?.guid ?? null, texts: t.texts, changes };
}

function renameStep(name: string, type: StoredType): PlanStep {
  return {
    action: 'rename_type',
    type: name,
    type_guid: type.guid,
    from: type.name,
    ...(type.origin !== 'user_defined'
      ? blockedBy(
          'type_not_user_defined',
          `"${type.name}" is ${type.origin}: only user-defined types can be renamed.`,
        )
      : {}),
  };
}
