// A JSON body's long strings decoded a slice at a time.
//
// JSON.parse of a body is one piece of work: a body of up to 8 MB that is mostly one string (padding around a name,
// a long description, a large value) holds the event loop in one piece, every other request waiting behind it, and
// makes the string twice (the body's text, then the parsed value). The shape scanner
// (json/scan.ts) notes where the body's strings of LONG_STRING_BYTES or more lie as the bytes arrive. Here the body
// is parsed without them: each long string is replaced in the text by a placeholder, the rest (the skeleton) is
// parsed at once, and each long string is decoded from the body's bytes in pieces of about PIECE_BYTES with a turn
// of the event loop between pieces, then put where its placeholder was. The value is the one JSON.parse of the whole
// text would give, refusals included (a control character or a bad escape in a long string is invalid JSON).
//
// A piece is cut where it cannot split a character or an escape: never before a UTF-8 continuation byte, never
// inside `\x` or `\uXXXX`. A piece without a backslash is the bytes' UTF-8 text, refused if it holds a control
// character; a piece with one is parsed as a JSON string of its own (a surrogate pair written as two escapes may
// fall into two pieces: the halves join into the pair, as JavaScript strings are UTF-16). The pieces join as a rope;
// whoever reads the string flattens it.
//
// A placeholder is a random nonce (made for each body) and the string's index: a client cannot write one into its
// body. What is left of the body after its long strings is still parsed in one piece: at most 8 MB in strings
// shorter than LONG_STRING_BYTES and at most MAX_BODY_VALUES values.
import { randomBytes } from 'node:crypto';
import { setImmediate as turn } from 'node:timers/promises';
import { BACKSLASH, type StringSpan } from './scan.js';

/** Strings of a body at least this long (bytes between the quotes) are decoded in pieces. */
export const LONG_STRING_BYTES = 64 * 1024;
/** The bytes of a long string decoded in one turn of the event loop (over 128 KiB: V8 keeps it out of the young generation). */
const PIECE_BYTES = 256 * 1024;

// biome-ignore lint/suspicious/noControlCharactersInRegex: the characters JSON forbids unescaped in a string
const CONTROL = /[\u0000-\u001f]/;
const LETTER_U = 0x75;

/** Whether `bytes[at]` ends a run of backslashes of odd length (so it escapes what follows it). */
function escapingBackslashAt(bytes: Uint8Array, at: number, from: number): boolean {
  let run = 0;
  for (let i = at; i >= from && bytes[i] === BACKSLASH; i -= 1) run += 1;
  return run % 2 === 1;
}

/**
 * The last place at or before `cut` where a string's bytes (from `from`, where a character starts) can be cut: at
 * most 8 bytes back (three continuation bytes, then the five of an escape before them); past a run of continuation
 * bytes too long to be UTF-8, the first place after it.
 */
function safeCut(bytes: Uint8Array, from: number, cut: number): number {
  const continuation = (i: number) => ((bytes[i] as number) & 0xc0) === 0x80;
  let at = cut;
  // Not before a continuation byte (10xxxxxx): at most three back, the longest UTF-8 sequence.
  for (let k = 0; k < 3 && at > from + 1 && continuation(at); k += 1) at -= 1;
  // Still one: a run of more than three, which is not UTF-8. Cut after the run instead (before the string's closing
  // quote at the latest): cut inside it, the piece before could end in a lead byte that the whole text's decoding
  // reads with the run's first byte, and the pieces' U+FFFD would differ from the whole's.
  if (continuation(at)) {
    at = cut;
    while (at < bytes.length && continuation(at)) at += 1;
    return at;
  }
  // Not just after a backslash that escapes, nor inside the four digits of a \u escape.
  if (escapingBackslashAt(bytes, at - 1, from)) return at - 1;
  for (let k = 1; k <= 4 && at - k - 1 >= from; k += 1) {
    if (bytes[at - k] === LETTER_U && escapingBackslashAt(bytes, at - k - 1, from)) return at - k - 1;
  }
  return at;
}

/** Thrown for a long string that is not valid JSON (the caller answers it as the body's invalid JSON). */
export class InvalidLongString extends Error {}

export interface LongStringOptions {
  /** Whether the client has left (the decoding then stops, and the value is undefined). */
  gone?: () => boolean;
  /** The bytes decoded in one turn (PIECE_BYTES). */
  pieceBytes?: number;
}

/** One long string of `bytes` decoded in pieces, a turn between them; `gone()` stops it early (undefined). */
async function decodeInPieces(
  bytes: Buffer,
  span: StringSpan,
  gone: () => boolean,
  pieceBytes: number,
): Promise<string | undefined> {
  // (safeCut moves a cut at most 8 bytes back: a piece of 16 or more always ends past its start)
  const step = Math.max(pieceBytes, 16);
  let text = '';
  let at = span.start;
  while (at < span.end) {
    const cut = at + step >= span.end ? span.end : safeCut(bytes, at, at + step);
    const raw = bytes.toString('utf8', at, cut);
    let piece: string;
    if (span.escaped && bytes.subarray(at, cut).includes(BACKSLASH)) {
      try {
        piece = JSON.parse(`"${raw}"`) as string;
      } catch {
        throw new InvalidLongString();
      }
    } else {
      if (CONTROL.test(raw)) throw new InvalidLongString();
      piece = raw;
    }
    text += piece;
    at = cut;
    await turn();
    if (gone()) return undefined;
  }
  return text;
}

/** A key JSON bodies lose (body/read.ts): __proto__, and constructor holding a prototype. */
const isPrototypeKey = (key: string, value: unknown) =>
  key === '__proto__' ||
  (key === 'constructor' && typeof value === 'object' && value !== null && 'prototype' in value);

/** Puts each placeholder's string in its place, in `value` and below it (objects with placeholder keys rebuilt). */
function fillIn(value: unknown, nonce: string, strings: readonly string[]): unknown {
  const stringOf = (s: string) =>
    s.startsWith(nonce) ? (strings[Number(s.slice(nonce.length))] as string) : undefined;
  let left = strings.length;
  const walk = (v: unknown): unknown => {
    if (left === 0) return v;
    if (typeof v === 'string') {
      const s = stringOf(v);
      if (s === undefined) return v;
      left -= 1;
      return s;
    }
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length && left > 0; i += 1) v[i] = walk(v[i]);
      return v;
    }
    if (v === null || typeof v !== 'object') return v;
    const record = v as Record<string, unknown>;
    let renamed = false;
    for (const key of Object.keys(record)) {
      if (stringOf(key) !== undefined) renamed = true;
      record[key] = walk(record[key]);
    }
    if (!renamed) return record;
    // A long key: the object again, in the same order, with the key's string (a later duplicate's value wins, at
    // the first one's place, as in JSON.parse).
    const rebuilt: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(record)) {
      const long = stringOf(key);
      if (long !== undefined) left -= 1;
      // The prototype keys go as parseText removes them (a key of LONG_STRING_BYTES is never one; a test's is).
      if (!isPrototypeKey(long ?? key, child)) rebuilt[long ?? key] = child;
    }
    return rebuilt;
  };
  return walk(value);
}

/**
 * `bytes` (a JSON body) parsed with its long strings (`spans`, in order, as the scanner noted them) decoded in
 * pieces; `parseText` parses the rest. Resolves undefined if the client left meanwhile.
 */
export async function parseAroundLongStrings(
  bytes: Buffer,
  spans: readonly StringSpan[],
  parseText: (text: string) => unknown,
  { gone = () => false, pieceBytes = PIECE_BYTES }: LongStringOptions = {},
): Promise<unknown> {
  const nonce = `~${randomBytes(12).toString('base64url')}~`;
  let skeleton = '';
  let at = 0;
  spans.forEach((span, i) => {
    skeleton += `${bytes.toString('utf8', at, span.start)}${nonce}${i}`;
    at = span.end;
  });
  skeleton += bytes.toString('utf8', at);
  // The skeleton first: a body that is not JSON is refused before its strings are decoded.
  const value = parseText(skeleton);
  const strings: string[] = [];
  for (const span of spans) {
    const text = await decodeInPieces(bytes, span, gone, pieceBytes);
    if (text === undefined) return undefined;
    strings.push(text);
  }
  return fillIn(value, nonce, strings);
}
