// GraphQL object family for attribute definitions: AttributeDefinition, EntityType.attributes and usage,
// withdrawn definitions with their purge state, and the declare/withdraw mutations (same resolvers as REST).

import { typeByGuid } from '../context.js';
import { countAttributeData, type StoredAttribute } from '../db/attributes.js';
import {
  attributesOf,
  attributeUsageOf,
  type DeclareInput,
  declareAttribute,
  MAX_ATTRIBUTE_DEFS,
  ownerTypeOf,
  toAttributeRow,
  withdrawAttribute,
} from '../resolvers/attributes.js';
import { MAX_ALLOWED_VALUES } from '../resolvers/values.js';
import { builder } from './builder.js';
import { EntityType } from './entity-type.js';
import './scalars.js';

const Usage = builder.objectRef<{ used: number; limit: number }>('Usage').implement({
  description: 'How much of a limit is used.',
  fields: (t) => ({
    used: t.exposeInt('used', { description: 'Entries in use.' }),
    limit: t.exposeInt('limit', { description: 'The limit.' }),
  }),
});

export const AttributeDefinition = builder.objectRef<StoredAttribute>('AttributeDefinition');

AttributeDefinition.implement({
  description: 'Declares that instances of a type may carry a value of a kind under a name.',
  fields: (t) => ({
    guid: t.exposeID('guid', { description: 'Identifier of the definition.' }),
    name: t.exposeString('name', { description: 'Attribute name, unique within the owning type.' }),
    ownerType: t.field({
      type: EntityType,
      nullable: true,
      description: 'Owning type; null for the five platform attributes.',
      resolve: (a, _args, ctx) => {
        const owner = ownerTypeOf(a);
        return owner ? typeByGuid(ctx, owner) : null;
      },
    }),
    valueType: t.exposeString('value_type', {
      description: 'string, number, boolean, date, json or entity_ref.',
    }),
    cardinality: t.exposeString('cardinality', { description: 'single or multi.' }),
    allowedValues: t.field({
      type: ['JSON'],
      nullable: true,
      description: 'Enumerated values (scalar types only); null when none.',
      resolve: (a) => toAttributeRow(a).allowed_values,
    }),
    allowedValuesUsage: t.field({
      type: Usage,
      nullable: true,
      description: 'Entries of allowedValues against the 1,000 limit; null when there is no enumeration.',
      resolve: (a) => {
        const values = toAttributeRow(a).allowed_values;
        return values ? { used: values.length, limit: MAX_ALLOWED_VALUES } : null;
      },
    }),
    allowedRefType: t.field({
      type: EntityType,
      nullable: true,
      description: 'The type an entity_ref attribute points at.',
      resolve: (a, _args, ctx) => (a.allowed_ref_type ? typeByGuid(ctx, a.allowed_ref_type) : null),
    }),
    required: t.boolean({
      description: 'Whether instances must carry a value.',
      resolve: (a) => a.required === true,
    }),
    defaultValue: t.field({
      type: 'JSON',
      nullable: true,
      description: 'Applied when an instance is created without a value; an entity guid for references.',
      resolve: (a) => toAttributeRow(a).default_value,
    }),
    filterable: t.boolean({
      description: 'Whether the attribute can be filtered on.',
      resolve: (a) => a.filterable === true,
    }),
    origin: t.exposeString('origin', {
      description: 'system for platform attributes, user_defined otherwise.',
    }),
    state: t.exposeString('state', { description: 'live, or withdrawn while its data is being removed.' }),
  }),
});

const WithdrawnAttribute = builder.objectRef<StoredAttribute>('WithdrawnAttribute').implement({
  description:
    'A withdrawn definition whose stored data is being removed; its name is free once the daily job removes it.',
  fields: (t) => ({
    definition: t.field({ type: AttributeDefinition, resolve: (a) => a }),
    state: t.exposeString('state', { description: 'Always withdrawn.' }),
    withdrawnAt: t.string({ nullable: true, resolve: (a) => a.withdrawn_at }),
    valuesRemoved: t.int({
      description: 'Stored values removed so far.',
      resolve: (a) => Number(a.values_removed ?? 0),
    }),
    valuesRemaining: t.int({
      description: 'Stored values still to remove (counted now).',
      resolve: async (a, _args, ctx) =>
        (
          await ctx.db.read((run) =>
            countAttributeData(run, {
              tenant: ctx.viewer.tenant,
              typeGuid: a.owner_guid,
              nameKey: a.name_key,
              multi: a.cardinality === 'multi',
              reference: a.value_type === 'entity_ref',
            }),
          )
        ).values,
    }),
    purgeLastRanAt: t.string({
      nullable: true,
      description: 'When the purge last finished a pass over the instances; null before the first.',
      resolve: (a) => a.purge_completed_at,
    }),
  }),
});

builder.objectField(EntityType, 'attributes', (t) =>
  t.field({
    type: [AttributeDefinition],
    description:
      'Every attribute applying to the type: the five platform attributes, then its own live definitions.',
    resolve: (type, _args, ctx) => attributesOf(ctx, type),
  }),
);

builder.objectField(EntityType, 'attributeUsage', (t) =>
  t.field({
    type: Usage,
    description: 'Definitions declared on the type against the 200 limit.',
    resolve: (type, _args, ctx) => attributeUsageOf(ctx, type),
  }),
);

builder.objectField(EntityType, 'withdrawnAttributes', (t) =>
  t.field({
    type: [WithdrawnAttribute],
    description: 'Withdrawn definitions whose data is still being removed.',
    resolve: (type, _args, ctx) => ctx.loaders.withdrawnAttributesByType.load(type.guid),
  }),
);

const DeclareAttributeInput = builder.inputType('DeclareAttributeInput', {
  description:
    'A declaration. valueType and cardinality are strings so that a wrong value gets the same refusal reason as over REST.',
  fields: (t) => ({
    name: t.string({ required: true }),
    valueType: t.string({
      required: true,
      description: 'string, number, boolean, date, json or entity_ref.',
    }),
    cardinality: t.string({ required: true, description: 'single or multi.' }),
    allowedValues: t.field({ type: ['JSON'], required: false }),
    allowedRefType: t.id({ required: false }),
    required: t.boolean({ required: false }),
    defaultValue: t.field({ type: 'JSON', required: false }),
    filterable: t.boolean({ required: false }),
  }),
});

const DeclareAttributePayload = builder
  .objectRef<{ attribute: StoredAttribute; dryRun: boolean; declared: number }>('DeclareAttributePayload')
  .implement({
    fields: (t) => ({
      attribute: t.field({ type: AttributeDefinition, resolve: (p) => p.attribute }),
      dryRun: t.exposeBoolean('dryRun', { description: 'True: validated only, nothing written.' }),
      usage: t.field({ type: Usage, resolve: (p) => ({ used: p.declared, limit: MAX_ATTRIBUTE_DEFS }) }),
    }),
  });

const Impact = builder.objectRef<{ instances: number; values: number }>('WithdrawImpact').implement({
  fields: (t) => ({
    instances: t.exposeInt('instances', { description: 'Instances that carry a value.' }),
    values: t.exposeInt('values', { description: 'Stored values that would be removed.' }),
  }),
});

const WithdrawAttributePayload = builder
  .objectRef<{ attribute: StoredAttribute; dryRun: boolean; impact?: { instances: number; values: number } }>(
    'WithdrawAttributePayload',
  )
  .implement({
    fields: (t) => ({
      attribute: t.field({ type: AttributeDefinition, resolve: (p) => p.attribute }),
      dryRun: t.exposeBoolean('dryRun'),
      impact: t.field({
        type: Impact,
        nullable: true,
        description: 'Dry runs only.',
        resolve: (p) => p.impact ?? null,
      }),
    }),
  });

const GRAPHQL_TO_REST_FIELDS: Record<string, string> = {
  name: 'name',
  valueType: 'value_type',
  cardinality: 'cardinality',
  allowedValues: 'allowed_values',
  allowedRefType: 'allowed_ref_type',
  required: 'required',
  defaultValue: 'default_value',
  filterable: 'filterable',
};

builder.mutationFields((t) => ({
  declareAttribute: t.field({
    type: DeclareAttributePayload,
    description: 'Declare an attribute on a type (dryRun: validate and report only).',
    args: {
      typeGuid: t.arg.id({ required: true }),
      input: t.arg({ type: DeclareAttributeInput, required: true }),
      dryRun: t.arg.boolean({ required: false, defaultValue: false }),
    },
    resolve: (_root, args, ctx) => {
      const input: DeclareInput = {};
      for (const [field, value] of Object.entries(args.input)) {
        if (value !== undefined) input[GRAPHQL_TO_REST_FIELDS[field] ?? field] = value;
      }
      return declareAttribute(ctx, String(args.typeGuid), input, { dryRun: args.dryRun === true });
    },
  }),
  withdrawAttribute: t.field({
    type: WithdrawAttributePayload,
    description:
      'Withdraw a live attribute; its data is removed in the background (dryRun: report the impact only).',
    args: {
      typeGuid: t.arg.id({ required: true }),
      name: t.arg.string({ required: true }),
      dryRun: t.arg.boolean({ required: false, defaultValue: false }),
    },
    resolve: (_root, args, ctx) =>
      withdrawAttribute(ctx, String(args.typeGuid), args.name, { dryRun: args.dryRun === true }),
  }),
}));
