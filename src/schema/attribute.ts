// GraphQL object family for attribute definitions: AttributeDefinition, EntityType.attributes and usage,
// withdrawn definitions with their purge state, and the declare/evolve/withdraw mutations (same resolvers as REST).
// Over 300 lines: one object family per file (house style), and every field carries its description.

import type { z } from 'zod';
import { charge, type RequestContext } from '../context.js';
import { AttributeRow, descriptionOf, WithdrawImpact as WithdrawImpactRow } from '../contract/wire.js';
import type { StoredAttribute } from '../db/attributes.js';
import { StoredJson } from '../json/raw.js';
import {
  MAX_ALLOWED_VALUES,
  MAX_ATTRIBUTE_DEFS,
  MAX_DESCRIPTION_LENGTH,
  MAX_DISPLAY_NAME_LENGTH,
  MAX_TYPE_DEFAULTS_JSON_BYTES,
  MAX_TYPE_DEFINITIONS_JSON_BYTES,
} from '../model/limits.js';
import { pageRange, pageSize, WITHDRAWN_LISTED } from '../model/pages.js';
import type { Cardinality, ValueType } from '../model/value-types.js';
import {
  attributesOf,
  attributeUsageOf,
  declareAttribute,
  ownerTypeOf,
  valuesRemainingOf,
  withdrawAttribute,
} from '../resolvers/attributes.js';
import { sayWhy } from '../resolvers/change-author.js';
import { declarationFromGraphQL, type GraphQLDeclarationField } from '../resolvers/declaration.js';
import { type EvolveResult, evolveAttribute } from '../resolvers/evolution.js';
import { builder } from './builder.js';
import { EntityType, IF_VERSION_ARG, REASON_ARG, typeNamedBy, versionArg } from './entity-type.js';
import { rowDescription, rowFields } from './row-fields.js';
import './scalars.js';

const Usage = builder.objectRef<{ declared: number; limit: number }>('Usage').implement({
  description: 'How much of a limit is used.',
  fields: (t) => ({
    // Named as REST names it (usage.declared), so one word means the count over both APIs.
    declared: t.exposeInt('declared', {
      description:
        'Entries declared, counted against the limit: definitions on the type, or values enumerated.',
    }),
    used: t.exposeInt('declared', {
      description: 'The same count as declared, under its former name.',
      deprecationReason: 'Read declared: the same count, under the name REST gives it.',
    }),
    limit: t.exposeInt('limit', {
      description: 'The most entries allowed (200 definitions per type, 1,000 enumerated values).',
    }),
  }),
});

/**
 * The value types, cardinalities and definition states (docs/api.md#declaration-rules) as GraphQL enums (the same
 * lower-case words).
 */
const ValueTypeEnum = builder.enumType('ValueType', {
  description: 'Kind of value an attribute holds.',
  values: {
    string: { description: 'Text, at most 65,536 characters per value.' },
    number: { description: 'A JSON number.' },
    boolean: { description: 'true or false.' },
    date: { description: 'An ISO 8601 date or date-time.' },
    json: { description: 'Any JSON value.' },
    entity_ref: { description: 'A reference to an entity of allowedRefType (its guid).' },
  } satisfies Record<ValueType, { description: string }>,
});

const CardinalityEnum = builder.enumType('Cardinality', {
  description: 'How many values an instance may carry for an attribute.',
  values: {
    single: { description: 'One value.' },
    multi: { description: 'A list of up to 1,000 values.' },
  } satisfies Record<Cardinality, { description: string }>,
});

const AttributeStateEnum = builder.enumType('AttributeState', {
  description: 'Where a definition stands.',
  values: {
    live: { description: 'Declared and applying to instances.' },
    withdrawn: { description: 'Withdrawn; its stored values are being removed, then its name is free.' },
  } satisfies Record<StoredAttribute['state'], { description: string }>,
});

export const AttributeDefinition = builder.objectRef<StoredAttribute>('AttributeDefinition');

type Redeclaring = NonNullable<StoredAttribute['redeclaring']>;
const RedeclaringObject = builder.objectRef<Redeclaring>('AttributeRedeclaring').implement({
  description: rowDescription(AttributeRow.shape.redeclaring),
  fields: (t) => rowFields(t, AttributeRow.shape.redeclaring.unwrap().shape),
});

/**
 * One of a definition's JSON texts: on the row, or, for a light row (GraphQL lists leave the texts out), loaded
 * after the operation is charged for its size, so a query cannot pull megabytes of enumerations it did not pay for.
 */
function storedJson(
  ctx: RequestContext,
  a: StoredAttribute,
  field: 'allowed_values_json' | 'default_value_json',
): Promise<StoredJson | null> {
  const onRow = a[field];
  const size = field === 'allowed_values_json' ? a.allowed_values_size : a.default_value_size;
  if (onRow === null && !size) return Promise.resolve(null);
  const key = `${a.guid}\u0000${field}`;
  const loaded = ctx.loaders.storedJson;
  // Charged once per text an operation loads: another field (or alias) reading the same text, even at the same time,
  // shares it, and the answer's own bound (measured before it is serialised) counts what is repeated in it.
  const known = loaded.get(key);
  if (known) return known;
  charge(ctx, 0, size ?? onRow?.length ?? 0);
  const value = (async () => {
    const text = onRow ?? (await ctx.loaders.attributeJson.load(a.guid))?.[field] ?? null;
    return text === null ? null : new StoredJson(text);
  })();
  loaded.set(key, value);
  return value;
}

const ROW = AttributeRow.shape;

AttributeDefinition.implement({
  description: descriptionOf(AttributeRow),
  // Every field as the row declares it (contract/wire.ts), named and described as there; these resolve from the
  // stored definition (its JSON texts loaded once per request and spliced into the answer as stored, its related
  // types charged), and two are GraphQL's own.
  fields: (t) => ({
    ...rowFields(t, ROW, {
      guid: t.exposeID('guid', { description: rowDescription(ROW.guid) }),
      owner_type: t.field({
        type: EntityType,
        nullable: true,
        description: rowDescription(ROW.owner_type),
        resolve: (a, _args, ctx) => typeNamedBy(ctx, ownerTypeOf(a)),
      }),
      value_type: t.field({
        type: ValueTypeEnum,
        description: rowDescription(ROW.value_type),
        resolve: (a) => a.value_type,
      }),
      cardinality: t.field({
        type: CardinalityEnum,
        description: rowDescription(ROW.cardinality),
        resolve: (a) => a.cardinality,
      }),
      allowed_values: t.field({
        type: ['JSON'],
        nullable: true,
        description: rowDescription(ROW.allowed_values),
        resolve: async (a, _args, ctx) => (await storedJson(ctx, a, 'allowed_values_json'))?.items() ?? null,
      }),
      allowed_ref_type: t.field({
        type: EntityType,
        nullable: true,
        description: rowDescription(ROW.allowed_ref_type),
        resolve: (a, _args, ctx) => typeNamedBy(ctx, a.allowed_ref_type),
      }),
      required: t.boolean({ description: rowDescription(ROW.required), resolve: (a) => a.required === true }),
      default_value: t.field({
        type: 'JSON',
        nullable: true,
        description: rowDescription(ROW.default_value),
        resolve: async (a, _args, ctx) => (await storedJson(ctx, a, 'default_value_json'))?.whole() ?? null,
      }),
      filterable: t.boolean({
        description: rowDescription(ROW.filterable),
        resolve: (a) => a.filterable === true,
      }),
      origin: t.exposeString('origin', { description: rowDescription(ROW.origin) }),
      redeclaring: t.field({
        type: RedeclaringObject,
        nullable: true,
        description: rowDescription(ROW.redeclaring),
        resolve: (a) => a.redeclaring ?? null,
      }),
    }),
    allowedValuesUsage: t.field({
      type: Usage,
      nullable: true,
      description: `Entries of allowedValues against the ${MAX_ALLOWED_VALUES.toLocaleString('en-US')} limit; null when there is no enumeration.`,
      resolve: async (a, _args, ctx) => {
        const values = (await storedJson(ctx, a, 'allowed_values_json'))?.items();
        return values ? { declared: values.length, limit: MAX_ALLOWED_VALUES } : null;
      },
    }),
    state: t.field({
      type: AttributeStateEnum,
      description: 'live, or withdrawn while its stored values are being removed.',
      resolve: (a) => a.state,
    }),
  }),
});

const WithdrawnAttribute = builder.objectRef<StoredAttribute>('WithdrawnAttribute').implement({
  description:
    'A withdrawn definition whose stored data is being removed; its name is free once the daily job removes it.',
  fields: (t) => ({
    definition: t.field({
      type: AttributeDefinition,
      description: 'The definition as it was declared (state withdrawn).',
      resolve: (a) => a,
    }),
    state: t.field({ type: AttributeStateEnum, description: 'Always withdrawn.', resolve: (a) => a.state }),
    withdrawnAt: t.string({
      nullable: true,
      description: 'When the definition was withdrawn (ISO 8601 date-time).',
      resolve: (a) => a.withdrawn_at,
    }),
    valuesRemoved: t.int({
      description: 'Stored values the purge has removed so far.',
      resolve: (a) => Number(a.values_removed ?? 0),
    }),
    valuesRemaining: t.int({
      description: 'Stored values still to remove (counted when asked, one database query per definition).',
      resolve: (a, _args, ctx) => valuesRemainingOf(ctx, a),
    }),
    purgeLastRanAt: t.string({
      nullable: true,
      description:
        'When the purge last finished a pass over the instances (ISO 8601 date-time); null before the first.',
      resolve: (a) => a.purge_completed_at,
    }),
  }),
});

builder.objectField(EntityType, 'attributes', (t) =>
  t.field({
    type: [AttributeDefinition],
    description:
      'Every attribute applying to the type: the five platform attributes (fixed order), then its own live definitions in name order. Withdrawn definitions are absent, but one being redeclared (its values carried) is shown as it will be, with redeclaring set. Unpaged: at most 205 entries.',
    resolve: async (type, _args, ctx) => {
      const attributes = await attributesOf(ctx, type);
      charge(ctx, attributes.length);
      return attributes;
    },
  }),
);

builder.objectField(EntityType, 'attributeUsage', (t) =>
  t.field({
    type: Usage,
    description:
      'Live definitions declared on the type against the 200 limit (platform attributes and withdrawn definitions are not counted).',
    resolve: (type, _args, ctx) => attributeUsageOf(ctx, type),
  }),
);

builder.objectField(EntityType, 'withdrawnAttributes', (t) =>
  t.field({
    type: [WithdrawnAttribute],
    description:
      'Withdrawn definitions whose data is still being removed, in name order; their names cannot be declared again (attribute_def_withdrawn) until the daily job removes them.',
    args: {
      first: t.arg.int({
        required: false,
        description: `How many to list, in name order: ${pageRange(WITHDRAWN_LISTED)} (invalid_page_size outside).`,
      }),
    },
    resolve: async (type, args, ctx) => {
      const first = pageSize(args.first, 'first', WITHDRAWN_LISTED);
      const withdrawn = (await ctx.loaders.withdrawnAttributesByType.load(type.guid)).slice(0, first);
      charge(ctx, withdrawn.length);
      return withdrawn;
    },
  }),
);

const DeclareAttributeInput = builder.inputType('DeclareAttributeInput', {
  description:
    'A declaration. valueType and cardinality are strings so that a wrong value gets the same refusal reason as over REST. Null means "not sent" for every optional field; each malformed combination is refused with its own reason, never ignored.',
  fields: (t) =>
    ({
      name: t.string({
        required: true,
        description:
          'Attribute name, unique within the type (letter case ignored): at most 256 characters after trimming. Refusals: empty_value, name_too_long, invalid_field (control characters; __proto__, constructor, prototype), attribute_def_already_exists (also the platform names), attribute_def_withdrawn.',
      }),
      valueType: t.string({
        required: true,
        description: 'string, number, boolean, date, json or entity_ref; anything else: unknown_value_type.',
      }),
      cardinality: t.string({
        required: true,
        description: 'single or multi; anything else: invalid_cardinality.',
      }),
      allowedValues: t.field({
        type: ['JSON'],
        required: false,
        description:
          'Enumerated values, scalar value types only (on entity_ref: allowed_values_not_supported). At most 1,000 (too_many_allowed_values), distinct (duplicate_allowed_value), each fitting valueType and at most 1,024 characters (invalid_allowed_value). Empty means no enumeration.',
      }),
      allowedRefType: t.id({
        required: false,
        description:
          'Guid of the type an entity_ref attribute points at: required on entity_ref (allowed_ref_type_required), refused on other value types (allowed_ref_type_not_supported); unknown_entity_type when it does not resolve.',
      }),
      required: t.boolean({
        required: false,
        description: 'Whether instances must carry a value; default false.',
      }),
      defaultValue: t.field({
        type: 'JSON',
        required: false,
        description:
          'Applied when an instance is created without a value: must fit valueType and cardinality (invalid_default_value) and the enumeration (default_value_not_allowed); at most 64 KB of JSON. For references an entity guid of allowedRefType (referent_not_found, ref_type_mismatch).',
      }),
      filterable: t.boolean({
        required: false,
        description:
          'Whether the attribute can be filtered on; default false. entity_ref only: sent at all on another value type is filterable_not_supported.',
      }),
      description: t.string({
        required: false,
        description: `What the attribute is for, for people: at most ${MAX_DESCRIPTION_LENGTH.toLocaleString('en-US')} characters once trimmed, line breaks and tabs allowed, no other control or invisible characters (invalid_field).`,
      }),
      displayName: t.string({
        required: false,
        description: `A label for people (the name stays the key): at most ${MAX_DISPLAY_NAME_LENGTH} characters once trimmed, one line, no control or invisible characters (invalid_field).`,
      }),
    }) satisfies Record<GraphQLDeclarationField, unknown>,
});

const DeclareAttributePayload = builder
  .objectRef<{ attribute: StoredAttribute; dryRun: boolean; declared: number }>('DeclareAttributePayload')
  .implement({
    description: 'Result of a declaration (or of its dry run).',
    fields: (t) => ({
      attribute: t.field({
        type: AttributeDefinition,
        description: 'The definition declared (on a dry run: as it would be declared).',
        resolve: (p, _args, ctx) => {
          charge(ctx, 1);
          return p.attribute;
        },
      }),
      dryRun: t.exposeBoolean('dryRun', { description: 'True: validated only, nothing written.' }),
      usage: t.field({
        type: Usage,
        description:
          'Live definitions on the type against the 200 limit: this declaration included, or on a dry run as they stand.',
        resolve: (p) => ({ declared: p.declared, limit: MAX_ATTRIBUTE_DEFS }),
      }),
    }),
  });

const EvolveAttributeInput = builder.inputType('EvolveAttributeInput', {
  description:
    'A change of a live definition in place: the fields to change (the name is an argument). A field given replaces the stored one; null resets it to its default (no enumeration, no default, false); a field left out is kept. Only changes every stored value survives are made (attribute_change_not_in_place otherwise).',
  fields: (t) =>
    ({
      valueType: t.string({
        required: false,
        description: 'Only the one it has: it cannot change in place.',
      }),
      cardinality: t.string({
        required: false,
        description: 'Only the one it has: it cannot change in place.',
      }),
      allowedValues: t.field({
        type: ['JSON'],
        required: false,
        description: 'The enumeration: a superset of the current one (values added), or null for none.',
      }),
      allowedRefType: t.id({
        required: false,
        description: 'Only the one it has: it cannot change in place.',
      }),
      required: t.boolean({
        required: false,
        description: 'false (or null) drops the requirement; true only if it was required.',
      }),
      defaultValue: t.field({
        type: 'JSON',
        required: false,
        description: 'Another default (for instances created from now on), or null for none.',
      }),
      filterable: t.boolean({ required: false, description: 'entity_ref only: turns filtering on or off.' }),
      description: t.string({ required: false, description: 'Another description, or null for none.' }),
      displayName: t.string({ required: false, description: 'Another display name, or null for none.' }),
    }) satisfies Record<Exclude<GraphQLDeclarationField, 'name'>, unknown>,
});

const EvolveAttributePayload = builder.objectRef<EvolveResult>('EvolveAttributePayload').implement({
  description: 'Result of a change in place (or of its dry run).',
  fields: (t) => ({
    attribute: t.field({
      type: AttributeDefinition,
      description: 'The definition as changed (on a dry run: as it would be); same guid as before.',
      resolve: (p, _args, ctx) => {
        charge(ctx, 1);
        return p.attribute;
      },
    }),
    dryRun: t.exposeBoolean('dryRun', { description: 'True: validated only, nothing written.' }),
    changed: t.exposeBoolean('changed', {
      description: 'False when the definition already was as asked: nothing was written.',
    }),
    changes: t.field({
      type: 'JSON',
      description:
        'How the definition changed, field by field (a list of FieldChange: field, from, to; for allowed_values the counts and the first values added and removed).',
      resolve: (p) => p.changes,
    }),
  }),
});

const Impact = builder.objectRef<z.output<typeof WithdrawImpactRow>>('WithdrawImpact').implement({
  description: 'What a withdrawal would remove, counted now.',
  fields: (t) => ({
    instances: t.exposeInt('instances', { description: 'Instances that carry a value.' }),
    values: t.exposeInt('values', { description: 'Stored values that would be removed.' }),
    complete: t.exposeBoolean('complete', { description: WithdrawImpactRow.shape.complete.description }),
  }),
});

const WithdrawAttributePayload = builder
  .objectRef<{ attribute: StoredAttribute; dryRun: boolean; impact?: z.output<typeof WithdrawImpactRow> }>(
    'WithdrawAttributePayload',
  )
  .implement({
    description: 'Result of a withdrawal (or of its dry run).',
    fields: (t) => ({
      attribute: t.field({
        type: AttributeDefinition,
        description: 'The definition: state withdrawn, or still live on a dry run.',
        resolve: (p) => p.attribute,
      }),
      dryRun: t.exposeBoolean('dryRun', { description: 'True: impact reported only, nothing written.' }),
      impact: t.field({
        type: Impact,
        nullable: true,
        description: 'Instances and stored values the withdrawal removes; dry runs only (null otherwise).',
        resolve: (p) => p.impact ?? null,
      }),
    }),
  });

builder.mutationFields((t) => ({
  declareAttribute: t.field({
    type: DeclareAttributePayload,
    description: `Declare an attribute definition on a type (dryRun: validate and report only). Refusals besides those of the input fields: unknown_entity_type, base_type_not_owner (the root type entity), too_many_attribute_defs (${MAX_ATTRIBUTE_DEFS} live definitions), attribute_defs_too_large (${MAX_TYPE_DEFINITIONS_JSON_BYTES.toLocaleString('en-US')} bytes of enumerations and defaults as UTF-8 JSON text), defaults_too_large (${MAX_TYPE_DEFAULTS_JSON_BYTES.toLocaleString('en-US')} bytes of defaults), precondition_failed.`,
    args: {
      typeGuid: t.arg.id({ required: true, description: 'Guid of the type to declare on.' }),
      input: t.arg({ type: DeclareAttributeInput, required: true, description: 'The declaration.' }),
      dryRun: t.arg.boolean({
        required: false,
        defaultValue: false,
        description: 'True: run every check and return the result, write nothing.',
      }),
      reason: t.arg.string({ description: REASON_ARG }),
      ifVersion: t.arg.string({ description: IF_VERSION_ARG }),
    },
    resolve: (_root, args, ctx) => {
      sayWhy(ctx, args.reason);
      return declareAttribute(ctx, String(args.typeGuid), declarationFromGraphQL(args.input), {
        dryRun: args.dryRun === true,
        ifVersion: versionArg(args.ifVersion),
      });
    },
  }),
  evolveAttribute: t.field({
    type: EvolveAttributePayload,
    description:
      'Change a live attribute definition in place, for changes every stored value survives: allowed values added (or the enumeration dropped), required dropped, filterable turned on or off, another default. Its guid and values are kept, it never leaves the listing, and one attribute_evolved change record says what changed. Refusals: attribute_change_not_in_place (any other change: redeclare it through a model document), unknown_entity_type, attribute_def_not_found, attribute_def_withdrawn, base_type_not_owner, the declaration rules of the merged definition, attribute_defs_too_large, defaults_too_large, precondition_failed.',
    args: {
      typeGuid: t.arg.id({ required: true, description: 'Guid of the type that owns the definition.' }),
      name: t.arg.string({ required: true, description: 'Attribute name (trimmed, letter case ignored).' }),
      input: t.arg({ type: EvolveAttributeInput, required: true, description: 'The fields to change.' }),
      dryRun: t.arg.boolean({
        required: false,
        defaultValue: false,
        description: 'True: run every check and return the result, write nothing.',
      }),
      reason: t.arg.string({ description: REASON_ARG }),
      ifVersion: t.arg.string({ description: IF_VERSION_ARG }),
    },
    resolve: (_root, args, ctx) => {
      sayWhy(ctx, args.reason);
      return evolveAttribute(ctx, String(args.typeGuid), args.name, declarationFromGraphQL(args.input), {
        dryRun: args.dryRun === true,
        ifVersion: versionArg(args.ifVersion),
      });
    },
  }),
  withdrawAttribute: t.field({
    type: WithdrawAttributePayload,
    description:
      'Withdraw a live attribute definition: it leaves the listing at once and its stored values are removed in the background; the name is free again once the daily job has removed it (dryRun: report the impact only). Refusals: unknown_entity_type, attribute_def_not_found, attribute_def_withdrawn, base_type_not_owner (a platform attribute), precondition_failed.',
    args: {
      typeGuid: t.arg.id({ required: true, description: 'Guid of the type that owns the definition.' }),
      name: t.arg.string({ required: true, description: 'Attribute name (trimmed, letter case ignored).' }),
      dryRun: t.arg.boolean({
        required: false,
        defaultValue: false,
        description: 'True: count what would be removed and write nothing.',
      }),
      reason: t.arg.string({ description: REASON_ARG }),
      ifVersion: t.arg.string({ description: IF_VERSION_ARG }),
    },
    resolve: (_root, args, ctx) => {
      sayWhy(ctx, args.reason);
      return withdrawAttribute(ctx, String(args.typeGuid), args.name, {
        dryRun: args.dryRun === true,
        ifVersion: versionArg(args.ifVersion),
      });
    },
  }),
}));
