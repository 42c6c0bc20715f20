// The body parser is JSON.parse, held by a differential property (bench/json-differential.ts): a few thousand cases
// here, a million on demand (npm run fuzz:json). And the verdict fails on a planted parser that is not.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bytesOf,
  cases,
  differential,
  piecewise,
  reference,
  sameOutcome,
} from '../../bench/json-differential.js';

describe('the body parser against JSON.parse', () => {
  it('gives the value or the refusal JSON.parse of the whole text gives, valid and broken texts, every cut', async () => {
    await fc.assert(differential, { numRuns: 3_000 });
  });

  it('the cases cross every threshold: long strings, long arrays where a value and where a key goes', () => {
    const sample = fc.sample(cases, { numRuns: 2_000, seed: 7 });
    const texts = sample.map((c) => ({ text: bytesOf(c).toString(), c }));
    const longArrayAsKey = texts.filter(({ text, c }) =>
      new RegExp(`[{,]\\s*\\[[^\\]]{${c.cuts.arrayBytes},}\\]\\s*:`).test(text),
    );
    expect(longArrayAsKey.length).toBeGreaterThan(0);
    expect(texts.filter(({ text }) => reference(Buffer.from(text)) === 'refused').length).toBeGreaterThan(
      200,
    );
    expect(texts.filter(({ text }) => reference(Buffer.from(text)) !== 'refused').length).toBeGreaterThan(
      200,
    );
  });

  it('catches a parser that reads an array where a key goes as a key (the fault this property was written for)', async () => {
    const text = Buffer.from(`{[${'1,'.repeat(20)}1]:1}`);
    expect(reference(text)).toBe('refused');
    const cuts = { chunk: 7, stringBytes: 8, arrayBytes: 8, groupBytes: 4, pieceBytes: 16 };
    expect(await piecewise(text, cuts)).toBe('refused');
    // A planted outcome that differs fails the comparison the property makes.
    expect(sameOutcome({ value: { x: 1 } }, 'refused')).toBe(false);
    expect(sameOutcome({ value: { a: 1, b: 2 } }, { value: { b: 2, a: 1 } })).toBe(false);
  });
});
