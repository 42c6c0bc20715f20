// Large answers serialised a slice at a time. JSON.stringify of a 4 MB answer holds the service's one thread for
// tens of milliseconds, and every other tenant's request waits that long; here an answer past SLICED_JSON_CHARS is
// written piece by piece, giving the event loop a turn every SLICE_MS, into the same text JSON.stringify would make.
// Smaller answers (nearly all) are serialised at once, as before. Sizing an answer walks it (one step per value, not
// per character), so deciding costs little.

/** Answers of about this many JSON characters or more are serialised in slices. */
export const SLICED_JSON_CHARS = 256 * 1024;
/** Longest stretch of serialising between two turns of the event loop, in ms. */
export const SLICE_MS = 4;
/** A part of an answer smaller than this is serialised in one go. */
const PIECE_CHARS = 16 * 1024;

/**
 * About the length of `value`'s JSON text (exact for text without characters JSON escapes), counted by walking it: a
 * string counts its length, so the cost is one step per value. With `stopPast`, the count stops once past it.
 */
export function jsonLength(value: unknown, stopPast = Number.POSITIVE_INFINITY): number {
  switch (typeof value) {
    case 'string':
      return value.length + 2;
    case 'number':
    case 'bigint':
      return String(value).length;
    case 'boolean':
      return value ? 4 : 5;
    case 'object': {
      if (value === null) return 4;
      const toJSON = (value as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === 'function') return jsonLength(toJSON.call(value), stopPast);
      let n = 1;
      if (Array.isArray(value)) {
        for (const item of value) {
          n += (item === undefined || typeof item === 'function' ? 4 : jsonLength(item, stopPast - n)) + 1;
          if (n > stopPast) return n;
        }
        return value.length === 0 ? 2 : n;
      }
      for (const key of Object.keys(value)) {
        const item = (value as Record<string, unknown>)[key];
        if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
        n += key.length + 4 + jsonLength(item, stopPast - n);
        if (n > stopPast) return n;
      }
      return n === 1 ? 2 : n;
    }
    default:
      return 0;
  }
}

/** `value` as JSON.stringify writes it: at once when small, else in slices (a promise). */
export function serialise(value: unknown): string | Promise<string> {
  return jsonLength(value, SLICED_JSON_CHARS) < SLICED_JSON_CHARS
    ? (JSON.stringify(value) ?? 'null')
    : stringifyInSlices(value);
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** `value` as JSON.stringify writes it (for JSON data: no symbols, no cycles), giving the loop a turn every SLICE_MS. */
export async function stringifyInSlices(value: unknown, sliceMs = SLICE_MS): Promise<string> {
  const out: string[] = [];
  let since = performance.now();
  const write = async (item: unknown): Promise<void> => {
    if (performance.now() - since > sliceMs) {
      await nextTurn();
      since = performance.now();
    }
    if (item === null || typeof item !== 'object') {
      out.push(JSON.stringify(item) ?? 'null');
      return;
    }
    const toJSON = (item as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') return write(toJSON.call(item));
    if (jsonLength(item, PIECE_CHARS) <= PIECE_CHARS) {
      out.push(JSON.stringify(item));
      return;
    }
    if (Array.isArray(item)) {
      out.push('[');
      for (let i = 0; i < item.length; i++) {
        if (i > 0) out.push(',');
        const element = item[i];
        if (element === undefined || typeof element === 'function' || typeof element === 'symbol')
          out.push('null');
        else await write(element);
      }
      out.push(']');
      return;
    }
    out.push('{');
    let first = true;
    for (const key of Object.keys(item)) {
      const member = (item as Record<string, unknown>)[key];
      if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
      out.push(`${first ? '' : ','}${JSON.stringify(key)}:`);
      first = false;
      await write(member);
    }
    out.push('}');
  };
  await write(value);
  return out.join('');
}
