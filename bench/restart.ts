// A restart after a crash (npm run bench:restart): `npm start`'s service with the embedded Neo4j, started on a fresh
// data directory, given a little data, then killed as a whole process group (SIGKILL: the service and its Neo4j) and
// started again on the same data, `--runs` times. Reported for each start: when the service's local Neo4j had started
// (its own recovery included), when `/readyz` said 200, and when the first write succeeded (tried from the start,
// beside the /readyz probes), in seconds from the start; and the warm-up's first rehearsal, from the service's log.
//   npm run bench:restart -- [--runs 5]

import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { mintToken } from '../src/auth/tokens.js';
import { freePort } from '../src/db/local-neo4j.js';
import { percentile, runsOption, sleep } from './lib.js';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const HOST = '127.0.0.1';
/** A start not ready within this is a failure. */
const START_TIMEOUT_MS = 120_000;

const runs = runsOption(5);

interface Start {
  kind: 'first start' | 'after a crash';
  neo4jS: number;
  readyS: number;
  firstWriteS: number;
  rehearsalMs: number | null;
}

/** The service as `npm start` runs it, in a process group of its own (so that a SIGKILL takes its Neo4j too). */
function startService(env: Record<string, string>, log: string[]): ChildProcess {
  const child = spawn(process.execPath, ['--max-semi-space-size=8', 'dist/server.js'], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let buffered = '';
  const onData = (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    let newline = buffered.indexOf('\n');
    while (newline >= 0) {
      log.push(buffered.slice(0, newline));
      buffered = buffered.slice(newline + 1);
      newline = buffered.indexOf('\n');
    }
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  return child;
}

/** Seconds from `t0` until `what` resolves true, polled every 50 ms. */
async function secondsUntil(t0: number, what: () => Promise<boolean>, child: ChildProcess, log: string[]) {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the service exited:\n${log.slice(-20).join('\n')}`);
    if (performance.now() - t0 > START_TIMEOUT_MS) {
      throw new Error(`not ready within ${START_TIMEOUT_MS / 1000} s:\n${log.slice(-20).join('\n')}`);
    }
    if (await what().catch(() => false)) return (performance.now() - t0) / 1000;
    await sleep(50);
  }
}

/** The log line's time (epoch ms) and fields, for the first line whose msg is `msg`. */
function logged(log: string[], msg: string): { time: number; [k: string]: unknown } | undefined {
  for (const line of log) {
    try {
      const entry = JSON.parse(line) as { msg?: string; time: number };
      if (entry.msg === msg) return entry;
    } catch {
      // not JSON
    }
  }
  return undefined;
}

async function main() {
  const build = spawnSync(process.execPath, ['scripts/build-if-stale.mjs'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('the build failed');
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-restart-'));
  const secret = randomBytes(24).toString('hex');
  const token = await mintToken(secret, { tenant: 'restart' });
  const port = await freePort();
  const env = {
    NODE_ENV: 'production',
    HOST,
    PORT: String(port),
    NEO4J_DATA_DIR: dataDir,
    NEO4J_LOCAL_PORT: String(await freePort()),
    AUTH_JWT_SECRET: secret,
    LOG_LEVEL: 'info',
  };
  const base = `http://${HOST}:${port}`;
  const starts: Start[] = [];
  let timeline = '';
  let child: ChildProcess | undefined;
  try {
    for (let i = 0; i <= runs; i++) {
      const log: string[] = [];
      const t0 = performance.now();
      const epoch0 = Date.now();
      child = startService(env, log);
      const running = child;
      // (tried from the start, beside the /readyz probes: a write is served while the warm-up runs, once the
      // statements it sends are planned)
      const ready = secondsUntil(
        t0,
        async () => (await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(2_000) })).status === 200,
        running,
        log,
      );
      const written = secondsUntil(
        t0,
        async () =>
          (
            await fetch(`${base}/entities/types`, {
              method: 'POST',
              headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
              body: JSON.stringify({ name: `Restart ${i}` }),
              signal: AbortSignal.timeout(10_000),
            })
          ).status < 300,
        running,
        log,
      );
      const [readyS, firstWriteS] = await Promise.all([ready, written]);
      if (i === runs) {
        // The last start's timeline, from the service's log.
        const at = (msg: string) => {
          const entry = logged(log, msg);
          return entry ? `${((entry.time - epoch0) / 1000).toFixed(2)} s` : '-';
        };
        timeline = ['local Neo4j started', 'schema migrations applied', 'database warmed: ready']
          .map((msg) => `${msg}: ${at(msg)}`)
          .join('; ');
      }
      const neo4j = logged(log, 'local Neo4j started');
      const warmed = logged(log, 'database warmed: ready');
      starts.push({
        kind: i === 0 ? 'first start' : 'after a crash',
        neo4jS: neo4j ? (neo4j.time - epoch0) / 1000 : Number.NaN,
        readyS,
        firstWriteS,
        rehearsalMs: ((warmed?.roundsMs as number[] | undefined) ?? [])[0] ?? null,
      });
      // Some data written since the last checkpoint: Neo4j recovers it from its log at the next start.
      for (let n = 0; n < 20; n++) {
        await fetch(`${base}/entities/types`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `Written ${i}-${n}` }),
        });
      }
      process.kill(-(running.pid as number), 'SIGKILL');
      await new Promise((r) => running.once('exit', r));
      await sleep(500); // the Neo4j child dies with its group; let the port be released
    }
  } finally {
    if (child?.pid && child.exitCode === null) process.kill(-child.pid, 'SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  }

  const f = (x: number | null) => (x === null || !Number.isFinite(x) ? '-' : x.toFixed(1));
  console.log(
    '\n| start | local Neo4j started (s) | /readyz 200 (s) | first write (s) | first rehearsal (ms) |',
  );
  console.log('| --- | --: | --: | --: | --: |');
  for (const [i, s] of starts.entries()) {
    console.log(
      `| ${i === 0 ? s.kind : `${s.kind} (${i})`} | ${f(s.neo4jS)} | ${f(s.readyS)} | ${f(s.firstWriteS)} | ${s.rehearsalMs ?? '-'} |`,
    );
  }
  console.log(`\nThe last start, from its log: ${timeline}.`);
  const crashes = starts.slice(1);
  const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
  const ready = sorted(crashes.map((s) => s.readyS));
  console.log(
    `\nAfter a crash, ${crashes.length} start(s): /readyz 200 median ${f(percentile(ready, 50))} s, worst ` +
      `${f(ready[ready.length - 1] ?? Number.NaN)} s (aim: within 10 s); local Neo4j started: median ` +
      `${f(percentile(sorted(crashes.map((s) => s.neo4jS)), 50))} s.`,
  );
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(`bench:restart: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  },
);
