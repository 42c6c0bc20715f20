import { describe, expect, it } from 'vitest';
import { type AppError, refuse } from '../../src/errors.js';
import { cleanName, MAX_NAME_LENGTH, nameKey, typeGuid } from '../../src/model/names.js';

const reason = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return (e as AppError).reason;
  }
  return 'none';
};

describe('cleanName', () => {
  it('trims surrounding whitespace and keeps inner spacing and case', () => {
    expect(cleanName('  Data  Product\t')).toBe('Data  Product');
  });
  it('composes to NFC so visually equal names compare equal', () => {
    expect(cleanName('E\u0301')).toBe('\u00c9');
  });
  it('refuses empty names with empty_value and over-long names with name_too_long', () => {
    expect(reason(() => cleanName(' \n\t '))).toBe('empty_value');
    expect(reason(() => cleanName(''))).toBe('empty_value');
    expect(cleanName('😀'.repeat(MAX_NAME_LENGTH))).toHaveLength(MAX_NAME_LENGTH * 2); // counted in code points
    expect(reason(() => cleanName('a'.repeat(MAX_NAME_LENGTH + 1)))).toBe('name_too_long');
  });
});

describe('invisible and direction-changing characters', () => {
  it('a name holding one is refused (invalid_field), saying which and where; so no look-alike of a name can be made', () => {
    for (const hidden of [
      '\u200b',
      '\u200c',
      '\u200d',
      '\u202e',
      '\u00ad',
      '\u2066',
      '\ufe0f',
      '\u{e0041}',
      // format characters that are not default-ignorable, and the blank Braille pattern
      '\u0600',
      '\u06dd',
      '\u0890',
      '\u{110bd}',
      '\u2800',
    ]) {
      for (const name of [`table${hidden}`, `ta${hidden}ble`]) {
        let reason: string | undefined;
        let message = '';
        try {
          cleanName(name);
        } catch (e) {
          reason = (e as { reason?: string }).reason;
          message = (e as Error).message;
        }
        expect([JSON.stringify(name), reason]).toEqual([JSON.stringify(name), 'invalid_field']);
        expect(message).toContain(
          `U+${(hidden.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')}`,
        );
      }
    }
    // visible letters of other scripts, combining accents and a byte-order mark at an edge (trimmed) are names
    expect(cleanName('Café Ünïcödé')).toBe('Café Ünïcödé');
    expect(cleanName('e\u0301t\u00e9')).toBe('\u00e9t\u00e9');
    expect(cleanName('\ufeffOrders')).toBe('Orders');
    // a look-alike made of visible characters of another script or width is another name (as documented)
    expect(cleanName('t\u0430ble')).toBe('t\u0430ble');
    expect(cleanName('\uff54\uff41\uff42\uff4c\uff45')).toBe('\uff54\uff41\uff42\uff4c\uff45');
  });
});

describe('nameKey', () => {
  it('ignores letter case, including full case folds', () => {
    expect(nameKey('Straße')).toBe(nameKey('STRASSE'));
    expect(nameKey('ΟΔΟΣ')).toBe(nameKey('οδος'));
    expect(nameKey('Table')).toBe('table');
    // Locale-independent: the dotted capital İ keeps its dot (i + U+0307), so it is not the plain i of ISTANBUL.
    expect(nameKey('ISTANBUL')).toBe(nameKey('istanbul'));
    expect(nameKey('İstanbul')).toBe('i\u0307stanbul');
    expect(nameKey('İstanbul')).not.toBe(nameKey('istanbul'));
  });
});

describe('typeGuid', () => {
  it('is a deterministic UUIDv5 of (tenant, key), different across tenants', () => {
    expect(typeGuid('a', 'x')).toBe(typeGuid('a', 'x'));
    expect(typeGuid('a', 'x')).not.toBe(typeGuid('b', 'x'));
    expect(typeGuid('a', 'x')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5/);
    // no ambiguity from separators inside tenant ids or names
    expect(typeGuid('a b', 'c')).not.toBe(typeGuid('a', 'b c'));
  });
});

describe('AppError', () => {
  it('carries reason and status', () => {
    const e = refuse('empty_value', 'm');
    expect([e.reason, e.status, e.message]).toEqual(['empty_value', 400, 'm']);
  });
});
