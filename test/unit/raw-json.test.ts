// Stored JSON texts in a GraphQL answer: spliced in as they are by stringifyAnswer, the same text serialising the
// parsed values gives; anywhere else, serialised as their parsed value.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RawJson, rawJson, rawJsonItems, StoredJson, stringifyAnswer } from '../../src/raw-json.js';
import { answerBytes } from '../../src/schema/limits.js';

/** Strings with what could confuse a splice: quotes, backslashes, control characters, a marker's look. */
const tricky = fc.oneof(
  fc.string(),
  fc.constantFrom('\u0000', '"\u0000', '\\u0000', '\u00000:0', '"\\u0000abc:0"', '\u2028', 'é"\\'),
);
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    tricky,
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(tricky, tie('value'), { maxKeys: 4 }),
  ),
})).value;

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

describe('stringifyAnswer', () => {
  it('writes the same text as serialising the parsed values, whatever the texts and the answer around them hold', () => {
    fc.assert(
      fc.property(answer, ({ raw, parsed }) => {
        expect(stringifyAnswer(raw)).toBe(JSON.stringify(parsed));
      }),
      { numRuns: 500 },
    );
  });

  it('splices a text as it is stored, its spacing included (it is not parsed)', () => {
    const stored = '{ "a" : [1, 2,\n 3] }';
    expect(stringifyAnswer({ data: { after: rawJson(stored), before: rawJson(null) } })).toBe(
      `{"data":{"after":${stored},"before":null}}`,
    );
  });

  it('leaves strings that look like its markers alone, and splices many texts in order', () => {
    const texts = Array.from({ length: 1000 }, (_, i) => JSON.stringify({ i, s: `\u0000:${i}"` }));
    const value = { lookalike: '\u00000:1', items: texts.map((t) => new RawJson(t)) };
    expect(stringifyAnswer(value)).toBe(
      JSON.stringify({ lookalike: '\u00000:1', items: texts.map((t) => JSON.parse(t)) }),
    );
  });

  it('serialises a RawJson as its parsed value anywhere else (a plain JSON.stringify, a log line)', () => {
    expect(JSON.stringify({ a: new RawJson('[1, 2]') })).toBe('{"a":[1,2]}');
    expect(() => JSON.stringify(new RawJson('{not json'))).toThrow(SyntaxError);
  });

  it('is counted in an answer’s size by its UTF-8 bytes', () => {
    const text = JSON.stringify(['é'.repeat(100)]);
    expect(answerBytes(new RawJson(text), 1e9)).toBe(Buffer.byteLength(text));
    expect(answerBytes({ a: new RawJson(text) }, 1e9)).toBe(1 + 1 + 4 + Buffer.byteLength(text));
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
          const cut = rawJsonItems(text);
          expect(cut.map((item) => JSON.parse(item.text))).toEqual(items);
          // each item's text is a piece of the stored one, not a serialisation of its own
          for (const item of cut) expect(text.includes(item.text)).toBe(true);
          // spliced back as they are: the stored (compact) text itself; a spaced one keeps its spacing
          if (space === undefined) expect(stringifyAnswer(cut)).toBe(text);
          else expect(JSON.parse(stringifyAnswer(cut))).toEqual(items);
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
    const stored = new StoredJson(JSON.stringify(['a', 'b']));
    expect(stored.items()).toBe(stored.items());
    expect(stored.items().map((i) => i.text)).toEqual(['"a"', '"b"']);
    expect(stringifyAnswer(stored.whole())).toBe('["a","b"]');
  });
});
