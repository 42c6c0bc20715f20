// npm run schema:check (scripts/check-schema.mjs): the real check, graphql-inspector included, run in throwaway git
// repositories whose last commit changes a fixture schema.graphql (and maybe SCHEMA_CHANGES.md).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('../../scripts/check-schema.mjs', import.meta.url));

const V1 = `type Query {
  entityType(guid: ID!): EntityType
}

type EntityType {
  guid: ID!
  name: String!
  label: String
}
`;
const WITHOUT_LABEL = V1.replace('  label: String\n', '');
const WITH_ICON = V1.replace('  label: String\n', '  label: String\n  icon: String\n');
const HEADER =
  '# GraphQL schema changes\n\nExample, not an announcement:\n\n```md\n- BREAKING `EntityType.label`: x\n```\n';
const ANNOUNCED = `${HEADER}\n## Unreleased\n\n- BREAKING \`EntityType.label\`: removed; use name.\n`;

const repos: string[] = [];
afterAll(() => {
  for (const dir of repos) rmSync(dir, { recursive: true, force: true });
});

// The check runs git in its working directory: keep the developer's or CI's repository out of it.
const env = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !k.startsWith('GIT_') && k !== 'SCHEMA_BASE'),
);

/** A git repository with one commit per entry of `commits` (files to write in that commit). */
function repo(...commits: Record<string, string>[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'schema-check-test-'));
  repos.push(dir);
  const git = (...args: string[]) => {
    const res = spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
      cwd: dir,
      env,
      encoding: 'utf8',
    });
    if (res.status !== 0) throw new Error(`git ${args.join(' ')}: ${res.stderr}`);
  };
  git('init', '-q');
  commits.forEach((files, i) => {
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    git('add', '-A');
    git('commit', '-q', '--allow-empty', '--no-gpg-sign', '-m', `commit ${i}`);
  });
  return dir;
}

function check(dir: string, extraEnv: Record<string, string> = {}) {
  const res = spawnSync(process.execPath, [SCRIPT], {
    cwd: dir,
    env: { ...env, ...extraEnv },
    encoding: 'utf8',
  });
  return { code: res.status, output: `${res.stdout}${res.stderr}` };
}

describe('schema:check', () => {
  it('fails on a removed field that SCHEMA_CHANGES.md does not announce (an example in a code block is no announcement)', () => {
    const dir = repo(
      { 'schema.graphql': V1, 'SCHEMA_CHANGES.md': HEADER },
      { 'schema.graphql': WITHOUT_LABEL },
    );
    const { code, output } = check(dir);
    expect(code).not.toBe(0);
    expect(output).toContain('Field label was removed from object type EntityType');
    expect(output).toContain('unannounced breaking change');
  });

  it('passes the same removal when the same commit announces its path', () => {
    const dir = repo(
      { 'schema.graphql': V1, 'SCHEMA_CHANGES.md': HEADER },
      { 'schema.graphql': WITHOUT_LABEL, 'SCHEMA_CHANGES.md': ANNOUNCED },
    );
    const { code, output } = check(dir);
    expect(output).toContain('announced in SCHEMA_CHANGES.md');
    expect(code).toBe(0);
  });

  it('passes an added field', () => {
    const dir = repo({ 'schema.graphql': V1 }, { 'schema.graphql': WITH_ICON });
    const { code, output } = check(dir);
    expect(output).toContain('Field icon was added to object type EntityType');
    expect(code).toBe(0);
  });

  it('an announcement an earlier commit made does not cover a new removal of the path', () => {
    const dir = repo(
      { 'schema.graphql': V1, 'SCHEMA_CHANGES.md': ANNOUNCED },
      { 'schema.graphql': WITHOUT_LABEL },
    );
    expect(check(dir).code).not.toBe(0);
  });

  it('an announcement of another path does not cover the removal', () => {
    const dir = repo(
      { 'schema.graphql': V1, 'SCHEMA_CHANGES.md': HEADER },
      {
        'schema.graphql': WITHOUT_LABEL,
        'SCHEMA_CHANGES.md': `${HEADER}\n## Unreleased\n\n- BREAKING \`EntityType.name\`: renamed.\n`,
      },
    );
    const { code, output } = check(dir);
    expect(code).not.toBe(0);
    expect(output).toContain('announces `EntityType.name`, but no breaking change has that path');
  });

  it('SCHEMA_BASE picks the base: the working tree against HEAD', () => {
    const dir = repo({ 'schema.graphql': V1 });
    writeFileSync(join(dir, 'schema.graphql'), WITHOUT_LABEL);
    expect(check(dir, { SCHEMA_BASE: 'HEAD' }).code).not.toBe(0);
    writeFileSync(join(dir, 'schema.graphql'), WITH_ICON);
    expect(check(dir, { SCHEMA_BASE: 'HEAD' }).code).toBe(0);
  });

  it('passes with a note when the base has no schema.graphql, or there is no previous commit', () => {
    const noSchema = check(repo({ 'README.md': 'x' }, { 'schema.graphql': V1 }));
    expect(noSchema).toMatchObject({ code: 0 });
    expect(noSchema.output).toContain('HEAD~1 has no schema.graphql');
    const firstCommit = check(repo({ 'schema.graphql': V1 }));
    expect(firstCommit).toMatchObject({ code: 0 });
    expect(firstCommit.output).toContain('no HEAD~1');
  });

  it('fails when SCHEMA_BASE names no commit', () => {
    const { code, output } = check(repo({ 'schema.graphql': V1 }), { SCHEMA_BASE: 'no-such-ref' });
    expect(code).toBe(2);
    expect(output).toContain('SCHEMA_BASE=no-such-ref is not a commit');
  });
});
