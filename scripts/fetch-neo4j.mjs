// npm postinstall: fetches Neo4j Community with Maven and compiles the local launcher (neo4j/), then runs it once to
// train what makes a local Neo4j start and plan its first statements sooner (its signed jars rewritten unsigned first:
// the JVM archives no class of a signed jar): with a JDK 25 or later on the machine
// (LOCAL_NEO4J_JAVA, JAVA_HOME, or /usr/lib/jvm), its ahead-of-time cache (neo4j/target/local-neo4j.aot: classes
// loaded and linked, and method profiles); otherwise the JVM's class-data-sharing archive (local-neo4j.jsa). How to
// start it is written to neo4j/target/jvm.json (src/db/local-neo4j.ts reads it).
// Skipped when SKIP_NEO4J_FETCH=1; says in one line what to install when Java or Maven is missing.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const neo4jDir = path.join(root, 'neo4j');
const stamp = path.join(neo4jDir, 'target', '.fetched');

if (process.env.SKIP_NEO4J_FETCH === '1') {
  console.log('fetch-neo4j: skipped (SKIP_NEO4J_FETCH=1)');
  process.exit(0);
}

/** The first JDK whose ahead-of-time cache is made by one training run (JEP 514) and holds method profiles (JEP 515). */
const AOT_MAJOR = 25;

/** A Java's major version (0 when it does not run). */
const majorOf = (java) => {
  const out = spawnSync(java, ['-version'], { encoding: 'utf8' });
  if (out.error || out.status !== 0) return 0;
  const m = /version "(\d+)/.exec(out.stderr ?? '');
  return m ? Number(m[1]) : 0;
};

/**
 * The Java the local Neo4j runs on: LOCAL_NEO4J_JAVA when set; else the newest JDK of 25 or later among JAVA_HOME's and
 * /usr/lib/jvm's (an ahead-of-time cache: the first statements after a crash planned about a third sooner); else
 * `java`. Neo4j 5.26 runs on it as on 17 (the whole suite passes on both).
 */
function chooseJava() {
  if (process.env.LOCAL_NEO4J_JAVA) return process.env.LOCAL_NEO4J_JAVA;
  const candidates = [];
  if (process.env.JAVA_HOME) candidates.push(path.join(process.env.JAVA_HOME, 'bin', 'java'));
  try {
    for (const dir of readdirSync('/usr/lib/jvm'))
      candidates.push(path.join('/usr/lib/jvm', dir, 'bin', 'java'));
  } catch {
    // no /usr/lib/jvm
  }
  let best = { java: 'java', major: majorOf('java') };
  for (const java of candidates) {
    if (!existsSync(java)) continue;
    const major = majorOf(java);
    if (major >= AOT_MAJOR && major > best.major) best = { java, major };
  }
  return best.java;
}
const java = chooseJava();
const major = majorOf(java);

// The archive is the JDK's own format: a new JDK trains it again.
const javaVersion = `${java}\n${spawnSync(java, ['-version'], { encoding: 'utf8' }).stderr ?? ''}`;
const hash = createHash('sha256')
  .update(readFileSync(path.join(neo4jDir, 'pom.xml')))
  .update(readFileSync(path.join(neo4jDir, 'src/main/java/metamodel/LocalNeo4j.java')))
  .update(readFileSync(path.join(neo4jDir, 'src/main/java/metamodel/UnsignJars.java')))
  .update(readFileSync(path.join(neo4jDir, 'jvm-options.json')))
  .update(javaVersion)
  .update(readFileSync(fileURLToPath(import.meta.url)))
  .digest('hex');
if (existsSync(stamp) && readFileSync(stamp, 'utf8') === hash) {
  console.log('fetch-neo4j: local Neo4j is up to date');
  process.exit(0);
}

const has = (cmd, args) => {
  const r = spawnSync(cmd, args, { stdio: 'ignore' });
  return !r.error && r.status === 0;
};
if (major === 0) {
  console.error(
    'fetch-neo4j: Java is missing: install a JDK 17+ (e.g. `apt-get install openjdk-17-jdk-headless`), or set NEO4J_URI and SKIP_NEO4J_FETCH=1.',
  );
  process.exit(1);
}
if (!has('mvn', ['-v'])) {
  console.error(
    'fetch-neo4j: Maven is missing: install it (e.g. `apt-get install maven`), or set NEO4J_URI and SKIP_NEO4J_FETCH=1.',
  );
  process.exit(1);
}

console.log('fetch-neo4j: fetching Neo4j Community with Maven (first time takes a minute) ...');
const result = spawnSync(
  'mvn',
  ['-B', '-q', '-f', path.join(neo4jDir, 'pom.xml'), 'package', '-DskipTests'],
  {
    stdio: 'inherit',
  },
);
if (result.status !== 0) {
  console.error('fetch-neo4j: Maven failed; see the output above.');
  process.exit(result.status ?? 1);
}

// The signed jars rewritten without their signatures (neo4j/src/main/java/metamodel/UnsignJars.java): the JVM
// leaves a signed jar's classes out of what the training run below archives. Without it a local Neo4j only starts
// slower (about 1.5 s after a crash here): a failure is a warning.
const unsigned = spawnSync(
  java,
  [
    '-cp',
    path.join(neo4jDir, 'target', 'classes'),
    'metamodel.UnsignJars',
    path.join(neo4jDir, 'target', 'lib'),
  ],
  { encoding: 'utf8', timeout: 120_000 },
);
if (unsigned.status !== 0) {
  console.warn(
    `fetch-neo4j: warning: the signed jars are kept signed (their classes are not archived): ${(unsigned.stderr || unsigned.stdout || String(unsigned.error)).trim().split('\n').slice(-3).join(' | ')}`,
  );
}

// The training run: the launcher starts a database in a temporary directory, runs statements of the service's kinds,
// stops, and the JVM writes what it loaded (the same options and class path as every start: the archive is refused
// otherwise). Without an archive a local Neo4j still starts, only slower: a failure is a warning.
const classPath = [
  path.join(neo4jDir, 'target', 'local-neo4j-1.0.0.jar'),
  path.join(neo4jDir, 'target', 'lib', '*'),
].join(path.delimiter);
const options = JSON.parse(readFileSync(path.join(neo4jDir, 'jvm-options.json'), 'utf8'));
const aot = path.join(neo4jDir, 'target', 'local-neo4j.aot');
const archive = path.join(neo4jDir, 'target', 'local-neo4j.jsa');
const launch = path.join(neo4jDir, 'target', 'jvm.json');
rmSync(aot, { force: true });
rmSync(archive, { force: true });
rmSync(launch, { force: true });

function train(javaCmd, output, log) {
  const trainingDir = mkdtempSync(path.join(os.tmpdir(), 'local-neo4j-train-'));
  const training = spawnSync(
    javaCmd,
    [
      '-Xmx1024m',
      ...options,
      output,
      log,
      '-cp',
      classPath,
      'metamodel.LocalNeo4j',
      '--train',
      path.join(trainingDir, 'data'),
    ],
    { encoding: 'utf8', timeout: 240_000 },
  );
  rmSync(trainingDir, { recursive: true, force: true });
  return training;
}

let started;
if (major >= AOT_MAJOR) {
  console.log(`fetch-neo4j: training the ahead-of-time cache on Java ${major} (about 45 s) ...`);
  const training = train(java, `-XX:AOTCacheOutput=${aot}`, '-Xlog:aot=error');
  if (training.status === 0 && existsSync(aot)) started = { java, archive: [`-XX:AOTCache=${aot}`] };
  else {
    console.warn(
      `fetch-neo4j: warning: no ahead-of-time cache on ${java}; the class-data-sharing archive on \`java\` instead: ${(training.stderr || training.stdout || String(training.error)).trim().split('\n').slice(-3).join(' | ')}`,
    );
    rmSync(aot, { force: true });
  }
}
if (!started) {
  console.log('fetch-neo4j: training the class-data-sharing archive (about 30 s) ...');
  const training = train('java', `-XX:ArchiveClassesAtExit=${archive}`, '-Xlog:cds=error');
  if (training.status === 0 && existsSync(archive)) {
    started = { java: 'java', archive: [`-XX:SharedArchiveFile=${archive}`, '-Xshare:auto'] };
  } else {
    console.warn(
      `fetch-neo4j: warning: no class-data-sharing archive (the local Neo4j starts without it): ${(training.stderr || training.stdout || String(training.error)).trim().split('\n').slice(-3).join(' | ')}`,
    );
  }
}
writeFileSync(launch, `${JSON.stringify(started ?? { java: 'java', archive: [] }, null, 2)}\n`);
writeFileSync(stamp, hash);
console.log('fetch-neo4j: done');
