// Closest type names for a refusal about a type name that resolves nothing ("Did you mean ...?"), in its message
// only. The names are the caller's tenant's own, from the first page of its type listing (through the model cache),
// and only when that page holds all of them, so the work of a refusal stays bounded whatever the tenant's size.
import type { RequestContext } from '../context.js';
import { type AppError, refuse } from '../errors.js';
import { cleanName, nameKey } from '../model/names.js';
import { PAGES } from '../model/pages.js';
import { listEntityTypes } from './entity-types.js';

/** Most types a tenant may have for names to be suggested: one page of the listing (a larger tenant gets none). */
export const SUGGESTION_TYPES_MAX = PAGES.max;
/** Most names one refusal suggests. */
export const MAX_SUGGESTIONS = 3;
/** Longest name, in code points, that names are suggested for: a longer one was pasted, not mistyped. */
export const SUGGESTED_NAME_MAX = 64;

export interface TypeSuggestion {
  name: string;
  guid: string;
}

/**
 * Levenshtein distance of `a` and `b` (lists of code points) if it is at most `max`, else `max + 1`; only the band
 * of the table within `max` of its diagonal is filled, so a long name costs its length times the band, not squared.
 */
export function editDistanceWithin(a: readonly string[], b: readonly string[], max: number): number {
  const over = max + 1;
  if (Math.abs(a.length - b.length) > max) return over;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => Math.min(j, over));
  let current = new Array<number>(b.length + 1);
  for (let i = 1; i <= a.length; i += 1) {
    current.fill(over);
    current[0] = Math.min(i, over);
    let rowBest = current[0];
    for (let j = Math.max(1, i - max); j <= Math.min(b.length, i + max); j += 1) {
      const replace = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      const cell = Math.min(replace, (previous[j] as number) + 1, (current[j - 1] as number) + 1, over);
      current[j] = cell;
      if (cell < rowBest) rowBest = cell;
    }
    if (rowBest >= over) return over;
    [previous, current] = [current, previous];
  }
  return previous[b.length] as number;
}

/**
 * How far a name of `length` code points may be from a suggestion: 1 edit up to 3 code points (a shorter name is
 * close to too many), then a third of it, at least 2 (a swap of two letters) and at most 3.
 */
const allowedDistance = (length: number) =>
  length <= 3 ? 1 : Math.min(3, Math.max(2, Math.floor(length / 3)));

/**
 * Up to MAX_SUGGESTIONS of `types` whose normalised names are closest to `key` (nearest first, then by name); none
 * for a key longer than SUGGESTED_NAME_MAX, so the work of one refusal is at most the types times a short band.
 */
export function closestTypeNames<T extends { name: string; name_key: string }>(
  key: string,
  types: readonly T[],
): T[] {
  const wanted = [...key];
  if (wanted.length > SUGGESTED_NAME_MAX) return [];
  const max = allowedDistance(wanted.length);
  // (a name's UTF-16 length is at least its code points and at most twice them: most are passed over unsplit)
  const mayBeClose = (k: string) => k.length >= wanted.length - max && k.length <= 2 * (wanted.length + max);
  return types
    .filter((type) => mayBeClose(type.name_key))
    .map((type) => ({ type, distance: editDistanceWithin(wanted, [...type.name_key], max) }))
    .filter((c) => c.distance <= max)
    .sort((x, y) => x.distance - y.distance || (x.type.name_key < y.type.name_key ? -1 : 1))
    .slice(0, MAX_SUGGESTIONS)
    .map((c) => c.type);
}

/**
 * The caller's types closest to `rawName`: none when the name is not one a type could have or is too long to be
 * mistyped (nothing is read then), or when the tenant has more than SUGGESTION_TYPES_MAX types (the first page of
 * its listing is all that is read).
 */
export async function suggestTypeNames(ctx: RequestContext, rawName: string): Promise<TypeSuggestion[]> {
  let key: string;
  try {
    key = nameKey(cleanName(rawName));
  } catch {
    return [];
  }
  if (key.length > SUGGESTED_NAME_MAX && [...key].length > SUGGESTED_NAME_MAX) return [];
  const page = await listEntityTypes(ctx, { pageSize: SUGGESTION_TYPES_MAX });
  if (page.more) return [];
  return closestTypeNames(key, page.types).map((t) => ({ name: t.name, guid: t.guid }));
}

/** "Did you mean ...?" for `suggestions` (with their guids when the caller needs one), or nothing for none. */
export function didYouMean(
  suggestions: readonly { name: string; guid?: string }[],
  withGuids = false,
): string {
  if (suggestions.length === 0) return '';
  const said = suggestions.map((s) =>
    withGuids && s.guid ? `${JSON.stringify(s.name)} (guid ${s.guid})` : JSON.stringify(s.name),
  );
  const listed = said.length === 1 ? said[0] : `${said.slice(0, -1).join(', ')} or ${said.at(-1)}`;
  return ` Did you mean ${listed}?`;
}

/**
 * `error` with the caller's closest type names to `rawName` added to its message; the refusal itself (reason,
 * status, details) is unchanged. A failure to read the names leaves the refusal as it was.
 */
export async function withTypeSuggestions(
  ctx: RequestContext,
  error: AppError,
  rawName: string,
  options: { withGuids?: boolean } = {},
): Promise<AppError> {
  let suggestions: TypeSuggestion[];
  try {
    suggestions = await suggestTypeNames(ctx, rawName);
  } catch {
    // (the refusal is the answer; a busy or unreachable database must not turn it into another)
    return error;
  }
  const added = didYouMean(suggestions, options.withGuids);
  if (added === '') return error;
  const suggested = refuse(error.reason, `${error.message}${added}`, error.retryAfterSeconds);
  return error.details ? suggested.with(error.details) : suggested;
}
