// GraphQL object family for entity types: EntityType, the type connection, and create/rename/delete mutations.

import { typeByGuid } from '../context.js';
import type { StoredType } from '../db/entity-types.js';
import {
  createOrGetEntityType,
  deleteEntityType,
  findEntityTypeByName,
  listEntityTypes,
  renameEntityType,
} from '../resolvers/entity-types.js';
import { builder } from './builder.js';

export const EntityTypeOrigin = builder.enumType('EntityTypeOrigin', {
  description: 'Where a type comes from.',
  values: {
    user_defined: { description: 'Created by a caller.' },
    system: { description: 'Shipped or managed by the platform.' },
    connector: { description: 'Reported by a connector.' },
  } as const,
});

export const EntityType = builder.objectRef<StoredType>('EntityType');

EntityType.implement({
  description: 'A class of catalog entities. Fields that do not apply to a type are null.',
  fields: (t) => ({
    guid: t.exposeID('guid', {
      description: 'Identifier, derived from the tenant and the name the type was created under.',
    }),
    name: t.exposeString('name', { description: 'Type name.' }),
    origin: t.field({
      type: EntityTypeOrigin,
      description: 'user_defined, system or connector.',
      resolve: (type) => type.origin as 'user_defined' | 'system' | 'connector',
    }),
    catalogLevel: t.boolean({
      nullable: true,
      description: "True: the type's entities are rows in the Entity Catalog table.",
      resolve: (type) => type.catalog_level,
    }),
    vocabulary: t.boolean({
      nullable: true,
      description: "True: the type's entities are values picked in an attribute cell.",
      resolve: (type) => type.vocabulary,
    }),
    label: t.string({ nullable: true, description: 'Display name.', resolve: (type) => type.label }),
    icon: t.string({ nullable: true, description: 'Icon key.', resolve: (type) => type.icon }),
    parentType: t.field({
      type: EntityType,
      nullable: true,
      description: 'The catalog level one step above.',
      resolve: (type, _args, ctx) => (type.parent_type ? typeByGuid(ctx, type.parent_type) : null),
    }),
    creatable: t.boolean({
      nullable: true,
      description: 'False: creating an instance is refused by the curation API.',
      resolve: (type) => type.creatable,
    }),
    nameLockedHint: t.string({
      nullable: true,
      description: "Text to show where an instance's name cannot be edited.",
      resolve: (type) => type.name_locked_hint,
    }),
  }),
});

builder.queryFields((t) => ({
  entityType: t.field({
    type: EntityType,
    nullable: true,
    description: 'A type of your tenant by guid; null when none has it.',
    args: { guid: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => ctx.loaders.entityTypeByGuid.load(String(args.guid)),
  }),
  entityTypeByName: t.field({
    type: EntityType,
    nullable: true,
    description: 'The type a name resolves to (trimmed, letter case ignored); null when none.',
    args: { name: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => findEntityTypeByName(ctx, args.name),
  }),
  entityTypes: t.connection({
    type: EntityType,
    description:
      'System and user-defined types together, in name order. first: 1..500, default 100; forward only.',
    resolve: async (_root, args, ctx) => {
      const page = await listEntityTypes(ctx, {
        cursor: args.after ?? undefined,
        pageSize: args.first ?? undefined,
        backward: args.last != null || args.before != null,
      });
      return {
        // Cursors stay lazy: signed only for edges whose cursor is selected.
        edges: page.rows.map((row) => ({
          node: row.type,
          get cursor() {
            return row.cursor;
          },
        })),
        pageInfo: {
          hasNextPage: page.nextCursor !== null,
          hasPreviousPage: args.after != null,
          startCursor: page.rows[0]?.cursor ?? null,
          endCursor: page.rows[page.rows.length - 1]?.cursor ?? null,
        },
      };
    },
  }),
}));

const CreateEntityTypePayload = builder
  .objectRef<{ entityType: StoredType; created: boolean }>('CreateEntityTypePayload')
  .implement({
    description: 'Result of create-or-get.',
    fields: (t) => ({
      entityType: t.field({ type: EntityType, resolve: (p) => p.entityType }),
      created: t.exposeBoolean('created', { description: 'False when the name already resolved to a type.' }),
    }),
  });

const DeleteEntityTypePayload = builder
  .objectRef<{ guid: string; deleted: boolean }>('DeleteEntityTypePayload')
  .implement({
    description: 'Result of a delete.',
    fields: (t) => ({
      guid: t.exposeID('guid'),
      deleted: t.exposeBoolean('deleted'),
    }),
  });

builder.mutationFields((t) => ({
  createEntityType: t.field({
    type: CreateEntityTypePayload,
    description: 'Create-or-get a user-defined type by name.',
    args: { name: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => {
      const result = await createOrGetEntityType(ctx, args.name);
      return { entityType: result.type, created: result.created };
    },
  }),
  renameEntityType: t.field({
    type: EntityType,
    description: 'Rename a user-defined type; its guid does not change.',
    args: { guid: t.arg.id({ required: true }), name: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => renameEntityType(ctx, String(args.guid), args.name),
  }),
  deleteEntityType: t.field({
    type: DeleteEntityTypePayload,
    description: 'Delete a user-defined type and its attribute definitions.',
    args: { guid: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => deleteEntityType(ctx, String(args.guid)),
  }),
}));
