// GraphQL object family for the metamodel's history: ModelChange, EntityType.history and the modelChanges feed
// (the same resolvers as REST's /entities/types/{guid}/history and /entities/changes).

import DataLoader from 'dataloader';
import type { RequestContext } from '../context.js';
import { ChangeRow } from '../contract/wire.js';
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

export const ModelChangeKind = builder.enumType('ModelChangeKind', {
  description: 'What a change of the metamodel did.',
  values: Object.fromEntries(CHANGE_KINDS.map((k) => [k, { description: CHANGE_KIND_DESCRIPTIONS[k] }])) as {
    [K in (typeof CHANGE_KINDS)[number]]: { description: string };
  },
});

export const ModelChange = builder.objectRef<StoredChange>('ModelChange').implement({
  description:
    'One change of the metamodel, written in the same transaction as the change itself: who, when, what, and what it was before and after.',
  fields: (t) => ({
    id: t.id({
      description: 'Stable identifier of the record.',
      resolve: (c) => toChangeRow(c).id,
    }),
    at: t.string({
      description: 'When the change was made: ISO 8601 date-time in UTC, to the microsecond.',
      resolve: (c) => toChangeRow(c).at,
    }),
    kind: t.field({ type: ModelChangeKind, description: 'What the change did.', resolve: (c) => c.kind }),
    typeGuid: t.exposeID('type_guid', { description: 'The type changed, or whose definition changed.' }),
    attributeGuid: t.exposeID('attribute_guid', {
      nullable: true,
      description: 'The attribute definition changed; null for a change of the type itself.',
    }),
    actor: t.exposeString('actor', {
      nullable: true,
      description: "The sub claim of the caller's token; null for the purge's own changes.",
    }),
    requestId: t.exposeString('request_id', {
      nullable: true,
      description: "The id of the request that made the change (its x-request-id); null for the purge's.",
    }),
    reason: t.exposeString('reason', {
      nullable: true,
      description: ChangeRow.shape.reason.description,
    }),
    before: t.field({
      type: 'JSON',
      nullable: true,
      description: 'What changed, as it was (type or definition fields); null when it did not exist.',
      resolve: (c) => toChangeRow(c).before,
    }),
    after: t.field({
      type: 'JSON',
      nullable: true,
      description: 'What changed, as it is now; null when it no longer exists.',
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
