// Starts one throwaway Neo4j for the whole test run (unless NEO4J_URI is set) and applies the migrations.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { createDriver } from '../src/db/driver.js';
import { createExecutor } from '../src/db/executor.js';
import { freePort, type LocalNeo4j, SUITE_NEO4J, startLocalNeo4j } from '../src/db/local-neo4j.js';
import { migrate } from '../src/db/migrations.js';

declare module 'vitest' {
  export interface ProvidedContext {
    neo4jUri: string;
  }
}

/**
 * The run's Neo4j, started once however many projects (vitest.config.ts) run this setup: kept on globalThis, since
 * each project may load this module afresh.
 */
const shared = globalThis as { metamodelTestNeo4j?: Promise<{ uri: string; stop(): Promise<void> }> };

async function startOnce() {
  let uri = process.env.NEO4J_URI;
  let local: LocalNeo4j | undefined;
  let dataDir: string | undefined;
  if (!uri) {
    dataDir = mkdtempSync(path.join(tmpdir(), 'metamodel-test-neo4j-'));
    local = await startLocalNeo4j({ dataDir, port: await freePort(), ...SUITE_NEO4J });
    uri = local.uri;
  }
  const driver = createDriver({ uri, user: process.env.NEO4J_USER, password: process.env.NEO4J_PASSWORD });
  try {
    await migrate(createExecutor(driver, { database: process.env.NEO4J_DATABASE }));
  } finally {
    await driver.close();
  }
  return {
    uri,
    async stop() {
      await local?.stop();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function setup(project: TestProject) {
  shared.metamodelTestNeo4j ??= startOnce();
  project.provide('neo4jUri', (await shared.metamodelTestNeo4j).uri);
}

export async function teardown() {
  const started = shared.metamodelTestNeo4j;
  shared.metamodelTestNeo4j = undefined;
  await (await started)?.stop();
}
