// The page_size pattern (rest/decimal.ts) is built from the bound: for 500 it is the pattern once written out by
// hand, and for any bound it accepts exactly the integers 1 to the bound, leading zeros allowed, 9 digits at most.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PAGES } from '../../src/model/pages.js';
import { positiveUpTo } from '../../src/rest/decimal.js';

const HAND_WRITTEN_500 = /^(0{0,8}[1-9]|0{0,7}[1-9][0-9]|0{0,6}[1-4][0-9]{2}|0{0,6}500)$/;

/** What the pattern must mean: up to `width` decimal digits whose value is 1 to max. */
const meant = (text: string, max: number, width = 9) =>
  /^[0-9]+$/.test(text) && text.length <= width && Number(text) >= 1 && Number(text) <= max;

describe('positiveUpTo', () => {
  it('for 500 accepts what the hand-written pattern accepted, over 0..10,000 with and without leading zeros', () => {
    const built = new RegExp(positiveUpTo(500));
    expect(PAGES.max).toBe(500);
    expect(positiveUpTo(500)).toBe(HAND_WRITTEN_500.source); // the OpenAPI document states it unchanged
    const texts = [
      '',
      '0',
      '00',
      '000000000',
      '0000000001',
      '000000500',
      '0000000500',
      '-1',
      '+1',
      '1.0',
      '1e2',
      ' 1',
    ];
    for (let n = 0; n <= 10_000; n++) texts.push(String(n), String(n).padStart(9, '0'), `0${n}`);
    for (const text of texts) expect([text, built.test(text)]).toEqual([text, HAND_WRITTEN_500.test(text)]);
  });

  it('for any bound accepts exactly the integers 1 to it, with leading zeros, in at most 9 digits', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 999_999_999 }),
        fc.oneof(fc.stringMatching(/^[0-9]{1,11}$/), fc.integer({ min: 0, max: 999_999_999 }).map(String)),
        (max, text) => {
          expect(new RegExp(positiveUpTo(max)).test(text)).toBe(meant(text, max));
        },
      ),
      { numRuns: 2_000 },
    );
    for (const max of [1, 9, 10, 99, 100, 101, 500, 999, 1000, 999_999_999]) {
      const built = new RegExp(positiveUpTo(max));
      for (const n of [0, 1, max - 1, max, max + 1])
        expect([max, n, built.test(String(n))]).toEqual([max, n, meant(String(n), max)]);
    }
  });
});
