// A type's version on the wire: the weak ETag of the type and of its attribute listing (`W/"<version>"`), taken back
// in If-Match by the writes that change them (rename, release of a former name, delete, declare, withdraw) and in
// If-None-Match by the reads.

export const ETAG_HEADER = 'etag';
export const IF_MATCH_HEADER = 'if-match';
export const IF_NONE_MATCH_HEADER = 'if-none-match';
/** Entity-tags one If-Match or If-None-Match may list, and characters one may have. */
export const MAX_PRECONDITION_TAGS = 16;
export const MAX_TAG_CHARS = 64;

/** The ETag of a version. */
export const etagOf = (version: string) => `W/"${version}"`;

/** What a precondition header asks: any current version (`*`), or one of these versions. */
export type VersionCondition = '*' | readonly string[];

/** One entity-tag, weak or strong: its version is visible ASCII but `"` and `,`, at most MAX_TAG_CHARS. */
const TAG = `(?:W/)?"[\\x21\\x23-\\x2b\\x2d-\\x7e]{0,${MAX_TAG_CHARS}}"`;
/**
 * What an If-Match or If-None-Match may hold: `*`, or 1 to MAX_PRECONDITION_TAGS entity-tags, comma-separated
 * (spaces and tabs around each). The OpenAPI document states it; conditionOf reads by it.
 */
export const PRECONDITION_PATTERN = `^[ \\t]*(?:\\*|${TAG}(?:[ \\t]*,[ \\t]*${TAG}){0,${MAX_PRECONDITION_TAGS - 1}})[ \\t]*$`;
const WHOLE = new RegExp(PRECONDITION_PATTERN);
const VERSIONS = /"([^"]*)"/g;

/**
 * The versions an If-Match or If-None-Match names, weak or strong alike (a version is compared as text); undefined
 * when the header is absent, null when it is not of PRECONDITION_PATTERN (sent twice, malformed, too many tags).
 */
export function conditionOf(header: string | string[] | undefined): VersionCondition | undefined | null {
  if (header === undefined) return undefined;
  if (Array.isArray(header) || !WHOLE.test(header)) return null;
  if (header.trim() === '*') return '*';
  return [...header.matchAll(VERSIONS)].map((m) => m[1] as string);
}

/** Whether a type at `version` meets the condition. */
export const meets = (condition: VersionCondition, version: string) =>
  condition === '*' || condition.includes(version);
