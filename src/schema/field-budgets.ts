// What each GraphQL field may cost, stated once per field: the operation's static cost is computed from this table
// (schema/limits.ts) before anything runs, and a test fails for a field of the schema that has its own resolver and
// no entry here (an exposed field reads its parent's row and nothing else), so no field lands without a bound.
//   parent: answered from its parent's row (already loaded and paid for): no statement, counts 1 like any field;
//   list:   a list of at most `bound(args)` entries: its selection's cost is multiplied by the bound;
//   read:   reads more than it shows (a loader's batched statement, a count, the whole model): `cost` is added.
// While an operation runs, what it materialises and loads is charged to its budget (fairness/operation-budget.ts) before it
// is read, and its answer measured before it is serialised.

import { ModelPlan, PlanBlocked, PlanStep } from '../contract/model-document.js';
import {
  AttributeRow,
  ChangeRow,
  EntityTypeRow,
  FormerNameRow,
  PlanCarry,
  WithdrawImpact,
} from '../contract/wire.js';
import { MAX_ALLOWED_VALUES, MAX_MULTI_VALUES } from '../model/limits.js';
import { pageBound, WITHDRAWN_LISTED } from '../model/pages.js';
import { MODEL_MAX_DEFINITIONS, MODEL_MAX_TYPES } from '../model/plans.js';
import { MAX_LISTED_ATTRIBUTES } from '../resolvers/attributes.js';
import { graphqlName } from './row-fields.js';

export type FieldBudget =
  | { kind: 'parent' }
  | { kind: 'list'; bound: (args: Record<string, unknown>) => number; reads: string }
  | { kind: 'read'; cost: number; reads: string };

/** What reading the whole model counts for: its types, and its definitions at about ten fields each. */
export const MODEL_READ_COST = MODEL_MAX_TYPES + MODEL_MAX_DEFINITIONS * 10;
/** What one count over a type's instances counts for (its reads are bounded by the operation's time budget). */
export const INSTANCE_WALK_COST = 1_000;
/** What a mutation counts for: its write and the reads its rules make (a type's definitions at most). */
const WRITE_COST = 250;
/** What one row looked up through a request's loaders counts for (one batched statement per level, or memory). */
const LOOKUP_COST = 1;

const parent = { kind: 'parent' } as const;
/** Fields of `type` answered from their parent's row. */
const fromParent = (type: string, fields: readonly string[]) =>
  Object.fromEntries(fields.map((f) => [`${type}.${f}`, parent]));
const read = (cost: number, reads: string) => ({ kind: 'read', cost, reads }) as const;
const list = (bound: (args: Record<string, unknown>) => number, reads: string) =>
  ({ kind: 'list', bound, reads }) as const;

export const FIELD_BUDGETS: Record<string, FieldBudget> = {
  // ——— roots ———
  'Query.entityTypes': list((a) => pageBound(a.first), 'a page of types (one statement, or memory)'),
  'Query.entityType': read(LOOKUP_COST, 'one type by guid (batched, or memory)'),
  'Query.entityTypeByName': read(LOOKUP_COST, 'one type by name (index seeks, or memory)'),
  // An entity page and the feed's page are objects; their one list is bounded by the page's `first`.
  'Query.entities': list((a) => pageBound(a.first), 'a page of entities (one index range, a bounded window)'),
  'Query.modelChanges': list(
    (a) => pageBound(a.first),
    'a page of the feed (heads, then texts within 1 MiB)',
  ),
  // The model and a plan read up to the whole model: one is half the cost an operation may have, two are refused.
  'Query.model': read(MODEL_READ_COST, 'the whole model, sized first (model_too_large past its bounds)'),
  'Query.modelPlan': read(MODEL_READ_COST, "the named types' definitions, sized first (as the export)"),
  'Mutation.createEntityType': read(WRITE_COST, 'a create-or-get: the name, its tombstone, one write'),
  'Mutation.renameEntityType': read(WRITE_COST, 'the type and the name, one write'),
  'Mutation.releaseFormerName': read(WRITE_COST, 'the type and the name, one write'),
  'Mutation.describeEntityType': read(WRITE_COST, 'the type, one write'),
  'Mutation.deleteEntityType': read(
    WRITE_COST,
    'the type, its referrers and definitions (200 at most), one write',
  ),
  'Mutation.declareAttribute': read(WRITE_COST, "the type's definitions counted and sized, one write"),
  'Mutation.evolveAttribute': read(
    WRITE_COST,
    "the definition, the type's definitions sized, one write (no instance is read: values are untouched)",
  ),
  'Mutation.withdrawAttribute': read(
    WRITE_COST + INSTANCE_WALK_COST,
    'the definition, one write; a dry run counts at most 50,000 instances',
  ),
  // ——— a type ———
  'EntityType.attributes': list(
    () => MAX_LISTED_ATTRIBUTES,
    'its definitions (batched per request, or memory)',
  ),
  'EntityType.withdrawnAttributes': list(
    (a) => pageBound(a.first, WITHDRAWN_LISTED),
    'its withdrawn definitions (batched per request)',
  ),
  'EntityType.history': list((a) => pageBound(a.first), 'its history (heads, then texts, charged first)'),
  'EntityType.attributeUsage': read(LOOKUP_COST, 'its live definitions, counted (batched, or memory)'),
  'EntityType.parentType': read(LOOKUP_COST, 'the level above (batched, or memory)'),
  // The fields of a type's row (declared once, contract/wire.ts) are read from the row; the level above is a read.
  ...fromParent(
    'EntityType',
    Object.keys(EntityTypeRow.shape)
      .filter((key) => key !== 'parent_type')
      .map(graphqlName),
  ),
  ...fromParent('FormerName', Object.keys(FormerNameRow.shape).map(graphqlName)),
  // ——— a definition ———
  'AttributeDefinition.allowedValues': list(
    () => MAX_ALLOWED_VALUES,
    'its enumeration (batched per request, charged before it is read)',
  ),
  // A default is one value, or a list of up to 1,000 for a multi-valued attribute.
  'AttributeDefinition.defaultValue': list(() => MAX_MULTI_VALUES, 'its default (as the enumeration)'),
  'AttributeDefinition.allowedRefType': read(LOOKUP_COST, 'the referenced type (batched, or memory)'),
  'AttributeDefinition.ownerType': read(LOOKUP_COST, 'the owning type (batched, or memory)'),
  // The other fields of a definition's row (declared once, contract/wire.ts), and GraphQL's two, are read from it.
  ...fromParent('AttributeDefinition', [
    ...Object.keys(AttributeRow.shape)
      .map(graphqlName)
      .filter((name) => !['allowedValues', 'defaultValue', 'allowedRefType', 'ownerType'].includes(name)),
    'allowedValuesUsage',
    'state',
  ]),
  ...fromParent('AttributeRedeclaring', ['since', 'endsAfter']),
  'WithdrawnAttribute.valuesRemaining': read(
    INSTANCE_WALK_COST,
    "one count over the type's instances, within the operation's time budget",
  ),
  ...fromParent('WithdrawnAttribute', [
    'definition',
    'purgeLastRanAt',
    'state',
    'valuesRemoved',
    'withdrawnAt',
  ]),
  // ——— pages, payloads, records: their parent's rows ———
  ...fromParent('EntityPage', ['entities']),
  ...fromParent('ModelChangePage', ['changes']),
  ...fromParent('ModelChange', Object.keys(ChangeRow.shape).map(graphqlName)),
  ...fromParent('EntityTypeHistoryConnection', ['edges', 'pageInfo']),
  ...fromParent('EntityTypeHistoryConnectionEdge', ['node']),
  ...fromParent('QueryEntityTypesConnection', ['edges', 'pageInfo']),
  ...fromParent('QueryEntityTypesConnectionEdge', ['node']),
  ...fromParent('CreateEntityTypePayload', ['entityType']),
  ...fromParent('ReleaseFormerNamePayload', ['entityType']),
  ...fromParent('DeclareAttributePayload', ['attribute', 'usage']),
  ...fromParent('WithdrawAttributePayload', ['attribute', 'impact']),
  ...fromParent('EvolveAttributePayload', ['attribute', 'changes']),
  // a plan's objects: every field of their rows (contract/model-document.ts)
  ...fromParent('ModelPlan', Object.keys(ModelPlan.shape).map(graphqlName)),
  ...fromParent('ModelPlanUnchanged', Object.keys(ModelPlan.shape.unchanged.shape).map(graphqlName)),
  ...fromParent('ModelPlanStep', Object.keys(PlanStep.shape).map(graphqlName)),
  ...fromParent('ModelPlanBlocked', Object.keys(PlanBlocked.shape).map(graphqlName)),
  ...fromParent('ModelPlanImpact', Object.keys(WithdrawImpact.shape).map(graphqlName)),
  ...fromParent('ModelPlanCarry', Object.keys(PlanCarry.shape).map(graphqlName)),
};
