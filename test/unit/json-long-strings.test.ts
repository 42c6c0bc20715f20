// A body's long strings: the scanner finds exactly them, whatever the chunking, and a body parsed around them with
// its long strings decoded in pieces is the value JSON.parse of the whole text gives, refusals included; the event
// loop turns between pieces.
import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { releaseBody } from '../../src/body/bytes.js';
import { parseJsonBody, readBody } from '../../src/body/read.js';
import { InvalidLongString, LONG_STRING_BYTES, parseAroundLongStrings } from '../../src/json/long-strings.js';
import { JsonShapeScanner } from '../../src/json/scan.js';
import { parseJsonText } from '../../src/json/text.js';
import { jsonValues } from '../json-values.js';

/** `bytes` scanned in chunks of `chunk` bytes; answers the strings of at least `threshold` bytes. */
function spansOf(bytes: Buffer, chunk: number, threshold: number) {
  const scanner = new JsonShapeScanner(1_000, Number.MAX_SAFE_INTEGER, threshold);
  for (let i = 0; i < bytes.length; i += chunk) expect(scanner.push(bytes.subarray(i, i + chunk))).toBeNull();
  return scanner.longStrings;
}

/** A string written as JSON, each character escaped as \uXXXX or not as `escape(code)` says. */
function encodeString(s: string, escapes: (code: number) => boolean): string {
  let out = '"';
  for (let i = 0; i < s.length; i += 1) {
    const code = s.charCodeAt(i);
    if (escapes(code) || code < 0x20 || code === 0x22 || code === 0x5c || (code >= 0xd800 && code < 0xe000)) {
      out += `\\u${code.toString(16).padStart(4, '0')}`;
    } else out += s[i];
  }
  return `${out}"`;
}

/** `value` as JSON text, its strings (keys too) written by encodeString. */
function encode(value: unknown, escapes: (code: number) => boolean): string {
  if (typeof value === 'string') return encodeString(value, escapes);
  if (Array.isArray(value)) return `[${value.map((v) => encode(v, escapes)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([k, v]) => `${encodeString(k, escapes)}:${encode(v, escapes)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Every string in `value` (keys before their values), in the order of its text. */
function stringsOf(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) stringsOf(v, out);
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      out.push(k);
      stringsOf(v, out);
    }
  }
  return out;
}

const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.constantFrom('\\', '"', '\\u', 'é😀', '\ud83d', '\ude00x', '\n\t', '~0', ''),
);
const json = jsonValues(text);

describe('long strings of a body', () => {
  it('the scanner notes exactly the strings (keys and values) of at least its threshold, in order, whatever the chunking', () => {
    fc.assert(
      fc.property(
        json,
        fc.integer({ min: 1, max: 16 }),
        fc.integer({ min: 1, max: 50 }),
        fc.integer(),
        (value, threshold, chunk, seed) => {
          const bytes = Buffer.from(encode(value, (code) => (code + seed) % 3 === 0));
          const spans = spansOf(bytes, chunk, threshold);
          const found = spans.map((s) => {
            expect(bytes[s.start - 1]).toBe(0x22);
            expect(bytes[s.end]).toBe(0x22);
            expect(s.escaped).toBe(bytes.subarray(s.start, s.end).includes(0x5c));
            return JSON.parse(bytes.toString('utf8', s.start - 1, s.end + 1));
          });
          const texts = bytes.toString('utf8');
          // The strings whose written form is that long: each in the text, in order.
          const expected = stringsOf(JSON.parse(texts)).filter(
            (s) => Buffer.byteLength(encodeString(s, (code) => (code + seed) % 3 === 0)) - 2 >= threshold,
          );
          expect(found).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a body parsed around its long strings, decoded in pieces of any size, is what parsing its whole text makes of it', async () => {
    await fc.assert(
      fc.asyncProperty(
        json,
        fc.integer({ min: 0, max: 12 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 64 }),
        fc.integer(),
        async (value, threshold, chunk, pieceBytes, seed) => {
          const bytes = Buffer.from(encode({ v: value }, (code) => (code + seed) % 4 === 0));
          const spans = spansOf(bytes, chunk, threshold);
          const parsed = await parseAroundLongStrings(bytes, spans, parseJsonText, { pieceBytes });
          // (the whole text parsed as a body is: prototype keys removed)
          expect(parsed).toEqual(parseJsonText(bytes.toString('utf8')));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('any bytes in a long string, invalid UTF-8 and control characters included, give the whole text’s value or its refusal', async () => {
    const quote = 0x22;
    const backslash = 0x5c;
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ minLength: 20, maxLength: 300 }),
        fc.integer({ min: 1, max: 40 }),
        async (inside, pieceBytes) => {
          // Quotes and backslashes would end or escape the string: left out (escapes are the property above's).
          const content = Buffer.from(inside.filter((b) => b !== quote && b !== backslash));
          const bytes = Buffer.concat([Buffer.from('{"a":"'), content, Buffer.from('","b":1}')]);
          const spans = spansOf(bytes, 7, 1);
          const whole = (() => {
            try {
              return { value: JSON.parse(bytes.toString('utf8')) };
            } catch {
              return 'refused';
            }
          })();
          const pieces = await parseAroundLongStrings(bytes, spans, parseJsonText, { pieceBytes }).then(
            (value) => ({ value }),
            (error) => {
              expect(error).toBeInstanceOf(InvalidLongString);
              return 'refused';
            },
          );
          expect(pieces).toEqual(whole);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a run of continuation bytes too long to be UTF-8 decodes as the whole text does, wherever a piece would end', async () => {
    // (a counterexample the property above found: a lead byte, then four continuation bytes)
    const inside = [32, 32, 32, 32, 32, 32, 32, 35, 32, 32, 35, 32, 194, 128, 128, 128, 128, 32, 32, 32];
    for (const run of [
      inside,
      [...inside, 128, 128, 128, 128, 128, 128, 32],
      [240, 128, 128, 128, 128, 128, 97],
    ]) {
      const bytes = Buffer.concat([
        Buffer.from('{"a":"'),
        Buffer.from(run),
        Buffer.from('x'.repeat(20)),
        Buffer.from('","b":1}'),
      ]);
      for (let pieceBytes = 1; pieceBytes <= 40; pieceBytes += 1) {
        const parsed = await parseAroundLongStrings(bytes, spansOf(bytes, 7, 1), parseJsonText, {
          pieceBytes,
        });
        expect(parsed).toEqual(JSON.parse(bytes.toString('utf8')));
      }
    }
  });

  it('bad escapes in a long string are refused; duplicate long keys keep JSON.parse’s order and last value; a placeholder cannot be forged', async () => {
    const parse = (t: string) => {
      const bytes = Buffer.from(t);
      return parseAroundLongStrings(bytes, spansOf(bytes, 5, 3), parseJsonText, { pieceBytes: 16 });
    };
    for (const bad of ['{"a":"abcd\\x"}', '{"a":"abcd\\u12G4"}', '{"a":"abcdef\\u00"}', '["abc\\']) {
      await expect(parse(bad)).rejects.toThrow();
    }
    const dup = '{"longkey":1,"b":2,"longkey":3,"c":{"longkey":"longvalue"}}';
    const value = await parse(dup);
    expect(value).toEqual(JSON.parse(dup));
    expect(Object.keys(value as object)).toEqual(['longkey', 'b', 'c']);
    // Prototype keys written with escapes go, as from any body.
    const proto = String.raw`{"a":1,"__\u0070roto__":{"x":1},"constructo\u0072":{"prototype":1},"b":2}`;
    const cleaned = (await parse(proto)) as object;
    expect(cleaned).toEqual({ a: 1, b: 2 });
    expect(Object.getPrototypeOf(cleaned)).toBe(Object.prototype);
    // A string shaped like a placeholder stays what it is.
    expect(await parse('{"a":"~AAAAAAAAAAAAAAAA~0","b":"longer one"}')).toEqual({
      a: '~AAAAAAAAAAAAAAAA~0',
      b: 'longer one',
    });
    // The rest of the body is parsed first: a body that is not JSON is refused before its strings are decoded.
    await expect(parse('{"a":"a long string", }')).rejects.toThrow(/not valid JSON/);
  });

  it('a 4 MB string read by readBody is decoded with the event loop turning between pieces; a client gone stops it', async () => {
    const value = {
      name: 'Padded',
      padding: 'p€'.repeat((4 * 1024 * 1024) / 4),
      n: [1, 'x'.repeat(LONG_STRING_BYTES)],
    };
    const source = Buffer.from(JSON.stringify(value));
    const read = async () => {
      const req = Object.assign(new PassThrough(), {
        headers: { 'content-length': String(source.length) },
        complete: false,
      });
      const body = readBody(req as never, req);
      for (let i = 0; i < source.length; i += 64 * 1024) req.write(source.subarray(i, i + 64 * 1024));
      req.end();
      return body;
    };
    let turns = 0;
    let spinning = true;
    const spin = () => {
      turns += 1;
      if (spinning) setImmediate(spin);
    };
    const body = await read();
    spin();
    const parsed = await parseJsonBody(body);
    spinning = false;
    releaseBody(body);
    expect(parsed).toEqual(value);
    // 4 MB in pieces of 256 KiB: at least 16 turns (one piece a turn), and the short strings in one go.
    expect(turns).toBeGreaterThanOrEqual(16);

    let asked = 0;
    const gone = () => {
      asked += 1;
      return asked >= 2;
    };
    const again = await read();
    // Refused, so that the route does not run for a client that has gone.
    await expect(parseJsonBody(again, { gone })).rejects.toMatchObject({ reason: 'invalid_body' });
    releaseBody(again);
    expect(asked).toBe(2);
  });
});
