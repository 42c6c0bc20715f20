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
  return cliWith(world, { stderrStream, token }, ...argv);
}

/** The CLI in-process; `onOut` sees stdout as it is written, `signal` ends `changes --follow`. */
async function cliWith(
  world: ServedWorld,
  o: { token: string; stderrStream?: PassThrough; signal?: AbortSignal; onOut?: (text: string) => void },
  ...argv: string[]
) {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, {
    out: (t) => {
      stdout += t;
      o.onOut?.(t);
    },
    err: (t) => {
      stderr += t;
    },
    stderr: o.stderrStream ?? new PassThrough(),
    env: { METAMODEL_URL: world.url, METAMODEL_TOKEN: o.token },
    ...(o.signal ? { signal: o.signal } : {}),
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
    expect(plan.stdout).toContain(`Plan for ${model} on tenant "${target.id}" at ${world.url}: 7 changes.`);
    expect(plan.stdout).toContain('+ create type "Quarterly Report"');
    expect(plan.stdout).toContain(
      '+ declare "owner" on "Quarterly Report": entity_ref, single, → "Person", filterable',
    );

    const applied = await cli(world, target.token, 'apply', '-f', model);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toContain(
      `Applied 7 steps from ${model} to tenant "${target.id}" at ${world.url}:`,
    );
    expect(applied.stdout).toContain(`The tenant matches ${model}.`);
    const again = await cli(world, target.token, 'export');
    expect(again.stdout).toBe(exported.stdout);

    const second = await cli(world, target.token, 'apply', '-f', model);
    expect([second.code, second.stdout]).toEqual([
      0,
      `No changes: tenant "${target.id}" at ${world.url} already matches ${model}.\n`,
    ]);
    const unchanged = await cli(world, target.token, 'plan', '-f', model);
    expect(unchanged.code).toBe(0);
    expect(unchanged.stdout).toMatch(
      /^No changes: tenant ".*" at http:\/\/127\.0\.0\.1:\d+ matches .*Unchanged: 3 types, 5 attributes\.\n$/,
    );
    // JSON files are read too
    const asJson = file(dir, 'model.json', JSON.stringify(YAML.parse(exported.stdout)));
    expect((await cli(world, target.token, 'plan', '-f', asJson)).code).toBe(0);
  }, 60_000);

  it('withdrawals refused unless allowed, listed, nothing written (exit 1); allowed, a changed definition carries its values (exit 4 until done; --wait: 0)', async ({
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
      value_type: 'string',
      cardinality: 'single',
      allowed_values: ['S', 'M'],
    });
    for (const [i, size] of ['S', 'M', 'S'].entries()) {
      await api.post('/entities', { type_guid: guid, name: `a${i}`, values: { size } });
    }
    const model = file(
      dir,
      'asset.yaml',
      YAML.stringify({
        format: 'entity-metamodel/v1',
        types: [
          {
            name: 'Asset',
            attributes: [
              // (required added: not a change every stored value survives, so carried, not made in place)
              {
                name: 'size',
                value_type: 'string',
                cardinality: 'single',
                allowed_values: ['S', 'M', 'L'],
                required: true,
              },
            ],
          },
        ],
      }),
    );
    await createType(api, 'Elsewhere');
    const plan = await cli(world, token, 'plan', '-f', model);
    expect(plan.code).toBe(2);
    expect(plan.stdout).toContain('- withdraw "old" from "Asset" (removes 0 values from 0 instances)');
    // what the file does not mention, under its own heading
    expect(plan.stdout).toContain(
      'Not in the file (drift):\n  · type "Elsewhere" (0 attributes): left alone\n  · "old" of "Asset": withdrawn with --allow-withdraw (see above)\n',
    );
    expect(JSON.parse((await cli(world, token, 'plan', '-f', model, '--json')).stdout).drift).toMatchObject({
      types: [{ name: 'Elsewhere', attributes: 0 }],
      unmanaged: [],
    });
    expect(plan.stdout).toContain(
      '± redeclare "size" on "Asset": allowed_values +1 ("L"); required false → true (not a change in place: withdrawn, then declared anew by the service after the purge\'s grace, carrying 3 values)',
    );
    const version = JSON.parse((await cli(world, token, 'plan', '-f', model, '--json')).stdout).based_on;

    const cautious = await cli(world, token, 'apply', '-f', model);
    expect(cautious.code).toBe(1);
    expect(cautious.stdout).toContain(`Nothing was applied from ${model} to tenant "${id}" at ${world.url}:`);
    expect(cautious.stdout).toContain('2 steps withdraw definitions (run with --allow-withdraw):');
    expect(cautious.stderr).toContain('error: plan_not_applicable');
    expect(
      (await api.get(`/entities/types/${guid}/attributes`)).body.DATA.attributes.map((a: any) => a.name),
    ).toEqual(expect.arrayContaining(['old', 'size']));

    const bold = await cli(
      world,
      token,
      'apply',
      '-f',
      model,
      '--allow-withdraw',
      '--based-on',
      version,
      '--commit',
      'c0ffee',
    );
    expect(bold.code, bold.stdout + bold.stderr).toBe(4);
    expect(bold.stdout).toContain('Applied 2 steps');
    expect(bold.stdout).toContain(
      'Carrying values (the service declares each anew once its values are carried, after the purge\'s grace): "size" on "Asset"',
    );
    const waited = await cli(world, token, 'apply', '-f', model, '--allow-withdraw', '--wait');
    expect(waited.code, waited.stdout + waited.stderr).toBe(0);
    const values = await Promise.all(
      (await api.get(`/entities?type_guid=${guid}&page_size=10`)).body.DATA.entities.map(
        async (e: any) => (await api.get(`/entities/${e.guid}`)).body.DATA.entity.values.size,
      ),
    );
    expect(values).toEqual(['S', 'M', 'S']);
    expect(YAML.parse((await cli(world, token, 'export')).stdout).types).toEqual([
      {
        name: 'Asset',
        attributes: [
          {
            name: 'size',
            value_type: 'string',
            cardinality: 'single',
            allowed_values: ['S', 'M', 'L'],
            required: true,
          },
        ],
      },
      { name: 'Elsewhere', attributes: [] },
    ]);
    // every change of the apply says where it came from
    const history = (await api.get(`/entities/types/${guid}/history?page_size=3`)).body.DATA.changes;
    expect(history.map((c: any) => c.reason)).toEqual([
      `apply ${model} @ c0ffee`,
      `apply ${model} @ c0ffee`,
      `apply ${model} @ c0ffee`,
    ]);
    void id;
  }, 60_000);

  it('a narrowing: plan counts the values the new definition refuses, history says what the carry kept and refused', async ({
    world,
    dir,
  }) => {
    const { token, api } = await tenant(world);
    const guid = await createType(api, 'Kit');
    await api.post(`/entities/types/${guid}/attributes`, {
      name: 'size',
      value_type: 'string',
      cardinality: 'single',
      allowed_values: ['S', 'M'],
    });
    for (const [i, size] of ['S', 'M', 'M'].entries()) {
      await api.post('/entities', { type_guid: guid, name: `k${i}`, values: { size } });
    }
    const model = file(
      dir,
      'kit.yaml',
      YAML.stringify({
        format: 'entity-metamodel/v1',
        types: [
          {
            name: 'Kit',
            attributes: [
              { name: 'size', value_type: 'string', cardinality: 'single', allowed_values: ['S', 'L'] },
            ],
          },
        ],
      }),
    );
    const plan = await cli(world, token, 'plan', '-f', model);
    expect(plan.stdout).toContain('carrying 1 value; 2 values the new definition refuses would be removed)');
    const applied = await cli(world, token, 'apply', '-f', model, '--allow-withdraw', '--wait');
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    const history = await cli(world, token, 'history', 'Kit');
    expect(history.stdout).toContain(
      'declared "size": string, single, one of "S", "L" (carried 1 value, 2 refused)',
    );
    expect(history.stdout).toContain('purged "size" (2 values removed)');
  }, 60_000);

  it('a step the service would refuse stops the apply before any write, listing it (exit 1)', async ({
    world,
    dir,
  }) => {
    const { token, api } = await tenant(world);
    const model = file(
      dir,
      'refused.yaml',
      YAML.stringify({
        format: 'entity-metamodel/v1',
        types: [
          { name: 'Alpha', attributes: [] },
          { name: 'dashboard', attributes: [] },
          {
            name: 'Omega',
            attributes: [
              { name: 'owner', value_type: 'entity_ref', cardinality: 'single', allowed_ref_type: 'Persn' },
            ],
          },
        ],
      }),
    );
    const res = await cli(world, token, 'apply', '-f', model, '--allow-withdraw');
    expect(res.code).toBe(1);
    expect(res.stdout).toContain('2 steps would be refused now (fix the file):');
    expect(res.stdout).toContain('+ create type "dashboard"\n    ! refused now: type_instances_managed');
    expect(res.stdout).toContain(
      '+ declare "owner" on "Omega": entity_ref, single, → "Persn"\n    ! refused now: unknown_entity_type',
    );
    expect(res.stderr).toContain('error: plan_not_applicable');
    const names = (await api.get('/entities/types?page_size=500')).body.DATA.entity_types.map(
      (t: any) => t.name,
    );
    expect(names).not.toContain('Alpha');
    const json = await cli(world, token, 'apply', '-f', model, '--json');
    // a refusal in --json says where too: the service, the file and the tenant
    expect(JSON.parse(json.stdout)).toMatchObject({
      service: world.url,
      file: model,
      tenant: expect.any(String),
      reason: 'plan_not_applicable',
      blocked: expect.any(Array),
    });
    expect(json.stderr).toContain(`(${model}, tenant "`);
    expect(json.stderr).toContain(`" at ${world.url})`);
  });

  it('plan and apply say where they act (text and --json); --expect-tenant refuses any other tenant before acting', async ({
    world,
    dir,
  }) => {
    const { id, token, api } = await tenant(world);
    const model = file(
      dir,
      'where.yaml',
      YAML.stringify({ format: 'entity-metamodel/v1', types: [{ name: 'Here', attributes: [] }] }),
    );
    const plan = JSON.parse((await cli(world, token, 'plan', '-f', model, '--json')).stdout);
    expect(plan).toMatchObject({ service: world.url, tenant: id, file: model, based_on: expect.any(String) });
    for (const command of ['plan', 'apply']) {
      const res = await cli(world, token, command, '-f', model, '--expect-tenant', 'production');
      expect([res.code, res.stderr], command).toEqual([1, expect.stringContaining('error: tenant_mismatch')]);
      // the refusal names the tenant the token is for, and the service
      expect(res.stderr, command).toContain(`(${model}, tenant "${id}" at ${world.url})`);
      const asJson = await cli(world, token, command, '-f', model, '--expect-tenant', 'production', '--json');
      expect(JSON.parse(asJson.stdout), command).toMatchObject({
        service: world.url,
        file: model,
        tenant: id,
        reason: 'tenant_mismatch',
      });
    }
    expect((await api.get('/entities/types/by-name/Here')).status).toBe(404);
    const ok = await cli(
      world,
      token,
      'apply',
      '-f',
      model,
      '--expect-tenant',
      id,
      '--json',
      '--reason',
      'first cut',
    );
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ service: world.url, tenant: id, matches: true });
    const created = (await api.get('/entities/changes?page_size=10')).body.DATA.changes.at(-1);
    expect(created).toMatchObject({ kind: 'type_created', reason: `apply ${model}: first cut` });
  });

  it('a hand-written rename: plan says the created type looks like the one left out; export --former-names writes renamed_from', async ({
    world,
    dir,
  }) => {
    const { token, api } = await tenant(world);
    const guid = await createType(api, 'Metric');
    await api.post(`/entities/types/${guid}/attributes`, {
      name: 'unit',
      value_type: 'string',
      cardinality: 'single',
    });
    const exported = YAML.parse((await cli(world, token, 'export')).stdout);
    exported.types[0].name = 'KPI';
    const edited = file(dir, 'kpi.yaml', YAML.stringify(exported));
    const plan = await cli(world, token, 'plan', '-f', edited);
    expect(plan.stdout).toContain(
      '  + create type "KPI"\n    ? "Metric" has definitions of the same names and is not in the file: if this is a rename, add `renamed_from: Metric` to "KPI" (else "Metric" stays as it is)',
    );
    await api.patch(`/entities/types/${guid}`, { name: 'KPI' });
    const withNames = YAML.parse((await cli(world, token, 'export', '--former-names')).stdout);
    expect(withNames.types[0]).toMatchObject({ name: 'KPI', renamed_from: ['Metric'] });
  });

  it('an apply --based-on a plan of a tenant that changed since stops before any write, saying so (exit 1)', async ({
    world,
    dir,
  }) => {
    const { token, api } = await tenant(world);
    const guid = await createType(api, 'Ledger');
    const model = file(
      dir,
      'ledger.yaml',
      YAML.stringify({
        format: 'entity-metamodel/v1',
        types: [
          { name: 'Ledger', attributes: [{ name: 'code', value_type: 'string', cardinality: 'single' }] },
        ],
      }),
    );
    const planned = JSON.parse((await cli(world, token, 'plan', '-f', model, '--json')).stdout);
    expect(planned.steps.map((s: { action: string }) => s.action)).toEqual(['declare_attribute']);
    // another editor changes the tenant after the plan was made
    await api.post(`/entities/types/${guid}/attributes`, {
      name: 'owner',
      value_type: 'string',
      cardinality: 'single',
    });
    const stale = await cli(world, token, 'apply', '-f', model, '--based-on', planned.based_on);
    expect(stale.code, stale.stdout + stale.stderr).toBe(1);
    expect(stale.stderr).toContain('error: model_changed');
    const names = (await api.get(`/entities/types/${guid}/attributes`)).body.DATA.attributes.map(
      (a: any) => a.name,
    );
    expect(names).toContain('owner');
    expect(names).not.toContain('code');
  });

  it('a file with three mistakes reports all three at once, each with its type, attribute, line and column (YAML and JSON); the export names its JSON Schema', async ({
    world,
    dir,
  }) => {
    const { token } = await tenant(world);
    const yaml = [
      'format: entity-metamodel/v1',
      'types:',
      '  - name: Person',
      '    attributes: []',
      '  - name: Report',
      '    attributes:',
      '      - name: title',
      '        value_type: string',
      '        cardinality: single',
      '      - name: grade',
      '        value_type: strng',
      '        cardinality: single',
      '      - name: owner',
      '        value_type: entity_ref',
      '        cardinality: single',
      '        allowed_ref_type: Person',
      '        descripton: who owns it',
      '  - name: person',
      '',
    ].join('\n');
    const model = file(dir, 'three.yaml', yaml);
    for (const command of ['plan', 'apply']) {
      const res = await cli(world, token, command, '-f', model);
      expect(res.code).toBe(1);
      expect(res.stderr).toContain(`3 problems in ${model}; nothing was done:\n`);
      expect(res.stderr).toContain(
        `${model}:11:9: unknown_value_type: type "Report", attribute "grade": types[1].attributes[1]: value_type must be`,
      );
      expect(res.stderr).toContain(
        `${model}:17:9: unknown_field: type "Report", attribute "owner": types[1].attributes[2]: Unknown field "descripton".`,
      );
      expect(res.stderr).toContain(
        `${model}:18:5: invalid_model: type "person": types[2].name: "person" is listed twice`,
      );
    }
    // the same document as JSON: the same problems, at the JSON text's lines
    const asJson = file(dir, 'three.json', JSON.stringify(YAML.parse(yaml), null, 2));
    const json = await cli(world, token, 'plan', '-f', asJson, '--json');
    expect(json.code).toBe(1);
    const data = JSON.parse(json.stdout);
    expect(data).toMatchObject({ reason: 'unknown_value_type', problem_count: 3 });
    const lines = JSON.stringify(YAML.parse(yaml), null, 2).split('\n');
    expect(
      data.problems.map((p: any) => [
        p.type,
        p.attribute,
        p.at,
        (lines[p.line - 1] ?? '').trim().split(':')[0],
      ]),
    ).toEqual([
      ['Report', 'grade', 'types[1].attributes[1].value_type', '"value_type"'],
      ['Report', 'owner', 'types[1].attributes[2].descripton', '"descripton"'],
      ['person', null, 'types[2].name', '"name"'],
    ]);
    // the export names the JSON Schema for editors; planned back, it changes nothing
    const exported = await cli(world, token, 'export');
    expect(exported.stdout.split('\n')[0]).toBe(
      `# yaml-language-server: $schema=${world.url}/schemas/metamodel.json`,
    );
    const exportedJson = JSON.parse((await cli(world, token, 'export', '--json')).stdout);
    expect(exportedJson.$schema).toBe(`${world.url}/schemas/metamodel.json`);
    const back = file(dir, 'back.json', JSON.stringify(exportedJson));
    expect((await cli(world, token, 'plan', '-f', back)).code).toBe(0);
  });

  it('apply --help documents its exit statuses', async ({ world }) => {
    const { token } = await tenant(world);
    const help = await cli(world, token, 'apply', '--help');
    expect(help.stdout).toContain(
      'Exit status: 0 the tenant matches the file; 1 refused or stopped; 4 applied, but',
    );
  });

  it('a file that is neither YAML nor JSON, or missing, is a usage error; a malformed document the service refuses', async ({
    world,
    dir,
  }) => {
    const { token } = await tenant(world);
    // plan exits as terraform plan -detailed-exitcode: a usage error is 1 (an error), never 2 (changes)
    expect((await cli(world, token, 'plan')).code).toBe(1);
    expect((await cli(world, token, 'plan', '--nonsense', '-f', 'x')).code).toBe(1);
    const absent = await cli(world, token, 'plan', '-f', path.join(dir, 'absent.yaml'));
    expect([absent.code, absent.stderr]).toEqual([1, expect.stringContaining('cannot read')]);
    // other commands keep 2 for a usage error
    expect((await cli(world, token, 'apply')).code).toBe(2);
    const broken = file(dir, 'broken.yaml', 'types: [unclosed');
    const unreadable = (await cli(world, token, 'plan', '-f', broken)).stderr;
    expect(unreadable).toContain('is not YAML or JSON');
    // the parser's whole message: the place, and the line itself
    expect(unreadable).toContain('types: [unclosed');
    const wrong = file(dir, 'wrong.yaml', 'format: other\ntypes: []\n');
    const refused = await cli(world, token, 'plan', '-f', wrong);
    expect([refused.code, refused.stderr]).toEqual([
      1,
      expect.stringContaining('error: invalid_model: format'),
    ]);
    expect(readFileSync(wrong, 'utf8')).toBe('format: other\ntypes: []\n');
  });
});

describe('metamodel history and changes', () => {
  it("history TYPE: newest first, who, what and why; a deleted type's by its guid", async ({ world }) => {
    const { token, api } = await tenant(world);
    const guid = await createType(api, 'Ledger');
    await api.post(
      `/entities/types/${guid}/attributes`,
      { name: 'amount', value_type: 'number', cardinality: 'single' },
      { 'x-change-reason': 'FIN-7 amounts' },
    );
    await api.delete(`/entities/attributes/${guid}/amount`);
    const text = await cli(world, token, 'history', 'ledger');
    expect(text.code, text.stderr).toBe(0);
    const lines = text.stdout.split('\n');
    const at = (what: string) => lines.findIndex((l) => l.includes(what));
    expect(at('withdrew "amount"')).toBeGreaterThan(0);
    expect(at('withdrew "amount"')).toBeLessThan(at('declared "amount": number, single'));
    expect(at('declared "amount": number, single')).toBeLessThan(at('created type "Ledger"'));
    expect(lines[at('declared "amount"')]).toContain('FIN-7 amounts');
    await api.delete(`/entities/types/${guid}`);
    const gone = JSON.parse((await cli(world, token, 'history', guid, '--json')).stdout);
    expect(gone.changes.map((c: { kind: string }) => c.kind)).toEqual([
      'type_deleted',
      'attribute_withdrawn',
      'attribute_declared',
      'type_created',
    ]);
  });

  it('changes: filtered by type, attribute and kind, oldest first; --follow prints new changes as they come', async ({
    world,
  }) => {
    const { token, api } = await tenant(world);
    const a = await createType(api, 'Alpha');
    const b = await createType(api, 'Beta');
    for (const t of [a, b]) {
      await api.post(`/entities/types/${t}/attributes`, {
        name: 'code',
        value_type: 'string',
        cardinality: 'single',
      });
    }
    const onA = JSON.parse((await cli(world, token, 'changes', '--type', 'alpha', '--json')).stdout);
    expect(onA.changes.map((c: { kind: string }) => c.kind)).toEqual(['type_created', 'attribute_declared']);
    const declared = JSON.parse(
      (await cli(world, token, 'changes', '--kind', 'attribute_declared', '--attribute', 'CODE', '--json'))
        .stdout,
    );
    expect(declared.changes.map((c: { type_guid: string }) => c.type_guid)).toEqual([a, b]);
    const bad = await cli(world, token, 'changes', '--kind', 'eaten');
    expect([bad.code, bad.stderr]).toEqual([1, expect.stringContaining('error: invalid_filter')]);

    // --follow: the existing changes, then one made while it follows; ended by its signal
    const stop = new AbortController();
    let seen = '';
    let made = false;
    const following = cliWith(
      world,
      {
        token,
        signal: stop.signal,
        onOut: (t) => {
          seen += t;
          if (!made && seen.includes('"type_created"')) {
            made = true;
            void api.patch(`/entities/types/${b}`, { name: 'Gamma' });
          }
          if (seen.includes('"type_renamed"')) stop.abort();
        },
      },
      'changes',
      '--follow',
      '--json',
      '--type',
      b,
    );
    const res = await following;
    expect(res.code).toBe(0);
    const kinds = res.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((o) => o.kind)
      .map((o) => o.kind);
    expect(kinds).toEqual(['type_created', 'attribute_declared', 'type_renamed']);
  }, 30_000);
});
