// The service under test: started as `npm start` starts it, its resident set sampled, called over HTTP, and its
// CPU profile summarised.

import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { freePort } from '../src/db/local-neo4j.js';
import { children, rssMbOf, serviceNodeFlags, sleep } from './lib.js';
import { HOST, LOG_LEVEL, NODE_FLAGS, ROOT } from './options.js';

/** The service's resident set, sampled every 500 ms (every 100 ms during the body storm), per phase. */
export class RssSampler {
  private timer: NodeJS.Timeout | undefined;
  readonly series: [number, number][] = [];
  readonly phaseMax = new Map<string, number>();
  max = 0;
  phase = 'start-up';
  private readonly started = performance.now();
  constructor(private readonly pid: number | undefined) {}
  sample() {
    const mb = rssMbOf(this.pid);
    if (mb === null) return null;
    this.max = Math.max(this.max, mb);
    this.phaseMax.set(this.phase, Math.max(this.phaseMax.get(this.phase) ?? 0, mb));
    const t = (performance.now() - this.started) / 1000;
    const last = this.series[this.series.length - 1];
    if (!last || t - last[0] >= 0.45) this.series.push([Math.round(t * 10) / 10, Math.round(mb * 10) / 10]);
    return mb;
  }
  every(ms: number) {
    if (this.timer) clearInterval(this.timer);
    this.timer = setInterval(() => this.sample(), ms);
    this.timer.unref();
  }
  stop() {
    if (this.timer) clearInterval(this.timer);
  }
}

export interface Api {
  base: string;
  authorization: string;
  call(
    method: string,
    urlPath: string,
    body?: unknown,
  ): Promise<{ status: number; json: Record<string, unknown>; headers: Headers }>;
}

export function apiFor(base: string, authorization: string): Api {
  return {
    base,
    authorization,
    async call(method, urlPath, body) {
      const res = await fetch(`${base}${urlPath}`, {
        method,
        headers: {
          authorization,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
        signal: AbortSignal.timeout(60_000),
      });
      const text = await res.text();
      let json: Record<string, unknown> = {};
      try {
        json = JSON.parse(text) as Record<string, unknown>;
      } catch {
        json = { text };
      }
      return { status: res.status, json, headers: res.headers };
    },
  };
}

let building: Promise<void> | undefined;
/**
 * Builds dist/ as `npm start` does, only when it is stale (scripts/build-if-stale.mjs), once per process (later calls
 * share the first): startService waits for it, and a caller may start it earlier, beside its Neo4j's start (one core
 * compiles while the database starts on the other).
 */
export function buildService(): Promise<void> {
  building ??= new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, ['scripts/build-if-stale.mjs'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const keep = (chunk: Buffer) => {
      output += chunk.toString('utf8');
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`building the service failed:\n${output}`)),
    );
  });
  return building;
}

/** Starts the service as `npm start` does (`node <its flags> dist/server.js`, built first), its output in a log file; waits until ready. */
export async function startService(
  uri: string,
  secret: string,
  workDir: string,
  profileDir: string | undefined,
  /**
   * More of its environment, more node flags (the door storm's production heap and configuration), and a command
   * to start node through (`taskset -c 0`: the service on a core of its own).
   */
  extra: { env?: Record<string, string>; nodeFlags?: string[]; through?: string[] } = {},
) {
  await buildService();
  const port = await freePort();
  const logPath = path.join(workDir, 'service.log');
  const fd = openSync(logPath, 'w');
  const [command, ...prefix] = [...(extra.through ?? []), process.execPath];
  const child = spawn(
    command as string,
    [
      ...prefix,
      ...serviceNodeFlags(),
      ...NODE_FLAGS,
      ...(extra.nodeFlags ?? []),
      ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
      'dist/server.js',
    ],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        NODE_ENV: 'production',
        PORT: String(port),
        HOST,
        NEO4J_URI: uri,
        AUTH_JWT_SECRET: secret,
        LOG_LEVEL,
        ...extra.env,
      },
      stdio: ['ignore', fd, fd],
    },
  );
  closeSync(fd);
  children.add(child);
  const tail = () => readFileSync(logPath, 'utf8').split('\n').slice(-30).join('\n');
  const base = `http://${HOST}:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`the service exited during start-up:\n${tail()}`);
    if (i > 480) throw new Error(`the service was not ready within 120 s:\n${tail()}`);
    try {
      const res = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(2_000) });
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    await sleep(250);
  }
  return { child, port, base, tail };
}

/**
 * A CPU profile summarised: self time by package / source area, inclusive time by area (the samples with that area
 * anywhere on the stack), and the hottest functions. Shares are of the time the process was busy (idle left out).
 */
export function summariseProfile(file: string) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as {
    nodes: {
      id: number;
      callFrame: { functionName: string; url: string; lineNumber: number };
      hitCount?: number;
      children?: number[];
    }[];
    timeDeltas: number[];
  };
  const totalMs = profile.timeDeltas.reduce((a, b) => a + b, 0) / 1000;
  const area = (url: string, fn: string) => {
    if (url === '') return fn.startsWith('(') ? fn : '(native)';
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
    if (pkg) return pkg[1]!;
    const src = /\/(src\/.+)$/.exec(url);
    if (src) return src[1]!;
    return url;
  };
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  let busy = 0;
  let idle = 0;
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const byFunction = new Map<string, number>();
  const add = (m: Map<string, number>, k: string, h: number) => m.set(k, (m.get(k) ?? 0) + h);
  for (const n of profile.nodes) {
    const h = n.hitCount ?? 0;
    if (h === 0) continue;
    if (n.callFrame.functionName === '(idle)') {
      idle += h;
      continue;
    }
    busy += h;
    const a = area(n.callFrame.url, n.callFrame.functionName);
    add(self, a, h);
    add(byFunction, `${n.callFrame.functionName || '(anonymous)'} ${a}:${n.callFrame.lineNumber + 1}`, h);
    const onStack = new Set<string>();
    for (let id: number | undefined = n.id; id !== undefined; id = parent.get(id)) {
      const frame = byId.get(id)!.callFrame;
      if (frame.url !== '') onStack.add(area(frame.url, frame.functionName));
    }
    for (const x of onStack) add(inclusive, x, h);
  }
  const top = (m: Map<string, number>, count: number) =>
    [...m]
      .sort((x, y) => y[1] - x[1])
      .slice(0, count)
      .map(([name, h]) => ({ name, share: h / Math.max(busy, 1) }));
  return {
    totalMs,
    busyMs: (totalMs * busy) / Math.max(busy + idle, 1),
    areas: top(self, 20),
    inclusive: top(inclusive, 25),
    functions: top(byFunction, 25),
  };
}
