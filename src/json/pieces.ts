// A JSON body of many small values parsed a group of elements at a time.
//
// JSON.parse of a body is one piece of work: a model document of tens of thousands of definitions holds the event
// loop in one JSON.parse (and longer to decode and search its text), every other tenant's request waiting behind it.
// The shape scanner (json/scan.ts) notes, as the bytes arrive, the body's long arrays (LONG_ARRAY_BYTES or more,
// the innermost ones) and the commas that cut each into groups of about GROUP_BYTES of elements. Here each such
// array is replaced in the text by a placeholder, the rest is parsed (its long strings decoded in pieces, as
// json/long-strings.ts does), and each group of each array is parsed as a list of its own, a turn of the event loop
// between groups; the groups' elements are joined into the array, put where its placeholder was.
//
// The value is the one JSON.parse of the whole body would give, refusals included: the body is the skeleton with
// each array's bytes in place, and each array is `[` group `,` group … `]`; each piece being valid JSON (every group
// a non-empty list: a group of nothing is a comma too many), the whole is, and each piece parses to its part of the
// whole's value. A cut is a comma the scanner found between two elements of the array, outside any string; were it
// not (a body that is not JSON), a piece would not parse. A long string inside a group is decoded in pieces there.
import { randomBytes } from 'node:crypto';
import { TurnClock } from '../fairness/turn-clock.js';
import { type LongStringOptions, parseAroundLongStrings } from './long-strings.js';
import type { ArraySpan, StringSpan } from './scan.js';

/** Arrays of a body at least this long (bytes, brackets included) are parsed a group of elements at a time. */
export const LONG_ARRAY_BYTES = 256 * 1024;
/** A group of elements parsed in one piece is about this long (bytes; the cuts are commas past it). */
export const GROUP_BYTES = 64 * 1024;

/** Thrown for a group of no element (a comma too many): the caller answers it as the body's invalid JSON. */
export class EmptyGroup extends Error {}

const OPEN = Buffer.from('[');
const CLOSE = Buffer.from(']');

/** The long strings of `spans` that lie within [from, to), moved to offsets counted from `from - shift`. */
function spansWithin(spans: readonly StringSpan[], from: number, to: number, shift: number): StringSpan[] {
  const within: StringSpan[] = [];
  for (const s of spans) {
    if (s.start >= from && s.end <= to)
      within.push({ ...s, start: s.start - from + shift, end: s.end - from + shift });
  }
  return within;
}

/** One long array of `bytes`, parsed a group at a time (its long strings decoded in pieces); undefined: gone. */
async function parseArray(
  bytes: Buffer,
  array: ArraySpan,
  spans: readonly StringSpan[],
  parseText: (text: string) => unknown,
  options: LongStringOptions,
): Promise<unknown[] | undefined> {
  const elements: unknown[] = [];
  const clock = new TurnClock();
  const bounds = [array.start, ...array.cuts, array.end];
  for (let g = 0; g + 1 < bounds.length; g += 1) {
    const from = (bounds[g] as number) + 1;
    const to = bounds[g + 1] as number;
    const group = Buffer.concat([OPEN, bytes.subarray(from, to), CLOSE]);
    const inGroup = spansWithin(spans, from, to, 1);
    const part = (
      inGroup.length > 0
        ? await parseAroundLongStrings(group, inGroup, parseText, options)
        : parseText(group.toString('utf8'))
    ) as unknown[] | undefined;
    if (part === undefined) return undefined;
    if (part.length === 0) throw new EmptyGroup();
    for (const element of part) elements.push(element);
    await clock.turn();
    if (options.gone?.()) return undefined;
  }
  return elements;
}

/** Puts each array in the place of its placeholder (a string value), in `value` and below it. */
function fillArrays(value: unknown, nonce: string, arrays: readonly (unknown[] | undefined)[]): unknown {
  const arrayOf = (v: unknown) =>
    typeof v === 'string' && v.startsWith(nonce) ? arrays[Number(v.slice(nonce.length))] : undefined;
  const walk = (v: unknown): unknown => {
    const array = arrayOf(v);
    if (array !== undefined) return array;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i += 1) v[i] = walk(v[i]);
    } else if (v !== null && typeof v === 'object') {
      const record = v as Record<string, unknown>;
      for (const key of Object.keys(record)) record[key] = walk(record[key]);
    }
    return v;
  };
  return walk(value);
}

/**
 * `bytes` (a JSON body) parsed with its long arrays (`arrays`, as the scanner noted them, none inside another)
 * parsed a group at a time and its long strings (`spans`) decoded in pieces; `parseText` parses each piece of text.
 * Resolves undefined if the client left meanwhile.
 */
export async function parseInPieces(
  bytes: Buffer,
  spans: readonly StringSpan[],
  arrays: readonly ArraySpan[],
  parseText: (text: string) => unknown,
  options: LongStringOptions = {},
): Promise<unknown> {
  if (arrays.length === 0) return parseAroundLongStrings(bytes, spans, parseText, options);
  const ordered = [...arrays].sort((a, b) => a.start - b.start);
  // The skeleton: the body with each array a placeholder string, its long strings outside the arrays moved to match.
  const nonce = `~${randomBytes(12).toString('base64url')}~a`;
  const parts: Buffer[] = [];
  const outside: StringSpan[] = [];
  let at = 0;
  let length = 0;
  ordered.forEach((array, i) => {
    const before = bytes.subarray(at, array.start);
    outside.push(...spansWithin(spans, at, array.start, length));
    const placeholder = Buffer.from(JSON.stringify(`${nonce}${i}`));
    parts.push(before, placeholder);
    length += before.length + placeholder.length;
    at = array.end + 1;
  });
  outside.push(...spansWithin(spans, at, bytes.length, length));
  parts.push(bytes.subarray(at));
  // The skeleton first: a body that is not JSON around its arrays is refused before they are parsed.
  // (JSON has no undefined: the skeleton is undefined only when the client left)
  const skeleton = await parseAroundLongStrings(Buffer.concat(parts), outside, parseText, options);
  if (skeleton === undefined) return undefined;
  const values: (unknown[] | undefined)[] = [];
  for (const array of ordered) {
    const elements = await parseArray(bytes, array, spans, parseText, options);
    if (elements === undefined) return undefined;
    values.push(elements);
  }
  return fillArrays(skeleton, nonce, values);
}
