import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REASONS, refuse, statusOf } from '../../src/errors.js';

/** The reasons table of docs/api.md: each row's reasons (a row may name several) and its HTTP column. */
function documentedRows() {
  const doc = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
  const table = /### Refusal reasons\n\n([\s\S]*?)\n\n/.exec(doc)?.[1] ?? '';
  return table
    .split('\n')
    .slice(2)
    .map((line) => line.split('|').map((cell) => cell.trim()))
    .map(([, reasons = '', http = '']) => ({
      reasons: [...reasons.matchAll(/`(\w+)`/g)].map((m) => m[1]!),
      http,
    }));
}

describe('refusal reasons: one table (errors.ts REFUSALS) read by refuse(), the OpenAPI document and docs/api.md', () => {
  it('a refusal takes its status from the table', () => {
    expect(refuse('unknown_entity_type', 'm').status).toBe(404);
    expect(refuse('attribute_def_already_exists', 'm').status).toBe(409);
    expect(refuse('idempotency_key_reused', 'm').status).toBe(422);
    expect(refuse('empty_value', 'm').status).toBe(400);
    expect(refuse.storageBusy()).toMatchObject({ status: 503, retryAfterSeconds: 1 });
  });

  it('docs/api.md lists every reason once, and no other', () => {
    const listed = documentedRows().flatMap((row) => row.reasons);
    expect(listed.length).toBeGreaterThan(60);
    expect(new Set(listed).size).toBe(listed.length);
    expect([...listed].sort()).toEqual([...REASONS].sort());
  });

  it("docs/api.md's status of each reason is the one it is answered with (GraphQL: inside a 200, REST status 400)", () => {
    for (const row of documentedRows()) {
      for (const reason of row.reasons) {
        const expected = row.http === 'GraphQL' ? 400 : Number(row.http);
        expect([reason, statusOf(reason as (typeof REASONS)[number])]).toEqual([reason, expected]);
      }
    }
  });
});
