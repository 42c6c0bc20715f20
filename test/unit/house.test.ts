// House rules that a reader would otherwise have to check by hand (issue #15).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return name.endsWith('.ts') ? [full] : [];
  });
}

describe('src/', () => {
  it('no file over 300 lines without the reason at its top ("Over 300 lines: ...")', () => {
    const files = sourceFiles(SRC);
    expect(files.length).toBeGreaterThan(50);
    const unexplained = files.filter((file) => {
      const lines = readFileSync(file, 'utf8').split('\n');
      if (lines.length <= 301) return false;
      const top = lines.slice(0, 8).join('\n');
      return !/^\/\/ Over 300 lines: \S/m.test(top);
    });
    expect(unexplained.map((f) => path.relative(SRC, f))).toEqual([]);
  });

  it('every module says what it is responsible for in its first line', () => {
    const silent = sourceFiles(SRC).filter((file) => !/^\/\/ \S/.test(readFileSync(file, 'utf8')));
    expect(silent.map((f) => path.relative(SRC, f))).toEqual([]);
  });
});
