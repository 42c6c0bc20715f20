// The metamodel's history: who changed what and when, per type (newest first) and tenant-wide as a change feed that
// a consumer follows exactly once (oldest first). Both APIs read it through here; the records are written by the
// statements that make each change (db/changes.ts).

import { charge, type RequestContext } from '../context.js';
import type { ChangeRow } from '../contract/wire.js';
import {
  type ChangeHead,
  readChanges,
  readFeedCandidates,
  readHistoryHeads,
  type StoredChange,
} from '../db/changes.js';
import { MODEL_VERSION_SHARDS } from '../db/model-version.js';
import type { Run } from '../db/run.js';
import { refuse } from '../errors.js';
import { rawJson } from '../json/raw.js';
import { pageSize } from '../model/pages.js';
import { checkFeedFilter, FEED_FILTER_WINDOW, type FeedFilterInput, pick } from './feed-filter.js';

export { FEED_FILTER_WINDOW } from './feed-filter.js';

/**
 * Most before/after text one page carries (a declaration's record holds its enumeration and default, up to a few
 * megabytes): a page stops before the record that would pass it, but always carries at least one. 1 MiB keeps what
 * one page costs the event loop and the database small beside other tenants' requests.
 */
export const CHANGE_PAGE_MAX_BYTES = 1024 * 1024;

/** How often a feed read is tried again when a change committed while it ran (see readFeed). */
const FEED_READ_ATTEMPTS = 5;

/** A record's time from its key (epoch microseconds first): ISO 8601 in UTC, always six fraction digits. */
function timeOf(key: string) {
  const micros = Number(key.slice(0, 16));
  const iso = new Date(Math.floor(micros / 1000)).toISOString();
  return `${iso.slice(0, -1)}${String(micros % 1000).padStart(3, '0')}Z`;
}

/** A record's row as GraphQL answers it: its before and after as rawJson makes them (spliced into the answer). */
export type ChangeAnswerRow = Omit<ChangeRow, 'before' | 'after'> & { before: unknown; after: unknown };

const rows = new WeakMap<StoredChange, ChangeAnswerRow>();

/**
 * A record as the API shows it, its before and after as stored (JSON text, never parsed on the way to a GraphQL
 * answer: see json/raw.ts). Made once per record read: the fields of one record, and every alias of a page, read
 * the same object.
 */
export function toChangeRow(c: StoredChange): ChangeAnswerRow {
  let row = rows.get(c);
  if (!row) {
    row = makeChangeRow(c);
    rows.set(c, row);
  }
  return row;
}

function makeChangeRow(c: StoredChange): ChangeAnswerRow {
  return {
    id: `${c.shard}-${c.seq}`,
    at: timeOf(c.key),
    kind: c.kind,
    type_guid: c.type_guid,
    attribute_guid: c.attribute_guid,
    actor: c.actor,
    request_id: c.request_id,
    reason: c.reason ?? null,
    before: rawJson(c.before),
    after: rawJson(c.after),
  };
}

/**
 * The JSON text of `toChangeRow(c)`, its before and after spliced in as stored (JSON text already): a page of
 * megabytes of records is written out without parsing and serialising them again.
 */
export function changeRowJson(c: StoredChange): string {
  const text = (v: unknown) => JSON.stringify(v);
  return `{"id":${text(`${c.shard}-${c.seq}`)},"at":${text(timeOf(c.key))},"kind":${text(c.kind)},"type_guid":${text(c.type_guid)},"attribute_guid":${text(c.attribute_guid)},"actor":${text(c.actor)},"request_id":${text(c.request_id)},"reason":${text(c.reason ?? null)},"before":${c.before ?? 'null'},"after":${c.after ?? 'null'}}`;
}

/** The first heads whose texts fit the page's byte budget (at least one). */
function withinBudget(heads: readonly ChangeHead[]) {
  let bytes = 0;
  let n = 0;
  for (const head of heads) {
    if (n > 0 && bytes + head.bytes > CHANGE_PAGE_MAX_BYTES) break;
    bytes += head.bytes;
    n += 1;
  }
  return heads.slice(0, n);
}

/**
 * The whole records of `heads`. A GraphQL operation is charged for them first (`objectsEach` objects a record, and
 * its before/after text), so an operation over its budget is refused before the texts are read.
 */
async function wholeRecords(
  ctx: RequestContext,
  run: Run,
  heads: readonly ChangeHead[],
  objectsEach: number,
) {
  charge(
    ctx,
    objectsEach * heads.length,
    heads.reduce((sum, h) => sum + h.bytes, 0),
  );
  const tenant = ctx.viewer.tenant;
  const byKey = await readChanges(run, tenant, heads);
  return heads.flatMap((h) => {
    const c = byKey.get(h.key);
    return c ? [c] : [];
  });
}

// ——— History of a type ———

const HISTORY_CURSOR = 'history';

export interface HistoryPage {
  changes: StoredChange[];
  /** Cursor of the next (older) page; null on the last page. */
  nextCursor: string | null;
  more: boolean;
  cursorOf(change: StoredChange): string;
}

/**
 * History pages of several types in one round of statements (a GraphQL list asks for many). A type's history
 * survives its deletion: it is read by guid, whether or not the type exists now.
 */
export async function readHistories(
  ctx: RequestContext,
  requests: readonly { typeGuid: string; cursor?: string | undefined; pageSize?: number | undefined }[],
): Promise<HistoryPage[]> {
  const tenant = ctx.viewer.tenant;
  const cursors = ctx.services.cursors;
  const parsed = requests.map((r) => ({
    typeGuid: r.typeGuid,
    size: pageSize(r.pageSize, 'page_size'),
    before: r.cursor === undefined ? '~' : cursors.decode(tenant, r.cursor, HISTORY_CURSOR, r.typeGuid),
  }));
  const largest = Math.max(1, ...parsed.map((p) => p.size));
  return ctx.db.read(async (run) => {
    const headsPerType = await readHistoryHeads(
      run,
      tenant,
      parsed.map((p) => ({ typeGuid: p.typeGuid, before: p.before })),
      largest + 1,
    );
    const chosen = parsed.map((p, i) => {
      const heads = headsPerType[i] ?? [];
      const page = withinBudget(heads.slice(0, p.size));
      return { page, more: heads.length > page.length };
    });
    // An edge and its node per record.
    const records = await wholeRecords(
      ctx,
      run,
      chosen.flatMap((c) => c.page),
      2,
    );
    const byKey = new Map(records.map((r) => [r.key, r]));
    const cursorOf = (c: StoredChange) => cursors.encode(tenant, c.key, HISTORY_CURSOR, c.type_guid);
    return chosen.map(({ page, more }) => {
      const changes = page.flatMap((h) => byKey.get(h.key) ?? []);
      const last = changes[changes.length - 1];
      return { changes, more, nextCursor: more && last ? cursorOf(last) : null, cursorOf };
    });
  });
}

/**
 * A type's history, newest first. A guid with no record in the caller's tenant is an unknown type, as everywhere
 * (a type of another tenant included); a deleted type's history is still read by its guid.
 */
export async function typeHistory(
  ctx: RequestContext,
  typeGuid: string,
  args: { cursor?: string | undefined; pageSize?: number | undefined },
) {
  const [page] = await readHistories(ctx, [{ typeGuid, ...args }]);
  if (!page || (page.changes.length === 0 && args.cursor === undefined)) {
    throw refuse('unknown_entity_type', 'No entity type has this guid.');
  }
  return page;
}

// ——— The change feed ———

const FEED_CURSOR = 'changes';

const startPositions = () => new Array<number>(MODEL_VERSION_SHARDS).fill(0);

function decodePositions(ctx: RequestContext, cursor: string | undefined): number[] {
  if (cursor === undefined) return startPositions();
  const text = ctx.services.cursors.decode(ctx.viewer.tenant, cursor, FEED_CURSOR);
  const positions = text.split('.').map(Number);
  if (
    positions.length !== MODEL_VERSION_SHARDS ||
    !positions.every((p) => Number.isSafeInteger(p) && p >= 0)
  ) {
    throw refuse('invalid_cursor', 'The cursor was not issued by this API.');
  }
  return positions;
}

export interface FeedPage {
  changes: StoredChange[];
  /** Where to resume: the cursor to send as `after` next time (never null: a consumer keeps polling with it). */
  nextCursor: string;
  /** True when more changes were ready than this page carries. */
  more: boolean;
}

/**
 * Changes after `cursor`, oldest first, each exactly once over a consumer's successive pages.
 *
 * Each record carries the next sequence number of one of the tenant's version shards; within a shard the numbers
 * commit in order and without gaps (recordChange), so "everything up to n in shard s" is a position no later
 * commit can slip behind. The cursor holds one position per shard. A page reads each shard's records after its
 * position, but only up to the shard's head as read at the start, and reads the heads again at the end: when they
 * match, nothing committed meanwhile, so every change that committed before a record of the page is in the page
 * or an earlier one (a change made after another saw it committed). A read that saw a commit, or a gap in a shard
 * (a commit not yet visible in full), is tried again. The shards' records are merged by time; the page stops at
 * the page size or the byte budget, and the cursor moves to the last record taken from each shard.
 */
export async function readFeed(
  ctx: RequestContext,
  args: { after?: string | undefined; pageSize?: number | undefined; filter?: FeedFilterInput | undefined },
): Promise<FeedPage> {
  const tenant = ctx.viewer.tenant;
  const size = pageSize(args.pageSize, 'page_size');
  const positions = decodePositions(ctx, args.after);
  const filter = checkFeedFilter(args.filter);
  // A filtered page examines a bounded window of the feed (FEED_FILTER_WINDOW records), so that a filter matching
  // little never reads the whole feed in one request: it can carry fewer changes than asked, even none, and still
  // has_more; its cursor moves past every record it examined.
  const window = filter ? FEED_FILTER_WINDOW : size;
  const encode = (p: readonly number[]) => ctx.services.cursors.encode(tenant, p.join('.'), FEED_CURSOR);
  return ctx.db.read(async (run) => {
    for (let attempt = 0; attempt < FEED_READ_ATTEMPTS; attempt += 1) {
      const read = await readFeedCandidates(run, tenant, positions, window);
      const stable = read.before.every((seq, shard) => seq === read.after[shard]);
      const streams = splitContiguous(read.records, positions);
      if (!stable || streams.gap) continue;
      const merged = mergeByTime(streams.perShard, window);
      const { taken, examined } = filter
        ? pick(merged, filter, size, CHANGE_PAGE_MAX_BYTES)
        : { taken: withinBudget(merged), examined: null };
      const next = [...positions];
      for (const head of examined ?? taken) next[head.shard] = head.seq;
      return {
        changes: await wholeRecords(ctx, run, taken, 1),
        nextCursor: encode(next),
        more: next.some((seq, shard) => seq < (read.before[shard] as number)),
      };
    }
    // Writers kept committing through every attempt: nothing this time, the consumer asks again.
    return { changes: [], nextCursor: encode(positions), more: true };
  });
}

/** Each shard's records in sequence order; `gap` when one does not follow on from the one before. */
function splitContiguous<H extends ChangeHead>(records: readonly H[], positions: readonly number[]) {
  const perShard: H[][] = positions.map(() => []);
  for (const r of records) perShard[r.shard]?.push(r);
  let gap = false;
  perShard.forEach((list, shard) => {
    list.sort((a, b) => a.seq - b.seq);
    list.forEach((r, i) => {
      if (r.seq !== (positions[shard] as number) + i + 1) gap = true;
    });
  });
  return { perShard, gap };
}

/**
 * The first `limit` records of the shards' streams, merged by time: each stream stays in sequence order (so the
 * cursor's position per shard is a prefix), and among the streams' next records the earliest goes first.
 */
function mergeByTime<H extends ChangeHead>(perShard: readonly H[][], limit: number) {
  const next = perShard.map(() => 0);
  const out: H[] = [];
  while (out.length < limit) {
    let best = -1;
    for (let s = 0; s < perShard.length; s += 1) {
      const candidate = perShard[s]?.[next[s] as number];
      if (!candidate) continue;
      const current = best < 0 ? undefined : perShard[best]?.[next[best] as number];
      if (!current || candidate.key < current.key) best = s;
    }
    if (best < 0) break;
    out.push(perShard[best]?.[next[best] as number] as H);
    next[best] = (next[best] as number) + 1;
  }
  return out;
}
