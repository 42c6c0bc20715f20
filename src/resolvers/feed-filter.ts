// A change feed's filter (a type, an attribute's name, kinds of change): checked once, and applied to a bounded
// window of the feed's records (resolvers/changes.ts reads them, in order, with what the filter needs).

import type { FeedHead } from '../db/changes.js';
import { refuse } from '../errors.js';
import { CHANGE_KINDS } from '../model/changes.js';
import { cleanName, nameKey } from '../model/names.js';

/** Records one filtered page of the feed examines at most (heads only: kind, type, attribute). */
export const FEED_FILTER_WINDOW = 500;

/** A feed's filter as sent: a type's guid, an attribute's name, kinds of change (each optional, all must hold). */
export interface FeedFilterInput {
  typeGuid?: string | undefined;
  attribute?: string | undefined;
  kinds?: readonly string[] | undefined;
}

interface FeedFilter {
  typeGuid: string | null;
  attributeKey: string | null;
  kinds: ReadonlySet<string> | null;
}

/**
 * The `kind` filter as sent over REST: 1 to as many kinds as there are, comma-separated, spaces around each allowed
 * (the document's pattern; checkFeedFilter is what refuses).
 */
export const KIND_LIST_SHAPE = (() => {
  const kind = `\\s*(?:${CHANGE_KINDS.join('|')})\\s*`;
  return `^${kind}(?:,${kind}){0,${CHANGE_KINDS.length - 1}}$`;
})();

/** The filter checked (invalid_filter), or null for none. */
export function checkFeedFilter(input: FeedFilterInput | undefined): FeedFilter | null {
  if (!input) return null;
  const { typeGuid, attribute, kinds } = input;
  if (typeGuid === undefined && attribute === undefined && (kinds === undefined || kinds.length === 0))
    return null;
  if (typeGuid !== undefined && !GUID_SHAPE.test(typeGuid)) {
    throw refuse('invalid_filter', '`type_guid` must be a guid.');
  }
  let attributeKey: string | null = null;
  if (attribute !== undefined) {
    try {
      attributeKey = nameKey(cleanName(attribute));
    } catch {
      throw refuse('invalid_filter', '`attribute` must be an attribute name (1 to 256 characters).');
    }
  }
  if (kinds !== undefined) {
    // (counted first: a long list of known kinds would be walked whole, and refused naming no kind)
    if (kinds.length > CHANGE_KINDS.length) {
      throw refuse(
        'invalid_filter',
        `At most ${CHANGE_KINDS.length} kinds of change, each once (kinds: ${CHANGE_KINDS.join(', ')}).`,
      );
    }
    const unknown = kinds.filter((k) => !(CHANGE_KINDS as readonly string[]).includes(k));
    if (unknown.length > 0) {
      throw refuse(
        'invalid_filter',
        `Unknown kind of change: ${unknown.slice(0, 3).join(', ')} (kinds: ${CHANGE_KINDS.join(', ')}).`,
      );
    }
  }
  return {
    typeGuid: typeGuid ?? null,
    attributeKey,
    kinds: kinds && kinds.length > 0 ? new Set(kinds) : null,
  };
}

/** What a type's guid looks like: a UUID, as every guid the service makes (a filter by anything else is invalid_filter). */
export const GUID_SHAPE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

const matches = (f: FeedFilter, h: FeedHead) =>
  (f.typeGuid === null || h.type_guid === f.typeGuid) &&
  (f.attributeKey === null || h.attribute_key === f.attributeKey) &&
  (f.kinds === null || f.kinds.has(h.kind));

/**
 * A filtered page: the matching records of `merged` in order, up to `size` and `maxBytes` of texts (at least one); `examined`, the
 * prefix of `merged` it went through (the cursor moves past it, matching or not).
 */
export function pick(merged: readonly FeedHead[], filter: FeedFilter, size: number, maxBytes: number) {
  const taken: FeedHead[] = [];
  let bytes = 0;
  let end = merged.length;
  for (let i = 0; i < merged.length; i += 1) {
    const head = merged[i] as FeedHead;
    if (!matches(filter, head)) continue;
    if (taken.length === size || (taken.length > 0 && bytes + head.bytes > maxBytes)) {
      end = i;
      break;
    }
    taken.push(head);
    bytes += head.bytes;
  }
  return { taken, examined: merged.slice(0, end) };
}
