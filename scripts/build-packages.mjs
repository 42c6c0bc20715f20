// Builds the two packages users install (npm run build:packages), each into its own dist/:
//   client/: the typed GraphQL client, compiled by tsc (JavaScript and type declarations, ES modules);
//   cli/:    the metamodel command, bundled by esbuild with the parts of the service it reads (the wire contract,
//            development tokens); its npm dependencies stay imports, declared in cli/package.json.
// With --pack, also packs both (npm pack) into .data/packages/ and prints the tarballs' paths.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const pkgOf = (dir) => JSON.parse(readFileSync(path.join(ROOT, dir, 'package.json'), 'utf8'));

// ——— client ———
rmSync(path.join(ROOT, 'client/dist'), { recursive: true, force: true });
execFileSync(
  process.execPath,
  [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'client/tsconfig.build.json'],
  {
    cwd: ROOT,
    stdio: 'inherit',
  },
);

// ——— cli ———
rmSync(path.join(ROOT, 'cli/dist'), { recursive: true, force: true });
const cli = pkgOf('cli');
const result = await build({
  entryPoints: [path.join(ROOT, 'cli/src/main.ts')],
  outfile: path.join(ROOT, 'cli/dist/main.js'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: `node${cli.engines.node.replace(/^>=/, '').split('.')[0]}`,
  // npm packages stay imports (declared as the package's dependencies); the service's own modules are bundled.
  packages: 'external',
  metafile: true,
  legalComments: 'none',
  banner: { js: '// @metamodel/cli, built from cli/src by scripts/build-packages.mjs. Do not edit.' },
});
// Every package the bundle imports is a dependency of the package (and none is missing from it).
const imported = new Set(
  Object.values(result.metafile.outputs)
    .flatMap((o) => o.imports)
    .filter((i) => i.external && !i.path.startsWith('node:'))
    .map((i) => (i.path.startsWith('@') ? i.path.split('/').slice(0, 2).join('/') : i.path.split('/')[0])),
);
const missing = [...imported].filter((name) => !(name in (cli.dependencies ?? {})));
if (missing.length > 0) {
  console.error(
    `build-packages: cli/dist imports ${missing.join(', ')}, not in cli/package.json dependencies`,
  );
  process.exit(1);
}
writeFileSync(
  path.join(ROOT, 'cli/dist/main.d.ts'),
  `// @metamodel/cli: the command's entry points (the metamodel command runs runCli).
export interface Io {
  out(text: string): void;
  err(text: string): void;
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  env: Record<string, string | undefined>;
  signal?: AbortSignal;
}
/** Runs the command line \`argv\` (without node and the script), answering its exit status. */
export function main(argv: string[], io?: Io): Promise<number>;
/** Runs this process's arguments and sets its exit code. */
export function runCli(): Promise<void>;
`,
);
console.log(
  `build-packages: client/dist (tsc), cli/dist/main.js (esbuild; imports ${[...imported].sort().join(', ')})`,
);

if (process.argv.includes('--pack')) {
  const out = path.join(ROOT, '.data/packages');
  mkdirSync(out, { recursive: true });
  for (const dir of ['client', 'cli']) {
    const name = execFileSync('npm', ['pack', '--silent', '--pack-destination', out], {
      cwd: path.join(ROOT, dir),
      encoding: 'utf8',
    })
      .trim()
      .split('\n')
      .at(-1);
    console.log(path.join(out, name));
  }
}
