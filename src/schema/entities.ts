// GraphQL for the entities of a type filtered by their references: Query.entities (the resolver of REST's
// GET /entities, the same conditions and the same rows).

import { charge } from '../context.js';
import type { StoredEntity } from '../db/entities.js';
import { pageRange } from '../model/pages.js';
import {
  type EntityPage,
  FILTER_SCAN_WINDOW,
  listEntities,
  MAX_FILTER_CONDITIONS,
  MAX_FILTER_GUIDS,
} from '../resolvers/entity-list.js';
import { builder } from './builder.js';

const Entity = builder.objectRef<StoredEntity>('Entity').implement({
  description: 'An entity (an instance of a type).',
  fields: (t) => ({
    guid: t.exposeID('guid', { description: 'Identifier of the entity.' }),
    name: t.exposeString('name', { description: 'Its name.' }),
    typeGuid: t.exposeID('type_guid', { description: 'Its entity type.' }),
  }),
});

const EntityReferenceFilter = builder.inputType('EntityReferenceFilter', {
  description:
    'One condition: the entity refers, through a filterable reference attribute, to any of the given entities.',
  fields: (t) => ({
    attribute: t.string({
      required: true,
      description:
        'Name of a filterable reference attribute of the type (tags, or an entity_ref declared filterable).',
    }),
    anyOf: t.idList({
      required: true,
      description: `Entity guids, 1 to ${MAX_FILTER_GUIDS} (too_many_filter_guids past that).`,
    }),
  }),
});

const EntityPageRef = builder.objectRef<EntityPage>('EntityPage').implement({
  description: 'A page of entities, and where the next one starts.',
  fields: (t) => ({
    entities: t.field({
      type: [Entity],
      description: 'Entities of the page, in name order (then guid).',
      resolve: (p) => p.entities,
    }),
    nextCursor: t.exposeString('nextCursor', {
      nullable: true,
      description:
        'Pass it as after for the next page; null when the listing is complete. A page with several conditions can be short, even empty, and still have one.',
    }),
  }),
});

builder.queryFields((t) => ({
  entities: t.field({
    type: EntityPageRef,
    description: `The entities of exactly the type typeGuid whose references meet every condition of where (none: all of them), in name order (then guid), keyset-paged with first/after. With several conditions a page examines at most ${FILTER_SCAN_WINDOW.toLocaleString('en-US')} matches of one of them, so it may be short and still have a nextCursor. Refusals: unknown_entity_type, unknown_attribute, attribute_not_filterable, attribute_def_withdrawn, too_many_filters (over ${MAX_FILTER_CONDITIONS} conditions), too_many_filter_guids, invalid_filter, invalid_cursor, invalid_page_size.`,
    args: {
      typeGuid: t.arg.id({ required: true, description: 'The type whose entities are listed.' }),
      where: t.arg({
        type: [EntityReferenceFilter],
        required: false,
        description: `Conditions, all of which must hold; at most ${MAX_FILTER_CONDITIONS}.`,
      }),
      first: t.arg.int({
        required: false,
        description: `Entities per page: ${pageRange()} (invalid_page_size outside).`,
      }),
      after: t.arg.string({ required: false, description: 'nextCursor of the previous page.' }),
    },
    resolve: async (_root, args, ctx) => {
      const page = await listEntities(ctx, {
        typeGuid: String(args.typeGuid),
        where: (args.where ?? []).map((w) => ({ attribute: w.attribute, anyOf: w.anyOf.map(String) })),
        cursor: args.after ?? undefined,
        pageSize: args.first ?? undefined,
      });
      charge(ctx, page.entities.length);
      return page;
    },
  }),
}));
