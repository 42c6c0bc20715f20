// When the warm-up (src/app/warmup.ts) runs another round: at least 3, at least 6 after a cold first round, at most
// 10, and past the least only while each round is at least 20% faster than the one before.
import { describe, expect, it } from 'vitest';
import { anotherRound, WARMUP_ROUNDS } from '../../src/app/warmup.js';

describe('warm-up rounds', () => {
  it('a warm database (first round fast): 3 rounds, then only while 20% faster', () => {
    expect(anotherRound([150])).toBe(true);
    expect(anotherRound([150, 400])).toBe(true);
    expect(anotherRound([150, 400, 390])).toBe(false);
    expect(anotherRound([150, 400, 319])).toBe(true);
    expect(anotherRound([150, 400, 319, 300])).toBe(false);
  });

  it('a cold database (first round over 2 s): 6 rounds however flat, then only while 20% faster', () => {
    expect(anotherRound([2_001, 900, 900])).toBe(true);
    expect(anotherRound([2_000, 900, 900])).toBe(false);
    expect(anotherRound([13_000, 1_800, 1_500, 1_400, 1_300])).toBe(true);
    expect(anotherRound([13_000, 1_800, 1_500, 1_400, 1_300, 1_200])).toBe(false);
    expect(anotherRound([13_000, 1_800, 1_500, 1_400, 1_300, 1_000])).toBe(true);
  });

  it('a lower cap (the test suite one round) ends the rounds there, and no cap goes past the ceiling', () => {
    expect(anotherRound([150], 1)).toBe(false);
    expect(anotherRound([13_000, 1_800], 2)).toBe(false);
    expect(anotherRound([13_000], 2)).toBe(true);
    const halving = (n: number) => Array.from({ length: n }, (_, i) => 16_000 / 2 ** i);
    expect(anotherRound(halving(WARMUP_ROUNDS.max), WARMUP_ROUNDS.max + 5)).toBe(false);
  });

  it(`never more than ${WARMUP_ROUNDS.max}, however much faster each round`, () => {
    const halving = (n: number) => Array.from({ length: n }, (_, i) => 16_000 / 2 ** i);
    expect(anotherRound(halving(WARMUP_ROUNDS.max - 1))).toBe(true);
    expect(anotherRound(halving(WARMUP_ROUNDS.max))).toBe(false);
  });
});
