// The Idempotency-Key header's bounds (src/http/idempotency-key.ts): 1 to 255 visible ASCII characters, bare or as a
// structured-field string, at, just under and just over the limit; and which requests take one.
import { describe, expect, it } from 'vitest';
import { IDEMPOTENCY_KEY_MAX, takesIdempotencyKey } from '../../src/contract/write-headers.js';
import { fingerprintOf, parseIdempotencyKey } from '../../src/http/idempotency-key.js';

const refused = (value: string | string[]) => {
  try {
    parseIdempotencyKey(value);
    return undefined;
  } catch (e) {
    return (e as { reason?: string }).reason;
  }
};

describe('the Idempotency-Key header', () => {
  it(`bare: ${IDEMPOTENCY_KEY_MAX - 1} and ${IDEMPOTENCY_KEY_MAX} characters taken, ${IDEMPOTENCY_KEY_MAX + 1} refused`, () => {
    for (const n of [1, IDEMPOTENCY_KEY_MAX - 1, IDEMPOTENCY_KEY_MAX])
      expect(parseIdempotencyKey('k'.repeat(n))).toBe('k'.repeat(n));
    expect(refused('k'.repeat(IDEMPOTENCY_KEY_MAX + 1))).toBe('invalid_idempotency_key');
  });

  it('quoted: the same bounds inside the quotes, and the quotes are not part of the key', () => {
    for (const n of [1, IDEMPOTENCY_KEY_MAX - 1, IDEMPOTENCY_KEY_MAX]) {
      expect(parseIdempotencyKey(`"${'k'.repeat(n)}"`)).toBe('k'.repeat(n));
    }
    expect(refused(`"${'k'.repeat(IDEMPOTENCY_KEY_MAX + 1)}"`)).toBe('invalid_idempotency_key');
    expect(parseIdempotencyKey('"a b"')).toBe('a b');
    expect(parseIdempotencyKey(' abc ')).toBe(parseIdempotencyKey('"abc"'));
  });

  it('refuses empty, unquoted spaces, escapes, non-ASCII, control characters and several headers', () => {
    for (const value of ['', '""', 'a b', '"a\\"b"', 'a"b', '"open', 'caf\u00e9', 'a\u0001b', ['a', 'b']]) {
      expect([value, refused(value)]).toEqual([value, 'invalid_idempotency_key']);
    }
    expect(parseIdempotencyKey(undefined)).toBeUndefined();
  });

  it('is taken by the writes of tenants only; the fingerprint differs with method, path or body', () => {
    expect(
      ['POST', 'PATCH', 'DELETE', 'GET', 'HEAD'].map((m) => takesIdempotencyKey(m, '/entities')),
    ).toEqual([true, true, true, false, false]);
    expect(takesIdempotencyKey('POST', '/admin/jobs/purge')).toBe(false);
    const base = fingerprintOf('POST', '/entities', { name: 'a' });
    expect(fingerprintOf('POST', '/entities', { name: 'a' })).toBe(base);
    expect(
      new Set([
        base,
        fingerprintOf('PATCH', '/entities', { name: 'a' }),
        fingerprintOf('POST', '/entities?x=1', { name: 'a' }),
        fingerprintOf('POST', '/entities', { name: 'b' }),
        fingerprintOf('POST', '/entities', undefined),
      ]).size,
    ).toBe(5);
  });
});
