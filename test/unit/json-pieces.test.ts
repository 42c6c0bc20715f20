// A body's long arrays: the scanner notes the innermost ones and cuts them at commas between their elements, whatever
// the chunking; a body parsed a group of elements at a time (its long strings decoded in pieces) is the value, or
// the refusal, that parsing its whole text gives; the event loop turns between groups.
import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { releaseBody } from '../../src/body/bytes.js';
import { parseJsonBody, readBody } from '../../src/body/read.js';
import { InvalidLongString } from '../../src/json/long-strings.js';
import { EmptyGroup, GROUP_BYTES, LONG_ARRAY_BYTES, parseInPieces } from '../../src/json/pieces.js';
import { JsonShapeScanner } from '../../src/json/scan.js';
import { parseJsonText } from '../../src/json/text.js';
import { jsonValues } from '../json-values.js';

/** `bytes` scanned in chunks of `chunk` bytes, noting arrays of `arrayBytes` cut every `groupBytes`, strings of `stringBytes`. */
function scan(bytes: Buffer, chunk: number, arrayBytes: number, groupBytes: number, stringBytes = Infinity) {
  const scanner = new JsonShapeScanner(
    1_000,
    Number.MAX_SAFE_INTEGER,
    stringBytes,
    1_000_000,
    arrayBytes,
    groupBytes,
  );
  for (let i = 0; i < bytes.length; i += chunk) scanner.push(bytes.subarray(i, i + chunk));
  return scanner;
}

/** The parse in pieces of `text`, or 'refused' (as the whole text's refusal is). */
async function inPieces(
  text: string,
  chunk: number,
  arrayBytes: number,
  groupBytes: number,
  stringBytes = Infinity,
) {
  const bytes = Buffer.from(text);
  const scanner = scan(bytes, chunk, arrayBytes, groupBytes, stringBytes);
  try {
    return { value: await parseInPieces(bytes, scanner.longStrings, scanner.longArrays, parseJsonText) };
  } catch (error) {
    // (the refusals body/read.ts answers as invalid JSON)
    if (error instanceof EmptyGroup || error instanceof InvalidLongString) return 'refused';
    if ((error as { reason?: string }).reason === 'invalid_json') return 'refused';
    throw error;
  }
}

function whole(text: string) {
  try {
    return { value: parseJsonText(text) };
  } catch {
    return 'refused';
  }
}

const strings = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.constantFrom('[', ']', ',', '"', '\\', '{', '}', 'é😀', '__proto__', ''),
);
const json = jsonValues(strings, { leaves: [fc.integer(), fc.constant(null), fc.boolean(), fc.double()] });

describe('long arrays of a body', () => {
  it('the scanner notes the innermost long arrays, each cut at commas between its elements, whatever the chunking', () => {
    fc.assert(
      fc.property(
        json,
        fc.integer({ min: 2, max: 40 }),
        fc.integer({ min: 1, max: 16 }),
        fc.integer({ min: 1, max: 50 }),
        (value, arrayBytes, groupBytes, chunk) => {
          const bytes = Buffer.from(JSON.stringify({ v: value }));
          const { longArrays } = scan(bytes, chunk, arrayBytes, groupBytes);
          for (const a of longArrays) {
            expect(String.fromCharCode(bytes[a.start] as number, bytes[a.end] as number)).toBe('[]');
            expect(a.end + 1 - a.start).toBeGreaterThanOrEqual(arrayBytes);
            expect(a.cuts.length).toBeGreaterThan(0);
            // Each cut is a comma between two elements: the groups between the cuts parse as non-empty lists whose
            // elements, joined, are the array's.
            const bounds = [a.start, ...a.cuts, a.end];
            const joined: unknown[] = [];
            for (let g = 0; g + 1 < bounds.length; g++) {
              expect(bytes[bounds[g + 1] as number]).toBe(g + 2 < bounds.length ? 0x2c : 0x5d);
              const part = JSON.parse(
                `[${bytes.toString('utf8', (bounds[g] as number) + 1, bounds[g + 1])}]`,
              );
              expect(part.length).toBeGreaterThan(0);
              joined.push(...part);
            }
            expect(joined).toEqual(JSON.parse(bytes.toString('utf8', a.start, a.end + 1)));
          }
          // None inside another.
          for (const a of longArrays) {
            for (const b of longArrays) if (a !== b) expect(b.start > a.start && b.end < a.end).toBe(false);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a body parsed a group at a time is what parsing its whole text makes of it, value or refusal', async () => {
    await fc.assert(
      fc.asyncProperty(
        json,
        fc.integer({ min: 2, max: 40 }),
        fc.integer({ min: 1, max: 16 }),
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 1, max: 12 }),
        // A change of one character (often leaving JSON that is not: a comma too many, a bracket that does not match).
        fc.option(fc.tuple(fc.nat(), fc.constantFrom('', ',', '[', ']', '{', '}', '"', ' ', ',]', '[,')), {
          nil: undefined,
        }),
        async (value, arrayBytes, groupBytes, chunk, stringBytes, change) => {
          let text = JSON.stringify({ v: value, w: [value, value, 1, 2, 3] });
          if (change) {
            const at = change[0] % (text.length + 1);
            text = text.slice(0, at) + change[1] + text.slice(at + 1);
          }
          // (a change may split a surrogate pair: the body is the text's UTF-8, in which a lone half is U+FFFD)
          text = Buffer.from(text).toString('utf8');
          expect(await inPieces(text, chunk, arrayBytes, groupBytes, stringBytes)).toEqual(whole(text));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('refuses what JSON refuses at a cut: a comma too many, a missing element, a mismatched bracket', async () => {
    for (const bad of [
      '{"a":[1,2,3,4,5,6,]}',
      '{"a":[,1,2,3,4,5,6]}',
      '{"a":[1,2,,3,4,5,6]}',
      '{"a":[1,2,3,4,5,6}]',
      '{"a":[1,2,3,4,5,6}',
      '{"a":[1,2,3,4,5,6]]}',
      '[1,2,3,4,5,6]x',
    ]) {
      expect({ bad, parsed: await inPieces(bad, 3, 4, 1) }).toEqual({ bad, parsed: 'refused' });
    }
    // Prototype keys go in every group, as from any body; long strings in a group are decoded in pieces.
    const text = `{"a":[{"__proto__":{"x":1}},{"constructor":{"prototype":{}}},"${'é'.repeat(40)}",{"\\u005f_proto__":2},4]}`;
    expect(await inPieces(text, 7, 8, 2, 16)).toEqual({ value: { a: [{}, {}, 'é'.repeat(40), {}, 4] } });
  });

  it('a 3 MB list read by readBody is parsed with the event loop turning between groups, as JSON.parse makes it', async () => {
    const value = {
      format: 'x',
      types: Array.from({ length: 1_000 }, (_, t) => ({
        name: `${t}${'😀'.repeat(100)}`,
        attributes: Array.from({ length: 50 }, (_, a) => ({ name: `a${a}`, value_type: 'json' })),
      })),
    };
    const source = Buffer.from(JSON.stringify(value));
    expect(source.length).toBeGreaterThan(2 * 1024 * 1024);
    const req = Object.assign(new PassThrough(), {
      headers: { 'content-length': String(source.length) },
      complete: false,
    });
    const reading = readBody(req as never, req);
    for (let i = 0; i < source.length; i += 64 * 1024) req.write(source.subarray(i, i + 64 * 1024));
    req.end();
    const body = await reading;
    let turns = 0;
    let spinning = true;
    const spin = () => {
      turns += 1;
      if (spinning) setImmediate(spin);
    };
    spin();
    const parsed = await parseJsonBody(body);
    spinning = false;
    releaseBody(body);
    expect(parsed).toEqual(value);
    // One group of about GROUP_BYTES a turn (the skeleton, here a few bytes, in one).
    expect(turns).toBeGreaterThanOrEqual(Math.floor(source.length / GROUP_BYTES) - 1);
    expect(LONG_ARRAY_BYTES).toBeLessThan(source.length);
  });
});
