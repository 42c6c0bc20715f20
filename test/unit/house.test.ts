// House rules that a reader would otherwise have to check by hand: long files explained, modules that say what they
// are, and the layer check's rules held to failing on planted violations.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** The service, and the two client packages beside it (the generated typed documents excepted). */
const PACKAGES = ['src', 'cli/src', 'client/src'];
/** The tools: the benchmarks and the scripts (load test, fuzzer runner, token and schema scripts). */
const TOOLS = ['bench', 'scripts'];
const GENERATED = new Set([path.join(ROOT, 'client/src/generated.ts')]);

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return filesUnder(full);
    return name.endsWith('.ts') && !GENERATED.has(full) ? [full] : [];
  });
}
const sourceFiles = (dirs = PACKAGES) => dirs.flatMap((dir) => filesUnder(path.join(ROOT, dir)));

describe('src/, cli/src/, client/src/, bench/, scripts/', () => {
  it('no file over 300 lines without the reason in the comment at its top ("Over 300 lines: ...")', () => {
    const dirs = [...PACKAGES, ...TOOLS];
    const files = sourceFiles(dirs);
    expect(files.length).toBeGreaterThan(100);
    for (const dir of dirs) expect(files.some((f) => f.startsWith(path.join(ROOT, dir, '/')))).toBe(true);
    const unexplained = files.filter((file) => {
      const lines = readFileSync(file, 'utf8').split('\n');
      if (lines.length <= 301) return false;
      const header = lines.slice(
        0,
        lines.findIndex((l) => !l.startsWith('//')),
      );
      return !header.some((l) => /^\/\/ Over 300 lines: \S/.test(l));
    });
    expect(unexplained.map((f) => path.relative(ROOT, f))).toEqual([]);
  });

  it('npm run lint fails on a function over 100 lines in src/, and passes one of 100', () => {
    const planted = path.join(ROOT, 'src', `planted-${process.pid}.ts`);
    const lint = (body: number) => {
      const lines = Array.from({ length: body }, (_, i) => `  n += ${i};`);
      const text = [
        '// A planted function.',
        'export function planted(): number {',
        '  let n = 0;',
        ...lines,
      ];
      writeFileSync(planted, [...text, '  return n;', '}', ''].join('\n'));
      return spawnSync('npx', ['biome', 'lint', planted], { cwd: ROOT, encoding: 'utf8' });
    };
    try {
      const long = lint(99);
      expect(long.status).not.toBe(0);
      expect(long.stdout + long.stderr).toContain('noExcessiveLinesPerFunction');
      expect(lint(98).status).toBe(0);
    } finally {
      rmSync(planted, { force: true });
    }
  });

  it('no file reaches into a package by its file layout (only by the names the package exports)', () => {
    const internal = /['"](?:@[\w.-]+\/)?[a-z][\w.-]*\/(?:cjs|esm|dist|lib|build|src)\/[^'"]*['"]/;
    const reaching = sourceFiles([...PACKAGES, ...TOOLS]).filter((file) => {
      const text = readFileSync(file, 'utf8');
      return (
        internal.test(text) || /require\.resolve\(|node_modules\//.test(text.replace(/^\s*\/\/.*$/gm, ''))
      );
    });
    expect(reaching.map((f) => path.relative(ROOT, f))).toEqual([]);
  });

  it('every module says what it is responsible for in its first line', () => {
    const silent = sourceFiles([...PACKAGES, ...TOOLS]).filter(
      (file) => !/^\/\/ \S/.test(readFileSync(file, 'utf8')),
    );
    expect(silent.map((f) => path.relative(ROOT, f))).toEqual([]);
  });
});

describe('the layer check (npm run check:deps) over the whole repository', () => {
  /**
   * The lint's rules run over a tree of planted files in a folder of their own, laid out like the repository; the
   * violations it reports, by rule. The real tree is not touched.
   */
  function violations(files: Record<string, string>): string[] {
    const dir = mkdtempSync(path.join(tmpdir(), 'planted-'));
    try {
      writeFileSync(
        path.join(dir, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true },
        }),
      );
      for (const [name, text] of Object.entries(files)) {
        mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
        writeFileSync(path.join(dir, name), text);
      }
      const roots = [...new Set(Object.keys(files).map((f) => f.split('/')[0] as string))];
      const run = spawnSync(
        path.join(ROOT, 'node_modules/.bin/depcruise'),
        [...roots, '--config', path.join(ROOT, '.dependency-cruiser.cjs'), '--output-type', 'json'],
        { cwd: dir, encoding: 'utf8' },
      );
      const report = JSON.parse(run.stdout) as { summary: { violations: { rule: { name: string } }[] } };
      return report.summary.violations.map((v) => v.rule.name).sort();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  const DB = {
    'src/db/things.ts':
      '// Planted.\nexport interface Thing { id: string }\nexport const readThing = (): Thing => ({ id: "x" });\n',
  };

  it('a door may name a type of db/, and the tools may use bench/ from scripts/: no violation', () => {
    expect(
      violations({
        ...DB,
        'src/rest/door.ts':
          "// Planted.\nimport type { Thing } from '../db/things.js';\nexport const id = (t: Thing) => t.id;\n",
        'bench/lib.ts': '// Planted.\nexport const sleep = () => 0;\n',
        'scripts/run.ts':
          "// Planted.\nimport { sleep } from '../bench/lib.js';\nexport const go = () => sleep();\n",
      }),
    ).toEqual([]);
  });

  it('fails on a door calling a function of db/ (REST, GraphQL, HTTP, a request hook of app/)', () => {
    const calling = (from: string, up: string) => ({
      [from]: `// Planted.\nimport { readThing } from '${up}db/things.js';\nexport const go = () => readThing();\n`,
    });
    expect(violations({ ...DB, ...calling('src/rest/door.ts', '../') })).toEqual(['doors-call-no-db']);
    expect(violations({ ...DB, ...calling('src/schema/field.ts', '../') })).toEqual(['doors-call-no-db']);
    expect(violations({ ...DB, ...calling('src/http/page.ts', '../') })).toEqual(['doors-call-no-db']);
    expect(violations({ ...DB, ...calling('src/app/http-hooks.ts', '../') })).toEqual(['doors-call-no-db']);
    // the composition root builds the executor: allowed
    expect(violations({ ...DB, ...calling('src/app/services.ts', '../') })).toEqual([]);
  });

  it('fails on an import circle in the tools, and on an arrow back up from bench/ to scripts/', () => {
    expect(
      violations({
        'scripts/a.ts': "// Planted.\nimport { b } from './b.js';\nexport const a = () => b();\n",
        'scripts/b.ts':
          "// Planted.\nimport type { a } from './a.js';\nexport const b = (): ReturnType<typeof a> | 1 => 1;\n",
      }),
    ).toEqual(['no-circular']);
    expect(
      violations({
        'scripts/throwaway.ts': '// Planted.\nexport const start = () => 1;\n',
        'bench/options.ts':
          "// Planted.\nimport { start } from '../scripts/throwaway.js';\nexport const go = () => start();\n",
      }),
    ).toEqual(['bench-below-scripts']);
    expect(
      violations({
        'bench/lib.ts': '// Planted.\nexport const sleep = () => 0;\n',
        'src/server.ts':
          "// Planted.\nimport { sleep } from '../bench/lib.js';\nexport const go = () => sleep();\n",
      }),
    ).toEqual(['nothing-shipped-knows-the-tools']);
  });

  it('npm run check:deps cruises src/, the clients, bench/ and scripts/', () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    expect(pkg.scripts['check:deps'].split(' ')).toEqual(
      expect.arrayContaining(['src', 'cli/src', 'client/src', 'bench', 'scripts', '--validate']),
    );
    expect(pkg.scripts.lint).toContain('check:deps');
  });
});
