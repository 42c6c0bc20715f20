// JSON the database holds as text (a change's before and after, a definition's enumeration and default), answered as
// it is stored.
//
// A GraphQL answer is one value serialised once (JSON.stringify, by Yoga). A stored text parsed into objects only to
// be serialised again costs the one thread twice and fills the heap with objects that live for one request: a page
// of the feed or of a type's history holds megabytes of such texts, and parsing them, building the answer and
// collecting the garbage hold the event loop in long pieces. A RawJson stands in the answer for its
// text. When the answer is measured (schema/limits.ts, measureAnswer), each RawJson is replaced by a marker string,
// its text kept aside (markRaw); stringifyMarked serialises the answer (a plain JSON.stringify, on V8's fast path:
// an object with a toJSON anywhere in the value takes the whole serialisation off it) and splices each text in where
// its marker stands. A RawJson serialised any other way serialises as its parsed value: the text is never trusted
// to be anything but what JSON.parse reads.
import { randomBytes } from 'node:crypto';
import { BACKSLASH, CLOSE_ARRAY, CLOSE_OBJECT, COMMA, OPEN_ARRAY, OPEN_OBJECT, QUOTE } from './scan.js';

/** JSON text taken as a value of an answer (see above). */
export class RawJson {
  constructor(readonly text: string) {}

  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}

/**
 * Stored texts shorter than this are parsed after all: a short text costs less to parse than its marker and splice
 * (and an answer without markers is serialised as it always was). Megabytes of texts are what is worth not parsing.
 */
export const RAW_FROM_CHARS = 1024;

/** A stored JSON text (or null) as an answer's value: a RawJson, or its parsed value when it is short. */
export const rawJson = (text: string | null): unknown =>
  text === null ? null : text.length < RAW_FROM_CHARS ? JSON.parse(text) : new RawJson(text);

/**
 * What a RawJson is replaced by: a string no answer can hold otherwise, a control character and a secret of this
 * process, then the text's index. JSON.stringify writes the control character as `\u0000`, so each marker appears
 * in the serialised answer as `"\u0000<secret>:<index>"`.
 */
const SECRET = randomBytes(12).toString('hex');
const MARK = `\u0000${SECRET}:`;
const MARK_AS_WRITTEN = `"\\u0000${SECRET}:`;

/** The marker to put where `raw` stands in an answer; its text goes to `texts` (for stringifyMarked). */
export function markRaw(raw: RawJson, texts: string[]): string {
  texts.push(raw.text);
  return `${MARK}${texts.length - 1}`;
}

/** JSON.stringify(value), each marker (markRaw) in it written as its text (JSON already). */
export function stringifyMarked(value: unknown, texts: readonly string[]): string {
  const json = JSON.stringify(value);
  if (texts.length === 0 || json === undefined) return json;
  const parts: string[] = [];
  let from = 0;
  for (let at = json.indexOf(MARK_AS_WRITTEN); at >= 0; at = json.indexOf(MARK_AS_WRITTEN, from)) {
    const digits = at + MARK_AS_WRITTEN.length;
    const close = json.indexOf('"', digits);
    parts.push(json.slice(from, at), texts[Number(json.slice(digits, close))] as string);
    from = close + 1;
  }
  parts.push(json.slice(from));
  return parts.join('');
}

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/**
 * The items of a stored JSON array's text (an enumeration), each as the RawJson of its own text: the text is cut at
 * its top-level commas (each string passed over with a native search), nothing is parsed, and each item's text is
 * a slice of the stored one. The text is the service's own, written by JSON.stringify: this finds where its items
 * begin and end, it does not validate JSON. A text that is not an array, or whose strings or array do not close, is
 * parsed instead.
 */
export function rawJsonItems(text: string): RawJson[] {
  const items: RawJson[] = [];
  const n = text.length;
  let i = 0;
  while (i < n && isSpace(text.charCodeAt(i))) i += 1;
  if (text.charCodeAt(i) !== OPEN_ARRAY) return parsedItems(text);
  let depth = 0;
  let start = -1;
  let end = -1;
  for (i += 1; i < n; i += 1) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      if (start < 0) start = i;
      const close = closingQuote(text, i);
      if (close < 0) return parsedItems(text);
      i = close;
      end = close + 1;
    } else if (isSpace(c)) {
      // between tokens
    } else if (depth === 0 && (c === COMMA || c === CLOSE_ARRAY)) {
      if (start >= 0) items.push(new RawJson(text.slice(start, end)));
      else if (c === COMMA || items.length > 0) return parsedItems(text);
      start = -1;
      if (c === CLOSE_ARRAY) return items;
    } else {
      if (start < 0) start = i;
      if (c === OPEN_ARRAY || c === OPEN_OBJECT) depth += 1;
      else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth -= 1;
      end = i + 1;
    }
  }
  return parsedItems(text);
}

/** The quote that closes the string opening at `open` (one not escaped by an odd run of backslashes), or -1. */
function closingQuote(text: string, open: number): number {
  let from = open + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote < 0) return -1;
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return quote;
    from = quote + 1;
  }
}

const parsedItems = (text: string): RawJson[] =>
  (JSON.parse(text) as unknown[]).map((item) => new RawJson(JSON.stringify(item)));

/** A stored JSON text as an answer reads it: whole, or (an array's) as its items, cut once when first asked for. */
export class StoredJson {
  private cut: unknown[] | undefined;

  constructor(readonly text: string) {}

  /** The whole text, as an answer's value (see rawJson). */
  whole(): unknown {
    return rawJson(this.text);
  }

  /** Its items, as answer values: cut out of the text the first time (rawJsonItems), or parsed when it is short. */
  items(): unknown[] {
    this.cut ??=
      this.text.length < RAW_FROM_CHARS ? (JSON.parse(this.text) as unknown[]) : rawJsonItems(this.text);
    return this.cut;
  }
}
