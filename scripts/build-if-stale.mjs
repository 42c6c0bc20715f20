// `npm start` builds only when it has to (issue #17): dist/ is rebuilt when it is missing or when what it is built
// from (src/, the tsconfig files, package.json and its lock) differs from what the last build was made of, compared
// by content (a SHA-256 over paths and bytes, kept in dist/.build-inputs), not by modification times, which a
// checkout or a copy rewrites. A restart after a crash then spends its time in Neo4j's recovery, not in tsc.
//   node scripts/build-if-stale.mjs            build if stale
//   node scripts/build-if-stale.mjs --always   build (npm run build)
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const INPUT_FILES = ['tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json'];
const INPUT_DIRS = ['src'];
export const STAMP = join('dist', '.build-inputs');
const ENTRY = join('dist', 'server.js');

function filesUnder(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

/** The digest of everything the build is made of, under `root`. */
export function inputsDigest(root) {
  const hash = createHash('sha256');
  const files = [
    ...INPUT_FILES.map((f) => join(root, f)).filter((f) => existsSync(f)),
    ...INPUT_DIRS.flatMap((d) => (existsSync(join(root, d)) ? filesUnder(join(root, d)) : [])),
  ].sort();
  for (const file of files) {
    hash.update(relative(root, file).split('\\').join('/'));
    hash.update('\0');
    hash.update(readFileSync(file));
    hash.update('\0');
  }
  return hash.digest('hex');
}

/** Whether dist/ under `root` was built from exactly the current inputs. */
export function isCurrent(root) {
  const stamp = join(root, STAMP);
  if (!existsSync(join(root, ENTRY)) || !existsSync(stamp)) return false;
  return readFileSync(stamp, 'utf8').trim() === inputsDigest(root);
}

/**
 * Builds dist/ afresh (removed first, so a deleted source leaves no stale module) unless it is current or `always`;
 * `compile` runs the compiler (tsc by default) and returns its exit status. Returns whether it built.
 */
export function buildIfStale(root, { always = false, compile = defaultCompile } = {}) {
  if (!always && isCurrent(root)) return false;
  const digest = inputsDigest(root);
  rmSync(join(root, 'dist'), { recursive: true, force: true });
  const status = compile(root);
  if (status !== 0) throw new Error(`the build failed (tsc exited with ${status})`);
  writeFileSync(join(root, STAMP), `${digest}\n`);
  return true;
}

function defaultCompile(root) {
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  return spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' })
    .status;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(fileURLToPath(import.meta.url), '..', '..');
  const started = Date.now();
  try {
    const built = buildIfStale(root, { always: process.argv.includes('--always') });
    if (built)
      process.stderr.write(`build: dist/ built in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  } catch (error) {
    process.stderr.write(`build: ${error.message}\n`);
    process.exit(1);
  }
}
