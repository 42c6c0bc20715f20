// The selections bound of the GraphQL cost (schema/limits.ts), at, just under and just over it. Through HTTP the
// token limit refuses so many plain fields first; fragments reach it there (integration/limits.test.ts).
import { parse, print } from 'graphql';
import { getComplexity } from 'graphql-query-complexity';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { schema } from '../../src/schema/index.js';
import { GRAPHQL_LIMITS, operationCost } from '../../src/schema/limits.js';

// The cost walk itself, counted: what is remembered must not be walked again.
vi.mock('graphql-query-complexity', async (original) => {
  const actual = await original<typeof import('graphql-query-complexity')>();
  return { ...actual, getComplexity: vi.fn(actual.getComplexity) };
});
const walks = vi.mocked(getComplexity);
beforeEach(() => {
  walks.mockClear();
});

/** An operation of exactly `selections` selections: entityType and `selections - 1` name fields under it. */
const withSelections = (selections: number) =>
  parse(`{ entityType(guid: "00000000-0000-5000-8000-000000000000") { ${'name '.repeat(selections - 1)} } }`);

describe(`GraphQL selections: at most ${GRAPHQL_LIMITS.maxSelections.toLocaleString('en-US')}`, () => {
  it('at and under the bound the operation is costed; one over, it is refused as query_too_costly', () => {
    const max = GRAPHQL_LIMITS.maxSelections;
    for (const selections of [max - 1, max]) {
      expect(operationCost(schema, withSelections(selections), undefined, undefined)).toBe(selections);
    }
    expect(() => operationCost(schema, withSelections(max + 1), undefined, undefined)).toThrow(
      expect.objectContaining({ reason: 'query_too_costly' }),
    );
  });

  it('a refused document sent again is refused alike without walking its fragments again', () => {
    const fragments =
      parse(`{ entityType(guid: "00000000-0000-5000-8000-000000000000") { ${'...A '.repeat(80)} } }
      fragment A on EntityType { ${'...B '.repeat(80)} }
      fragment B on EntityType { name }`);
    for (let i = 0; i < 3; i++) {
      expect(() => operationCost(schema, fragments, undefined, undefined)).toThrow(
        expect.objectContaining({
          reason: 'query_too_costly',
          message: expect.stringContaining('fragments'),
        }),
      );
    }
    expect(walks).toHaveBeenCalledTimes(1);
  });
});

describe('the cost of a repeated operation', () => {
  it('is worked out once per parsed document and variables, and differs with the variables', () => {
    const document = parse('query($n: Int) { entityTypes(first: $n) { edges { node { name } } } }');
    const small = operationCost(schema, document, { n: 5 }, undefined);
    const large = operationCost(schema, document, { n: 500 }, undefined);
    expect(large).toBeGreaterThan(small);
    expect(operationCost(schema, document, { n: 5 }, undefined)).toBe(small);
    expect(operationCost(schema, document, { n: 500 }, undefined)).toBe(large);
    expect(walks).toHaveBeenCalledTimes(2);
    // the same text parsed again is another document: costed alike
    expect(operationCost(schema, parse(print(document)), { n: 5 }, undefined)).toBe(small);
    expect(walks).toHaveBeenCalledTimes(3);
  });

  it('is worked out each time for variables too large to key (a long string, many variables), alike', () => {
    const document = parse(
      'query($n: Int, $s: String) { entityTypes(first: $n) { edges { node { name } } } }',
    );
    const long = { n: 7, s: 'x'.repeat(257) };
    const many = Object.fromEntries([['n', 7], ...Array.from({ length: 16 }, (_, i) => [`v${i}`, i])]);
    const keyed = operationCost(schema, document, { n: 7 }, undefined);
    expect(operationCost(schema, document, long, undefined)).toBe(keyed);
    expect(operationCost(schema, document, long, undefined)).toBe(keyed);
    expect(operationCost(schema, document, many, undefined)).toBe(keyed);
    expect(walks).toHaveBeenCalledTimes(4);
    expect(operationCost(schema, document, { n: 500, s: 'x'.repeat(256) }, undefined)).toBeGreaterThan(keyed);
  });
});
