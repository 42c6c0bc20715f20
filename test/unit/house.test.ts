// House rules that a reader would otherwise have to check by hand (issue #15).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** The service, and the two client packages beside it (the generated typed documents excepted). */
const PACKAGES = ['src', 'cli/src', 'client/src'];
const GENERATED = new Set([path.join(ROOT, 'client/src/generated.ts')]);

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return filesUnder(full);
    return name.endsWith('.ts') && !GENERATED.has(full) ? [full] : [];
  });
}
const sourceFiles = () => PACKAGES.flatMap((dir) => filesUnder(path.join(ROOT, dir)));

describe('src/, cli/src/, client/src/', () => {
  it('no file over 300 lines without the reason at its top ("Over 300 lines: ...")', () => {
    const files = sourceFiles();
    expect(files.length).toBeGreaterThan(60);
    for (const dir of PACKAGES) expect(files.some((f) => f.startsWith(path.join(ROOT, dir)))).toBe(true);
    const unexplained = files.filter((file) => {
      const lines = readFileSync(file, 'utf8').split('\n');
      if (lines.length <= 301) return false;
      const top = lines.slice(0, 8).join('\n');
      return !/^\/\/ Over 300 lines: \S/m.test(top);
    });
    expect(unexplained.map((f) => path.relative(ROOT, f))).toEqual([]);
  });

  it('every module says what it is responsible for in its first line', () => {
    const silent = sourceFiles().filter((file) => !/^\/\/ \S/.test(readFileSync(file, 'utf8')));
    expect(silent.map((f) => path.relative(ROOT, f))).toEqual([]);
  });
});
