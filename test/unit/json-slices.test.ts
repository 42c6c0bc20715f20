// A large answer serialised a slice at a time: the same bytes JSON.stringify gives, the event loop turning between
// slices, and a value's size learnt without walking more of it than the limit.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeInSlices, pieces, SLICE_CHARS, sizeWithin } from '../../src/json/slices.js';

/** `value`'s JSON made a slice at a time, as a REST answer is. */
async function serialiseInSlices(value: unknown): Promise<Buffer> {
  const made = await encodeInSlices(pieces(value));
  if (!made) throw new Error('abandoned');
  return made.bytes;
}

const expected = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8');

/** Runs `work`, counting the turns of the event loop (setImmediate callbacks) it lets through. */
async function turnsDuring<T>(work: () => Promise<T>): Promise<{ result: T; turns: number }> {
  let turns = 0;
  let done = false;
  const tick = () => {
    if (done) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  const result = await work();
  done = true;
  return { result, turns };
}

/** Values JSON.stringify treats specially: what has no JSON, a toJSON, non-finite numbers. */
const odd = fc.constantFrom<unknown>(
  undefined,
  () => 1,
  Symbol('s'),
  Number.NaN,
  -0,
  new Date(0),
  { toJSON: () => ({ replaced: true }) },
  { toJSON: () => undefined },
);
const bigString = fc.integer({ min: 0, max: 3 }).map((k) => `${k}${'é"\\\u2028z'.repeat(SLICE_CHARS / 4)}`);
const value = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string(),
    bigString,
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    odd,
    fc.array(tie('value'), { maxLength: 40 }),
    fc.dictionary(fc.string(), tie('value'), { maxKeys: 8 }),
  ),
})).value;

describe('serialiseInSlices', () => {
  it('gives the bytes JSON.stringify gives, for any value (large strings, odd members, nesting)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.dictionary(fc.string(), value, { maxKeys: 6 }), async (v) => {
        expect((await serialiseInSlices(v)).equals(expected(v))).toBe(true);
      }),
      { numRuns: 150 },
    );
  });

  it('lets the event loop turn between slices of a megabyte answer', async () => {
    // An entity of 4 MB of values, as GET /entities/{guid} answers it.
    const entity = {
      STATUS: 'SUCCESS',
      DATA: {
        entity: {
          guid: 'g',
          values: Object.fromEntries(
            Array.from({ length: 4 }, (_, b) => [
              `b${b}`,
              Array.from({ length: 20 }, (_, k) => `${k}${'z'.repeat(50_000)}`),
            ]),
          ),
        },
      },
    };
    const { result, turns } = await turnsDuring(() => serialiseInSlices(entity));
    expect(result.equals(expected(entity))).toBe(true);
    // 4 MB in slices of 64 to 128 KiB (a slice ends once it holds SLICE_CHARS): a turn between any two.
    expect(turns).toBeGreaterThanOrEqual(Math.floor(result.length / (2 * SLICE_CHARS)) - 1);
  });

  it('cuts a long list of small items into runs, each serialised at once', async () => {
    const list = { rows: Array.from({ length: 200_000 }, (_, i) => (i % 3 === 0 ? undefined : { i })) };
    const { result, turns } = await turnsDuring(() => serialiseInSlices(list));
    expect(result.equals(expected(list))).toBe(true);
    expect(turns).toBeGreaterThan(10);
  });

  it('cuts an object of many fields into runs of fields, each serialised at once', async () => {
    // A json value of 50,000 fields, as an entity may carry: its fields are runs, not a piece each.
    const fields = Object.fromEntries(
      Array.from({ length: 50_000 }, (_, i) => [
        `f${i}`,
        i % 7 === 0 ? undefined : { n: i, s: 'é'.repeat(i % 5) },
      ]),
    );
    const entity = {
      STATUS: 'SUCCESS',
      DATA: { entity: { values: { doc: fields, big: 'x'.repeat(3 * SLICE_CHARS) } } },
    };
    let made = 0;
    const counted = (function* () {
      for (const piece of pieces(entity)) {
        made++;
        yield piece;
      }
    })();
    const { result, turns } = await turnsDuring(async () => (await encodeInSlices(counted))?.bytes);
    expect(result?.equals(expected(entity))).toBe(true);
    expect(turns).toBeGreaterThan(10);
    // About one piece per slice of fields, not one per field.
    expect(made).toBeLessThan(200);
  });

  it('serialises a small value in one piece, without turning', async () => {
    const { result, turns } = await turnsDuring(() => serialiseInSlices({ a: [1, 'two', null] }));
    expect(result.toString()).toBe('{"a":[1,"two",null]}');
    expect(turns).toBe(0);
  });
});

describe('encodeInSlices', () => {
  it('makes nothing more once abandoned: asked between slices, never before the first', async () => {
    let asked = 0;
    const texts = Array.from({ length: 10 }, () => 'x'.repeat(SLICE_CHARS));
    expect(
      await encodeInSlices(texts, () => {
        asked++;
        return asked === 3;
      }),
    ).toBeUndefined();
    expect(asked).toBe(3);
    // Not abandoned: the whole, with the characters it held.
    const made = await encodeInSlices(['ab', 'é'], () => false);
    expect(made?.bytes.toString()).toBe('abé');
    expect(made?.chars).toBe(3);
  });

  it('joins the slices of a large answer a few megabytes a turn, into the same bytes', async () => {
    // 40 MB of slices: joined in one piece (Buffer.concat) they held the thread 25 to 48 ms
    const texts = Array.from({ length: 640 }, (_, i) => `${i % 10}`.repeat(SLICE_CHARS));
    const { result, turns } = await turnsDuring(async () => (await encodeInSlices(texts))?.bytes);
    expect(result?.equals(Buffer.from(texts.join('')))).toBe(true);
    // a turn per slice made (640), and more while they are joined (40 MB, 4 MiB a turn)
    expect(turns).toBeGreaterThanOrEqual(640 + 9);
  });

  it('writes a slice of many texts (one- and two-byte, astral characters) as the UTF-8 of their concatenation', async () => {
    // Texts written one after another into the slice, never joined first: each text's own length in bytes counts.
    const texts = fc.sample(
      fc.oneof(
        fc.string({ unit: 'binary' }),
        fc.string(),
        fc.constant('\u{1F600}'.repeat(300)),
        fc.constant(','),
      ),
      { numRuns: 3_000, seed: 7 },
    );
    const made = await encodeInSlices(texts);
    expect(made?.bytes.equals(Buffer.from(texts.join(''), 'utf8'))).toBe(true);
    expect(made?.chars).toBe(texts.join('').length);
  });
});

describe('sizeWithin', () => {
  it('counts a small value and refuses a large one', () => {
    expect(sizeWithin({ a: 'xyz', b: [1, 2] }, 1000)).toBeGreaterThanOrEqual(
      JSON.stringify({ a: 'xyz' }).length,
    );
    expect(sizeWithin({ a: 'x'.repeat(2000) }, 1000)).toBeUndefined();
  });

  it('walks no more of a large value than its limit', () => {
    let read = 0;
    const counted = Array.from({ length: 5_000 }, () => ({
      get v() {
        read++;
        return 'x'.repeat(100);
      },
    }));
    expect(sizeWithin({ list: counted }, 10_000)).toBeUndefined();
    // Every item costs more than 100 characters: about a hundred of them are enough to know.
    expect(read).toBeLessThan(200);
    // A list longer than the limit is known large before any item is read.
    read = 0;
    expect(sizeWithin(counted, 4_000)).toBeUndefined();
    expect(read).toBe(0);
  });

  it('measures the same when a getter measures another value meanwhile', () => {
    const inner = { a: 'x'.repeat(50), b: [1, 2, 3] };
    const outer = {
      first: 'y'.repeat(20),
      get nested() {
        sizeWithin(inner, 1000);
        return ['z'.repeat(30), { c: true }];
      },
      last: 'w'.repeat(40),
    };
    const plain = { first: outer.first, nested: outer.nested, last: outer.last };
    expect(sizeWithin(outer, 10_000)).toBe(sizeWithin(plain, 10_000));
    expect(sizeWithin(inner, 1000)).toBeGreaterThanOrEqual(JSON.stringify(inner).length);
  });
});
