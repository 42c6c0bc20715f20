// The `metamodel` command-line tool against the app on a real port: in-process through main(argv, io) (what
// cli/bin/metamodel.mjs calls), and as a child process for the smoke tests and the runs that need their own cwd.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { jwtVerify, SignJWT } from 'jose';
import { describe, expect } from 'vitest';
import { main } from '../../cli/src/main.js';
import { itServed, type ServedWorld } from '../fixtures.js';
import { createType, newTenant, operatorToken, restClient, TEST_SECRET, tokenFor } from '../helpers.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = path.join(ROOT, 'cli/bin/metamodel.mjs');

const it = itServed({ PURGE_BATCH_SIZE: '2' });

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

interface RunOptions {
  token?: string;
  env?: Record<string, string>;
  cwd?: string;
  /** `args` are node's own (another script), not the CLI's. */
  nodeArgs?: boolean;
  /** Through `node cli/bin/metamodel.mjs`, as a user runs it. */
  process?: boolean;
}

/** The environment a run sees: this process's, without the CLI's and the service's own variables, plus the run's. */
function runEnv(world: ServedWorld, options: RunOptions): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('METAMODEL_') && key !== 'AUTH_JWT_SECRET') env[key] = value;
  }
  Object.assign(env, {
    METAMODEL_URL: world.url,
    ...(options.token ? { METAMODEL_TOKEN: options.token } : {}),
  });
  return Object.assign(env, options.env);
}

/** Runs the CLI: in-process unless the run needs a process of its own (its own cwd, node's arguments). */
async function run(world: ServedWorld, args: string[], options: RunOptions = {}): Promise<Run> {
  if (options.process || options.nodeArgs || options.cwd) return spawnRun(world, args, options);
  let stdout = '';
  let stderr = '';
  const code = await main(args, {
    out: (text) => {
      stdout += text;
    },
    err: (text) => {
      stderr += text;
    },
    stderr: new PassThrough(),
    env: runEnv(world, options),
  });
  return { code, stdout, stderr };
}

/** Runs `node cli/bin/metamodel.mjs ...args` (asynchronously: the service answers from this process). */
function spawnRun(world: ServedWorld, args: string[], options: RunOptions): Promise<Run> {
  const env = runEnv(world, options);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, options.nodeArgs ? args : [BIN, ...args], {
      cwd: options.cwd ?? ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Runs and parses stdout as JSON (after checking the exit code). */
async function runJson(world: ServedWorld, args: string[], token: string, code = 0) {
  const res = await run(world, [...args, '--json'], { token });
  expect(res.code, `${args.join(' ')}\n${res.stdout}\n${res.stderr}`).toBe(code);
  return JSON.parse(res.stdout);
}

async function setup(world: ServedWorld) {
  const tenant = newTenant('cli');
  const token = await tokenFor(tenant);
  return { tenant, token, api: restClient(world.app, token) };
}

async function closedPort() {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('as a program (cli/bin/metamodel.mjs in a process of its own)', () => {
  it('prints its help and exits 0', async ({ world }) => {
    const help = await run(world, ['--help'], { process: true });
    expect([help.code, help.stderr]).toEqual([0, '']);
    expect(help.stdout).toContain('types list');
  });
  it('talks to the service: creates a type and lists it, exit status 0', async ({ world }) => {
    const { token } = await setup(world);
    const created = await run(world, ['types', 'create', 'Smoke Test', '--json'], { token, process: true });
    expect([created.code, created.stderr]).toEqual([0, '']);
    const listed = await run(world, ['types', 'list', '--all', '--json'], { token, process: true });
    expect(listed.code).toBe(0);
    expect(JSON.stringify(JSON.parse(listed.stdout))).toContain('Smoke Test');
  });
});

describe('help and usage errors', () => {
  it('--help lists every command and how TYPE is resolved; a command has its own --help', async ({
    world,
  }) => {
    const help = await run(world, ['--help']);
    expect([help.code, help.stderr]).toEqual([0, '']);
    for (const command of [
      'types list',
      'types create NAME',
      'types rename TYPE NAME',
      'types release-name TYPE NAME',
      'types describe TYPE',
      'types delete TYPE',
      'attributes list TYPE',
      'attributes declare TYPE NAME',
      'attributes change TYPE NAME',
      'withdraw TYPE NAME',
      'purge',
      'token --tenant T',
    ]) {
      expect(help.stdout).toContain(command);
    }
    expect(help.stdout).toContain('TYPE is a type guid or a type name');
    const declare = await run(world, ['attributes', 'declare', '--help']);
    expect(declare.code).toBe(0);
    expect(declare.stdout).toMatch(/^usage: metamodel attributes declare TYPE NAME --value-type T/);
    for (const option of [
      '--cardinality',
      '--allowed-values',
      '--ref-type',
      '--default',
      '--dry-run',
      '--json',
    ]) {
      expect(declare.stdout).toContain(option);
    }
    const viaHelp = await run(world, ['help', 'attributes', 'declare']);
    expect(viaHelp).toEqual(declare);
  });

  it('unknown commands and options and missing arguments exit 2 with a usage line, before any request', async ({
    world,
  }) => {
    // any request would fail to connect (exit 3), so exit 2 also shows that nothing was sent
    const env = { METAMODEL_URL: `http://127.0.0.1:${await closedPort()}`, AUTH_JWT_SECRET: TEST_SECRET };
    const cases: [string[], RegExp][] = [
      [['frobnicate'], /^error: unknown command "frobnicate"\.\nusage: metamodel <command>/],
      [
        ['types'],
        /^error: "types" needs a command\.\nusage: metamodel types <list\|create\|rename\|describe\|release-name\|delete>/,
      ],
      [['types', 'drop', 'x'], /^error: unknown command "types drop"\.\nusage: metamodel types/],
      [['types', 'list', '--bogus'], /^error: Unknown option '--bogus'.*\nusage: metamodel types list/],
      [['types', 'list', '--tenant', 'x'], /^error: --tenant does not apply to "types list"\.\nusage:/],
      [['types', 'create'], /^error: missing NAME\.\nusage: metamodel types create NAME/],
      [['types', 'create', 'Data', 'Product'], /^error: unexpected argument "Product"/],
      [['withdraw', 'Report'], /^error: missing NAME\.\nusage: metamodel withdraw TYPE NAME/],
      [
        ['attributes', 'declare', 'Report', 'tier', '--cardinality', 'single'],
        /^error: --value-type is required\.\nusage: metamodel attributes declare/,
      ],
      [
        [
          'attributes',
          'declare',
          'Report',
          'tier',
          '--value-type',
          'string',
          '--cardinality',
          'single',
          '--default',
          'silver',
        ],
        /^error: --default must be JSON/,
      ],
      [
        [
          'attributes',
          'declare',
          'Report',
          'tier',
          '--value-type',
          'string',
          '--cardinality',
          'single',
          '--allowed-values',
          '{"a":1}',
        ],
        /^error: --allowed-values must be a JSON array\./,
      ],
      [['types', 'list', '--url', 'ftp://example.com'], /^error: --url must be an http\(s\) address/],
      [['token'], /^error: --tenant is required\.\nusage: metamodel token --tenant T/],
      [['token', '--tenant', 't', '--url', world.url], /^error: --url does not apply to "token"/],
      [['token', '--tenant', 't', '--expires', 'soon'], /^error: --expires must be a lifetime/],
    ];
    for (const [args, stderr] of cases) {
      const res = await run(world, args, { env, token: 'x' });
      expect([args, res.code, res.stdout], res.stderr).toEqual([args, 2, '']);
      expect(res.stderr, args.join(' ')).toMatch(stderr);
      expect(res.stderr).toMatch(/\nusage: metamodel .*\n$/);
    }
    const bare = await run(world, [], { env });
    expect(bare.code).toBe(2);
    expect(bare.stderr).toMatch(/^usage: metamodel <command>/);
  });

  it('a service that cannot be reached exits 3', async ({ world }) => {
    const res = await run(world, ['types', 'list'], {
      env: { METAMODEL_URL: `http://127.0.0.1:${await closedPort()}` },
    });
    expect(res.code).toBe(3);
    expect(res.stderr).toMatch(
      /^error: cannot reach the service at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)/,
    );
  });
});

describe('types', () => {
  it('create says whether it created the type or found it (names compared trimmed, ignoring case)', async ({
    world,
  }) => {
    const { token } = await setup(world);
    const created = await runJson(world, ['types', 'create', 'Report'], token);
    expect(created).toEqual({
      entity_type: {
        guid: expect.any(String),
        name: 'Report',
        origin: 'user_defined',
        catalog_level: true,
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        version: expect.any(String),
      },
      created: true,
    });
    const again = await run(world, ['types', 'create', '  REPORT '], { token });
    expect([again.code, again.stderr]).toEqual([0, '']);
    expect(again.stdout).toBe(
      `Type "Report" already existed (${created.entity_type.guid}); nothing was changed.\n`,
    );
    const other = await run(world, ['types', 'create', 'Data Product'], { token });
    expect(other.stdout).toMatch(/^Created type "Data Product" \([0-9a-f-]{36}\)\.\n$/);
  });

  it('list shows one page (and says more follow) or, with --all, every page', async ({ world }) => {
    const { token, api } = await setup(world);
    const report = await createType(api, 'Report');
    const page = await runJson(world, ['types', 'list', '--page-size', '3'], token);
    expect(page.entity_types).toHaveLength(3);
    expect(page.next_cursor).toEqual(expect.any(String));

    const table = await run(world, ['types', 'list', '--page-size', '3'], { token });
    expect(table.code).toBe(0);
    for (const row of page.entity_types) {
      expect(table.stdout).toMatch(new RegExp(`│ ${row.name} +│ ${row.origin} +│.*│ ${row.guid} │`));
    }
    expect(table.stdout).toMatch(/│ name +│ origin +│ kind +│ guid +│/);
    expect(table.stderr).toBe(`More types follow: use --all, or --cursor ${page.next_cursor}\n`);

    const all = await runJson(world, ['types', 'list', '--all'], token);
    expect(all.next_cursor).toBeNull();
    const names = all.entity_types.map((t: any) => t.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual(expect.arrayContaining(['Report', 'datasource', 'table', 'tag', 'entity']));
    // following next_cursor page by page gives the same rows, in the same order
    const small = await runJson(world, ['types', 'list', '--all', '--page-size', '3'], token);
    expect(small).toEqual(all);
    const rest = (await api.get('/entities/types?page_size=500')).body.DATA.entity_types;
    expect(all.entity_types).toEqual(rest);

    const allTable = await run(world, ['types', 'list', '--all'], { token });
    expect(allTable.stdout).toMatch(new RegExp(`│ Report +│ user_defined +│ catalog level +│ ${report} │`));
    expect(allTable.stdout).toMatch(new RegExp(`\\n${names.length} types\\n$`));
  });

  it('a refused page size exits 1 with the reason', async ({ world }) => {
    const { token } = await setup(world);
    const res = await run(world, ['types', 'list', '--page-size', '0'], { token });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^error: invalid_page_size: .+\n$/);
  });
});

describe('types rename, release-name, delete', () => {
  it('rename says the old name still resolves and how to free it; create-or-get by a former name says so; release-name frees it; delete', async ({
    world,
  }) => {
    const { token, api } = await setup(world);
    const guid = await createType(api, 'Quarterly Report');
    const renamed = await run(world, ['types', 'rename', 'quarterly report', 'Report'], { token });
    expect(renamed.code, renamed.stderr).toBe(0);
    expect(renamed.stdout).toBe(
      `Renamed type "Quarterly Report" to "Report" (${guid}). "Quarterly Report" still resolves to it; free it with: metamodel types release-name Report 'Quarterly Report'\n`,
    );
    const former = await run(world, ['types', 'create', 'Quarterly Report'], { token });
    expect(former.code).toBe(0);
    expect(former.stdout).toBe(
      `"Quarterly Report" is a former name of type "Report" (${guid}): it still resolves to that type, so nothing was created.\n` +
        `To create a new type under it, free the name first: metamodel types release-name Report 'Quarterly Report'\n`,
    );
    const released = await run(world, ['types', 'release-name', 'Report', 'Quarterly Report'], { token });
    expect(released.code, released.stderr).toBe(0);
    expect(released.stdout).toContain('Released "Quarterly Report": it no longer resolves to type "Report"');
    const fresh = await run(world, ['types', 'create', 'Quarterly Report'], { token });
    expect(fresh.stdout).toMatch(/^Created type "Quarterly Report" \(/);
    expect(fresh.stdout).not.toContain(guid);
    const same = await run(world, ['types', 'create', ' report '], { token });
    expect(same.stdout).toBe(`Type "Report" already existed (${guid}); nothing was changed.\n`);
    const describedType = await run(world, ['types', 'describe', 'Report', '--display-name', 'Quarterly'], {
      token,
    });
    expect(describedType.stdout).toBe('Type "Report": display name "Quarterly", description none.\n');
    expect((await run(world, ['history', 'Report'], { token })).stdout).toContain(
      'described type "Report": display_name null → "Quarterly"',
    );
    const deleted = await run(world, ['types', 'delete', 'Report'], { token });
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout).toContain(`Deleted type "Report" (${guid})`);
    expect((await api.get(`/entities/types/${guid}`)).status).toBe(404);
    const system = await run(world, ['types', 'delete', 'table'], { token });
    expect([system.code, system.stderr]).toEqual([
      1,
      expect.stringMatching(/^error: type_not_user_defined: /),
    ]);
    const missing = await run(world, ['types', 'rename', 'Report'], { token });
    expect(missing.code).toBe(2);
  });
});

describe('attributes', () => {
  it('TYPE may be a guid or a name (trimmed, any case); an unknown name is refused and nothing is created', async ({
    world,
  }) => {
    const { token, api } = await setup(world);
    const report = await createType(api, 'Report');
    const declared = await runJson(
      world,
      [
        'attributes',
        'declare',
        '  rEPORT ',
        'tier',
        '--value-type',
        'string',
        '--cardinality',
        'single',
        '--allowed-values',
        '["gold","silver"]',
        '--default',
        '"silver"',
      ],
      token,
    );
    expect(declared).toEqual({
      attribute: {
        guid: expect.any(String),
        name: 'tier',
        owner_type: report,
        value_type: 'string',
        cardinality: 'single',
        allowed_values: ['gold', 'silver'],
        allowed_ref_type: null,
        required: false,
        default_value: 'silver',
        filterable: false,
        origin: 'user_defined',
        description: null,
        display_name: null,
        redeclaring: null,
      },
      usage: { declared: 1, limit: 200 },
    });
    const byName = await runJson(world, ['attributes', 'list', 'report'], token);
    const byGuid = await runJson(world, ['attributes', 'list', report], token);
    expect(byName).toEqual(byGuid);
    expect(byGuid).toEqual((await api.get(`/entities/types/${report}/attributes`)).body.DATA);
    expect(byGuid.attributes.map((a: any) => a.name)).toEqual([
      'domain',
      'env',
      'tags',
      'classification',
      'groups',
      'tier',
    ]);

    const unknown = await run(world, ['attributes', 'list', 'Reports'], { token });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(
      /^error: unknown_entity_type: No entity type with the guid or name "Reports"/,
    );
    // (the service's suggestion of the tenant's close names is kept)
    expect(unknown.stderr).toContain('Did you mean "Report"?');
    const unknownJson = await runJson(world, ['attributes', 'list', 'Reports'], token, 1);
    expect(unknownJson).toEqual({ reason: 'unknown_entity_type' });
    const unknownGuid = await runJson(
      world,
      ['attributes', 'list', '00000000-0000-4000-8000-000000000000'],
      token,
      1,
    );
    expect(unknownGuid).toEqual({ reason: 'unknown_entity_type' });
    const types = (await api.get('/entities/types?page_size=500')).body.DATA.entity_types;
    expect(types.map((t: any) => t.name)).not.toContain('Reports');

    // Names are resolved by the service, as it resolves them: a renamed type also by the name it was created under.
    expect((await api.patch(`/entities/types/${report}`, { name: 'Quarterly Report' })).status).toBe(200);
    expect(await runJson(world, ['attributes', 'list', 'quarterly report'], token)).toEqual(byGuid);
    expect(await runJson(world, ['attributes', 'list', 'Report'], token)).toEqual(byGuid);
  });

  it('list prints a table with the constraints, referenced types by name', async ({ world }) => {
    const { token, api } = await setup(world);
    const report = await createType(api, 'Report');
    await api.post(`/entities/types/${report}/attributes`, {
      name: 'tier',
      value_type: 'string',
      cardinality: 'single',
      allowed_values: ['gold', 'silver'],
      default_value: 'silver',
      required: true,
    });
    const res = await run(world, ['attributes', 'list', report], { token });
    expect([res.code, res.stderr]).toEqual([0, '']);
    expect(res.stdout.split('\n')[0]).toBe(`Attributes of type "Report" (${report}): 6`);
    expect(res.stdout).toMatch(/│ tags +│ entity_ref +│ multi +│ → tag +│ filterable +│ +│ system +│/);
    expect(res.stdout).toMatch(
      /│ tier +│ string +│ single +│ one of: gold, silver +│ required +│ silver +│ user_defined +│/,
    );
  });

  it('declaring a live name again is refused: exit 1, the reason on stderr, DATA on stdout with --json', async ({
    world,
  }) => {
    const { token, api } = await setup(world);
    const report = await createType(api, 'Report');
    const args = [
      'attributes',
      'declare',
      'Report',
      'tier',
      '--value-type',
      'string',
      '--cardinality',
      'single',
    ];
    const first = await run(world, args, { token });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/^Declared "tier" on type "Report" \(1 of 200 declared on the type\)\.\n/);
    expect(first.stdout).toMatch(/│ value type +│ string +│/);

    const again = await run(world, args, { token });
    const rest = await api.post(`/entities/types/${report}/attributes`, {
      name: 'tier',
      value_type: 'string',
      cardinality: 'single',
    });
    expect([again.code, again.stdout]).toEqual([1, '']);
    expect(again.stderr).toBe(`error: attribute_def_already_exists: ${rest.body.MESSAGE}\n`);
    const json = await run(world, [...args, '--json'], { token });
    expect([json.code, JSON.parse(json.stdout)]).toEqual([1, { reason: 'attribute_def_already_exists' }]);
    expect(json.stderr).toBe(again.stderr);
  });

  it('--ref-type takes a name too; --dry-run writes nothing', async ({ world }) => {
    const { token, api } = await setup(world);
    const report = await createType(api, 'Report');
    const person = await createType(api, 'Person');
    const args = ['attributes', 'declare', report, 'owner', '--value-type', 'entity_ref'];
    const dry = await runJson(
      world,
      [
        ...args,
        '--cardinality',
        'single',
        '--ref-type',
        ' PERSON',
        '--filterable',
        '--required',
        '--dry-run',
      ],
      token,
    );
    expect(dry).toMatchObject({
      dry_run: true,
      attribute: { name: 'owner', allowed_ref_type: person, filterable: true, required: true },
      usage: { declared: 0, limit: 200 },
    });
    const listed = (await api.get(`/entities/types/${report}/attributes`)).body.DATA.attributes;
    expect(listed.map((a: any) => a.name)).not.toContain('owner');

    const real = await run(world, [...args, '--cardinality', 'multi', '--ref-type', 'person'], { token });
    expect(real.code, real.stderr).toBe(0);
    expect(real.stdout).toMatch(new RegExp(`│ allowed ref type +│ Person \\(${person}\\) +│`));
    const refused = await run(world, [...args, '--cardinality', 'single', '--ref-type', 'nobody'], { token });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^error: unknown_entity_type: .*"nobody"/);
  });
});

describe('attributes change', () => {
  it('--add-values widens in place (guid and values kept), texts for people are set and cleared; a change not in place exits 1', async ({
    world,
  }) => {
    const { token, api } = await setup(world);
    const card = await createType(api, 'Card');
    const declared = await run(
      world,
      [
        'attributes',
        'declare',
        'Card',
        'grade',
        '--value-type',
        'string',
        '--cardinality',
        'single',
        '--allowed-values',
        '["A","B"]',
        '--description',
        'Letter grade',
        '--display-name',
        'Grade',
      ],
      { token },
    );
    expect(declared.code, declared.stderr).toBe(0);
    expect(declared.stdout).toMatch(/│ display name +│ Grade +│/);
    const guid = (await api.get(`/entities/types/${card}/attributes`)).body.DATA.attributes.find(
      (a: any) => a.name === 'grade',
    ).guid;
    const e = await api.post('/entities', { type_guid: card, name: 'e', values: { grade: 'B' } });
    const dry = await run(
      world,
      ['attributes', 'change', 'card', 'grade', '--add-values', '["C"]', '--dry-run'],
      {
        token,
      },
    );
    expect(dry.stdout).toContain(
      'Dry run: "grade" on type "Card" can change in place (allowed_values +1 ("C"))',
    );
    const widened = await run(world, ['attributes', 'change', 'card', 'grade', '--add-values', '["C"]'], {
      token,
    });
    expect(widened.code, widened.stderr).toBe(0);
    expect(widened.stdout).toContain(
      'Changed "grade" on type "Card" in place: allowed_values +1 ("C"). Its guid and values are kept.',
    );
    const again = await run(
      world,
      ['attributes', 'change', 'card', 'grade', '--allowed-values', '["A","B","C"]'],
      {
        token,
      },
    );
    expect(again.stdout).toContain('already is as asked; nothing was written');
    const cleared = await runJson(
      world,
      ['attributes', 'change', 'Card', 'grade', '--description', ''],
      token,
    );
    expect(cleared).toMatchObject({
      changed: true,
      attribute: { guid, description: null, display_name: 'Grade' },
    });
    expect((await api.get(`/entities/${e.body.DATA.entity.guid}`)).body.DATA.entity.values.grade).toBe('B');
    const narrowed = await run(
      world,
      ['attributes', 'change', 'Card', 'grade', '--allowed-values', '["A"]'],
      {
        token,
      },
    );
    expect(narrowed.code).toBe(1);
    expect(narrowed.stderr).toMatch(/^error: attribute_change_not_in_place: "grade" cannot change in place/);
    const nothing = await run(world, ['attributes', 'change', 'Card', 'grade'], { token });
    expect(nothing.code).toBe(2);
    // the history says what the change in place changed
    const history = await run(world, ['history', 'Card'], { token });
    expect(history.stdout).toContain('changed "grade" in place: allowed_values +1 ("C")');
    expect(history.stdout).toContain('declared "grade": string, single, one of "A", "B"');
  });
});

describe('withdraw', () => {
  it('percent-encodes the name; --dry-run reports the impact; a second withdrawal is refused', async ({
    world,
  }) => {
    const { token, api } = await setup(world);
    const report = await createType(api, 'Report');
    const name = 'a/b c%?#';
    await api.post(`/entities/types/${report}/attributes`, {
      name,
      value_type: 'number',
      cardinality: 'single',
    });
    for (let i = 0; i < 3; i++) {
      await api.post('/entities', { type_guid: report, name: `r${i}`, values: { [name]: i } });
    }
    const dry = await runJson(world, ['withdraw', 'report', name, '--dry-run'], token);
    expect(dry).toMatchObject({
      dry_run: true,
      attribute: { name, state: 'live' },
      impact: { instances: 3, values: 3 },
    });
    const dryText = await run(world, ['withdraw', 'report', name, '--dry-run'], { token });
    expect(dryText.stdout).toBe(
      `Dry run: withdrawing "${name}" from type "Report" would remove 3 stored values on 3 instances; nothing was written.\n`,
    );
    const done = await run(world, ['withdraw', report, name], { token });
    expect([done.code, done.stderr]).toEqual([0, '']);
    expect(done.stdout).toMatch(/^Withdrew "a\/b c%\?#" from type "Report"\./);
    const listed = (await api.get(`/entities/types/${report}/attributes`)).body.DATA.attributes;
    expect(listed.map((a: any) => a.name)).not.toContain(name);
    const again = await run(world, ['withdraw', report, name], { token });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^error: attribute_def_withdrawn: /);
    const missing = await runJson(world, ['withdraw', report, 'nope'], token, 1);
    expect(missing).toEqual({ reason: 'attribute_def_not_found' });
  });
});

describe('authentication', () => {
  it('a missing or bad token is refused with exit 1, and the token is never printed', async ({ world }) => {
    const none = await run(world, ['types', 'list']);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(
      /^error: unauthenticated: .+\nhint: give a token with METAMODEL_TOKEN or --token/,
    );
    const secret = 'not.a-real.token-SECRET-1234567890';
    for (const res of [
      await run(world, ['types', 'list'], { token: secret }),
      await run(world, ['types', 'list', '--token', secret, '--json']),
    ]) {
      expect(res.code).toBe(1);
      expect(res.stderr).toMatch(/^error: unauthenticated: /);
      expect(res.stdout + res.stderr).not.toContain('SECRET');
    }
    // A token no header can carry is refused before any request, without being repeated (fetch would quote it).
    const broken = await run(world, ['types', 'list'], { token: 'eyJ.SECRET-PART\nsig' });
    expect(broken.code).toBe(2);
    expect(broken.stdout + broken.stderr).not.toContain('SECRET');
    // An empty --tenant is sent as it is (and refused), never read as "every tenant".
    const emptyTenant = await run(world, ['purge', '--tenant', '', '--json'], {
      token: await operatorToken(),
    });
    expect(emptyTenant.code).toBe(1);
    expect(JSON.parse(emptyTenant.stdout)).toEqual({ reason: 'invalid_field' });
    // --token wins over METAMODEL_TOKEN
    const { token } = await setup(world);
    const ok = await run(world, ['types', 'create', 'Report', '--token', token], { token: secret });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout + ok.stderr).not.toContain(token);
  });
});

describe('token', () => {
  it('mints a token signed with AUTH_JWT_SECRET carrying the claims asked for; the service accepts it', async ({
    world,
  }) => {
    const tenant = newTenant('minted');
    const res = await run(
      world,
      [
        'token',
        '--tenant',
        tenant,
        '--role',
        'admin',
        '--role',
        'platform',
        '--cross-tenant',
        '--sub',
        'me',
        '--expires',
        '1h',
      ],
      { env: { AUTH_JWT_SECRET: TEST_SECRET } },
    );
    expect([res.code, res.stderr]).toEqual([0, 'Signed with AUTH_JWT_SECRET.\n']);
    expect(res.stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
    const token = res.stdout.trim();
    const { payload, protectedHeader } = await jwtVerify(token, new TextEncoder().encode(TEST_SECRET));
    expect(protectedHeader.alg).toBe('HS256');
    expect(payload).toMatchObject({ tenant, roles: ['admin', 'platform'], cross_tenant: true, sub: 'me' });
    expect(payload.exp! - payload.iat!).toBe(3600);

    const plain = await run(world, ['token', '--tenant', tenant, '--json'], {
      env: { AUTH_JWT_SECRET: TEST_SECRET },
    });
    expect(plain.code).toBe(0);
    const claims = (await jwtVerify(JSON.parse(plain.stdout).token, new TextEncoder().encode(TEST_SECRET)))
      .payload;
    expect(claims).toMatchObject({ tenant, roles: [], sub: `dev-${tenant}` });
    expect(claims.cross_tenant).toBeUndefined();
    expect(claims.exp! - claims.iat!).toBe(12 * 3600);

    const created = await run(world, ['types', 'create', 'Minted'], { token });
    expect(created.code, created.stderr).toBe(0);
  });

  it("without AUTH_JWT_SECRET it signs with the checkout's .data/dev-secret, as npm run token does, and says so", async ({
    world,
  }) => {
    // A directory standing for the service's checkout (its package.json names the service).
    const dir = mkdtempSync(path.join(tmpdir(), 'metamodel-cli-'));
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'entity-metamodel-service' }));
    try {
      const cli = await run(world, ['token', '--tenant', 'acme', '--role', 'admin'], { cwd: dir });
      const file = path.join(dir, '.data/dev-secret');
      expect([cli.code, cli.stderr]).toEqual([0, `Signed with the development secret in ${file}.\n`]);
      const secret = new TextEncoder().encode(readFileSync(file, 'utf8').trim());
      const fromCli = (await jwtVerify(cli.stdout.trim(), secret)).payload;

      // scripts/token.ts, run the way `npm run token` does (through tsx), uses the same secret and claims
      const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
      const script = path.join(ROOT, 'scripts/token.ts');
      const npmRun = await run(world, ['--import', tsx, script, '--tenant', 'acme', '--role', 'admin'], {
        cwd: dir,
        nodeArgs: true,
      });
      expect([npmRun.code, npmRun.stderr]).toEqual([0, `Signed with the development secret in ${file}.\n`]);
      const fromScript = (await jwtVerify(npmRun.stdout.trim(), secret)).payload;
      const { iat: _a, exp: _b, ...cliClaims } = fromCli;
      const { iat: _c, exp: _d, ...scriptClaims } = fromScript;
      expect(scriptClaims).toEqual(cliClaims);
      expect(cliClaims).toEqual({ tenant: 'acme', roles: ['admin'], sub: 'dev-acme' });

      const usage = await run(world, ['--import', tsx, script, '--role', 'admin'], {
        cwd: dir,
        nodeArgs: true,
      });
      expect(usage.code).toBe(2);
      expect(usage.stderr).toBe(
        'error: --tenant is required.\nusage: npm run token -- --tenant T [--role admin] [--role platform] [--cross-tenant] [--sub S] [--expires 12h]\n',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('outside a checkout, without AUTH_JWT_SECRET, it refuses and makes no secret; unknown roles and empty lifetimes are usage errors', async ({
    world,
  }) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'metamodel-elsewhere-'));
    try {
      const res = await run(world, ['token', '--tenant', 'acme'], { cwd: dir });
      expect(res.code).toBe(2);
      expect(res.stdout).toBe('');
      expect(res.stderr).toContain(
        'error: No signing secret: set AUTH_JWT_SECRET to the secret the service uses',
      );
      expect(existsSync(path.join(dir, '.data'))).toBe(false);
      const env = { AUTH_JWT_SECRET: TEST_SECRET };
      for (const [args, message] of [
        [['--role', 'superuser'], 'error: --role must be admin or platform, not "superuser".'],
        [['--expires', '0s'], 'error: --expires must be a lifetime of at least one second'],
        [['--expires', '0.4s'], 'error: --expires must be a lifetime of at least one second'],
        [['--expires=-1h'], 'error: --expires must be a lifetime in the future'],
        [['--expires', 'soon'], 'error: --expires must be a lifetime such as 30m, 12h or 7d, not "soon".'],
      ] as const) {
        const bad = await run(world, ['token', '--tenant', 'acme', ...args], { cwd: dir, env });
        expect([bad.code, bad.stdout], args.join(' ')).toEqual([2, '']);
        expect(bad.stderr, args.join(' ')).toContain(message);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an expired token is told so, with how to get a new one; a badly signed one stays vague', async ({
    world,
  }) => {
    const tenant = newTenant('expired');
    const expired = await new SignJWT({ tenant, roles: [] })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('old')
      .setIssuedAt(Math.floor(Date.now() / 1000) - 7200)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 3600)
      .sign(new TextEncoder().encode(TEST_SECRET));
    const res = await run(world, ['types', 'list'], { token: expired });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(
      /^error: unauthenticated: The token expired at \d{4}-\d\d-\d\dT.*: get a new one from its issuer/,
    );
    const forged = `${expired.slice(0, expired.lastIndexOf('.'))}.AAAA`;
    const bad = await run(world, ['types', 'list'], { token: forged });
    expect(bad.stderr).toContain('error: unauthenticated: The token is malformed, expired or badly signed.');
  });
});

describe('purge', () => {
  /** A tenant whose Metric type has 4 entities with a `unit` value (4 values), withdrawn through the CLI. */
  async function withdrawnWithValues(world: ServedWorld) {
    const { tenant, token, api } = await setup(world);
    const type = await createType(api, 'Metric');
    await api.post(`/entities/types/${type}/attributes`, {
      name: 'unit',
      value_type: 'string',
      cardinality: 'single',
    });
    for (let i = 0; i < 4; i++)
      await api.post('/entities', { type_guid: type, name: `m${i}`, values: { unit: 'ms' } });
    const withdrawn = await run(world, ['withdraw', 'metric', 'unit'], { token });
    expect(withdrawn.code, withdrawn.stderr).toBe(0);
    // the background removal the withdrawal started holds the definition's lease until it is done
    await world.app.services.purger.idle();
    return { tenant, type, token };
  }

  it('runs the purge job and prints its report (--json: the DATA); no bar when stderr is not a terminal', async ({
    world,
  }) => {
    const { tenant, type } = await withdrawnWithValues(world);
    const res = await run(world, ['purge', '--tenant', tenant, '--json'], { token: await operatorToken() });
    expect([res.code, res.stderr]).toEqual([0, '']);
    const report = JSON.parse(res.stdout);
    expect(report).toEqual({
      removed: [{ guid: expect.any(String), type_guid: type, name: 'unit', values_removed: 4 }],
      values_removed: expect.any(Number),
      batches: expect.any(Number),
      pending: 0,
    });
    const left = await world.driver.executeQuery(
      'MATCH (a:AttributeDefinition {tenant: $tenant, owner_guid: $type}) RETURN count(a) AS n',
      { tenant, type },
    );
    expect(left.records[0]!.get('n')).toBe(0);
  });

  it('prints the report as a table', async ({ world }) => {
    const { tenant, type } = await withdrawnWithValues(world);
    const res = await run(world, ['purge', '--tenant', tenant], { token: await operatorToken() });
    expect([res.code, res.stderr]).toEqual([0, '']);
    // the background purge removed the 4 values before the run: the run removed none, and says both
    expect(res.stdout).toContain(
      `Purge finished for tenant ${tenant}: 1 withdrawn definition removed (4 stored values removed since their withdrawal, in the table); this run removed 0 values in `,
    );
    expect(res.stdout).toMatch(new RegExp(`│ unit +│ ${type} +│ 4 +│ [0-9a-f-]{36} │`));
  });

  it('draws a progress bar with the total on a terminal stderr', async ({ world }) => {
    const { tenant } = await withdrawnWithValues(world);
    const stderr = Object.assign(new PassThrough(), { isTTY: true, columns: 120 });
    let drawn = '';
    stderr.on('data', (d) => {
      drawn += d;
    });
    let out = '';
    const code = await main(['purge', '--tenant', tenant], {
      out: (text) => {
        out += text;
      },
      err: (text) => stderr.write(text),
      stderr,
      env: { METAMODEL_URL: world.url, METAMODEL_TOKEN: await operatorToken() },
    });
    expect(code).toBe(0);
    expect(drawn).toContain('purge |');
    expect(drawn).toContain('0/1 withdrawn definitions');
    expect(drawn).toContain('1/1 withdrawn definitions');
    expect(out).toMatch(/^Purge finished for tenant .*: 1 withdrawn definition removed/);
  });

  it('is for operators: anyone else is refused with exit 1', async ({ world }) => {
    const { tenant, token } = await setup(world);
    const res = await run(world, ['purge', '--tenant', tenant, '--json'], { token });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^error: not_authorized: .+\n$/);
    expect(JSON.parse(res.stdout)).toEqual({ reason: 'not_authorized' });
  });
});
