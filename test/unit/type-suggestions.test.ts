// The closest type names a refusal suggests (resolvers/type-suggestions.ts), and GraphQL's field suggestions hidden
// from a request without a verified token (schema/armor.ts).

import { readFileSync } from 'node:fs';
import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import type { RequestContext } from '../../src/context.js';
import type { StoredType } from '../../src/db/entity-types.js';
import { refuse } from '../../src/errors.js';
import {
  closestTypeNames,
  didYouMean,
  editDistanceWithin,
  SUGGESTED_NAME_MAX,
  SUGGESTION_TYPES_MAX,
  suggestTypeNames,
  withTypeSuggestions,
} from '../../src/resolvers/type-suggestions.js';
import { fieldSuggestionsPlugin, SUGGESTION_HIDDEN } from '../../src/schema/armor.js';

const distance = (a: string, b: string, max = 10) => editDistanceWithin([...a], [...b], max);
const typed = (name: string) => ({ name, name_key: name.toLowerCase(), guid: `guid-of-${name}` });

/** A request context whose model cache answers the first page of the type listing with `types` (and `more`). */
function contextListing(types: ReturnType<typeof typed>[], more = false) {
  const pagesRead: string[] = [];
  const ctx = {
    viewer: { tenant: 't' },
    modelScope: {},
    services: {
      model: {
        read: async (_scope: unknown, kind: string, id: string) => {
          pagesRead.push(`${kind}:${id}`);
          return { types: types as unknown as StoredType[], more };
        },
      },
      cursors: {},
    },
    loaders: { typesSeen: new Map() },
  } as unknown as RequestContext;
  return { ctx, pagesRead };
}

describe('edit distance', () => {
  it('is Levenshtein’s while within the bound', () => {
    expect(distance('kitten', 'sitting')).toBe(3);
    expect(distance('flaw', 'lawn')).toBe(2);
    expect(distance('', 'abc')).toBe(3);
    expect(distance('report', 'report')).toBe(0);
    expect(distance('reprot', 'report')).toBe(2);
  });
  it('says only "over the bound" past it, however far', () => {
    expect(distance('kitten', 'sitting', 2)).toBe(3);
    expect(distance('a', 'abcdefgh', 2)).toBe(3);
    expect(distance('x'.repeat(256), 'y'.repeat(256), 3)).toBe(4);
  });
  it('counts code points, not UTF-16 units', () => {
    expect(distance('𝒳a', '𝒴a')).toBe(1);
  });
});

describe('closest type names', () => {
  const types = ['Report', 'Reports', 'Rapport', 'Customer', 'table', 'Repo'].map(typed);
  it('at most three, nearest first, then by name', () => {
    expect(closestTypeNames('raport', types).map((t) => t.name)).toEqual(['Rapport', 'Report', 'Reports']);
  });
  it('none when nothing is close (1 edit up to 3 code points, then a third of the name, 2 to 3 edits)', () => {
    expect(closestTypeNames('invoice', types)).toEqual([]);
    expect(closestTypeNames('tbl', types)).toEqual([]);
    expect(closestTypeNames('tabel', types).map((t) => t.name)).toEqual(['table']);
    expect(closestTypeNames('rpx', types)).toEqual([]);
    expect(closestTypeNames('repoo', types).map((t) => t.name)).toEqual(['Repo', 'Report']);
  });
  it('none for a name longer than SUGGESTED_NAME_MAX code points', () => {
    const long = `${'a'.repeat(SUGGESTED_NAME_MAX)}`;
    const near = [typed(`${long}b`), typed(`${long.slice(1)}x`)];
    expect(closestTypeNames(long.slice(1), near).map((t) => t.name)).toEqual([
      `${long.slice(1)}x`,
      `${long}b`,
    ]);
    expect(closestTypeNames(`${long}c`, near)).toEqual([]);
  });
  it('are said as a question, with guids when asked', () => {
    expect(didYouMean([])).toBe('');
    expect(didYouMean([{ name: 'A', guid: 'g' }])).toBe(' Did you mean "A"?');
    expect(didYouMean(['A', 'B', 'C'].map((name) => ({ name, guid: name })))).toBe(
      ' Did you mean "A", "B" or "C"?',
    );
    expect(didYouMean([{ name: 'A', guid: 'g' }], true)).toBe(' Did you mean "A" (guid g)?');
  });
});

describe('suggestions read one page of the tenant’s types', () => {
  it('the first page of the listing, at its largest size', async () => {
    const { ctx, pagesRead } = contextListing([typed('Report')]);
    expect(await suggestTypeNames(ctx, ' REPROT ')).toEqual([{ name: 'Report', guid: 'guid-of-Report' }]);
    expect(pagesRead).toEqual([`type_page:${SUGGESTION_TYPES_MAX}\u0000`]);
  });
  it('the bound is the one docs/api.md states', () => {
    const doc = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
    expect(doc).toContain(`at most ${SUGGESTION_TYPES_MAX} types`);
    expect(doc).toContain(`more than ${SUGGESTION_TYPES_MAX} types gets no suggestions`);
    expect(doc).toContain(`a name over ${SUGGESTED_NAME_MAX} characters gets none`);
  });
  it('none when the tenant has more types than that page holds', async () => {
    const { ctx } = contextListing([typed('Report')], true);
    expect(await suggestTypeNames(ctx, 'reprot')).toEqual([]);
  });
  it('none for a name no type could have or too long to be mistyped, without reading', async () => {
    const { ctx, pagesRead } = contextListing([typed('Report')]);
    expect(await suggestTypeNames(ctx, '   ')).toEqual([]);
    expect(await suggestTypeNames(ctx, 'r'.repeat(SUGGESTED_NAME_MAX + 1))).toEqual([]);
    expect(pagesRead).toEqual([]);
  });
  it('the refusal keeps its reason and status; a failed read leaves it as it was', async () => {
    const refusal = refuse('unknown_entity_type', 'No entity type has this name.');
    const suggested = await withTypeSuggestions(contextListing([typed('Report')]).ctx, refusal, 'reprot');
    expect([suggested.reason, suggested.status, suggested.message]).toEqual([
      'unknown_entity_type',
      404,
      'No entity type has this name. Did you mean "Report"?',
    ]);
    const failing = {
      ...contextListing([]).ctx,
      services: { model: { read: () => Promise.reject(new Error('down')) }, cursors: {} },
    } as unknown as RequestContext;
    expect(await withTypeSuggestions(failing, refusal, 'reprot')).toBe(refusal);
  });
});

describe('GraphQL field suggestions', () => {
  const yoga = createYoga<{ req?: { ctx?: unknown } }>({
    schema: createSchema({ typeDefs: 'type Query { name: String }', resolvers: {} }),
    plugins: [fieldSuggestionsPlugin()],
    logging: false,
  });
  const typo = async (serverContext: { req?: { ctx?: unknown } }) => {
    const res = await yoga.fetch(
      'http://x/graphql',
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ nmae }' }),
      },
      serverContext,
    );
    return ((await res.json()) as { errors: { message: string }[] }).errors[0]?.message;
  };
  it('are kept for a request whose token was verified', async () => {
    expect(await typo({ req: { ctx: {} } })).toContain('Did you mean "name"?');
  });
  it('are hidden from a request without one', async () => {
    for (const context of [{ req: {} }, {}]) {
      const message = await typo(context);
      expect(message).not.toContain('Did you mean');
      expect(message).toContain(SUGGESTION_HIDDEN);
    }
  });
});
