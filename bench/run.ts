// Benchmark (npm run bench): the service in its own process on its own Neo4j, a realistic catalog loaded with
// Cypher, autocannon at several connection counts per scenario, and in the same run the baselines:
//   (a) the same Cypher straight through neo4j-driver, no HTTP (the database limit),
//   (b) Fastify answering a constant JSON body (the HTTP limit),
//   (c) the same GraphQL question served by @neo4j/graphql on the same data.
// Prints a table and writes bench/results/latest.{md,svg,json}. Traffic goes to 127.0.0.1 only; every phase is
// bounded in time; child processes and the throwaway Neo4j are removed on every exit path.
// Last comes the hostile-request storm (issue #11, bench/storm.ts): over-limit, many-valued, deep and slow bodies and
// costly GraphQL documents, phase by phase, with the service's RSS sampled and /healthz probed throughout.
//   npm run bench -- [--quick] [--seconds 5] [--warmup 1] [--connections 1,16,64] [--log-level info]
//                    [--only page-start,graphql] [--big-types 100000] [--cpu-prof] [--storm-only]
//                    [--node-flags '--trace-gc']
//   --storm-only   the storm alone, in a couple of minutes: Neo4j and the service start as usual, but no catalog is
//                  loaded (the storm creates the two types it needs in a tenant of its own), no baseline starts and

import { type ChildProcess, spawnSync } from 'node:child_process';
import { copyFileSync, readdirSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Driver } from 'neo4j-driver';
import { mintToken } from '../src/auth/tokens.js';
import { createDriver } from '../src/db/driver.js';
import { createExecutor } from '../src/db/executor.js';
import { freePort, type LocalNeo4j, startLocalNeo4j } from '../src/db/local-neo4j.js';
import { migrate } from '../src/db/migrations.js';
import { hostileStorm } from './hostile-storm.js';
import { children, serviceNodeFlags, sleep, stopChild, withTimeout } from './lib.js';
import {
  BIG_TYPES,
  CPU_PROF,
  DATABASE,
  DEEP_ROW,
  env,
  fmt,
  GRAPHQL_MAX_SECONDS,
  GRAPHQL_MIN,
  GRAPHQL_PER_CONNECTION,
  HOST,
  LEVELS,
  LOG_LEVEL,
  log,
  NODE_FLAGS,
  PREVIOUS,
  QUICK,
  RESULTS,
  ROOT,
  SECONDS,
  STORM_BUDGET_MS,
  STORM_ONLY,
  STORM_TENANT,
  TARGET_LEVEL,
  WARMUP,
} from './options.js';
import type { Report } from './report.js';
import { renderMarkdown } from './report-markdown.js';
import { renderSvg } from './report-svg.js';
import { renderTable } from './report-text.js';
import { measureScenarios } from './scenarios.js';
import { apiFor, RssSampler, startService, summariseProfile } from './service.js';

async function main(): Promise<number> {
  const started = performance.now();
  let local: LocalNeo4j | undefined;
  let workDir: string | undefined;
  let driver: Driver | undefined;
  let service: { child: ChildProcess; tail: () => string } | undefined;
  const baselineChildren: ChildProcess[] = [];
  let sampler: RssSampler | undefined;
  const phases: Record<string, number> = {};
  let phaseStarted = performance.now();
  const mark = (name: string) => {
    phases[name] = (performance.now() - phaseStarted) / 1000;
    phaseStarted = performance.now();
  };
  try {
    workDir = await mkdtemp(path.join(os.tmpdir(), 'bench-'));
    workDirToRemove = workDir;
    let uri = env.NEO4J_URI;
    if (!uri) {
      const port = await freePort();
      log(`Starting a throwaway Neo4j on ${HOST}:${port} ...`);
      local = await startLocalNeo4j({
        dataDir: path.join(workDir, 'neo4j'),
        port,
        heapMb: 1536,
        pageCacheMb: 512,
      });
      children.add(local.process);
      uri = local.uri;
    } else {
      log(`Using NEO4J_URI=${uri} (Neo4j's CPU is not measured: its process is not ours)`);
    }
    driver = createDriver({ uri, user: env.NEO4J_USER, password: env.NEO4J_PASSWORD });
    const exec = createExecutor(driver, { database: DATABASE });
    await migrate(exec);
    mark('neo4j');

    const secret = `bench-${Math.random().toString(36).slice(2)}-0123456789abcdefghijklmnopqrstuvwxyz`;
    const profileDir = CPU_PROF ? path.join(workDir, 'profile') : undefined;
    const svc = await startService(uri, secret, workDir, profileDir);
    service = svc;
    sampler = new RssSampler(svc.child.pid);
    sampler.every(500);
    log(`Service: ${svc.base} (pid ${svc.child.pid}, LOG_LEVEL=${LOG_LEVEL}, NODE_ENV=production)`);
    mark('service start');

    const tokens = new Map<string, string>();
    const tokenOf = async (tenant: string) => {
      let t = tokens.get(tenant);
      if (!t) {
        t = `Bearer ${await mintToken(secret, { tenant })}`;
        tokens.set(tenant, t);
      }
      return t;
    };

    const scenarioRun = STORM_ONLY
      ? null
      : await measureScenarios({
          sampler,
          driver,
          uri,
          exec,
          svc,
          secret,
          tokenOf,
          mark,
          neo4jPid: local?.process.pid,
          baselineChildren,
        });

    // ---- the hostile-request storm ----
    const storm = await withTimeout(
      'the storm',
      hostileStorm(svc.port, apiFor(svc.base, await tokenOf(STORM_TENANT)), sampler),
      STORM_BUDGET_MS,
    );
    sampler.every(500);
    sampler.phase = 'after';
    await sleep(1_000);
    const rssAfter = sampler.sample();
    mark('storm');

    // The service still answers after everything.
    const after = await storm.api.call('GET', '/entities/types?page_size=1');
    if (after.status !== 200)
      throw new Error(`the service no longer answers after the storm: ${after.status}`);

    // ---- stop the children before reporting (the CPU profile is written on exit) ----
    sampler.stop();
    const exitCode = await stopChild(svc.child, 30_000);
    service = undefined;
    let profile: ReturnType<typeof summariseProfile> | undefined;
    if (profileDir) {
      const file = readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'));
      if (file) {
        profile = summariseProfile(path.join(profileDir, file));
        await mkdir(RESULTS, { recursive: true });
        copyFileSync(path.join(profileDir, file), path.join(RESULTS, 'service.cpuprofile.tmp'));
      }
    }

    mark('stop');
    const report: Report = {
      date: new Date().toISOString(),
      machine: {
        cpus: os.cpus().length,
        cpuModel: os.cpus()[0]?.model ?? 'unknown',
        memoryGb: Math.round(os.totalmem() / 1024 ** 3),
        node: process.version,
        neo4j: local
          ? 'local Community 5.26 (throwaway, heap 1536 MB, page cache 512 MB)'
          : `NEO4J_URI ${uri}`,
      },
      settings: {
        graphqlRequests: {
          perConnection: GRAPHQL_PER_CONNECTION,
          min: GRAPHQL_MIN,
          maxSeconds: GRAPHQL_MAX_SECONDS,
        },
        quick: QUICK,
        seconds: SECONDS,
        warmup: WARMUP,
        levels: LEVELS,
        targetLevel: TARGET_LEVEL,
        logLevel: LOG_LEVEL,
        serviceCommand: ['node', ...serviceNodeFlags(), ...NODE_FLAGS, 'dist/server.js'].join(' '),
        stormOnly: STORM_ONLY,
      },
      catalog: scenarioRun
        ? {
            tenants: scenarioRun.catalog.tenants.length,
            bigTenantTypes: BIG_TYPES,
            deepRow: DEEP_ROW,
            ...scenarioRun.catalog.counts,
            loadSeconds: scenarioRun.catalog.seconds,
          }
        : null,
      scenarios: (scenarioRun?.active ?? []).map((s) => ({
        id: s.id,
        label: s.label,
        baselineA: !!s.direct,
        graphql: !!s.graphql,
      })),
      measurements: scenarioRun?.measurements ?? [],
      graphqlRoundTrips: scenarioRun?.roundTrips ?? [],
      pageWalk: scenarioRun?.pageWalk ?? null,
      neo4jGraphql: scenarioRun?.neo4jGraphql ?? { ok: false, problem: 'not run (--storm-only)' },
      previous: PREVIOUS,
      memory: {
        maxRssMb: sampler.max,
        afterRssMb: rssAfter,
        phases: Object.fromEntries(sampler.phaseMax),
        series: sampler.series,
        storms: storm.phases,
        stormSetup: storm.setup,
      },
      serviceExitCode: exitCode,
      profile: profile ?? null,
      phases,
      totalSeconds: (performance.now() - started) / 1000,
    };

    // A storm-only run writes storm.{md,json}, leaving the full run's latest.{md,svg,json} as they are.
    const files = STORM_ONLY ? ['storm.json', 'storm.md'] : ['latest.json', 'latest.md', 'latest.svg'];
    await mkdir(RESULTS, { recursive: true });
    await writeFile(path.join(RESULTS, files[0]!), `${JSON.stringify(report, null, 2)}\n`);
    await writeFile(path.join(RESULTS, files[1]!), renderMarkdown(report));
    if (!STORM_ONLY) await writeFile(path.join(RESULTS, files[2]!), renderSvg(report));
    // The results are committed: formatted the way `npm run lint` (Biome) wants them.
    const biome = spawnSync(
      path.join(ROOT, 'node_modules', '.bin', 'biome'),
      ['check', '--write', ...files.map((f) => `bench/results/${f}`)],
      { cwd: ROOT, encoding: 'utf8', timeout: 60_000 },
    );
    if (biome.status !== 0)
      log(`(biome check --write of the results failed: ${biome.stderr || biome.error?.message})`);
    console.log(`\n${renderTable(report)}`);
    console.log(
      `Written: ${files.map((f) => `bench/results/${f}`).join(', ')} (${fmt(report.totalSeconds, 0)} s in all).`,
    );
    return 0;
  } catch (e) {
    console.error(`bench: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    if (service) console.error(`service log (last lines):\n${service.tail()}`);
    return 1;
  } finally {
    sampler?.stop();
    const quietly = async (what: string, work: () => Promise<unknown>) => {
      try {
        await withTimeout(what, work(), 60_000);
      } catch (e) {
        console.error(`bench: ${e instanceof Error ? e.message : String(e)}`);
      }
    };
    const svcChild = service?.child;
    if (svcChild) await quietly('stopping the service', () => stopChild(svcChild, 20_000));
    for (const child of baselineChildren)
      await quietly('stopping a baseline', () => stopChild(child, 10_000));
    const [openDriver, openLocal, dir] = [driver, local, workDir];
    if (openDriver) await quietly('closing the driver', () => openDriver.close());
    if (openLocal) {
      await quietly('stopping Neo4j', () => openLocal.stop());
      children.delete(openLocal.process);
    }
    if (dir && NODE_FLAGS.length > 0) {
      // What the flags made the service print (a GC trace, say) outlives the work directory.
      const kept = path.join(os.tmpdir(), 'bench-service.log');
      await quietly('keeping the service log', async () => copyFileSync(path.join(dir, 'service.log'), kept));
      console.log(`bench: the service's log is kept at ${kept}`);
    }
    if (dir) await quietly('removing the work directory', () => rm(dir, { recursive: true, force: true }));
    workDirToRemove = undefined;
  }
}

// Last resort: whatever hangs, the process ends by itself (children are killed on exit, the work directory
// with the throwaway Neo4j is removed).
let workDirToRemove: string | undefined;
process.on('exit', () => {
  if (workDirToRemove) rmSync(workDirToRemove, { recursive: true, force: true });
});
const budgetSeconds =
  900 +
  STORM_BUDGET_MS / 1000 +
  LEVELS.length * (14 * (SECONDS + WARMUP + 3) * 1.5 + 2 * (GRAPHQL_MAX_SECONDS + 60));
setTimeout(() => {
  console.error(`bench: watchdog expired after ${Math.round(budgetSeconds)} s, exiting`);
  process.exit(2);
}, budgetSeconds * 1000).unref();
process.once('SIGINT', () => {
  console.error('bench: interrupted');
  process.exit(130);
});

process.exit(await main());
