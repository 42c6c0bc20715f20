import { describe, expect, it } from 'vitest';
import type { AppError } from '../../src/errors.js';
import { checkValue, DEFAULT_VALUE_REASONS, isDateValue } from '../../src/resolvers/values.js';

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
  it('take offsets up to 23:59 either way, as RFC 3339 does; +24:00 and +05:60 are not dates', () => {
    expect(isDateValue('2024-01-01T00:00:00+23:59')).toBe(true);
    expect(isDateValue('2024-01-01T00:00:00-23:59')).toBe(true);
    expect(isDateValue('2024-01-01T00:00:00.5+05:30')).toBe(true);
    expect(isDateValue('2024-01-01T00:00:00+24:00')).toBe(false);
    expect(isDateValue('2024-01-01T00:00:00-99:00')).toBe(false);
    expect(isDateValue('2024-01-01T00:00:00+05:60')).toBe(false);
  });
});

describe('a value checked against its definition', () => {
  const def = {
    name: 'tags',
    value_type: 'json' as const,
    cardinality: 'multi' as const,
    allowed_values: ['a'],
  };
  const reasonOf = (value: unknown) => {
    try {
      checkValue(def, value, DEFAULT_VALUE_REASONS, 'default_value');
      return 'accepted';
    } catch (err) {
      return (err as AppError).reason;
    }
  };

  it("is refused for its shape before its entries' membership, whatever the entries' order", () => {
    // An entry not allowed before one of no json value: the shape (what the OpenAPI document states) decides.
    expect(reasonOf([1, null])).toBe('invalid_default_value');
    expect(reasonOf([null, 1])).toBe('invalid_default_value');
    expect(reasonOf([1])).toBe('default_value_not_allowed');
    expect(reasonOf(['a'])).toBe('accepted');
  });
});
