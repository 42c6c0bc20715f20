// npm postinstall: fetches Neo4j Community with Maven and compiles the local launcher (neo4j/), then runs it once to
// train the JVM's class-data-sharing archive (neo4j/target/local-neo4j.jsa: a local Neo4j starts sooner with it).
// Skipped when SKIP_NEO4J_FETCH=1; says in one line what to install when Java or Maven is missing.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

// The archive is the JDK's own format: a new JDK trains it again.
const javaVersion = spawnSync('java', ['-version'], { encoding: 'utf8' }).stderr ?? '';
const hash = createHash('sha256')
  .update(readFileSync(path.join(neo4jDir, 'pom.xml')))
  .update(readFileSync(path.join(neo4jDir, 'src/main/java/metamodel/LocalNeo4j.java')))
  .update(readFileSync(path.join(neo4jDir, 'jvm-options.json')))
  .update(javaVersion)
  .digest('hex');
if (existsSync(stamp) && readFileSync(stamp, 'utf8') === hash) {
  console.log('fetch-neo4j: local Neo4j is up to date');
  process.exit(0);
}

const has = (cmd, args) => {
  const r = spawnSync(cmd, args, { stdio: 'ignore' });
  return !r.error && r.status === 0;
};
if (!has('java', ['-version'])) {
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

// The training run: the launcher starts a database in a temporary directory, runs statements of the service's kinds,
// stops, and the JVM writes the classes it loaded (the same options and class path as every start: the archive
// is refused otherwise). Without an archive a local Neo4j still starts, only slower: a failure is a warning.
const archive = path.join(neo4jDir, 'target', 'local-neo4j.jsa');
const trainingDir = mkdtempSync(path.join(os.tmpdir(), 'local-neo4j-train-'));
console.log('fetch-neo4j: training the class-data-sharing archive (about 30 s) ...');
rmSync(archive, { force: true });
const training = spawnSync(
  'java',
  [
    '-Xmx1024m',
    ...JSON.parse(readFileSync(path.join(neo4jDir, 'jvm-options.json'), 'utf8')),
    `-XX:ArchiveClassesAtExit=${archive}`,
    '-Xlog:cds=error',
    '-cp',
    [path.join(neo4jDir, 'target', 'local-neo4j-1.0.0.jar'), path.join(neo4jDir, 'target', 'lib', '*')].join(
      path.delimiter,
    ),
    'metamodel.LocalNeo4j',
    '--train',
    path.join(trainingDir, 'data'),
  ],
  { encoding: 'utf8', timeout: 180_000 },
);
rmSync(trainingDir, { recursive: true, force: true });
if (training.status !== 0 || !existsSync(archive)) {
  console.warn(
    `fetch-neo4j: warning: no class-data-sharing archive (the local Neo4j starts without it): ${(training.stderr || training.stdout || String(training.error)).trim().split('\n').slice(-3).join(' | ')}`,
  );
}
writeFileSync(stamp, hash);
console.log('fetch-neo4j: done');
