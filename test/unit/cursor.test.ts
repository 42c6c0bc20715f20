import { describe, expect, it } from 'vitest';
import { createCursorCodec } from '../../src/services/cursor.js';

const codec = createCursorCodec('k'.repeat(40));
const invalid = (f: () => unknown) =>
  expect(f).toThrowError(expect.objectContaining({ reason: 'invalid_cursor' }));

describe('cursor codec', () => {
  it('round-trips a position for the tenant it was issued to', () => {
    const c = codec.encode('t1', 'orders');
    expect(codec.decode('t1', c)).toBe('orders');
    expect(c).not.toContain('t1');
  });
  it('refuses the cursor for another tenant, with another secret, or altered in any byte', () => {
    const c = codec.encode('t1', 'orders');
    invalid(() => codec.decode('t2', c));
    invalid(() => createCursorCodec('z'.repeat(40)).decode('t1', c));
    for (let i = 0; i < c.length; i++) {
      const flipped = c.slice(0, i) + (c[i] === 'A' ? 'B' : 'A') + c.slice(i + 1);
      if (flipped !== c) invalid(() => codec.decode('t1', flipped));
    }
  });
  it('refuses garbage and oversize input', () => {
    for (const c of ['', '.', 'a.b', 'a.b.c', 'x'.repeat(5000)]) invalid(() => codec.decode('t1', c));
  });
});
