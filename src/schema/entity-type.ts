// GraphQL object family for entity types: EntityType, the type connection, and create/rename/delete mutations.

import { charge, type RequestContext, typeByGuid } from '../context.js';
import { MAX_TAG_CHARS, type VersionCondition } from '../contract/type-version.js';
import { descriptionOf, EntityTypeRow, FormerNameRow, RELEASE_FORMER_NAME } from '../contract/wire.js';
import type { StoredType } from '../db/entity-types.js';
import { refuse } from '../errors.js';
import { TYPE_ORIGINS, type TypeOrigin } from '../model/origins.js';
import { PAGES } from '../model/pages.js';
import { CHANGE_REASON_MAX, sayWhy } from '../resolvers/change-author.js';
import {
  createOrGetEntityType,
  deleteEntityType,
  findEntityTypeByName,
  listEntityTypes,
  renameEntityType,
} from '../resolvers/entity-types.js';
import { releaseFormerName } from '../resolvers/former-names.js';
import { describeEntityType } from '../resolvers/type-texts.js';
import { builder } from './builder.js';
import { rowDescription, rowFields } from './row-fields.js';

export const EntityTypeOrigin = builder.enumType('EntityTypeOrigin', {
  description: 'Where a type comes from. Only user_defined types can be renamed or deleted.',
  values: Object.fromEntries(
    Object.entries(TYPE_ORIGINS).map(([origin, description]) => [origin, { description }]),
  ) as { [O in TypeOrigin]: { description: string } },
});

export const EntityType = builder.objectRef<StoredType>('EntityType');

/** A name a type had before a rename, as the row declares it (contract/wire.ts). */
export const FormerName = builder.objectRef<FormerNameRow>('FormerName').implement({
  description: descriptionOf(FormerNameRow),
  fields: (t) => rowFields(t, FormerNameRow.shape),
});

/** A type an operation is about to put in its answer: charged as one object when it resolves. */
export function chargedType(
  ctx: RequestContext,
  type: StoredType | null | Promise<StoredType | null>,
): StoredType | null | Promise<StoredType | null> {
  if (type instanceof Promise) return type.then((t) => chargedType(ctx, t) as StoredType | null);
  if (type) charge(ctx, 1);
  return type;
}

/** The type a row field names by guid (a level above, an owner, a referenced type), charged; null when none. */
export const typeNamedBy = (ctx: RequestContext, guid: string | null | undefined) =>
  guid ? chargedType(ctx, typeByGuid(ctx, guid)) : null;

const ROW = EntityTypeRow.shape;

/** The mutations' optional condition: the type's version as the caller read it. */
export const IF_VERSION_ARG = `The type's version as you read it (EntityType.version): the change happens only while the type is still at it, else precondition_failed (extensions.version: the current one). Of two callers sending the same version, one wins. At most ${MAX_TAG_CHARS} characters.`;

/** The condition an ifVersion argument states (none when absent). */
export const versionArg = (v: string | null | undefined): VersionCondition | undefined => {
  if (v === null || v === undefined) return undefined;
  if (v.length > MAX_TAG_CHARS)
    throw refuse('invalid_precondition', `ifVersion has at most ${MAX_TAG_CHARS} characters.`);
  return [v];
};

EntityType.implement({
  description: descriptionOf(EntityTypeRow),
  // Every field as the row declares it (contract/wire.ts); these are an ID, an enum, a list and a related type.
  fields: (t) =>
    rowFields(t, ROW, {
      guid: t.exposeID('guid', { description: rowDescription(ROW.guid) }),
      origin: t.field({
        type: EntityTypeOrigin,
        description: rowDescription(ROW.origin),
        resolve: (type) => type.origin,
      }),
      former_names: t.field({
        type: [FormerName],
        nullable: true,
        description: rowDescription(ROW.former_names),
        resolve: (type) => type.former_names,
      }),
      parent_type: t.field({
        type: EntityType,
        nullable: true,
        description: rowDescription(ROW.parent_type),
        resolve: (type, _args, ctx) => typeNamedBy(ctx, type.parent_type),
      }),
    }),
});

builder.queryFields((t) => ({
  entityType: t.field({
    type: EntityType,
    nullable: true,
    description: 'A type of your tenant by guid; null when none has it (also for a guid of another tenant).',
    args: { guid: t.arg.id({ required: true, description: 'Guid of the type.' }) },
    resolve: (_root, args, ctx) => chargedType(ctx, ctx.loaders.entityTypeByGuid.load(String(args.guid))),
  }),
  entityTypeByName: t.field({
    type: EntityType,
    nullable: true,
    description:
      'The type a name resolves to (trimmed, letter case ignored; a renamed type also by the name it was created under); null when none.',
    args: {
      name: t.arg.string({
        required: true,
        description: 'Type name, compared trimmed, NFC-composed and case-folded.',
      }),
    },
    resolve: (_root, args, ctx) => chargedType(ctx, findEntityTypeByName(ctx, args.name)),
  }),
  entityTypes: t.connection(
    {
      type: EntityType,
      description: `Every type of your tenant (system, user-defined and connector types together), in normalised-name order, paged forward with first/after. first: 1..${PAGES.max}, default ${PAGES.default} (invalid_page_size outside); a cursor not issued to your tenant: invalid_cursor.`,
      resolve: async (_root, args, ctx) => {
        const page = await listEntityTypes(ctx, {
          cursor: args.after ?? undefined,
          pageSize: args.first ?? undefined,
          backward: args.last != null || args.before != null,
        });
        // Each row is an edge and its node.
        charge(ctx, 2 * page.rows.length);
        return {
          // Cursors stay lazy: signed only for edges whose cursor is selected.
          edges: page.rows.map((row) => ({
            node: row.type,
            get cursor() {
              return row.cursor;
            },
          })),
          pageInfo: {
            hasNextPage: page.more,
            hasPreviousPage: args.after != null,
            get startCursor() {
              return page.rows[0]?.cursor ?? null;
            },
            get endCursor() {
              return page.rows[page.rows.length - 1]?.cursor ?? null;
            },
          },
        };
      },
    },
    { description: 'One page of entity types.' },
    { description: 'One entity type of the page, with the cursor that continues after it.' },
  ),
}));

const CreateEntityTypePayload = builder
  .objectRef<{ entityType: StoredType; created: boolean }>('CreateEntityTypePayload')
  .implement({
    description: 'Result of create-or-get.',
    fields: (t) => ({
      entityType: t.field({
        type: EntityType,
        description: 'The type created, or the existing type the name resolved to.',
        resolve: (p) => p.entityType,
      }),
      created: t.exposeBoolean('created', {
        description:
          'True when a type was created; false when the name already resolved to a type (nothing written).',
      }),
    }),
  });

const DeleteEntityTypePayload = builder
  .objectRef<{ guid: string; deleted: boolean }>('DeleteEntityTypePayload')
  .implement({
    description: 'Result of a delete.',
    fields: (t) => ({
      guid: t.exposeID('guid', { description: 'Guid of the deleted type.' }),
      deleted: t.exposeBoolean('deleted', {
        description: 'Always true: a refused delete is an error instead.',
      }),
    }),
  });

const ReleaseFormerNamePayload = builder
  .objectRef<{ type: StoredType; released: boolean }>('ReleaseFormerNamePayload')
  .implement({
    description: 'Result of releasing a former name.',
    fields: (t) => ({
      entityType: t.field({
        type: EntityType,
        description: 'The type, as the release left it.',
        resolve: (p) => p.type,
      }),
      released: t.exposeBoolean('released', { description: RELEASE_FORMER_NAME.released }),
    }),
  });

/** The description of every mutation's `reason` argument. */
export const REASON_ARG = `Why you make this change (1 to ${CHANGE_REASON_MAX} characters, no control characters): recorded with it in the history (ModelChange.reason). Refusal: invalid_change_reason.`;

builder.mutationFields((t) => ({
  createEntityType: t.field({
    type: CreateEntityTypePayload,
    description:
      'Create-or-get a user-defined type by name: a name that already resolves returns that type with created false and writes nothing. Refusals: empty_value, name_too_long, invalid_field, type_instances_managed (the name of a managed type not yet set up, e.g. dashboard).',
    args: {
      name: t.arg.string({
        required: true,
        description: 'Type name: at most 256 characters after trimming, no control characters.',
      }),
      reason: t.arg.string({ description: REASON_ARG }),
    },
    resolve: async (_root, args, ctx) => {
      sayWhy(ctx, args.reason);
      const result = await createOrGetEntityType(ctx, args.name);
      return { entityType: result.type, created: result.created };
    },
  }),
  renameEntityType: t.field({
    type: EntityType,
    description:
      'Rename a user-defined type; its guid does not change and the name it was created under keeps resolving to it. Refusals: unknown_entity_type, type_not_user_defined, type_name_taken, type_instances_managed, empty_value, name_too_long, precondition_failed.',
    args: {
      guid: t.arg.id({ required: true, description: 'Guid of the type to rename.' }),
      name: t.arg.string({
        required: true,
        description: 'New name: at most 256 characters after trimming, no control characters.',
      }),
      reason: t.arg.string({ description: REASON_ARG }),
      ifVersion: t.arg.string({ description: IF_VERSION_ARG }),
    },
    resolve: (_root, args, ctx) => {
      sayWhy(ctx, args.reason);
      return renameEntityType(ctx, String(args.guid), args.name, { ifVersion: versionArg(args.ifVersion) });
    },
  }),
  describeEntityType: t.field({
    type: EntityType,
    description:
      "Change a type's description and display name (any type). A field given replaces the stored text, null (or empty) removes it, a field left out is kept; recorded as type_described; changing nothing writes nothing. Refusals: unknown_entity_type, invalid_field (over 1,000 or 256 characters, control or invisible characters but line breaks in a description), precondition_failed.",
    args: {
      guid: t.arg.id({ required: true, description: 'Guid of the type.' }),
      description: t.arg.string({
        required: false,
        description: 'What the type is for (at most 1,000 characters).',
      }),
      displayName: t.arg.string({
        required: false,
        description: 'A label for people (at most 256 characters).',
      }),
      reason: t.arg.string({ description: REASON_ARG }),
      ifVersion: t.arg.string({ description: IF_VERSION_ARG }),
    },
    resolve: (_root, args, ctx) => {
      sayWhy(ctx, args.reason);
      return describeEntityType(
        ctx,
        String(args.guid),
        { description: args.description, display_name: args.displayName },
        { ifVersion: versionArg(args.ifVersion) },
      );
    },
  }),
  releaseFormerName: t.field({
    type: ReleaseFormerNamePayload,
    description: `${RELEASE_FORMER_NAME.description} Refusals: unknown_entity_type, type_not_user_defined, name_not_held, empty_value, name_too_long, precondition_failed.`,
    args: {
      guid: t.arg.id({ required: true, description: 'Guid of the type whose former name is released.' }),
      name: t.arg.string({ required: true, description: RELEASE_FORMER_NAME.name }),
      reason: t.arg.string({ description: REASON_ARG }),
      ifVersion: t.arg.string({ description: IF_VERSION_ARG }),
    },
    resolve: (_root, args, ctx) => {
      sayWhy(ctx, args.reason);
      return releaseFormerName(ctx, String(args.guid), args.name, { ifVersion: versionArg(args.ifVersion) });
    },
  }),
  deleteEntityType: t.field({
    type: DeleteEntityTypePayload,
    description:
      'Delete a user-defined type; its live attribute definitions are withdrawn (values purged in the background), its entities keep its guid. Recreating the name gives the same guid back. Refusals: unknown_entity_type, type_not_user_defined, type_referenced (live definitions of other types reference it), precondition_failed.',
    args: {
      guid: t.arg.id({ required: true, description: 'Guid of the type to delete.' }),
      reason: t.arg.string({ description: REASON_ARG }),
      ifVersion: t.arg.string({ description: IF_VERSION_ARG }),
    },
    resolve: (_root, args, ctx) => {
      sayWhy(ctx, args.reason);
      return deleteEntityType(ctx, String(args.guid), { ifVersion: versionArg(args.ifVersion) });
    },
  }),
}));
