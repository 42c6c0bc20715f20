// The engine cache's memory bounds: entries and bytes, least recently used out first, oversized entries not kept.
import { describe, expect, it } from 'vitest';
import { definitionsBytes, EngineCache, type TypeDefinitions } from '../../src/cache/engine-cache.js';
import type { StoredAttribute } from '../../src/db/attributes.js';

const definitions = (version: string, enumeration = 0): TypeDefinitions => ({
  version,
  creatable: null,
  nameKey: 't',
  attributes: [
    {
      name: 'a',
      name_key: 'a',
      allowed_values_json: enumeration > 0 ? JSON.stringify(['x'.repeat(enumeration)]) : null,
      default_value_json: null,
    } as StoredAttribute,
  ],
});

describe('EngineCache', () => {
  it('evicts the least recently used entries to stay within its byte budget', () => {
    const one = definitionsBytes(definitions('v', 1000));
    const cache = new EngineCache(100, one * 4);
    for (const t of ['a', 'b', 'c', 'd']) cache.set('tenant', t, definitions('v', 1000));
    expect(cache.get('tenant', 'a', 'v')).toBeDefined(); // a is now the most recently used
    cache.set('tenant', 'e', definitions('v', 1000));
    expect(cache.get('tenant', 'b', 'v')).toBeUndefined();
    expect(cache.get('tenant', 'a', 'v')).toBeDefined();
    expect(cache.stats()).toMatchObject({ entries: 4, bytes: one * 4, evictions: 1 });
  });

  it('does not keep an entry larger than a quarter of its budget, and counts bytes back on invalidation', () => {
    const cache = new EngineCache(100, 10_000);
    cache.set('tenant', 'big', definitions('v', 5_000));
    expect(cache.stats()).toMatchObject({ entries: 0, bytes: 0 });
    cache.set('tenant', 'small', definitions('v', 10));
    expect(cache.stats().bytes).toBeGreaterThan(0);
    cache.invalidate('tenant', 'small');
    expect(cache.stats()).toMatchObject({ entries: 0, bytes: 0, invalidations: 1 });
  });

  it('is keyed by tenant and type, and an entry of another version is a miss', () => {
    const cache = new EngineCache();
    cache.set('t1', 'type', definitions('v1'));
    expect(cache.get('t2', 'type', 'v1')).toBeUndefined();
    expect(cache.get('t1', 'type', 'v2')).toBeUndefined();
    expect(cache.get('t1', 'type', 'v1')?.version).toBe('v1');
  });
});
