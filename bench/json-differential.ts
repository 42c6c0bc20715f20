// The body parser held to JSON.parse: generated JSON texts, valid and broken (a token inserted, a range deleted, a
// fragment spliced anywhere: long arrays and long strings where a key goes included), read by the service's body
// reader in chunks and parsed in pieces with every threshold moved small (long strings, long arrays, groups, string
// pieces), must give the value, or the refusal, that JSON.parse of the whole text gives (the same prototype keys
// removed, the same strings refused as ill-formed). The suite runs a few thousand cases (test/unit); on demand:
//   npm run fuzz:json -- [--runs 1000000] [--seed N]
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import fc from 'fast-check';
import { releaseBody } from '../src/body/bytes.js';
import { parseJsonBody, readBody } from '../src/body/read.js';
import { parseJsonText } from '../src/json/text.js';
import { illFormedPath } from '../src/model/text.js';

export type Outcome = { value: unknown } | 'refused';

/** The piece thresholds and the chunking of one case. */
export interface Cuts {
  chunk: number;
  stringBytes: number;
  arrayBytes: number;
  groupBytes: number;
  pieceBytes: number;
}

/** What JSON.parse of the whole text makes of it, as the service reads a body: a value, or refused. */
export function reference(bytes: Buffer): Outcome {
  if (!isUtf8(bytes)) return 'refused';
  try {
    const value = parseJsonText(bytes.toString('utf8'));
    return value !== undefined && illFormedPath(value) !== undefined ? 'refused' : { value };
  } catch {
    return 'refused';
  }
}

/** What the service's body reader and its parse in pieces make of it, with the given cuts. */
export async function piecewise(bytes: Buffer, cuts: Cuts): Promise<Outcome> {
  const stream = Object.assign(new PassThrough(), { headers: {}, complete: false });
  const { stringBytes, arrayBytes, groupBytes } = cuts;
  const reading = readBody(stream as unknown as IncomingMessage, stream, {
    pieces: { stringBytes, arrayBytes, groupBytes },
  });
  for (let at = 0; at < bytes.length; at += cuts.chunk) stream.write(bytes.subarray(at, at + cuts.chunk));
  stream.end();
  try {
    const body = await reading;
    try {
      return { value: await parseJsonBody(body, { pieceBytes: cuts.pieceBytes }) };
    } finally {
      releaseBody(body);
    }
  } catch (error) {
    if ((error as { reason?: string }).reason !== undefined) return 'refused';
    throw error;
  }
}

/** Whether two outcomes are the same: both refused, or the same value with its keys in the same order. */
export const sameOutcome = (a: Outcome, b: Outcome) =>
  a === 'refused' || b === 'refused'
    ? a === b
    : isDeepStrictEqual(a.value, b.value) && JSON.stringify(a.value) === JSON.stringify(b.value);

const strings = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 10 }),
  fc.string({ unit: 'binary', maxLength: 6 }),
  fc.constantFrom('[', ']', '{', '}', ',', ':', '"', '\\', '\u2028', 'é😀', '__proto__', 'constructor', ''),
);

const values: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    strings,
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 6 }),
    fc.dictionary(strings, tie('value'), { maxKeys: 4 }),
  ),
})).value;

/** JSON's own whitespace, and characters that look like it but are not (refused between tokens). */
const SPACES = [' ', '\n', '\r', '\t', '  ', '\u00a0', '\ufeff', '\u3000', '\u000b'];
/** Bits of JSON a change inserts: structure, broken escapes, lone surrogates, numbers JSON.stringify cannot write. */
const TOKENS = [
  ',',
  ':',
  '[',
  ']',
  '{',
  '}',
  '"',
  '\\',
  '\\u',
  '\\ud800',
  '\\udc00',
  '\u0001',
  'tru',
  '1e400',
  '-',
  '01',
];

/** Fragments a change splices in: any value, or an array long enough to cross the long-array thresholds. */
const fragments = fc.oneof(
  values,
  fc.array(fc.integer({ min: 0, max: 99 }), { minLength: 4, maxLength: 40 }),
);

const change = fc.oneof(
  fc.record({
    kind: fc.constant('insert' as const),
    at: fc.nat(),
    text: fc.constantFrom(...TOKENS, ...SPACES),
  }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 4 }) }),
  fc.record({ kind: fc.constant('splice' as const), at: fc.nat(), value: fragments }),
  // Where a key goes: after an object's `{` or a comma (the n-th one in the text), a fragment, a colon and a value.
  fc.record({ kind: fc.constant('key' as const), at: fc.nat(), value: fragments }),
);
type Change = typeof change extends fc.Arbitrary<infer C> ? C : never;

function applyChange(text: string, c: Change): string {
  const at = c.at % (text.length + 1);
  if (c.kind === 'insert') return text.slice(0, at) + c.text + text.slice(at);
  if (c.kind === 'delete') return text.slice(0, at) + text.slice(at + c.length);
  if (c.kind === 'splice') return text.slice(0, at) + JSON.stringify(c.value) + text.slice(at);
  const places = [...text.matchAll(/[{,]/g)].map((m) => (m.index as number) + 1);
  if (places.length === 0) return text;
  const place = places[c.at % places.length] as number;
  return `${text.slice(0, place)}${JSON.stringify(c.value)}:1${places.length > 0 ? ',' : ''}${text.slice(place)}`;
}

/** A case: a text (valid, with whitespace, or changed), as UTF-8 bytes, and its cuts. */
export const cases = fc.record({
  value: values,
  indent: fc.constantFrom(undefined, 0, 1, 2, '\t'),
  changes: fc.array(change, { maxLength: 3 }),
  cuts: fc.record({
    chunk: fc.integer({ min: 1, max: 64 }),
    stringBytes: fc.integer({ min: 1, max: 24 }),
    arrayBytes: fc.integer({ min: 2, max: 48 }),
    groupBytes: fc.integer({ min: 1, max: 16 }),
    pieceBytes: fc.integer({ min: 16, max: 40 }),
  }),
});
export type Case = typeof cases extends fc.Arbitrary<infer C> ? C : never;

/** The bytes of a case (a change may split a surrogate pair: the bytes then hold its UTF-8 replacement). */
export function bytesOf(c: Case): Buffer {
  let text = JSON.stringify(c.value, null, c.indent);
  for (const one of c.changes) text = applyChange(text, one);
  return Buffer.from(text);
}

/** The property: the pieces' outcome is the whole text's. */
export const differential = fc.asyncProperty(cases, async (c) => {
  const bytes = bytesOf(c);
  const expected = reference(bytes);
  const actual = await piecewise(bytes, c.cuts);
  if (!sameOutcome(actual, expected)) {
    throw new Error(
      `pieces ${JSON.stringify(actual)} against whole ${JSON.stringify(expected)} for ${JSON.stringify(bytes.toString())}`,
    );
  }
});

async function main() {
  const { values: argv } = parseArgs({ options: { runs: { type: 'string' }, seed: { type: 'string' } } });
  const numRuns = Number(argv.runs ?? 1_000_000);
  const seed = argv.seed === undefined ? Date.now() : Number(argv.seed);
  const begun = performance.now();
  await fc.assert(differential, { numRuns, seed });
  const seconds = (performance.now() - begun) / 1000;
  console.log(`json differential: ${numRuns} cases held (seed ${seed}) in ${seconds.toFixed(0)} s`);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
