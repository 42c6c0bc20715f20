// The numeric limits on definitions (docs/api.md#declaration-rules, rule 8, and
// docs/api.md#limits-budgets-and-fairness), read by the rules (resolvers/), the reads they bound (context.ts loaders)
// and the documents that state them (OpenAPI, GraphQL descriptions).

/** Most live attribute definitions a type may have (200: docs/api.md#declaration-rules, rule 8). */
export const MAX_ATTRIBUTE_DEFS = 200;

/**
 * Most instances one count of a withdrawal's impact reads (a withdrawal's dry run, a plan's withdrawal steps): a
 * count over more says it is incomplete (`complete: false`) rather than reading on.
 */
export const IMPACT_SCAN_MAX = 50_000;

/**
 * The bytes of a text as UTF-8: the unit of the type's budgets below. An answer carrying the text is measured in the
 * same unit (its bytes sent), so a budget counted in characters would let a type of CJK enumerations answer three
 * times what it states.
 */
export const utf8Bytes = (text: string | null | undefined): number =>
  text ? Buffer.byteLength(text, 'utf8') : 0;

/**
 * Most JSON text (enumerations and defaults, in UTF-8 bytes) a type's live definitions may hold together. Every curation write
 * against the type reads them, and the attribute listing returns them: this bounds both, as the 200 limit bounds
 * their number.
 */
export const MAX_TYPE_DEFINITIONS_JSON_BYTES = 4 * 1024 * 1024;

/**
 * Most JSON text (UTF-8 bytes) a type's live defaults may hold together (within the budget above). Defaults are applied to every
 * entity created without those values, so this bounds what one entity write can store and answer beyond what it
 * was sent: without it, a request of a few bytes could store and answer megabytes.
 */
export const MAX_TYPE_DEFAULTS_JSON_BYTES = 256 * 1024;

/** Former names a type keeps (most recent first), and a model document's type may list (renamed_from). */
export const MAX_FORMER_NAMES = 32;

/**
 * Most bytes (UTF-8 JSON) a type's former names take on its row: the most recent are kept while they fit. Every type
 * row carries them, 500 to a page, so former names at their longest would make a page of many megabytes; within
 * this, a row stays under 6 KB.
 */
export const MAX_FORMER_NAMES_JSON_BYTES = 4 * 1024;

/** The most recent of `names` (most recent first) that a type keeps: at most MAX_FORMER_NAMES, within the bytes above. */
export function keptFormerNames<T>(names: readonly T[]): T[] {
  let bytes = 2; // the brackets
  const kept: T[] = [];
  for (const entry of names) {
    if (kept.length === MAX_FORMER_NAMES) break;
    bytes += utf8Bytes(JSON.stringify(entry)) + (kept.length > 0 ? 1 : 0);
    if (bytes > MAX_FORMER_NAMES_JSON_BYTES) break;
    kept.push(entry);
  }
  return kept;
}

/** How long a write's Idempotency-Key and its stored answer are kept (hours): a retry within it gets the answer. */
export const IDEMPOTENCY_TTL_HOURS = 24;

/** Most entries in one enumeration (allowed_values; 1,000: docs/api.md#declaration-rules, rule 8). */
export const MAX_ALLOWED_VALUES = 1000;
/** Longest accepted string value (characters), for attribute values and enumerated values alike. */
export const MAX_STRING_VALUE = 65_536;
/** Most entries in one multi value. */
export const MAX_MULTI_VALUES = 1000;
/** Longest enumerated value (characters; JSON text for json), so 1,000 entries stay small on every write. */
export const MAX_ALLOWED_VALUE_LENGTH = 1024;
/** Longest description of a definition (characters): what it is for, shown beside it; line breaks allowed. */
export const MAX_DESCRIPTION_LENGTH = 1000;
/** Longest display name of a definition (characters): a label for people, one line. */
export const MAX_DISPLAY_NAME_LENGTH = 256;
/** Largest default value (JSON text), read on every write that applies it. */
export const MAX_DEFAULT_VALUE_LENGTH = 65_536;
