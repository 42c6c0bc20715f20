// Neo4j-Bookmark header values: signed and bound to the tenant, and bounded (at most 16 bookmarks of at most 512
// characters) — at, just under and just over each bound.
import { describe, expect, it } from 'vitest';
import { createBookmarkCodec } from '../../src/services/bookmarks.js';

const codec = createBookmarkCodec('unit-secret-that-is-long-enough-0123456789');
const refused = (f: () => unknown) =>
  expect(f).toThrow(expect.objectContaining({ reason: 'invalid_bookmark' }));

describe('Neo4j-Bookmark values', () => {
  it('round-trip for the tenant they were issued to; none without a header', () => {
    const value = codec.encode('acme', ['FB:abc']);
    expect(codec.decode('acme', value)).toEqual(['FB:abc']);
    expect(codec.decode('acme', undefined)).toEqual([]);
    expect(codec.decode('acme', '')).toEqual([]);
  });

  it('are refused for another tenant, altered, forged, or sent twice', () => {
    const value = codec.encode('acme', ['FB:abc']);
    refused(() => codec.decode('other', value));
    refused(() => codec.decode('acme', `${value}x`));
    refused(() => codec.decode('acme', 'FB:abc'));
    refused(() => codec.decode('acme', [value, value]));
    refused(() => createBookmarkCodec('another-secret-that-is-long-enough-01234').decode('acme', value));
  });

  it('carry at most 16 bookmarks', () => {
    const list = (n: number) => Array.from({ length: n }, (_, i) => `FB:${i}`);
    expect(codec.decode('acme', codec.encode('acme', list(15)))).toHaveLength(15);
    expect(codec.decode('acme', codec.encode('acme', list(16)))).toHaveLength(16);
    refused(() => codec.decode('acme', codec.encode('acme', list(17))));
  });

  it('carry bookmarks of 1 to 512 characters', () => {
    for (const n of [1, 511, 512]) {
      expect(codec.decode('acme', codec.encode('acme', ['x'.repeat(n)]))).toEqual(['x'.repeat(n)]);
    }
    refused(() => codec.decode('acme', codec.encode('acme', ['x'.repeat(513)])));
    refused(() => codec.decode('acme', codec.encode('acme', [''])));
  });
});
