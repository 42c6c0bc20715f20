// Small helpers for the bench and the load test: autocannon's typed surface, process CPU and memory from /proc, percentiles,
// child processes that announce their port, and time limits.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { ConfigError, parseConfig } from '../src/config.js';

// ---- autocannon (no type declarations ship with it): the part of its API the bench uses ----

export interface CannonRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string | Buffer | undefined;
  [key: string]: unknown;
}
export interface CannonOptions<Context = Record<string, unknown>> {
  url: string;
  connections: number;
  /** Seconds to run; ignored when `amount` is set. */
  duration?: number;
  /** Requests to send in all, then stop. */
  amount?: number;
  timeout: number;
  requests: {
    setupRequest: (req: CannonRequest, context: Context) => CannonRequest;
    onResponse: (
      status: number,
      body: string,
      context: Context,
      headers: Record<string, string | string[]>,
    ) => void;
  }[];
}
export interface CannonHistogram {
  average: number;
  p50: number;
  p99: number;
  max: number;
  total: number;
  sent?: number;
}
export interface CannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  '2xx': number;
  '4xx': number;
  '5xx': number;
  latency: CannonHistogram;
  requests: CannonHistogram;
}
export interface CannonInstance {
  stop(): void;
  on(
    event: 'response',
    listener: (client: unknown, status: number, bytes: number, responseTimeMs: number) => void,
  ): void;
}
export type Autocannon = <Context = Record<string, unknown>>(
  options: CannonOptions<Context>,
  done: (error: Error | null, result: CannonResult) => void,
) => CannonInstance;
export const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

// ---- numbers ----

/** Percentile of an ascending-sorted list (nearest rank). */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))]!;
}

/** A growable list of latencies (ms) that sorts without boxing. */
export class Samples {
  private data = new Float64Array(1024);
  length = 0;
  push(v: number) {
    if (this.length === this.data.length) {
      const next = new Float64Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
  append(other: Samples) {
    for (let i = 0; i < other.length; i++) this.push(other.data[i]!);
  }
  sorted(): Float64Array {
    return this.data.slice(0, this.length).sort();
  }
}

// ---- /proc: CPU time and resident set of a process (Linux) ----

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** CPU time (user + system) a process has used so far, in ms; null when it cannot be read. */
export function cpuMsOf(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return null;
  }
}

/** Machine-wide CPU ticks so far (all cores): busy (user, nice, system, irq, softirq), steal, and everything. */
export function machineTicks(): { busy: number; steal: number; total: number } | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
    const [user, nice, system, idle, iowait, irq, softirq, steal] = line
      .trim()
      .split(/\s+/)
      .slice(1, 9)
      .map(Number);
    const busy = user! + nice! + system! + irq! + softirq!;
    return { busy, steal: steal!, total: busy + idle! + iowait! + steal! };
  } catch {
    return null;
  }
}

/** Resident set of a process in MB; null when it cannot be read. */
export function rssMbOf(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

// ---- time limits ----

/**
 * The flags `npm start` gives node (package.json's start script, its `node … dist/server.js` command): the bench
 * starts the service with exactly these, so that what it measures is what users run.
 */
export function serviceNodeFlags(): string[] {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    scripts: { start: string };
  };
  const command = pkg.scripts.start.split('&&').at(-1)?.trim().split(/\s+/) ?? [];
  if (command[0] !== 'node' || command.at(-1) !== 'dist/server.js')
    throw new Error(`package.json start does not end with "node … dist/server.js": ${pkg.scripts.start}`);
  return command.slice(1, -1);
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export function withTimeout<T>(what: string, promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
    timer.unref();
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}

// ---- child processes ----

/** Every child the bench started, so that any exit path can end them. */
export const children = new Set<ChildProcess>();

process.on('exit', () => {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
});

/** Stops a child: SIGTERM, then SIGKILL after `graceMs`. */
export function stopChild(child: ChildProcess, graceMs = 20_000): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      children.delete(child);
      return resolve(child.exitCode);
    }
    const force = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', (code) => {
      clearTimeout(force);
      children.delete(child);
      resolve(code);
    });
    child.kill('SIGTERM');
  });
}

/**
 * Starts `node --import tsx <script>` with `env`; resolves with the port once it prints `LISTENING <port>`.
 * Its output is kept (last 50 lines) for error messages.
 */
export async function startAnnouncingChild(
  script: string,
  env: Record<string, string>,
  cwd: string,
  timeoutMs = 120_000,
): Promise<{ child: ChildProcess; port: number; output: string[] }> {
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const output: string[] = [];
  const keep = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (line.trim() === '') continue;
      output.push(line);
      if (output.length > 50) output.shift();
    }
  };
  child.stderr?.on('data', keep);
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${script} did not listen within ${timeoutMs} ms`)),
      timeoutMs,
    );
    child.stdout?.on('data', (chunk: Buffer) => {
      keep(chunk);
      const m = /LISTENING (\d+)/.exec(chunk.toString('utf8'));
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited during start-up (code ${code}):\n${output.join('\n')}`));
    });
  });
  return { child, port, output };
}

/**
 * NEO4J_* from the environment (and any `extra` settings), checked like the service's own configuration (exits 2
 * when bad).
 */
export function neo4jSettings(extra: Record<string, string> = {}) {
  try {
    return parseConfig({
      NEO4J_URI: process.env.NEO4J_URI ?? '',
      NEO4J_USER: process.env.NEO4J_USER ?? '',
      NEO4J_PASSWORD: process.env.NEO4J_PASSWORD ?? '',
      NEO4J_DATABASE: process.env.NEO4J_DATABASE ?? '',
      ...extra,
    });
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    console.error(e.message);
    process.exit(2);
  }
}

/** A restart bench's `--runs` (an integer in 1..20; `fallback` without it): exits 2 with the rule otherwise. */
export function runsOption(fallback: number): number {
  const { values } = parseArgs({ options: { runs: { type: 'string' } } });
  const runs = Number(values.runs ?? fallback);
  if (!Number.isInteger(runs) || runs < 1 || runs > 20) {
    console.error('--runs must be an integer in 1..20');
    process.exit(2);
  }
  return runs;
}
