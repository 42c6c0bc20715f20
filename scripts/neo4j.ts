// The project's local Neo4j on its own, migrated, until stopped (Ctrl-C, SIGTERM, or the end of this process, which
// closes the database's stdin): for pointing several runs at one database with NEO4J_URI. CI starts one beside its
// first checks and shares it between the load tests, the fuzzer and the suite.
//
//   npm run neo4j -- [--port 7688] [--data DIR] [--uri-file FILE] [--pid-file FILE]
//
// Without --data, its data goes to a new temporary directory, removed when it stops. --uri-file FILE: the Bolt URI is
// written to FILE once the database is migrated (a script waits for the file, not for a line of output). --pid-file
// FILE: the database's process id (the door storm pins it to the cores its service does not run on: NEO4J_PID).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createDriver } from '../src/db/driver.js';
import { createExecutor } from '../src/db/executor.js';
import { freePort, SUITE_NEO4J, startLocalNeo4j } from '../src/db/local-neo4j.js';
import { migrate } from '../src/db/migrations.js';

const { values: argv } = parseArgs({
  options: {
    port: { type: 'string' },
    data: { type: 'string' },
    'uri-file': { type: 'string' },
    'pid-file': { type: 'string' },
  },
});
const temporary = argv.data === undefined;
const dataDir = argv.data ?? mkdtempSync(path.join(os.tmpdir(), 'metamodel-neo4j-'));
const port = argv.port === undefined ? await freePort() : Number(argv.port);
const local = await startLocalNeo4j({ dataDir, port, ...SUITE_NEO4J });
let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await local.stop();
  if (temporary) rmSync(dataDir, { recursive: true, force: true });
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
const driver = createDriver({ uri: local.uri });
try {
  await migrate(createExecutor(driver));
} finally {
  await driver.close();
}
if (argv['pid-file']) writeFileSync(argv['pid-file'], `${local.process.pid}\n`);
if (argv['uri-file']) writeFileSync(argv['uri-file'], `${local.uri}\n`);
console.log(`NEO4J_URI=${local.uri} (data in ${dataDir}); Ctrl-C stops it`);
