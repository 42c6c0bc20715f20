// A large answer serialised a slice at a time. The service has one thread: `JSON.stringify` of a 4 MB answer (an
// entity of megabytes of values, a page of large rows) holds it 15-25 ms in one piece on a modest core, and its
// UTF-8 encoding a few more, while every other tenant's request waits. Here the value is cut into pieces of about
// SLICE_CHARS (a subtree that small is serialised whole, by `JSON.stringify` on V8's fast path; a larger one is
// entered), each slice encoded as it is made, and the event loop turns between slices, so another request waits at
// most a slice's work (about a millisecond or two). The bytes are those `JSON.stringify(value)` gives.

import { setImmediate as turn } from 'node:timers/promises';

/** A slice ends once it holds this many characters of JSON (a slice holds at most about twice as many). */
export const SLICE_CHARS = 64 * 1024;

const isContainer = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && typeof (v as { toJSON?: unknown }).toJSON !== 'function';

/**
 * About how many characters `value` serialises to, if at most `limit`, found by walking at most that much of it
 * (string lengths, and a few characters for every other node); undefined past it: an answer of a million nodes is not
 * walked whole to learn it is large.
 */
export function sizeWithin(value: unknown, limit: number): number | undefined {
  let size = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') size += v.length + 2;
    else if (Array.isArray(v)) {
      // A comma or a bracket per item at least: a list longer than the limit is known large at once.
      size += v.length + 2;
      if (size > limit) return undefined;
      for (const item of v) stack.push(item);
    } else if (isContainer(v)) {
      for (const key in v) {
        size += key.length + 4;
        if (size > limit) return undefined;
        stack.push(v[key]);
      }
    } else size += 8;
    if (size > limit) return undefined;
  }
  return size;
}

/** The JSON of `value` in pieces; their concatenation is `JSON.stringify(value)` (a value that has JSON). */
export function* pieces(value: unknown): Generator<string> {
  if (!isContainer(value) || sizeWithin(value, SLICE_CHARS) !== undefined) {
    yield JSON.stringify(value) ?? 'null';
    return;
  }
  if (Array.isArray(value)) {
    yield '[';
    for (let i = 0; i < value.length; ) {
      // A run of items that together fit in a slice is serialised at once (as JSON.stringify does, an item that has
      // no JSON is null); an item larger than a slice is entered.
      let end = i;
      for (let room = SLICE_CHARS; end < value.length; end++) {
        const size = sizeWithin(value[end], room);
        if (size === undefined) break;
        room -= size + 1;
      }
      if (i > 0) yield ',';
      if (end > i) yield JSON.stringify(value.slice(i, end)).slice(1, -1);
      else yield* pieces(value[end++]);
      i = end;
    }
    yield ']';
    return;
  }
  yield '{';
  let first = true;
  for (const key of Object.keys(value)) {
    const item = value[key];
    // As JSON.stringify: a field whose value has no JSON is left out.
    if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
    yield `${first ? '' : ','}${JSON.stringify(key)}:`;
    first = false;
    yield* pieces(item);
  }
  yield '}';
}

/**
 * The UTF-8 of the concatenation of `texts`, made a slice at a time with the event loop turning between slices; with
 * how many characters the texts held. A text is never cut (a row or a stored text of a megabyte is one slice). When
 * `abandoned` says so between slices (the client went away), nothing more is made: undefined.
 */
export async function encodeInSlices(
  texts: Iterable<string>,
  abandoned: () => boolean = () => false,
): Promise<{ bytes: Buffer; chars: number } | undefined> {
  const slices: Buffer[] = [];
  let parts: string[] = [];
  let chars = 0;
  let total = 0;
  for (const text of texts) {
    parts.push(text);
    chars += text.length;
    if (chars < SLICE_CHARS) continue;
    slices.push(Buffer.from(parts.join(''), 'utf8'));
    total += chars;
    parts = [];
    chars = 0;
    await turn();
    if (abandoned()) return undefined;
  }
  slices.push(Buffer.from(parts.join(''), 'utf8'));
  total += chars;
  return { bytes: slices.length === 1 ? (slices[0] as Buffer) : Buffer.concat(slices), chars: total };
}
