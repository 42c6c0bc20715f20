// The local Neo4j (src/db/local-neo4j.ts): its JVM's JIT compiler threads run at a lower priority than the threads
// doing the database's work, so that a JVM just started spends its cores on starting and planning first. Checked on
// the run's Neo4j when it is the project's local one (the suite's own, or one `npm run neo4j` started and NEO4J_URI
// names, as in CI; found by its launcher's command line); it runs on the Java the install chose, and sends no usage
// data. The service's own local Neo4j refuses a Bolt port in use at once, in one log line, before the app listens.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import neo4j from 'neo4j-driver';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseConfig } from '../../src/config.js';
import { COMPILER_THREAD_NICE, jvmLaunch } from '../../src/db/local-neo4j.js';
import { LocalNeo4jPortUnusable, startServiceNeo4j } from '../../src/db/local-neo4j-service.js';
import { TEST_SECRET } from '../helpers.js';

/** The pid of the local Neo4j listening on `port`, found by its command line. */
function launcherPid(port: string): number | undefined {
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    let args: string[] = [];
    try {
      args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    const at = args.indexOf('metamodel.LocalNeo4j');
    if (at >= 0 && args[at + 2] === port) return Number(pid);
  }
  return undefined;
}

/** Each thread's name and niceness (the 19th field of its stat). */
function threads(pid: number) {
  return readdirSync(`/proc/${pid}/task`).flatMap((tid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return [{ name, nice: Number(fields[16]) }];
    } catch {
      return []; // ended meanwhile
    }
  });
}

const port = /^bolt:\/\/127\.0\.0\.1:(\d+)$/.exec(inject('neo4jUri'))?.[1];
const pid = port && process.platform === 'linux' ? launcherPid(port) : undefined;

describe.runIf(pid !== undefined)('the local Neo4j', () => {
  it('runs its JIT compiler threads (C1 and C2) at nice 10, and the threads doing the work at 0', () => {
    const all = threads(pid as number);
    const compilers = all.filter((t) => /^C[12] CompilerThre/.test(t.name));
    expect(new Set(compilers.map((t) => t.name.slice(0, 2)))).toEqual(new Set(['C1', 'C2']));
    expect(compilers.map((t) => t.nice)).toEqual(compilers.map(() => COMPILER_THREAD_NICE));
    const workers = all.filter((t) => t.name.startsWith('neo4j.Bolt'));
    expect(workers.length).toBeGreaterThan(0);
    expect(workers.map((t) => t.nice)).toEqual(workers.map(() => 0));
  });

  it('sends Neo4j no usage data (its collector is off)', async () => {
    const driver = neo4j.driver(inject('neo4jUri'));
    try {
      const { records } = await driver.executeQuery(
        "SHOW SETTINGS YIELD name, value WHERE name = 'dbms.usage_report.enabled' RETURN value",
      );
      expect(records.map((r) => r.get('value'))).toEqual(['false']);
    } finally {
      await driver.close();
    }
  });

  it('plans a statement once whatever the length of its string and list parameters (written where Neo4j reads its settings; it refuses to start on a name it does not know)', () => {
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const dataDir = args[args.indexOf('metamodel.LocalNeo4j') + 1] as string;
    const settings = readFileSync(path.join(dataDir, 'local-neo4j.conf'), 'utf8').split('\n');
    expect(settings).toContain('internal.cypher.use_parameter_size=false');
  });

  it('runs on the Java the install chose, with the archive it trained (neo4j/target/jvm.json)', () => {
    const launch = jvmLaunch();
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    for (const option of launch.archive) expect(args).toContain(option);
    // the archive it names was written (an ahead-of-time cache, or a class-data-sharing archive)
    for (const option of launch.archive) {
      const file = /^-XX:(?:AOTCache|SharedArchiveFile)=(.+)$/.exec(option)?.[1];
      if (file) expect(existsSync(file)).toBe(true);
    }
    const exe = realpathSync(`/proc/${pid}/exe`);
    const expected = launch.java === 'java' ? undefined : realpathSync(launch.java);
    if (expected) expect(exe).toBe(expected);
    // a JDK of 25 or later runs with its ahead-of-time cache
    const major = Number(
      /version "(\d+)/.exec(spawnSync(exe, ['-version'], { encoding: 'utf8' }).stderr)?.[1],
    );
    if (major >= 25) expect(launch.archive.some((o) => o.startsWith('-XX:AOTCache='))).toBe(true);
  });
});

describe('the local Neo4j of npm start, on a port in use', () => {
  let held: Server;
  let port: number;
  beforeAll(async () => {
    held = createServer();
    await new Promise<void>((resolve) => held.listen(0, '127.0.0.1', resolve));
    port = (held.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => held.close(() => resolve())));

  it('is refused within a second, naming the port and NEO4J_LOCAL_PORT, and no JVM is started', async () => {
    const config = parseConfig({ NEO4J_LOCAL_PORT: String(port) });
    const began = performance.now();
    const refusal = await startServiceNeo4j(config, pino({ level: 'silent' })).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(performance.now() - began).toBeLessThan(1_000);
    expect(refusal).toBeInstanceOf(LocalNeo4jPortUnusable);
    expect((refusal as Error).message).toContain(`port ${port}`);
    expect((refusal as Error).message).toContain('NEO4J_LOCAL_PORT');
    expect(launcherPid(String(port))).toBeUndefined();
  });

  it('ends the service with exit code 1 and one error log line, before it listens', async () => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      NEO4J_LOCAL_PORT: String(port),
      PORT: '0',
      AUTH_JWT_SECRET: TEST_SECRET,
      LOG_LEVEL: 'info',
    };
    delete env.NEO4J_URI;
    delete env.LOG_FORMAT;
    const began = performance.now();
    const server = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    server.stdout?.on('data', (d) => {
      stdout += d;
    });
    server.stderr?.on('data', (d) => {
      stderr += d;
    });
    const code = await new Promise<number | null>((resolve) => server.once('close', resolve));
    expect(code).toBe(1);
    // the time to load the service's first modules, not the seconds a JVM would take to find the port taken
    expect(performance.now() - began).toBeLessThan(10_000);
    expect(stderr).toBe('');
    // stdout is a pipe: JSON lines, whatever the terminal the suite runs in
    const lines = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { level: number; msg: string });
    expect(lines.map((l) => l.msg)).not.toContain('Server listening');
    const errors = lines.filter((l) => l.level >= 50);
    expect(errors).toHaveLength(1);
    expect(errors[0]?.msg).toContain(`port ${port}`);
    expect(errors[0]?.msg).toContain('NEO4J_LOCAL_PORT');
    expect(lines.at(-1)).toBe(errors[0]);
  }, 30_000);
});
