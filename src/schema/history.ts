// GraphQL object family for the metamodel's history: ModelChange, EntityType.history and the modelChanges feed
// (the same resolvers as REST's /entities/types/{guid}/history and /entities/changes).

import DataLoader from 'dataloader';
import type { RequestContext } from '../context.js';
import { ChangeRow, descriptionOf } from '../contract/wire.js';
import type { StoredChange } from '../db/changes.js';
import { refuse } from '../errors.js';
import { CHANGE_KIND_DESCRIPTIONS, CHANGE_KINDS } from '../model/changes.js';
import { PAGES, pageRange } from '../model/pages.js';
import {
  FEED_FILTER_WINDOW,
  type HistoryPage,
  readFeed,
  readHistories,
  toChangeRow,
} from '../resolvers/changes.js';
import { builder } from './builder.js';
import { EntityType } from './entity-type.js';
import { rowDescription, rowFields } from './row-fields.js';

export const ModelChangeKind = builder.enumType('ModelChangeKind', {
  description: 'What a change of the metamodel did.',
  values: Object.fromEntries(CHANGE_KINDS.map((k) => [k, { description: CHANGE_KIND_DESCRIPTIONS[k] }])) as {
    [K in (typeof CHANGE_KINDS)[number]]: { description: string };
  },
});

const ROW = ChangeRow.shape;

export const ModelChange = builder.objectRef<StoredChange>('ModelChange').implement({
  description: descriptionOf(ChangeRow),
  // Every field as the row declares it (contract/wire.ts), named and described as there; these are IDs, the kind's
  // enum and the JSON before and after.
  fields: (t) =>
    rowFields(t, ROW, {
      id: t.id({ description: rowDescription(ROW.id), resolve: (c) => toChangeRow(c).id }),
      at: t.string({ description: rowDescription(ROW.at), resolve: (c) => toChangeRow(c).at }),
      kind: t.field({ type: ModelChangeKind, description: rowDescription(ROW.kind), resolve: (c) => c.kind }),
      type_guid: t.exposeID('type_guid', { description: rowDescription(ROW.type_guid) }),
      attribute_guid: t.exposeID('attribute_guid', {
        nullable: true,
        description: rowDescription(ROW.attribute_guid),
      }),
      before: t.field({
        type: 'JSON',
        nullable: true,
        description: rowDescription(ROW.before),
        resolve: (c) => toChangeRow(c).before,
      }),
      after: t.field({
        type: 'JSON',
        nullable: true,
        description: rowDescription(ROW.after),
        resolve: (c) => toChangeRow(c).after,
      }),
    }),
});

/** Per request: the histories its fields ask for, read together (one round of statements for a list of types). */
const historyLoaders = new WeakMap<RequestContext, DataLoader<string, HistoryPage>>();
function historyLoader(ctx: RequestContext) {
  let loader = historyLoaders.get(ctx);
  if (!loader) {
    loader = new DataLoader<string, HistoryPage>((keys) =>
      readHistories(
        ctx,
        keys.map((key) => {
          const [typeGuid, first, after] = JSON.parse(key) as [string, number | null, string | null];
          return { typeGuid, pageSize: first ?? undefined, cursor: after ?? undefined };
        }),
      ),
    );
    historyLoaders.set(ctx, loader);
  }
  return loader;
}

builder.objectField(EntityType, 'history', (t) =>
  t.connection(
    {
      type: ModelChange,
      description: `The type's changes, newest first (the changes of its attribute definitions included), paged forward with first/after: who made each, when, with which request, and before/after. Outlives the type: a type recreated under its name continues its history. first: 1..${PAGES.max}, default ${PAGES.default}.`,
      resolve: async (type, args, ctx) => {
        if (args.last != null || args.before != null) {
          throw refuse('invalid_field', 'Only forward pagination (first/after) is supported.');
        }
        const page = await historyLoader(ctx).load(
          JSON.stringify([type.guid, args.first ?? null, args.after ?? null]),
        );
        return {
          edges: page.changes.map((node) => ({
            node,
            get cursor() {
              return page.cursorOf(node);
            },
          })),
          pageInfo: {
            hasNextPage: page.more,
            hasPreviousPage: args.after != null,
            get startCursor() {
              const first = page.changes[0];
              return first ? page.cursorOf(first) : null;
            },
            get endCursor() {
              const last = page.changes[page.changes.length - 1];
              return last ? page.cursorOf(last) : null;
            },
          },
        };
      },
    },
    { description: 'One page of a type’s history.' },
    { description: 'One change of the page, with the cursor that continues after it.' },
  ),
);

const ModelChangePage = builder
  .objectRef<{ changes: StoredChange[]; nextCursor: string; more: boolean }>('ModelChangePage')
  .implement({
    description: 'The next changes of the feed, and where to resume.',
    fields: (t) => ({
      changes: t.field({
        type: [ModelChange],
        description: 'Changes after the cursor, oldest first.',
        resolve: (p) => p.changes,
      }),
      nextCursor: t.exposeString('nextCursor', {
        description:
          'Where to resume: pass it as after next time (never null; on an empty page it is the cursor sent).',
      }),
      hasMore: t.exposeBoolean('more', {
        description: 'True when more changes were ready than this page carries: ask again at once.',
      }),
    }),
  });

builder.queryFields((t) => ({
  modelChanges: t.field({
    type: ModelChangePage,
    description: `The tenant's change feed: every change of the metamodel, oldest first, each exactly once over successive pages (pass each page's nextCursor as after). Without after, from the tenant's first change. A change made after another was committed comes after it. Filtered by typeGuid, attribute and kinds (all must hold), a page examines at most ${FEED_FILTER_WINDOW} changes: it can hold fewer than first (even none) with hasNextPage true. Refusals: invalid_cursor, invalid_page_size, invalid_filter.`,
    args: {
      first: t.arg.int({
        required: false,
        description: `Changes per page: ${pageRange()} (invalid_page_size outside).`,
      }),
      after: t.arg.string({
        required: false,
        description: 'nextCursor of the last page read; none to start at the first change.',
      }),
      typeGuid: t.arg.id({
        required: false,
        description: "Only changes of this type and its definitions (a deleted type's too).",
      }),
      attribute: t.arg.string({
        required: false,
        description: 'Only changes of definitions of this name (letter case ignored).',
      }),
      kinds: t.arg({
        type: [ModelChangeKind],
        required: false,
        description: 'Only changes of these kinds.',
      }),
    },
    resolve: async (_root, args, ctx) => {
      const page = await readFeed(ctx, {
        after: args.after ?? undefined,
        pageSize: args.first ?? undefined,
        filter: {
          typeGuid: args.typeGuid === null || args.typeGuid === undefined ? undefined : String(args.typeGuid),
          attribute: args.attribute ?? undefined,
          kinds: args.kinds ?? undefined,
        },
      });
      return page;
    },
  }),
}));
