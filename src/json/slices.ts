// A large answer serialised a slice at a time. The service has one thread: `JSON.stringify` of a multi-megabyte
// answer (an entity of megabytes of values, a page of large rows) holds it in one piece, and its UTF-8 encoding
// longer still, while every other tenant's request waits. Here the value is cut into pieces of about SLICE_CHARS (a
// subtree that small is serialised whole, by `JSON.stringify` on V8's fast path; a larger one is entered), each
// slice encoded as it is made, and the event loop turns between slices, so another request waits at most a slice's
// work. The bytes are those `JSON.stringify(value)` gives (see pieces).

import { setImmediate as turn } from 'node:timers/promises';

/** The bytes of the slices joined into the answer's one buffer in one turn of the event loop. */
const JOIN_BYTES = 4 * 1024 * 1024;

/** A slice ends once it holds this many characters of JSON (a slice holds at most about twice as many). */
export const SLICE_CHARS = 64 * 1024;

const isContainer = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && typeof (v as { toJSON?: unknown }).toJSON !== 'function';

/**
 * Lists and objects of more items or fields than a slice holds characters, once seen: each level of an answer above
 * one would measure down to it again, and listing the fields of a large object each time holds the thread.
 */
const overSlice = new WeakSet<object>();

/**
 * About how many characters `value` serialises to, if at most `limit`, found by walking at most that much of it
 * (string lengths, and a few characters for every other node); undefined past it: an answer of a million nodes is not
 * walked whole to learn it is large.
 */
export function sizeWithin(value: unknown, limit: number): number | undefined {
  let size = 0;
  // One stack for every call (the walk never yields; a getter calling it again gets a stack of its own), emptied at
  // the end so that it holds nothing: a stack made per call would be garbage made for every item of an answer.
  const stack = walking ? [] : walkStack;
  walking = true;
  stack.push(value);
  try {
    while (stack.length > 0) {
      const v = stack.pop();
      if (typeof v === 'string') size += v.length + 2;
      else if (Array.isArray(v)) {
        if (limit <= SLICE_CHARS && overSlice.has(v)) return undefined;
        // A comma or a bracket per item at least: a list longer than the limit is known large at once.
        size += v.length + 2;
        if (v.length + 2 > SLICE_CHARS) overSlice.add(v);
        if (size > limit) return undefined;
        for (const item of v) stack.push(item);
      } else if (isContainer(v)) {
        if (limit <= SLICE_CHARS && overSlice.has(v)) return undefined;
        const keys = Object.keys(v);
        // Four characters a field at least (its quotes, colon and comma): so is an object of more fields.
        size += 4 * keys.length + 2;
        if (4 * keys.length + 2 > SLICE_CHARS) overSlice.add(v);
        if (size > limit) return undefined;
        for (const key of keys) {
          size += key.length;
          stack.push(v[key]);
        }
      } else size += 8;
      if (size > limit) return undefined;
    }
    return size;
  } finally {
    if (stack === walkStack) {
      stack.length = 0;
      walking = false;
    }
  }
}

const walkStack: unknown[] = [];
let walking = false;

/** Whether JSON leaves a field of this value out (and makes null of a list item). */
const hasNoJson = (v: unknown) => v === undefined || typeof v === 'function' || typeof v === 'symbol';

/**
 * The JSON of `value` in pieces; their concatenation is `JSON.stringify(value)` for the values the service answers
 * (plain data: no toJSON that reads the key it is called with, no boxed primitives). `large`: known to be over a
 * slice (measured by the caller), not measured again.
 */
export function* pieces(value: unknown, large = false): Generator<string> {
  if (!isContainer(value) || (!large && sizeWithin(value, SLICE_CHARS) !== undefined)) {
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
      else yield* pieces(value[end++], true);
      i = end;
    }
    yield ']';
    return;
  }
  yield '{';
  const keys = Object.keys(value);
  let first = true;
  for (let i = 0; i < keys.length; ) {
    // Likewise a run of fields that together fit in a slice is one piece, and a field larger than a slice is entered.
    const run: string[] = [];
    let room = SLICE_CHARS;
    let largeKey: string | undefined;
    let largeItem: unknown;
    for (; i < keys.length; i++) {
      const key = keys[i] as string;
      const item = value[key];
      // As JSON.stringify: a field whose value has no JSON is left out.
      if (hasNoJson(item)) continue;
      const size = sizeWithin(item, room);
      if (size === undefined) {
        if (run.length === 0) {
          largeKey = key;
          largeItem = item;
        }
        break;
      }
      const text = JSON.stringify(item);
      if (text === undefined) continue;
      room -= size + key.length + 4;
      run.push(`${JSON.stringify(key)}:${text}`);
    }
    if (run.length > 0) {
      yield `${first ? '' : ','}${run.join(',')}`;
      first = false;
    }
    if (largeKey !== undefined) {
      i += 1;
      yield `${first ? '' : ','}${JSON.stringify(largeKey)}:`;
      first = false;
      yield* pieces(largeItem, true);
    }
  }
  yield '}';
}

/**
 * A list of rows already serialised, in pieces: `{"<field>":[` and each row (`json` of it) a piece, then the other
 * fields of `rest` (serialised whole).
 */
export function* rowPieces<T>(
  field: string,
  rows: readonly T[],
  json: (row: T) => string,
  rest: { [field: string]: unknown } = {},
): Generator<string> {
  yield `{${JSON.stringify(field)}:[`;
  for (let i = 0; i < rows.length; i++) yield (i > 0 ? ',' : '') + json(rows[i] as T);
  const tail = JSON.stringify(rest);
  yield tail === '{}' ? ']}' : `],${tail.slice(1)}`;
}

/**
 * The UTF-8 of the concatenation of `parts`, each written where it goes: joined first, the whole text would be
 * copied once more before it is encoded.
 */
function encodeParts(parts: readonly string[]): Buffer {
  if (parts.length === 1) return Buffer.from(parts[0] as string, 'utf8');
  let length = 0;
  for (const part of parts) length += Buffer.byteLength(part, 'utf8');
  const slice = Buffer.allocUnsafe(length);
  let at = 0;
  for (const part of parts) at += slice.write(part, at, 'utf8');
  return slice;
}

/**
 * The UTF-8 of the concatenation of `texts` as slices of about SLICE_CHARS characters each, made with the event loop
 * turning between slices, with their total length in bytes and how many characters the texts held; undefined when
 * `abandoned` says so between slices. Sent as they are, they are never joined into a copy of the whole answer.
 */
export async function encodeSlices(
  texts: Iterable<string>,
  abandoned: () => boolean = () => false,
): Promise<{ slices: Buffer[]; bytes: number; chars: number } | undefined> {
  const slices: Buffer[] = [];
  let parts: string[] = [];
  let chars = 0;
  let total = 0;
  let bytes = 0;
  for (const text of texts) {
    parts.push(text);
    chars += text.length;
    if (chars < SLICE_CHARS) continue;
    const slice = encodeParts(parts);
    slices.push(slice);
    bytes += slice.length;
    total += chars;
    parts = [];
    chars = 0;
    await turn();
    if (abandoned()) return undefined;
  }
  const last = encodeParts(parts);
  slices.push(last);
  return { slices, bytes: bytes + last.length, chars: total + chars };
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
  const encoded = await encodeSlices(texts, abandoned);
  if (!encoded) return undefined;
  const { slices, chars: total } = encoded;
  if (slices.length === 1) return { bytes: slices[0] as Buffer, chars: total };
  // Joined JOIN_BYTES a turn: Buffer.concat of a large answer holds the thread in one piece (the copy, and the first
  // touch of the new memory's pages).
  let length = 0;
  for (const slice of slices) length += slice.length;
  const bytes = Buffer.allocUnsafeSlow(length);
  let at = 0;
  let sinceTurn = 0;
  for (const slice of slices) {
    slice.copy(bytes, at);
    at += slice.length;
    sinceTurn += slice.length;
    if (sinceTurn >= JOIN_BYTES && at < length) {
      sinceTurn = 0;
      await turn();
      if (abandoned()) return undefined;
    }
  }
  return { bytes, chars: total };
}
