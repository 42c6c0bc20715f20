// Service processes for the load test's --instances N: each `node --import tsx src/server.ts` on its own port, all
// on one Neo4j, with shared token and cursor secrets. Their pino stdout is read as it comes: the daily purge's
// records (to tell which instance ran which scheduled firing) and the error records (what stands behind a 500).
// Every process is registered with bench/lib's `children`, so any exit path of the script ends it.
import { type ChildProcess, spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { children, cpuMsOf, sleep, stopChild } from '../../bench/lib.js';
import { freePort } from '../../src/db/local-neo4j.js';
import { HOST } from '../throwaway-service.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const START_TIMEOUT_MS = 120_000;
const STOP_GRACE_MS = 30_000;

/** One run of the daily job as an instance logged it ('daily purge started', then 'daily purge finished'). */
export interface PurgeRun {
  /** Epoch ms of the 'daily purge started' record. */
  started: number;
  /** Epoch ms of the scheduled firing, when the record names it (a `firing` field; the service logs none yet). */
  firing?: number;
  withdrawn: number;
  /** Epoch ms of the matching 'daily purge finished' record, if it came. */
  finished?: number;
  removed?: number;
  pending?: number;
}

export interface ServiceInstance {
  index: number;
  /** i0, i1, … */
  name: string;
  port: number;
  base: string;
  child: ChildProcess;
  /** False once killed by the script, or exited by itself. */
  alive: boolean;
  /** performance.now() when the script killed it. */
  killedAt?: number;
  /** Epoch ms when it answered /readyz, and when it was killed or stopped. */
  readySince: number;
  until?: number;
  /** Set when it exited without the script asking it to. */
  unexpectedExit?: string;
  purgeRuns: PurgeRun[];
  /** Firings (epoch ms) it logged as skipped ('daily purge skipped' with a `firing` field; none logged yet). */
  purgeSkips: number[];
  /** 'daily purge failed' and other error records (level 50+), the first few of them. */
  errorLines: string[];
  errorRecords: number;
  /** Warm-ups that made it ready ('database warmed: ready', src/db/readiness.ts): when, and each round's ms. */
  warmups: { time: number; ms: number; roundsMs: number[] }[];
  /** Lines that were not pino JSON (node-cron's warnings, a crash), the last few. */
  otherLines: string[];
  /** CPU time used so far, ms (Linux; null elsewhere). */
  cpuMs(): number | null;
}

/** Variables the service reads: none is inherited from this process's environment, only what is set here. */
const SERVICE_VARIABLE =
  /^(NODE_ENV|PORT|HOST|LOG_LEVEL|NEO4J_.*|AUTH_.*|CURSOR_SECRET|DEFAULT_TENANT|PURGE_.*|HTTP_.*|GRAPHQL_.*|CORS_ORIGINS|METRICS_TOKEN)$/;

function lineReader(onLine: (line: string) => void) {
  let buffered = '';
  return (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    let newline = buffered.indexOf('\n');
    while (newline >= 0) {
      onLine(buffered.slice(0, newline));
      buffered = buffered.slice(newline + 1);
      newline = buffered.indexOf('\n');
    }
  };
}

function readLog(instance: ServiceInstance, maxErrors: number) {
  const keepOther = (line: string) => {
    instance.otherLines.push(line.slice(0, 500));
    if (instance.otherLines.length > 20) instance.otherLines.shift();
  };
  const copy = process.env.LOADTEST_SERVICE_LOG;
  return lineReader((line) => {
    if (line.trim() === '') return;
    // Every line, access records too, to a file for whoever studies a run (LOADTEST_SERVICE_LOG=<file>).
    if (copy) appendFileSync(copy, `${line}\n`);
    // Most lines are access records: parse only the few this script reads.
    const purge = line.includes('"daily purge ');
    const warmed = line.includes('"database warmed');
    const error = line.includes('"level":50') || line.includes('"level":60');
    if (!purge && !warmed && !error && line.startsWith('{')) return;
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(line) as Record<string, unknown>;
    } catch {
      keepOther(line);
      return;
    }
    if (Number(record.level) >= 50) {
      instance.errorRecords += 1;
      if (instance.errorLines.length < maxErrors) instance.errorLines.push(line.slice(0, 2_000));
    }
    const time = Number(record.time);
    const firing = typeof record.firing === 'string' ? Date.parse(record.firing) : Number.NaN;
    if (record.msg === 'database warmed: ready') {
      instance.warmups.push({ time, ms: Number(record.ms), roundsMs: (record.roundsMs as number[]) ?? [] });
    } else if (record.msg === 'daily purge started' && record.scoped !== true) {
      instance.purgeRuns.push({
        started: time,
        withdrawn: Number(record.withdrawn ?? 0),
        ...(Number.isNaN(firing) ? {} : { firing }),
      });
    } else if (record.msg === 'daily purge skipped' && !Number.isNaN(firing)) {
      instance.purgeSkips.push(firing);
    } else if (record.msg === 'daily purge finished') {
      const run = instance.purgeRuns.findLast((r) => r.finished === undefined);
      if (run) {
        run.finished = time;
        run.removed = Number(record.removed ?? 0);
        run.pending = Number(record.pending ?? 0);
      }
    }
  });
}

async function waitReady(instance: ServiceInstance, exited: Promise<string>) {
  const deadline = performance.now() + START_TIMEOUT_MS;
  let gone: string | undefined;
  void exited.then((why) => {
    gone = why;
  });
  while (performance.now() < deadline) {
    if (gone !== undefined) {
      throw new Error(
        `${instance.name} exited during start-up (${gone}):\n${instance.otherLines.slice(-10).join('\n')}`,
      );
    }
    try {
      const res = await fetch(`${instance.base}/readyz`, { signal: AbortSignal.timeout(2_000) });
      await res.arrayBuffer();
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(200);
  }
  throw new Error(`${instance.name} was not ready within ${START_TIMEOUT_MS} ms`);
}

/** Starts `count` service processes on `env.NEO4J_URI` (in parallel) and resolves once every one is ready. */
export async function startInstances(options: {
  count: number;
  /** The service's configuration, the same for all (PORT is added per instance). */
  env: Record<string, string>;
  maxErrors: number;
}): Promise<ServiceInstance[]> {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !SERVICE_VARIABLE.test(k)),
  );
  const instances: ServiceInstance[] = [];
  const ready: Promise<void>[] = [];
  for (let index = 0; index < options.count; index++) {
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      cwd: ROOT,
      env: { ...inherited, ...options.env, PORT: String(port), HOST },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    const instance: ServiceInstance = {
      index,
      name: `i${index}`,
      port,
      base: `http://${HOST}:${port}`,
      child,
      alive: true,
      readySince: 0,
      purgeRuns: [],
      purgeSkips: [],
      warmups: [],
      errorLines: [],
      errorRecords: 0,
      otherLines: [],
      cpuMs: () => null,
    };
    // CPU time is read from /proc while the process runs; the last reading stands once it has gone.
    let lastCpu: number | null = null;
    instance.cpuMs = () => {
      const now = cpuMsOf(child.pid);
      if (now !== null && instance.alive) lastCpu = now;
      return lastCpu;
    };
    child.stdout?.on('data', readLog(instance, options.maxErrors));
    child.stderr?.on(
      'data',
      lineReader((line) => {
        if (line.trim() === '') return;
        instance.otherLines.push(line.slice(0, 500));
        if (instance.otherLines.length > 20) instance.otherLines.shift();
      }),
    );
    const exited = new Promise<string>((resolve) => {
      child.once('exit', (code, signal) => {
        children.delete(child);
        const why = signal ? `signal ${signal}` : `code ${code}`;
        if (instance.alive && instance.readySince > 0 && instance.until === undefined) {
          instance.unexpectedExit = why;
          instance.until = Date.now();
        }
        instance.alive = false;
        resolve(why);
      });
    });
    instances.push(instance);
    ready.push(
      waitReady(instance, exited).then(() => {
        instance.readySince = Date.now();
        instance.cpuMs();
      }),
    );
  }
  try {
    await Promise.all(ready);
  } catch (e) {
    await stopInstances(instances);
    throw e;
  }
  return instances;
}

/** SIGKILL: no shutdown, no lease released, connections cut as they are. */
export function killInstance(instance: ServiceInstance) {
  instance.cpuMs();
  instance.alive = false;
  instance.killedAt = performance.now();
  instance.until = Date.now();
  instance.child.kill('SIGKILL');
}

/** SIGTERM (the service drains requests in flight and stops its purge), SIGKILL after a grace period. */
export async function stopInstances(instances: ServiceInstance[]) {
  await Promise.all(
    instances.map(async (instance) => {
      if (instance.alive) {
        instance.cpuMs();
        instance.until = Date.now();
        instance.alive = false;
      }
      await stopChild(instance.child, STOP_GRACE_MS);
    }),
  );
}
