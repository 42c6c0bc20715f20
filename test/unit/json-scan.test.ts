// The body shape scanner: depth and value counts agree with the parsed JSON, whatever the chunking, and strings
// (brackets, commas, escaped quotes inside them) never count.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonShapeScanner, MAX_OBJECT_MEMBERS } from '../../src/json/scan.js';
import { jsonValues } from '../json-values.js';

/** Depth and value count of a parsed value, as the scanner counts them (containers and commas). */
function shapeOf(value: unknown, depth = 0): { depth: number; values: number } {
  if (Array.isArray(value) || (typeof value === 'object' && value !== null)) {
    const children = Object.values(value as object);
    let deepest = depth + 1;
    let values = 1 + Math.max(0, children.length - 1);
    for (const child of children) {
      const c = shapeOf(child, depth + 1);
      deepest = Math.max(deepest, c.depth);
      values += c.values;
    }
    return { depth: deepest, values };
  }
  return { depth, values: 0 };
}

/** Scans `text` in pieces of `size` bytes with the given limits. */
function scan(text: string, size: number, maxDepth: number, maxValues: number) {
  const bytes = Buffer.from(text);
  const scanner = new JsonShapeScanner(maxDepth, maxValues);
  for (let i = 0; i < bytes.length; i += size) {
    const violation = scanner.push(bytes.subarray(i, i + size));
    if (violation) return violation;
  }
  return null;
}

/** `value`'s JSON scanned in pieces of `size` bytes passes at its own depth and count, and not one under either. */
function expectExactLimits(value: unknown, size: number) {
  const text = JSON.stringify(value);
  const { depth, values } = shapeOf(value);
  expect(scan(text, size, depth, values)).toBeNull();
  if (depth > 0) expect(scan(text, size, depth - 1, values + 10)).toBe('depth');
  if (values > 0) expect(scan(text, size, depth + 10, values - 1)).toBe('values');
}

const nastyStrings = fc.oneof(
  fc.string(),
  fc.constantFrom('[[[', '}}', ',,,', '\\', '"', '\\"[', '\\\\', '{"a":[', 'ü€😀'),
);
const json = jsonValues(nastyStrings);

describe('JsonShapeScanner', () => {
  it('follows long strings (searched natively past their first bytes) exactly, escapes and brackets in them', () => {
    // Strings of hundreds to thousands of bytes, with quotes, backslashes and brackets anywhere in them, in chunks
    // that cut them anywhere: the native search must agree with the byte-by-byte one.
    const longString = fc
      .array(
        fc.oneof(
          { weight: 12, arbitrary: fc.constantFrom('v'.repeat(64), 'v', 'ü') },
          { weight: 1, arbitrary: fc.constantFrom('"', '\\', '[', '{', ',') },
        ),
        { minLength: 2, maxLength: 80 },
      )
      .map((parts) => parts.join(''));
    const value = fc.array(fc.oneof(longString, fc.array(longString, { maxLength: 3 })), { maxLength: 5 });
    fc.assert(
      fc.property(value, fc.integer({ min: 1, max: 4096 }), (v, size) => {
        expectExactLimits(v, size);
      }),
      { numRuns: 300 },
    );
  });

  it('passes exactly the JSON within its limits, whatever the chunk size', () => {
    fc.assert(
      fc.property(json, fc.integer({ min: 1, max: 17 }), (value, size) => {
        expectExactLimits(value, size);
      }),
      { numRuns: 500 },
    );
  });

  it('stops at the first byte past a limit', () => {
    const scanner = new JsonShapeScanner(2, 100);
    expect(scanner.push(Buffer.from('[['))).toBeNull();
    expect(scanner.push(Buffer.from('['))).toBe('depth');
  });

  it('scans in time linear in the body: 8 MB of short strings in one chunk, one escape at its end', () => {
    // A search for the next backslash through the rest of the chunk, once per string, made this quadratic: minutes
    // for one chunk, and 100-250 ms of event loop blocked per 64 KB of a many-keys body. Linear, it is milliseconds.
    const member = '"key":"value"';
    const members = Array.from({ length: (8 * 1024 * 1024) / (member.length + 1) }, () => member);
    const text = `{${members.join(',')},"last":"\\\\"}`;
    const scanner = new JsonShapeScanner(40, Number.MAX_SAFE_INTEGER, undefined, Number.MAX_SAFE_INTEGER);
    const started = performance.now();
    expect(scanner.push(Buffer.from(text))).toBeNull();
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it(`an object of more than MAX_OBJECT_MEMBERS (${MAX_OBJECT_MEMBERS}) members stops the scan; arrays and nested objects count apart`, () => {
    const object = (n: number) =>
      `{${Array.from({ length: n }, (_, i) => `"${4_000_000_000 - i}":1`).join(',')}}`;
    const scanned = (text: string) => new JsonShapeScanner().push(Buffer.from(text));
    expect(scanned(object(MAX_OBJECT_MEMBERS))).toBeNull();
    expect(scanned(object(MAX_OBJECT_MEMBERS + 1))).toBe('members');
    // every object on its own: two of the limit side by side, one inside another, and long arrays, pass
    expect(scanned(`[${object(MAX_OBJECT_MEMBERS)},${object(MAX_OBJECT_MEMBERS)}]`)).toBeNull();
    const inner = object(MAX_OBJECT_MEMBERS - 1);
    expect(scanned(`{"a":${inner},${object(MAX_OBJECT_MEMBERS).slice(1)}`)).toBe('members');
    expect(scanned(`{"a":${inner},"b":1}`)).toBeNull();
    expect(scanned(`{"a":[${'1,'.repeat(50_000)}1]}`)).toBeNull();
    // commas inside strings are not members
    expect(scanned(`{"a":"${','.repeat(5_000)}"}`)).toBeNull();
  });
});
