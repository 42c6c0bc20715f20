// Issue #13, part 3: `metamodel export | plan | apply`, run in-process (main(argv, io)) against the app on a port.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect } from 'vitest';
import YAML from 'yaml';
import { main } from '../../cli/src/main.js';
import { itServed, type ServedWorld } from '../fixtures.js';
import { createType, newTenant, restClient, tokenFor } from '../helpers.js';

const it = itServed().extend<{ dir: string }>({
  dir: [
    // biome-ignore lint/correctness/noEmptyPattern: vitest reads the fixtures a fixture needs from this pattern
    async ({}, use) => {
      const dir = mkdtempSync(path.join(tmpdir(), 'model-cli-'));
      await use(dir);
      rmSync(dir, { recursive: true, force: true });
    },
    { scope: 'file' },
  ],
});

async function cli(world: ServedWorld, token: string, ...argv: string[]) {
  return cliOn(world, new PassThrough(), token, ...argv);
}

async function cliOn(
  world: ServedWorld,
  stderrStream: PassThrough & { isTTY?: boolean },
  token: string,
  ...argv: string[]
) {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, {
    out: (t) => {
      stdout += t;
    },
    err: (t) => {
      stderr += t;
    },
    stderr: stderrStream,
    env: { METAMODEL_URL: world.url, METAMODEL_TOKEN: token },
  });
  return { code, stdout, stderr };
}

async function tenant(world: ServedWorld) {
  const id = newTenant();
  const token = await tokenFor(id);
  return { id, token, api: restClient(world.app, token) };
}

const file = (dir: string, name: string, text: string) => {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
};

describe('metamodel export, plan, apply', () => {
  it('export → apply on an empty tenant → export gives the same document; a second apply changes nothing and says so', async ({
    world,
    dir,
  }) => {
    const source = await tenant(world);
    const person = await createType(source.api, 'Person');
    const report = await createType(source.api, 'Quarterly Report');
    for (const body of [
      {
        name: 'grade',
        value_type: 'string',
        cardinality: 'single',
        allowed_values: ['A', 'B'],
        default_value: 'B',
      },
      {
        name: 'owner',
        value_type: 'entity_ref',
        cardinality: 'single',
        allowed_ref_type: person,
        filterable: true,
      },
      { name: 'due', value_type: 'date', cardinality: 'single', required: true },
      { name: 'extra', value_type: 'json', cardinality: 'multi' },
    ]) {
      expect((await source.api.post(`/entities/types/${report}/attributes`, body)).status).toBe(201);
    }
    const tags = (await source.api.post('/entities/types', { name: 'tag' })).body.DATA.entity_type.guid;
    await source.api.post(`/entities/types/${tags}/attributes`, {
      name: 'colour',
      value_type: 'string',
      cardinality: 'single',
    });

    const exported = await cli(world, source.token, 'export');
    expect(exported.code).toBe(0);
    const model = file(dir, 'model.yaml', exported.stdout);
    expect(YAML.parse(exported.stdout).types.map((t: { name: string }) => t.name)).toEqual([
      'Person',
      'Quarterly Report',
      'tag',
    ]);

    const target = await tenant(world);
    const plan = await cli(world, target.token, 'plan', '-f', model);
    expect(plan.code).toBe(2);
    expect(plan.stdout).toContain('Plan for');
    expect(plan.stdout).toContain('+ create type "Quarterly Report"');
    expect(plan.stdout).toContain(
      '+ declare "owner" on "Quarterly Report": entity_ref, single, → "Person", filterable',
    );

    const applied = await cli(world, target.token, 'apply', '-f', model);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toContain('Applied 7 steps of 7');
    const again = await cli(world, target.token, 'export');
    expect(again.stdout).toBe(exported.stdout);

    const second = await cli(world, target.token, 'apply', '-f', model);
    expect([second.code, second.stdout]).toEqual([0, `No changes: the tenant already matches ${model}.\n`]);
    const unchanged = await cli(world, target.token, 'plan', '-f', model);
    expect(unchanged.code).toBe(0);
    expect(unchanged.stdout).toMatch(
      /^No changes: the tenant matches .*Unchanged: 3 types, 5 attributes\.\n$/,
    );
    // JSON files are read too
    const asJson = file(dir, 'model.json', JSON.stringify(YAML.parse(exported.stdout)));
    expect((await cli(world, target.token, 'plan', '-f', asJson)).code).toBe(0);
  }, 60_000);

  it('withdrawals only with --allow-withdraw; a changed definition is withdrawn, then declared by an apply after the purge', async ({
    world,
    dir,
  }) => {
    const { id, token, api } = await tenant(world);
    const guid = await createType(api, 'Asset');
    await api.post(`/entities/types/${guid}/attributes`, {
      name: 'old',
      value_type: 'string',
      cardinality: 'single',
    });
    await api.post(`/entities/types/${guid}/attributes`, {
      name: 'size',
      value_type: 'number',
      cardinality: 'single',
    });
    const model = file(
      dir,
      'asset.yaml',
      YAML.stringify({
        format: 'entity-metamodel/v1',
        types: [
          { name: 'Asset', attributes: [{ name: 'size', value_type: 'string', cardinality: 'single' }] },
        ],
      }),
    );
    const plan = await cli(world, token, 'plan', '-f', model);
    expect(plan.code).toBe(2);
    expect(plan.stdout).toContain('- withdraw "old" from "Asset" (removes 0 values from 0 instances)');
    expect(plan.stdout).toContain('± redeclare "size" on "Asset": value_type "number" → "string"');

    const cautious = await cli(world, token, 'apply', '-f', model);
    expect(cautious.code).toBe(0);
    expect(cautious.stdout).toContain(
      'Not applied (they withdraw definitions; run with --allow-withdraw): 2 steps',
    );
    expect(
      (await api.get(`/entities/types/${guid}/attributes`)).body.DATA.attributes.map((a: any) => a.name),
    ).toContain('old');

    const bold = await cli(world, token, 'apply', '-f', model, '--allow-withdraw');
    expect(bold.code, bold.stderr).toBe(0);
    expect(bold.stdout).toContain('Applied 2 steps of 2');
    expect(bold.stdout).toContain('Waiting for the daily purge');
    const waiting = await cli(world, token, 'apply', '-f', model, '--allow-withdraw');
    expect(waiting.code).toBe(0);
    expect(waiting.stdout).toContain(
      'Waiting for the daily purge (the names are withdrawn; apply again after it): "size"',
    );

    await world.app.services.purger.idle();
    await world.app.services.purger.runDailyJob({ tenant: id });
    const after = await cli(world, token, 'apply', '-f', model);
    expect(after.code, after.stdout + after.stderr).toBe(0);
    expect(after.stdout).toContain('+ declare "size" on "Asset": string, single');
    expect(YAML.parse((await cli(world, token, 'export')).stdout).types).toEqual([
      { name: 'Asset', attributes: [{ name: 'size', value_type: 'string', cardinality: 'single' }] },
    ]);
  }, 60_000);

  it('draws a progress bar of the steps on a terminal (stderr), and none in a pipe', async ({
    world,
    dir,
  }) => {
    const { token } = await tenant(world);
    const model = file(
      dir,
      'bar.yaml',
      YAML.stringify({
        format: 'entity-metamodel/v1',
        types: [{ name: 'Bar1' }, { name: 'Bar2' }, { name: 'Bar3' }],
      }),
    );
    const terminal: PassThrough & { isTTY?: boolean } = new PassThrough();
    terminal.isTTY = true;
    let drawn = '';
    terminal.on('data', (chunk: Buffer) => {
      drawn += chunk.toString();
    });
    const res = await cliOn(world, terminal, token, 'apply', '-f', model);
    expect(res.code).toBe(0);
    expect(drawn).toContain('apply |');
    expect(drawn).toContain('3/3 steps');
    const pipe = new PassThrough();
    let piped = '';
    pipe.on('data', (chunk: Buffer) => {
      piped += chunk.toString();
    });
    const other = await tenant(world);
    expect((await cliOn(world, pipe, other.token, 'apply', '-f', model)).code).toBe(0);
    expect(piped).toBe('');
  });

  it('stops at the first refusal and prints what was applied', async ({ world, dir }) => {
    const { token, api } = await tenant(world);
    const model = file(
      dir,
      'refused.yaml',
      YAML.stringify({
        format: 'entity-metamodel/v1',
        types: [{ name: 'Alpha' }, { name: 'dashboard' }, { name: 'Omega' }],
      }),
    );
    const res = await cli(world, token, 'apply', '-f', model);
    expect(res.code).toBe(1);
    expect(res.stdout).toContain('Applied 1 step of 3');
    expect(res.stdout).toContain('+ create type "Alpha"');
    expect(res.stdout).toContain('Stopped at:\n  + create type "dashboard"');
    expect(res.stderr).toContain('error: type_instances_managed');
    const names = (await api.get('/entities/types?page_size=500')).body.DATA.entity_types.map(
      (t: any) => t.name,
    );
    expect(names).toContain('Alpha');
    expect(names).not.toContain('Omega');
  });

  it('a file that is neither YAML nor JSON, or missing, is a usage error; a malformed document the service refuses', async ({
    world,
    dir,
  }) => {
    const { token } = await tenant(world);
    expect((await cli(world, token, 'plan')).code).toBe(2);
    expect((await cli(world, token, 'plan', '-f', path.join(dir, 'absent.yaml'))).stderr).toContain(
      'cannot read',
    );
    const broken = file(dir, 'broken.yaml', 'types: [unclosed');
    expect((await cli(world, token, 'plan', '-f', broken)).stderr).toContain('is not YAML or JSON');
    const wrong = file(dir, 'wrong.yaml', 'format: other\ntypes: []\n');
    const refused = await cli(world, token, 'plan', '-f', wrong);
    expect([refused.code, refused.stderr]).toEqual([
      1,
      expect.stringContaining('error: invalid_model: format'),
    ]);
    expect(readFileSync(wrong, 'utf8')).toBe('format: other\ntypes: []\n');
  });
});
