// The outside fuzzer (issue #11): schemathesis, run from its own virtual environment, against a service started
// here on a throwaway Neo4j (or NEO4J_URI). Three runs, every check schemathesis has (`--checks all`), a bounded
// number of examples and a fixed seed: the REST API from /openapi.json with a tenant's token, the same with an
// operator's token (the /admin paths answer rather than refuse), and GraphQL from /graphql. Exits non-zero when any
// run reports a failure, or when the service logged an unexpected error.
//
//   npm run fuzz -- [--examples 20] [--seed 20261123] [--only rest-tenant,rest-operator,graphql]
//
// schemathesis is looked for at $SCHEMATHESIS, then .venv-fuzz/bin/schemathesis (what .ci/run installs from
// scripts/fuzz-requirements.txt).
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { FastifyInstance } from 'fastify';
import type { Driver } from 'neo4j-driver';
import pino from 'pino';
import { buildApp } from '../src/app.js';
import { mintToken } from '../src/auth/tokens.js';
import { parseConfig } from '../src/config.js';
import { createDriver } from '../src/db/driver.js';
import { createExecutor } from '../src/db/executor.js';
import { freePort, type LocalNeo4j, startLocalNeo4j } from '../src/db/local-neo4j.js';
import { migrate } from '../src/db/migrations.js';

const HOST = '127.0.0.1';
const ROOT = path.resolve(import.meta.dirname, '..');
const { values: argv } = parseArgs({
  options: {
    examples: { type: 'string', default: '20' },
    seed: { type: 'string', default: '20261123' },
    only: { type: 'string' },
  },
});
const RUNS = ['rest-tenant', 'rest-operator', 'graphql'] as const;
type RunName = (typeof RUNS)[number];
const only = argv.only ? new Set(argv.only.split(',')) : null;
const unknown = [...(only ?? [])].filter((name) => !RUNS.includes(name as RunName));
if (unknown.length > 0)
  throw new Error(`--only: unknown run(s) ${unknown.join(', ')}; known: ${RUNS.join(', ')}`);

function schemathesisBin(): string {
  const candidates = [process.env.SCHEMATHESIS, path.join(ROOT, '.venv-fuzz', 'bin', 'schemathesis')];
  for (const candidate of candidates) if (candidate && existsSync(candidate)) return candidate;
  throw new Error(
    'schemathesis not found: set SCHEMATHESIS, or install it with\n' +
      '  python3 -m venv .venv-fuzz && .venv-fuzz/bin/pip install -r scripts/fuzz-requirements.txt',
  );
}

/** Runs schemathesis with `args` and `env`; its output goes straight to ours. Resolves with its exit code. */
function schemathesis(
  bin: string,
  args: string[],
  env: Record<string, string>,
  timeoutMs: number,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, ['--config-file', path.join(ROOT, 'scripts', 'fuzz.toml'), ...args], {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, ...env, NO_COLOR: '1', SCHEMATHESIS_TELEMETRY: 'false' },
    });
    const timer = setTimeout(() => {
      console.error(`fuzz: schemathesis still running after ${timeoutMs / 1000} s; stopping it`);
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve(code ?? (signal ? 128 : 1));
    });
  });
}

async function main(): Promise<number> {
  const bin = schemathesisBin();
  let local: LocalNeo4j | undefined;
  let dataDir: string | undefined;
  let driver: Driver | undefined;
  let app: FastifyInstance | undefined;
  const errorLog: string[] = [];
  try {
    let uri = process.env.NEO4J_URI;
    if (!uri) {
      dataDir = await mkdtemp(path.join(os.tmpdir(), 'fuzz-neo4j-'));
      console.log('fuzz: starting a throwaway Neo4j ...');
      local = await startLocalNeo4j({ dataDir, port: await freePort(), heapMb: 768 });
      uri = local.uri;
    }
    driver = createDriver({
      uri,
      user: process.env.NEO4J_USER ?? 'neo4j',
      password: process.env.NEO4J_PASSWORD ?? 'neo4j',
    });
    await migrate(createExecutor(driver, process.env.NEO4J_DATABASE || undefined));
    const secret = randomBytes(24).toString('hex');
    const config = parseConfig({
      NODE_ENV: 'test',
      AUTH_JWT_SECRET: secret,
      NEO4J_URI: uri,
      NEO4J_DATABASE: process.env.NEO4J_DATABASE ?? '',
      LOG_LEVEL: 'silent',
    });
    // Errors the service logs (what stands behind a 500) are kept and make the run fail.
    const logger = pino(
      { level: 'error' },
      {
        write(line: string) {
          if (errorLog.length < 50) errorLog.push(line.slice(0, 2_000));
        },
      },
    );
    app = await buildApp({ config, driver, logger });
    const port = await freePort();
    await app.listen({ port, host: HOST });
    const base = `http://${HOST}:${port}`;

    const tenant = `fuzz-${randomUUID().slice(0, 8)}`;
    const tokens: Record<RunName, string> = {
      'rest-tenant': await mintToken(secret, { tenant }),
      'rest-operator': await mintToken(secret, { tenant: 'default', roles: ['admin'] }),
      graphql: await mintToken(secret, { tenant }),
    };
    const common = [
      '--checks',
      'all',
      '--max-examples',
      argv.examples as string,
      '--seed',
      argv.seed as string,
      '--workers',
      '2',
      '--generation-database',
      'none',
      '--request-timeout',
      '30',
      '--no-color',
    ];
    /** A real page cursor of the token's tenant (two types exist, a page of one leaves a next cursor). */
    const cursorFor = async (token: string) => {
      const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
      for (const name of ['Fuzz Cursor One', 'Fuzz Cursor Two']) {
        await fetch(`${base}/entities/types`, { method: 'POST', headers, body: JSON.stringify({ name }) });
      }
      const page = (await (await fetch(`${base}/entities/types?page_size=1`, { headers })).json()) as {
        DATA?: { next_cursor?: string };
      };
      const cursor = page.DATA?.next_cursor;
      if (!cursor) throw new Error(`fuzz: no next_cursor in ${JSON.stringify(page)}`);
      return cursor;
    };
    const failed: string[] = [];
    for (const run of RUNS) {
      if (only && !only.has(run)) continue;
      const location = run === 'graphql' ? `${base}/graphql` : `${base}/openapi.json`;
      console.log(`\nfuzz: ${run}: schemathesis run ${location} ...`);
      const code = await schemathesis(
        bin,
        ['run', location, '--header', `Authorization: Bearer ${tokens[run]}`, ...common],
        { FUZZ_CURSOR: await cursorFor(tokens[run]) },
        15 * 60_000,
      );
      if (code !== 0) failed.push(`${run} (exit ${code})`);
    }
    if (errorLog.length > 0) {
      console.log('\nfuzz: the service logged unexpected errors:');
      for (const line of errorLog) console.log(line);
      failed.push('service error log');
    }
    console.log(failed.length === 0 ? '\nfuzz: every run passed' : `\nfuzz: FAILED: ${failed.join(', ')}`);
    return failed.length === 0 ? 0 : 1;
  } finally {
    await app?.close().catch(() => undefined);
    await driver?.close().catch(() => undefined);
    await local?.stop().catch(() => undefined);
    if (dataDir) await rm(dataDir, { recursive: true, force: true }).catch(() => undefined);
  }
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(error);
    process.exit(2);
  },
);
