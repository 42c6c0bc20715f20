// npm postinstall: fetches Neo4j Community with Maven and compiles the local launcher (neo4j/).
// Skipped when NEO4J_URI is set or SKIP_NEO4J_FETCH=1; says in one line what to install when Java or Maven is missing.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const neo4jDir = path.join(root, 'neo4j');
const stamp = path.join(neo4jDir, 'target', '.fetched');

if (process.env.SKIP_NEO4J_FETCH === '1') {
  console.log('fetch-neo4j: skipped (SKIP_NEO4J_FETCH=1)');
  process.exit(0);
}

const hash = createHash('sha256')
  .update(readFileSync(path.join(neo4jDir, 'pom.xml')))
  .update(readFileSync(path.join(neo4jDir, 'src/main/java/metamodel/LocalNeo4j.java')))
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
writeFileSync(stamp, hash);
console.log('fetch-neo4j: done');
