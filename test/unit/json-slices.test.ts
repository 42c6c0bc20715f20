// Large answers serialised a slice at a time (src/json-slices.ts, src/schema/sliced-results.ts): the same text as
// JSON.stringify, the event loop given turns meanwhile, small answers at once, and Yoga's media type kept.
import { describe, expect, it } from 'vitest';
import { jsonLength, SLICED_JSON_CHARS, serialise, stringifyInSlices } from '../../src/json-slices.js';
import { regularMediaType } from '../../src/schema/sliced-results.js';

const big = {
  STATUS: 'SUCCESS',
  MESSAGE: '',
  DATA: {
    attributes: Array.from({ length: 40 }, (_, i) => ({
      name: `grade_${i}`,
      allowed_values: Array.from({ length: 200 }, (_, j) => `value ${j} "quoted" \\ é ${'x'.repeat(50)}`),
      default_value:
        i % 2 === 0 ? null : { nested: [1, 2.5, -3e-7, true, false, null, undefined], at: new Date(0) },
      skipped: undefined,
      fn: () => 1,
    })),
    empty: { list: [], object: {} },
  },
};

describe('jsonLength', () => {
  it("is the length of the value's JSON text when nothing in it is escaped, and stops once past a bound", () => {
    const values: unknown[] = [
      null,
      true,
      false,
      0,
      -12.5,
      'grade',
      [],
      {},
      [1, 'a', null, undefined, [true, { x: 'y' }]],
      { name: 'Person', skipped: undefined, nested: { list: ['A', 'B'], n: 3 }, at: new Date(0) },
      { allowed_values: Array.from({ length: 1_000 }, (_, i) => `value-${i}-${'x'.repeat(100)}`) },
    ];
    for (const value of values) expect(jsonLength(value)).toBe(JSON.stringify(value).length);
    const whole = jsonLength(big);
    expect(whole).toBeGreaterThan(300_000);
    expect(jsonLength(big, 1_000)).toBeLessThan(20_000);
  });
});

describe('stringifyInSlices', () => {
  it('writes the same text as JSON.stringify', async () => {
    expect(await stringifyInSlices(big)).toBe(JSON.stringify(big));
    expect(await stringifyInSlices(big, 0)).toBe(JSON.stringify(big));
    for (const value of [null, 1, 'x', [], {}, [undefined], { a: undefined }]) {
      expect(await stringifyInSlices(value, 0)).toBe(JSON.stringify(value));
    }
  });

  it('gives the event loop turns while it writes a large answer', async () => {
    let turns = 0;
    let writing = true;
    const tick = () => {
      if (!writing) return;
      turns += 1;
      setImmediate(tick);
    };
    setImmediate(tick);
    await stringifyInSlices(big, 0);
    writing = false;
    expect(turns).toBeGreaterThan(5);
  });

  it('serialise answers a small value at once and a large one in slices', async () => {
    expect(serialise({ a: 1 })).toBe('{"a":1}');
    expect(jsonLength(big)).toBeGreaterThan(SLICED_JSON_CHARS);
    const sliced = serialise(big);
    expect(sliced).toBeInstanceOf(Promise);
    expect(await sliced).toBe(JSON.stringify(big));
  });
});

describe('regularMediaType', () => {
  it('is the JSON media type Yoga would answer with, or undefined when the client takes neither', () => {
    expect(regularMediaType(null)).toBe('application/json');
    expect(regularMediaType('*/*')).toBe('application/json');
    expect(regularMediaType('application/json')).toBe('application/json');
    expect(regularMediaType('application/graphql-response+json')).toBe('application/graphql-response+json');
    expect(regularMediaType('application/graphql-response+json, application/json')).toBe(
      'application/graphql-response+json',
    );
    expect(regularMediaType('application/json;charset=latin1')).toBeUndefined();
    expect(regularMediaType('text/event-stream')).toBeUndefined();
  });
});
