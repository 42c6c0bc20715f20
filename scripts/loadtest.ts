// Load test (npm run loadtest): mixed REST traffic from many clients across many tenants (autocannon), then a
// check of the invariants in Neo4j. Traffic goes to 127.0.0.1 only; every phase is bounded in time.
//   npm run loadtest -- [--seconds 30] [--connections 50] [--tenants 20] [--seed 195] [--instances 1]
//   npm run loadtest -- --fault neo4j-restart [--seconds 15] [--connections 16] [--tenants 4] [--runs 1]
//                       [--retry-storm without|with|both]
// With --instances N (2 or more) the service runs as N processes of its own on the one Neo4j, the clients spread
// over them, and the run also checks what only several instances can break (see the section "--instances N").

import { randomBytes, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { withTimeout } from '../bench/lib.js';
import { carryUnderTraffic, checkCarry, setUpCarry } from './loadtest/carry.js';
import { cluster, setCluster, setLeaseHoldersBefore } from './loadtest/cluster.js';
import { checkCluster, printInstances, runClusterTraffic } from './loadtest/cluster-run.js';
import { runNeo4jRestartFault } from './loadtest/fault.js';
import { recoveriesVerdict } from './loadtest/fault-verdict.js';
import { HttpTarget } from './loadtest/http.js';
import { type ServiceInstance, startInstances, stopInstances } from './loadtest/instances.js';
import { checkDatabase, outcomes, rows } from './loadtest/invariants.js';
import {
  CONNECTIONS,
  FAULT,
  FAULT_RUNS,
  HOT_TYPES,
  INSTANCES,
  PERSONS,
  PURGE_PERIOD_SECONDS,
  RETRY_STORMS,
  SECONDS,
  SEED,
  SEEDED_TENANTS,
  TENANTS,
} from './loadtest/options.js';
import { printRecoverySummary, type Recovery } from './loadtest/recovery.js';
import { printOutcomes, printTraffic } from './loadtest/report.js';
import { setUpTenant, type Target } from './loadtest/setup.js';
import { declarations, tenants } from './loadtest/state.js';
import { runTraffic } from './loadtest/traffic.js';
import { loadtestVerdict } from './loadtest/verdict.js';
import {
  HOST,
  startThrowawayNeo4j,
  startThrowawayService,
  type ThrowawayNeo4j,
  type ThrowawayService,
} from './throwaway-service.js';

// ---- main ----

async function setUpTenants(targets: Target[], secret: string) {
  const run = randomUUID().slice(0, 8);
  console.log(
    `Setting up ${TENANTS} tenants (load-${run}-*): ${HOT_TYPES} hot types, Person and ${PERSONS} persons, ` +
      `${SEED} definitions on the first hot type of ${SEEDED_TENANTS} of them ...`,
  );
  const setupStarted = performance.now();
  tenants.push(
    ...(await withTimeout(
      'setup',
      Promise.all(
        Array.from({ length: TENANTS }, (_, i) =>
          setUpTenant(targets[i % targets.length]!, secret, `load-${run}-${i}`, i < SEEDED_TENANTS),
        ),
      ),
      600_000,
    )),
  );
  console.log(`Setup done in ${((performance.now() - setupStarted) / 1000).toFixed(1)} s.`);
}

/** The invariants, the service's error log, the verdict (loadtest/verdict.ts): an error logged fails the run. */
function finish(errorLog: string[]): number {
  printOutcomes();
  if (errorLog.length > 0) {
    console.log('\nservice error log (first entries):');
    for (const line of errorLog.slice(0, 5)) console.log(`  ${line.trim()}`);
  }
  const verdict = loadtestVerdict(outcomes, errorLog);
  console.log(
    verdict.ok
      ? `\nAll ${outcomes.length} invariants hold, each over at least one case; the service logged no error.`
      : `\nFAILED:\n${verdict.reasons.map((r) => `  ${r}`).join('\n')}`,
  );
  return verdict.ok ? 0 : 1;
}

/** --instances 1: the service in this process, autocannon driving it. */
async function mainInProcess(): Promise<number> {
  let service: ThrowawayService | undefined;
  try {
    service = await startThrowawayService({
      label: 'loadtest',
      heapMb: 1024,
      maxErrors: 20,
      env: { PURGE_GRACE_SECONDS: '0' },
    });
    const { base, secret, driver, errorLog } = service;

    await setUpTenants([{ base, index: 0 }], secret);
    const carry = await setUpCarry(base, secret);

    console.log(
      `Traffic: ${CONNECTIONS} connections for ${SECONDS} s to ${base}, and an enumeration narrowed under it (its values carried) ...`,
    );
    const cpuBefore = process.cpuUsage();
    const [result] = await withTimeout(
      'traffic',
      Promise.all([runTraffic(base), carryUnderTraffic(carry, SECONDS)]),
      (SECONDS + 120) * 1000,
    );
    const cpu = process.cpuUsage(cpuBefore);
    for (const d of declarations.values()) if (d.withdrawal === 'pending') d.withdrawal = 'unknown';
    await withTimeout('the carried redeclaration', checkCarry(carry), 300_000);

    // Requests still in the service finish before the database is checked.
    await service.closeApp();

    const cpuSeconds = (cpu.user + cpu.system) / 1e6;
    printTraffic(result, `this process (service + load generator) used ${cpuSeconds.toFixed(1)} s of CPU`);
    await withTimeout('database checks', checkDatabase(driver), 600_000);
    return finish(errorLog);
  } catch (e) {
    console.error(`loadtest: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  } finally {
    await service?.close();
  }
}

/** --instances N: N service processes on one Neo4j, the clients spread over them, one killed halfway. */
async function mainInstances(): Promise<number> {
  let neo4jServer: ThrowawayNeo4j | undefined;
  let instances: ServiceInstance[] = [];
  // Once, whoever asks first (the end of the run, or a signal); every caller waits for the same.
  let cleaning: Promise<void> | undefined;
  const cleanUp = () => {
    cleaning ??= (async () => {
      await stopInstances(instances);
      for (const target of cluster?.targets ?? []) target.close();
      await neo4jServer?.close();
    })();
    return cleaning;
  };
  // Interrupted: the service processes and the throwaway Neo4j go too.
  const onSignal = (signal: NodeJS.Signals) => {
    console.error(`loadtest: ${signal}, stopping`);
    void cleanUp().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    neo4jServer = await startThrowawayNeo4j({ label: 'loadtest', heapMb: 1024 });
    setLeaseHoldersBefore(
      (
        await rows(
          neo4jServer.driver,
          'MATCH (l:JobLease) WHERE l.until > datetime() RETURN collect(DISTINCT l.holder) AS holders',
        )
      )[0]?.holders as string[],
    );
    const secret = randomBytes(24).toString('hex');
    const settings: Record<string, string | undefined> = {
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      NEO4J_URI: neo4jServer.uri,
      NEO4J_USER: neo4jServer.user,
      NEO4J_PASSWORD: neo4jServer.password,
      NEO4J_DATABASE: neo4jServer.database,
      AUTH_JWT_SECRET: secret,
      CURSOR_SECRET: randomBytes(24).toString('hex'),
      PURGE_CRON: `*/${PURGE_PERIOD_SECONDS} * * * * *`,
      PURGE_GRACE_SECONDS: '0',
    };
    const env = Object.fromEntries(
      Object.entries(settings).filter((e): e is [string, string] => e[1] !== undefined),
    );
    console.log(
      `Starting ${INSTANCES} service processes (node --import tsx src/server.ts; daily purge every ` +
        `${PURGE_PERIOD_SECONDS} s) ...`,
    );
    const startedAt = performance.now();
    instances = await startInstances({ count: INSTANCES, env, maxErrors: 20 });
    console.log(
      `Ready in ${((performance.now() - startedAt) / 1000).toFixed(1)} s: ` +
        instances.map((i) => `${i.name} pid ${i.child.pid} ${i.base}`).join(', '),
    );
    setCluster({
      instances,
      targets: instances.map((i) => new HttpTarget(HOST, i.port, CONNECTIONS)),
      counts: instances.map(() => ({
        setup: 0,
        traffic: 0,
        checks: 0,
        byClass: new Map(),
        connectionErrors: 0,
      })),
    });

    await setUpTenants(
      instances.map((i) => ({ base: i.base, index: i.index })),
      secret,
    );

    console.log(
      `Traffic: ${CONNECTIONS} connections for ${SECONDS} s spread over ${INSTANCES} instances; ` +
        `${instances[instances.length - 1]!.name} is killed halfway ...`,
    );
    const cpuBefore = process.cpuUsage();
    const serviceCpuBefore = instances.map((i) => i.cpuMs());
    const result = await withTimeout('traffic', runClusterTraffic(), (SECONDS + 120) * 1000);
    const cpu = process.cpuUsage(cpuBefore);
    const serviceCpu = instances.map((i, n) => {
      const [before, after] = [serviceCpuBefore[n], i.cpuMs()];
      return before === null || before === undefined || after === null ? null : after - before;
    });
    for (const d of declarations.values()) if (d.withdrawal === 'pending') d.withdrawal = 'unknown';

    // Requests still in the services finish before the database is checked (every client has its answers).
    await stopInstances(instances);

    const cpuSeconds = (cpu.user + cpu.system) / 1e6;
    const servicesSeconds = serviceCpu.reduce<number>((sum, ms) => sum + (ms ?? 0), 0) / 1000;
    printTraffic(
      result,
      `this process (load generator) used ${cpuSeconds.toFixed(1)} s of CPU, the service processes ${servicesSeconds.toFixed(1)} s`,
    );
    printInstances(serviceCpu);
    await withTimeout('database checks', checkDatabase(neo4jServer.driver), 600_000);
    await withTimeout('checks across instances', checkCluster(neo4jServer.driver), 60_000);
    const errorLog = instances.flatMap((i) => i.errorLines.map((line) => `${i.name}: ${line}`));
    for (const i of instances) {
      if (i.unexpectedExit)
        errorLog.push(`${i.name} exited (${i.unexpectedExit}): ${i.otherLines.slice(-5).join(' | ')}`);
    }
    return finish(errorLog);
  } catch (e) {
    console.error(`loadtest: ${e instanceof Error ? e.message : String(e)}`);
    for (const i of instances) {
      if (i.unexpectedExit) console.error(`${i.name} exited by itself (${i.unexpectedExit})`);
      const said = [...i.otherLines.slice(-10), ...i.errorLines.slice(0, 5)];
      if (said.length > 0) console.error(`${i.name} said:\n  ${said.join('\n  ')}`);
    }
    return 1;
  } finally {
    await cleanUp();
  }
}

/** The fault variant, FAULT_RUNS times for each retry storm asked for; then the recovery figures over the runs. */
async function faultRuns(): Promise<number> {
  const recoveries: Recovery[] = [];
  let code = 0;
  for (let run = 0; run < FAULT_RUNS; run++) {
    for (const retryStorm of RETRY_STORMS) {
      const result = await runNeo4jRestartFault({
        seconds: SECONDS,
        connections: CONNECTIONS,
        tenants: TENANTS,
        retryStorm,
      });
      code = Math.max(code, result.code);
      if (result.recovery) recoveries.push(result.recovery);
    }
  }
  printRecoverySummary(recoveries);
  // The aims over the runs (the median first success and write p99 after it), each run's own checks beside.
  const summary = recoveriesVerdict(recoveries);
  console.log(
    summary.ok ? '\nThe recovery aims hold.' : `\nFAILED: ${summary.reasons.map((r) => `\n  ${r}`).join('')}`,
  );
  return summary.ok ? code : Math.max(code, 1);
}

process.exit(await (FAULT ? faultRuns() : INSTANCES === 1 ? mainInProcess() : mainInstances()));
