// `npm start` builds only when dist/ is missing or was built from other sources (scripts/build-if-stale.mjs), so
// that a restart after a crash does not spend its time in tsc. The compiler is replaced by a stand-in that writes
// dist/server.js and counts its runs.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ESM script without type declarations
import { buildIfStale, isCurrent } from '../../scripts/build-if-stale.mjs';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

function project() {
  const root = mkdtempSync(join(tmpdir(), 'build-if-stale-'));
  roots.push(root);
  mkdirSync(join(root, 'src', 'db'), { recursive: true });
  writeFileSync(join(root, 'src', 'server.ts'), 'export {};\n');
  writeFileSync(join(root, 'src', 'db', 'driver.ts'), 'export const a = 1;\n');
  writeFileSync(join(root, 'tsconfig.json'), '{}\n');
  writeFileSync(join(root, 'package.json'), '{"name":"x"}\n');
  let runs = 0;
  const compile = (at: string) => {
    runs += 1;
    mkdirSync(join(at, 'dist'), { recursive: true });
    writeFileSync(join(at, 'dist', 'server.js'), `// build ${runs}\n`);
    return 0;
  };
  const build = (always = false): boolean => buildIfStale(root, { always, compile });
  return { root, build, runs: () => runs };
}

describe('npm start: build only when stale', () => {
  it('builds when dist/ is missing, then not again while the sources are the same', () => {
    const p = project();
    expect(isCurrent(p.root)).toBe(false);
    expect(p.build()).toBe(true);
    expect(isCurrent(p.root)).toBe(true);
    expect(p.build()).toBe(false);
    expect(p.runs()).toBe(1);
  });

  it('compares contents, not times: touching a file does not rebuild, changing one byte does', () => {
    const p = project();
    p.build();
    const file = join(p.root, 'src', 'db', 'driver.ts');
    const later = new Date(Date.now() + 60_000);
    utimesSync(file, later, later);
    expect(p.build()).toBe(false);
    writeFileSync(file, 'export const a = 2;\n');
    expect(p.build()).toBe(true);
    expect(p.runs()).toBe(2);
  });

  it('rebuilds on a new or deleted source, a changed tsconfig, or a missing entry point; --always always', () => {
    const p = project();
    p.build();
    writeFileSync(join(p.root, 'src', 'new.ts'), 'export {};\n');
    expect(p.build()).toBe(true);
    rmSync(join(p.root, 'src', 'new.ts'));
    expect(p.build()).toBe(true);
    writeFileSync(join(p.root, 'tsconfig.json'), '{"compilerOptions":{}}\n');
    expect(p.build()).toBe(true);
    rmSync(join(p.root, 'dist', 'server.js'));
    expect(p.build()).toBe(true);
    expect(p.build(true)).toBe(true);
    expect(p.runs()).toBe(6);
  });

  it('starts from an empty dist/ (no module of a deleted source survives) and records nothing when tsc fails', () => {
    const p = project();
    p.build();
    writeFileSync(join(p.root, 'dist', 'gone.js'), '// from a deleted source\n');
    writeFileSync(join(p.root, 'src', 'server.ts'), 'export const changed = true;\n');
    p.build();
    expect(() => readFileSync(join(p.root, 'dist', 'gone.js'))).toThrow();
    writeFileSync(join(p.root, 'src', 'server.ts'), 'broken\n');
    expect(() => buildIfStale(p.root, { compile: () => 2 })).toThrow(/tsc exited with 2/);
    expect(isCurrent(p.root)).toBe(false);
  });
});
