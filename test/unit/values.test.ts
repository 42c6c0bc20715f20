import { describe, expect, it } from 'vitest';
import { isDateValue } from '../../src/resolvers/values.js';

describe('date values', () => {
  it('accept calendar dates of every four-digit year, years 0 to 99 included (not read as 1900 to 1999)', () => {
    expect(isDateValue('0050-01-01')).toBe(true);
    expect(isDateValue('0000-02-29')).toBe(true); // year 0 is divisible by 400
    expect(isDateValue('0100-02-29')).toBe(false);
    expect(isDateValue('2024-02-29')).toBe(true);
    expect(isDateValue('2023-02-29')).toBe(false);
    expect(isDateValue('2024-04-31')).toBe(false);
    expect(isDateValue('0099-12-31T23:59:60Z')).toBe(true);
    expect(isDateValue('2024-01-01T24:00:00Z')).toBe(false);
  });
});
