// Stored JSON texts in a GraphQL answer: replaced by markers when the answer is measured, spliced in as they are
// when it is serialised, the same text serialising the parsed values gives; anywhere else, serialised as their
// parsed value.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  RAW_FROM_CHARS,
  RawJson,
  rawJson,
  rawJsonItems,
  StoredJson,
  stringifyMarked,
} from '../../src/json/raw.js';
import { measureAnswer } from '../../src/schema/limits.js';
import { jsonValues } from '../json-values.js';

/** An answer as the GraphQL route serialises it: measured (its stored texts marked), then serialised. */
function answerText(value: unknown): string {
  const texts: string[] = [];
  measureAnswer(value, Number.POSITIVE_INFINITY, texts);
  return stringifyMarked(value, texts);
}

/** Whether a RawJson is left anywhere in `value`. */
function holdsRaw(value: unknown): boolean {
  if (value instanceof RawJson) return true;
  if (value === null || typeof value !== 'object') return false;
  return Object.values(value).some(holdsRaw);
}

/** Strings with what could confuse a splice: quotes, backslashes, control characters, a marker's look. */
const tricky = fc.oneof(
  fc.string(),
  fc.constantFrom('\u0000', '"\u0000', '\\u0000', '\u00000:0', '"\\u0000abc:0"', '\u2028', 'é"\\'),
);
const json = jsonValues(tricky, {
  leaves: [
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
  ],
  crossShrink: false,
});

/** An answer-like value whose leaves may be stored texts: as RawJson, and as the parsed value it stands for. */
const answer = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: 'small' },
    json.map((v) => ({ raw: new RawJson(JSON.stringify(v)) as unknown, parsed: v as unknown })),
    json.map((v) => ({ raw: v as unknown, parsed: v as unknown })),
    fc.array(tie('node'), { maxLength: 4 }).map((items) => ({
      raw: (items as { raw: unknown }[]).map((i) => i.raw) as unknown,
      parsed: (items as { parsed: unknown }[]).map((i) => i.parsed) as unknown,
    })),
    fc.dictionary(tricky, tie('node'), { maxKeys: 4 }).map((d) => ({
      raw: Object.fromEntries(
        Object.entries(d as Record<string, { raw: unknown }>).map(([k, v]) => [k, v.raw]),
      ),
      parsed: Object.fromEntries(
        Object.entries(d as Record<string, { parsed: unknown }>).map(([k, v]) => [k, v.parsed]),
      ),
    })),
  ),
})).node as fc.Arbitrary<{ raw: unknown; parsed: unknown }>;

describe('measureAnswer, then stringifyMarked', () => {
  it('writes the same text as serialising the parsed values, whatever the texts and the answer around them hold', () => {
    fc.assert(
      fc.property(answer, ({ raw, parsed }) => {
        expect(answerText(raw)).toBe(JSON.stringify(parsed));
      }),
      { numRuns: 500 },
    );
  });

  it('counts never fewer bytes than the answer is sent as, whatever its strings hold (CJK, quotes, controls, surrogates)', () => {
    const wide = fc.oneof(
      tricky,
      fc.string({ unit: 'binary', maxLength: 80 }),
      fc.constantFrom(
        '漢'.repeat(64),
        '漢'.repeat(65),
        '"'.repeat(64),
        '\u0001'.repeat(70),
        '\ud83d',
        '😀'.repeat(40),
      ),
    );
    const values = jsonValues(wide, {
      leaves: [fc.integer(), fc.double({ noNaN: true }), fc.boolean(), fc.constant(null), wide],
      crossShrink: false,
    });
    fc.assert(
      fc.property(
        fc.oneof(
          answer.map(({ raw, parsed }) => ({ raw, parsed })),
          values.map((v) => ({ raw: v, parsed: v })),
        ),
        ({ raw, parsed }) => {
          const measured = measureAnswer(raw, Number.POSITIVE_INFINITY, []);
          expect(measured).toBeGreaterThanOrEqual(Buffer.byteLength(JSON.stringify(parsed) ?? ''));
        },
      ),
      { numRuns: 1000 },
    );
    // names of 64 CJK characters: 194 bytes each as sent, counted so
    expect(measureAnswer(['漢'.repeat(64)], Number.POSITIVE_INFINITY, [])).toBeGreaterThanOrEqual(196);
  });

  it('splices a text as it is stored, its spacing included (it is not parsed)', () => {
    const stored = `{ "a" : [1, 2,\n 3], "pad": "${'p'.repeat(RAW_FROM_CHARS)}" }`;
    expect(answerText({ data: { after: rawJson(stored), before: rawJson(null) } })).toBe(
      `{"data":{"after":${stored},"before":null}}`,
    );
  });

  it('parses a short text instead (a marker costs more), so an answer of short texts is serialised as before', () => {
    const short = '{ "a" : 1 }';
    expect(rawJson(short)).toEqual({ a: 1 });
    expect(rawJson('x'.repeat(RAW_FROM_CHARS - 3).replace(/^x|x$/g, '"'))).not.toBeInstanceOf(RawJson);
    expect(rawJson(`"${'x'.repeat(RAW_FROM_CHARS - 2)}"`)).toBeInstanceOf(RawJson);
    expect(new StoredJson('["a","b"]').items()).toEqual(['a', 'b']);
  });

  it('leaves strings that look like its markers alone, and splices many texts in order', () => {
    const texts = Array.from({ length: 1000 }, (_, i) => JSON.stringify({ i, s: `\u0000:${i}"` }));
    const value = { lookalike: '\u00000:1', items: texts.map((t) => new RawJson(t)) };
    expect(answerText(value)).toBe(
      JSON.stringify({ lookalike: '\u00000:1', items: texts.map((t) => JSON.parse(t)) }),
    );
  });

  it('serialises a RawJson as its parsed value anywhere else (a plain JSON.stringify, a log line)', () => {
    expect(JSON.stringify({ a: new RawJson('[1, 2]') })).toBe('{"a":[1,2]}');
    expect(() => JSON.stringify(new RawJson('{not json'))).toThrow(SyntaxError);
  });

  it('leaves no RawJson in the answer once measured: its serialisation meets no toJSON (V8’s fast path)', () => {
    const shared = new RawJson('[1]');
    const value = { data: { a: [shared, new RawJson('2'), { b: shared }], c: 'text' } };
    const texts: string[] = [];
    measureAnswer(value, Number.POSITIVE_INFINITY, texts);
    expect(holdsRaw(value)).toBe(false);
    expect([...texts].sort()).toEqual(['2', '[1]', '[1]']);
    expect(stringifyMarked(value, texts)).toBe('{"data":{"a":[[1],2,{"b":[1]}],"c":"text"}}');
  });

  it('counts a stored text in an answer’s size by its UTF-8 bytes', () => {
    const text = JSON.stringify(['é'.repeat(100)]);
    expect(measureAnswer(new RawJson(text), 1e9, [])).toBe(Buffer.byteLength(text));
    // braces, the key with its quotes, its colon and a comma; brackets and a comma
    expect(measureAnswer({ a: new RawJson(text) }, 1e9, [])).toBe(2 + 3 + 2 + Buffer.byteLength(text));
    expect(measureAnswer([new RawJson(text)], 1e9, [])).toBe(2 + 1 + Buffer.byteLength(text));
  });
});

describe('rawJsonItems', () => {
  it('cuts an array’s text into its items’ texts, compact or spaced, nested or not', () => {
    fc.assert(
      fc.property(
        fc.array(json, { maxLength: 12 }),
        fc.constantFrom(undefined, 1, 2, '\t'),
        (items, space) => {
          const text = JSON.stringify(items, null, space);
          // (what the stored text holds: -0 is stored as 0)
          const stored = JSON.parse(text) as unknown[];
          const cut = rawJsonItems(text);
          expect(cut.map((item) => JSON.parse(item.text))).toEqual(stored);
          // each item's text is a piece of the stored one, not a serialisation of its own
          for (const item of cut) expect(text.includes(item.text)).toBe(true);
          // spliced back as they are: the stored (compact) text itself; a spaced one keeps its spacing
          if (space === undefined) expect(answerText({ cut }).slice(7, -1)).toBe(text);
          else expect(JSON.parse(answerText({ cut })).cut).toEqual(stored);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('passes strings with escaped quotes, backslashes and brackets', () => {
    const items = ['a\\', '\\"', '"', '[', ']', ',', '{"x":1}', '\\\\"]'];
    expect(rawJsonItems(JSON.stringify(items)).map((i) => JSON.parse(i.text))).toEqual(items);
  });

  it('parses what is not a well-formed array instead (and refuses what JSON.parse refuses)', () => {
    expect(rawJsonItems('[]')).toEqual([]);
    expect(() => rawJsonItems('[1,]')).toThrow(SyntaxError);
    expect(() => rawJsonItems('[,1]')).toThrow(SyntaxError);
    expect(() => rawJsonItems('["open')).toThrow(SyntaxError);
    expect(() => rawJsonItems('[1, 2')).toThrow(SyntaxError);
  });

  it('cuts a stored enumeration once however often its items are asked for', () => {
    const items = Array.from({ length: 40 }, (_, i) => `${i}${'v'.repeat(40)}`);
    const stored = new StoredJson(JSON.stringify(items));
    expect(stored.items()).toBe(stored.items());
    expect(stored.items().map((i) => (i as RawJson).text)).toEqual(items.map((i) => JSON.stringify(i)));
    expect(answerText({ v: stored.whole() })).toBe(`{"v":${JSON.stringify(items)}}`);
  });
});
