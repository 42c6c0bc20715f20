// Starts the project's local Neo4j Community (neo4j/, fetched by Maven at install) and stops it again.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const targetDir = path.join(root, 'neo4j', 'target');
const launcherJar = path.join(targetDir, 'local-neo4j-1.0.0.jar');
const libDir = path.join(targetDir, 'lib');
/**
 * The JVM's class-data-sharing archive of Neo4j's classes, written by a training run at install
 * (scripts/fetch-neo4j.mjs): mapped at start instead of loaded class by class, so that Neo4j starts sooner after a
 * crash. Absent, or made by another JDK, the JVM runs without it (-Xshare:auto).
 */
export const CDS_ARCHIVE = path.join(targetDir, 'local-neo4j.jsa');

/**
 * How to start the JVM, as the install's training run found (neo4j/target/jvm.json): the Java and its archive's
 * options. With a JDK 25 or later on the machine, that JDK and its ahead-of-time cache (classes loaded and linked, and
 * the training run's method profiles): ready sooner after a crash than Java 17 with the class-data-sharing archive
 * (docs/performance.md). Without the file (an install from before it): `java`, with the archive when there is one.
 */
export function jvmLaunch(): { java: string; archive: string[] } {
  try {
    const written = JSON.parse(readFileSync(path.join(targetDir, 'jvm.json'), 'utf8')) as {
      java?: unknown;
      archive?: unknown;
    };
    if (typeof written.java === 'string' && Array.isArray(written.archive)) {
      return { java: written.java, archive: written.archive.map(String) };
    }
  } catch {
    // not written
  }
  return {
    java: 'java',
    archive: existsSync(CDS_ARCHIVE) ? [`-XX:SharedArchiveFile=${CDS_ARCHIVE}`, '-Xshare:auto'] : [],
  };
}

/**
 * The JVM's options, shared with the training run that writes the archive (it needs the same); read when a local
 * Neo4j starts (an image that talks to its own Neo4j ships no neo4j/).
 */
export const jvmOptions = (): string[] =>
  JSON.parse(readFileSync(path.join(root, 'neo4j', 'jvm-options.json'), 'utf8'));

export interface LocalNeo4j {
  uri: string;
  port: number;
  dataDir: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

export interface LocalNeo4jOptions {
  dataDir: string;
  port: number;
  heapMb?: number;
  pageCacheMb?: number;
  /** Further Neo4j settings by name (neo4j.conf's names), e.g. `{ 'dbms.cypher.min_replan_interval': '1h' }`. */
  settings?: Record<string, string>;
  /**
   * Forwards the database's own output to this sink, a line at a time, with the stream it came on (its last lines
   * are in the error when it fails to start).
   */
  onOutput?: (line: string, stream: 'stdout' | 'stderr') => void;
  startTimeoutMs?: number;
}

/** Throws one clear line when Java or the fetched jars are missing. */
export function assertLocalNeo4jInstalled(javaCommand = jvmLaunch().java): void {
  const java = spawnSync(javaCommand, ['-version'], { stdio: 'ignore' });
  if (java.error || java.status !== 0) {
    throw new Error(
      'Java is not installed: install a JDK 17+ (for example `apt-get install openjdk-17-jdk-headless`), or set NEO4J_URI to a running Neo4j.',
    );
  }
  if (!existsSync(launcherJar) || !existsSync(libDir)) {
    throw new Error(
      'The local Neo4j is not fetched: run `npm install` (it needs Maven: `apt-get install maven`), or set NEO4J_URI.',
    );
  }
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Settings of every local Neo4j (`settings` adds to them or overrides them):
 * - no usage data sent to Neo4j (its collector is on by default);
 * - one plan per statement whatever the length of its string and list parameters. By default Neo4j 5 plans a
 *   statement anew for each size bucket of each such parameter (0, 1, up to 10, 100, 1,000, …): a type named
 *   `Orders` (6 characters) and one named `Warm-up table` (13) get a plan each, and so do a tenant of 4 characters
 *   and one of 40. The warm-up's plans would then cover only the sizes it sent, and requests it let in as planned
 *   would be planned anew on the cold database.
 */
export const LOCAL_NEO4J_SETTINGS: Readonly<Record<string, string>> = {
  'dbms.usage_report.enabled': 'false',
  'internal.cypher.use_parameter_size': 'false',
};

/**
 * The test suite's local Neo4j (test/global-setup.ts), and the one `npm run neo4j` starts for runs to share (CI
 * points its load tests, the fuzzer and the suite at one): a larger heap than a service's own, and a plan made again
 * at most once an hour (by default, once the data's statistics have drifted and 10 s have passed: on a database
 * growing from empty, a suite's run would discard plans as stale over and over and make them again).
 */
export const SUITE_NEO4J = {
  heapMb: 1536,
  pageCacheMb: 256,
  settings: { 'dbms.cypher.min_replan_interval': '1h' },
} as const satisfies Partial<LocalNeo4jOptions>;

/**
 * A local Neo4j that did not start: `headline` says why in one line, `output` holds its last lines (in the message
 * too, for callers that only print the message).
 */
export class LocalNeo4jStartFailed extends Error {
  constructor(
    readonly headline: string,
    readonly output: readonly string[],
  ) {
    super(`${headline}${output.length ? `:\n${output.join('\n')}` : ''}`);
  }
}

/** Calls `onLine` with each whole line a stream writes, and with what is left when it ends. */
export function eachLine(stream: NodeJS.ReadableStream | null, onLine: (line: string) => void): void {
  let buffered = '';
  stream?.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    let newline = buffered.indexOf('\n');
    while (newline >= 0) {
      onLine(buffered.slice(0, newline).trimEnd());
      buffered = buffered.slice(newline + 1);
      newline = buffered.indexOf('\n');
    }
  });
  stream?.on('end', () => {
    if (buffered.trim() !== '') onLine(buffered.trimEnd());
    buffered = '';
  });
}

/** The Bolt address of a local Neo4j on `port`. */
export const localNeo4jUri = (port: number) => `bolt://127.0.0.1:${port}`;

export async function startLocalNeo4j(options: LocalNeo4jOptions): Promise<LocalNeo4j> {
  const launch = jvmLaunch();
  assertLocalNeo4jInstalled(launch.java);
  const dataDir = path.resolve(root, options.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const args = [
    `-Xmx${options.heapMb ?? 1024}m`,
    `-Dneo4j.pagecache.mb=${options.pageCacheMb ?? 256}`,
    ...Object.entries({ ...LOCAL_NEO4J_SETTINGS, ...options.settings }).map(
      ([name, value]) => `-Dneo4j.setting.${name}=${value}`,
    ),
    ...jvmOptions(),
    ...launch.archive,
    '-cp',
    // A jar, not a directory of classes: class-data sharing refuses a class path with a non-empty directory.
    `${launcherJar}${path.delimiter}${path.join(libDir, '*')}`,
    'metamodel.LocalNeo4j',
    dataDir,
    String(options.port),
    '--exit-on-stdin-close',
  ];
  const child = spawn(launch.java, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const compilersLowered = lowerCompilerThreads(child);
  const uri = localNeo4jUri(options.port);

  // The last lines the database printed, for the error when it does not start.
  const recent: string[] = [];
  const output = (line: string, stream: 'stdout' | 'stderr') => {
    recent.push(line);
    if (recent.length > 20) recent.shift();
    options.onOutput?.(line, stream);
  };
  const failure = (what: string) => new LocalNeo4jStartFailed(what, [...recent]);

  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(failure(`Local Neo4j did not start within ${options.startTimeoutMs ?? 120_000} ms`));
    }, options.startTimeoutMs ?? 120_000);
    eachLine(child.stdout, (line) => {
      output(line, 'stdout');
      if (line.startsWith('NEO4J_READY')) {
        clearTimeout(timer);
        resolve();
      }
    });
    eachLine(child.stderr, (line) => output(line, 'stderr'));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(failure(`Local Neo4j exited during start-up (code ${code})`));
    });
  });
  compilersLowered();

  let stopping: Promise<void> | undefined;
  return {
    uri,
    port: options.port,
    dataDir,
    process: child,
    stop() {
      stopping ??= new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const force = setTimeout(() => child.kill('SIGKILL'), 30_000);
        child.once('exit', () => {
          clearTimeout(force);
          resolve();
        });
        child.kill('SIGTERM');
      });
      return stopping;
    },
  };
}

/** The niceness of the JVM's JIT compiler threads (the launcher's other threads keep the default, 0). */
export const COMPILER_THREAD_NICE = 10;
/**
 * A JVM just started spends its first seconds interpreting Neo4j's code (its start, its recovery, the planning of
 * each new statement, all on one thread at a time) while two compiler threads (C1, C2) compile it: three busy
 * threads on two cores, each given two thirds of one. At nice 10 the compilers give way to the thread doing the work
 * and still have a core between them. Alternated with the default in `npm run bench:restart` (docs/performance.md,
 * Start-up), the first write after a crash and readiness come a little sooner: a small gain, within the runs' spread
 * for readiness, at no cost (the compilers have the cores to themselves once the database idles). The JVM makes all
 * its compiler threads as it starts (jvm-options.json: -XX:-UseDynamicNumberOfCompilerThreads), so they are looked
 * for until Neo4j is up, then no more (call the function returned). A system that refuses the change leaves them as
 * they are.
 */
function lowerCompilerThreads(child: ChildProcess): () => void {
  const pid = child.pid;
  if (pid === undefined || process.platform !== 'linux') return () => {};
  const lowered = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  const scan = () => {
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${pid}/task`);
    } catch {
      return; // the JVM ended, or no /proc
    }
    for (const tid of tasks) {
      if (lowered.has(tid)) continue;
      let name = '';
      try {
        name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8');
      } catch {
        continue; // the thread ended meanwhile
      }
      if (!/^C[12] CompilerThre/.test(name)) continue;
      lowered.add(tid);
      try {
        os.setPriority(Number(tid), COMPILER_THREAD_NICE);
      } catch {
        // not permitted here: the JVM runs as it would have
      }
    }
    timer = setTimeout(scan, 50).unref();
  };
  scan();
  return () => {
    clearTimeout(timer);
    scan();
    clearTimeout(timer);
  };
}
