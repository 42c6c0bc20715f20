// The two packages users install, as they would: built and packed (npm pack), installed from the tarballs into an
// empty folder outside the checkout, then run under plain node against a service: the metamodel command, and a
// TypeScript script using the typed client, compiled with tsc and run as JavaScript.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { itServed } from '../fixtures.js';
import { newTenant, TEST_SECRET, tokenFor } from '../helpers.js';

const run = promisify(execFile);
const ROOT = path.join(import.meta.dirname, '../..');
const it = itServed();

let folder = '';
let tarballs: string[] = [];

/** Compiles a script of the user's folder with tsc, as a TypeScript project using the package would. */
const tsc = (file: string) =>
  run(
    process.execPath,
    [
      path.join(ROOT, 'node_modules/typescript/bin/tsc'),
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--target',
      'es2022',
      '--strict',
      '--skipLibCheck',
      '--types',
      'node',
      '--typeRoots',
      path.join(ROOT, 'node_modules/@types'),
      file,
    ],
    { cwd: folder },
  );

beforeAll(async () => {
  const built = await run(process.execPath, [path.join(ROOT, 'scripts/build-packages.mjs'), '--pack'], {
    cwd: ROOT,
  });
  tarballs = built.stdout
    .trim()
    .split('\n')
    .filter((line) => line.endsWith('.tgz'));
  folder = mkdtempSync(path.join(tmpdir(), 'metamodel-user-'));
  writeFileSync(
    path.join(folder, 'package.json'),
    JSON.stringify({ name: 'a-user', private: true, type: 'module' }),
  );
  // npm runs on the Node.js this suite runs on (the PATH of npm scripts leads to it first).
  await run('npm', ['install', '--no-audit', '--no-fund', ...tarballs], { cwd: folder });
}, 240_000);

afterAll(() => {
  if (folder) rmSync(folder, { recursive: true, force: true });
});

describe('the packages, installed from their tarballs into an empty folder', () => {
  it('are two tarballs of built JavaScript with type declarations, no TypeScript sources', async () => {
    expect(tarballs.map((t) => path.basename(t)).sort()).toEqual([
      'metamodel-cli-0.1.0.tgz',
      'metamodel-client-0.1.0.tgz',
    ]);
    for (const tarball of tarballs) {
      const { stdout } = await run('tar', ['-tzf', tarball]);
      const files = stdout.trim().split('\n');
      expect(files.filter((f) => /\.ts$/.test(f) && !f.endsWith('.d.ts'))).toEqual([]);
      expect(files.some((f) => f.endsWith('.d.ts'))).toBe(true);
    }
    const installed = readdirSync(path.join(folder, 'node_modules/@metamodel')).sort();
    expect(installed).toEqual(['cli', 'client']);
  });

  it('the metamodel command runs under plain node, against the service, with no TypeScript at hand', async ({
    world,
  }) => {
    const tenant = newTenant('packed');
    const env = {
      ...process.env,
      METAMODEL_URL: world.url,
      METAMODEL_TOKEN: await tokenFor(tenant),
      NODE_OPTIONS: '',
    };
    const bin = path.join(folder, 'node_modules/.bin/metamodel');
    const created = await run(process.execPath, [bin, 'types', 'create', 'Packed Type'], {
      cwd: folder,
      env,
    });
    expect(created.stdout).toMatch(/^Created type "Packed Type" \(/);
    const listed = await run(process.execPath, [bin, 'types', 'list', '--json'], { cwd: folder, env });
    expect(JSON.parse(listed.stdout).entity_types.map((t: { name: string }) => t.name)).toContain(
      'Packed Type',
    );
    // token: with the service's secret given it mints one the service accepts; without it, outside a checkout, no
    const minted = await run(process.execPath, [bin, 'token', '--tenant', tenant], {
      cwd: folder,
      env: { ...env, AUTH_JWT_SECRET: TEST_SECRET },
    });
    expect(minted.stderr).toBe('Signed with AUTH_JWT_SECRET.\n');
    const again = await run(process.execPath, [bin, 'types', 'list'], {
      cwd: folder,
      env: { ...env, METAMODEL_TOKEN: minted.stdout.trim() },
    });
    expect(again.stdout).toContain('Packed Type');
    const refused = await run(process.execPath, [bin, 'token', '--tenant', tenant], {
      cwd: folder,
      env,
    }).catch((e: { code: number; stderr: string }) => e);
    expect((refused as { code: number }).code).toBe(2);
  }, 60_000);

  it('a TypeScript script using the typed client compiles with tsc and runs as JavaScript under plain node', async ({
    world,
  }) => {
    const script = `import { createMetamodelClient, MetamodelGraphQLError } from '@metamodel/client';

const client = createMetamodelClient({ url: process.argv[2] ?? '', token: process.argv[3] ?? '' });
const { entityType, created } = await client.createEntityType('Client Type');
const { attribute } = await client.declareAttribute(entityType.guid, {
  name: 'tier',
  valueType: 'string',
  cardinality: 'single',
  allowedValues: ['gold', 'silver'],
});
let reason: string | undefined;
try {
  await client.declareAttribute(entityType.guid, { name: 'tier', valueType: 'string', cardinality: 'single' });
} catch (error) {
  if (error instanceof MetamodelGraphQLError) reason = error.reason;
}
const names: string[] = [];
for await (const type of client.allEntityTypes(200)) names.push(type.name);
console.log(JSON.stringify({ created, attribute: attribute.name, reason, listed: names.includes('Client Type') }));
`;
    writeFileSync(path.join(folder, 'use-client.ts'), script);
    await tsc('use-client.ts');
    const { stdout } = await run(
      process.execPath,
      ['use-client.js', world.url, await tokenFor(newTenant('client'))],
      { cwd: folder, env: { ...process.env, NODE_OPTIONS: '' } },
    );
    expect(JSON.parse(stdout)).toEqual({
      created: true,
      attribute: 'tier',
      reason: 'attribute_def_already_exists',
      listed: true,
    });
  }, 60_000);

  it("the installed client's types refuse a misspelt valueType or cardinality at compile time", async () => {
    writeFileSync(
      path.join(folder, 'typo.ts'),
      `import type { DeclareAttributeInput } from '@metamodel/client';
export const a: DeclareAttributeInput = { name: 'tier', valueType: 'strng', cardinality: 'single' };
export const b: DeclareAttributeInput = { name: 'tier', valueType: 'string', cardinality: 'many' };
`,
    );
    const failed = (await tsc('typo.ts').catch((e: { code: number; stdout: string }) => e)) as {
      code?: number;
      stdout: string;
    };
    expect(failed.code).toBe(2);
    expect(failed.stdout).toContain('"strng"');
    expect(failed.stdout).toContain('"many"');
  }, 60_000);
});
