// What the per-tenant model version (issue #12) and the change record (issue #13) cost a metamodel write in Neo4j
// itself, without the service: the statement that creates a type, sent through neo4j-driver from N concurrent loops,
// as the service sends it (with its model version change and change record) and with that one clause taken out, in alternating rounds on one database so that both
// see the same warm-up, caches and noise. Prints transactions per second and Neo4j's CPU per transaction of each.
//
//   npm run bench:write-cost -- [--connections 16] [--seconds 5] [--rounds 4] [--warmup 40]
//
// A fresh Neo4j takes a while to compile its write path: until then each round runs faster than the one before, and
// the statement measured first loses. So both run, alternating and uncounted, for --warmup seconds first.
//
// Starts a throwaway local Neo4j unless NEO4J_URI is set (then its CPU is not measured, its process not ours).

import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { changeParams, recordChange } from '../src/db/changes.js';
import { createDriver } from '../src/db/driver.js';
import { createUserType } from '../src/db/entity-types.js';
import { createExecutor } from '../src/db/executor.js';
import { freePort, type LocalNeo4j, startLocalNeo4j } from '../src/db/local-neo4j.js';
import { migrate } from '../src/db/migrations.js';
import { createModelVersionShards } from '../src/db/model-version.js';
import type { Row } from '../src/db/run.js';
import { cpuMsOf, percentile } from './lib.js';

const { values: argv } = parseArgs({
  options: {
    connections: { type: 'string', default: '16' },
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '4' },
    warmup: { type: 'string', default: '40' },
  },
});
const CONNECTIONS = Number(argv.connections);
const SECONDS = Number(argv.seconds);
const ROUNDS = Number(argv.rounds);
const WARMUP = Number(argv.warmup);
for (const [name, value] of Object.entries({ CONNECTIONS, SECONDS, ROUNDS, WARMUP })) {
  if (!Number.isFinite(value) || value < (name === 'WARMUP' ? 0 : 1))
    throw new Error(`--${name.toLowerCase()} must be a number of at least 1 (warmup: 0)`);
}

/** The change record the service writes with a create (issue #13): part of the version clause measured. */
const CHANGE = changeParams(
  { actor: 'bench', requestId: '00000000-0000-0000-0000-000000000000' },
  {
    kind: 'type_created',
    before: null,
    after: { name: 'Type', origin: 'user_defined', catalog_level: true },
  },
);

/** The service's create statement, captured from the function that sends it, and the same without the version. */
async function statements() {
  let withVersion = '';
  await createUserType(
    async (cypher) => {
      withVersion = cypher;
      return [];
    },
    't',
    'g',
    'n',
    'k',
    CHANGE,
  );
  const withoutVersion = withVersion.replace(recordChange({ typeGuid: 't.guid', imports: ['t'] }), '');
  if (withoutVersion === withVersion)
    throw new Error('the create statement no longer carries its recordChange clause');
  return { withVersion, withoutVersion };
}

/** The middle value (nearest rank). */
const median = (xs: number[]) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );

async function main() {
  let local: LocalNeo4j | undefined;
  let workDir: string | undefined;
  let uri = process.env.NEO4J_URI;
  if (!uri) {
    workDir = await mkdtemp(path.join(os.tmpdir(), 'write-cost-'));
    local = await startLocalNeo4j({
      dataDir: path.join(workDir, 'neo4j'),
      port: await freePort(),
      heapMb: 1536,
    });
    uri = local.uri;
  }
  const driver = createDriver({ uri, user: process.env.NEO4J_USER, password: process.env.NEO4J_PASSWORD });
  try {
    await migrate(createExecutor(driver, { database: process.env.NEO4J_DATABASE }));
    const { withVersion, withoutVersion } = await statements();
    const tenant = `write-cost-${Date.now()}`;
    await createExecutor(driver, { database: process.env.NEO4J_DATABASE }).write((run) =>
      createModelVersionShards(run, tenant),
    );
    let n = 0;
    const phase = async (cypher: string, seconds: number) => {
      const cpuBefore = cpuMsOf(local?.process.pid);
      const end = Date.now() + seconds * 1000;
      let done = 0;
      await Promise.all(
        Array.from({ length: CONNECTIONS }, async () => {
          while (Date.now() < end) {
            const i = n++;
            const session = driver.session({ database: process.env.NEO4J_DATABASE });
            try {
              await session.executeWrite((tx) =>
                tx.run<Row>(cypher, {
                  tenant,
                  guid: `${tenant}-${i}`,
                  name: `Type ${i}`,
                  key: `type ${i}`,
                  ...CHANGE,
                }),
              );
              done += 1;
            } finally {
              await session.close();
            }
          }
        }),
      );
      const cpuAfter = cpuMsOf(local?.process.pid);
      return {
        perSecond: done / seconds,
        cpuMsPerTx: cpuBefore === null || cpuAfter === null ? null : (cpuAfter - cpuBefore) / done,
      };
    };
    console.log(
      `create-type statement, ${CONNECTIONS} concurrent transactions, ${ROUNDS} rounds of ${SECONDS} s`,
    );
    // Both statements planned and the database's write path compiled before anything counts.
    for (let warmed = 0; warmed < WARMUP; warmed += 2 * SECONDS) {
      await phase(withoutVersion, SECONDS);
      await phase(withVersion, SECONDS);
    }
    const results = {
      with: [] as number[],
      without: [] as number[],
      cpuWith: [] as number[],
      cpuWithout: [] as number[],
    };
    for (let round = 1; round <= ROUNDS; round++) {
      const order = round % 2 ? (['with', 'without'] as const) : (['without', 'with'] as const);
      for (const which of order) {
        const r = await phase(which === 'with' ? withVersion : withoutVersion, SECONDS);
        results[which].push(r.perSecond);
        if (r.cpuMsPerTx !== null) results[which === 'with' ? 'cpuWith' : 'cpuWithout'].push(r.cpuMsPerTx);
        const cpu = r.cpuMsPerTx === null ? '' : `, Neo4j ${r.cpuMsPerTx.toFixed(2)} ms CPU per transaction`;
        console.log(
          `  round ${round} ${which.padEnd(7)} the version change and change record: ${r.perSecond.toFixed(0)} tx/s${cpu}`,
        );
      }
    }
    const ratio = median(results.with) / median(results.without);
    console.log(
      `median: ${median(results.with).toFixed(0)} tx/s with the version change and change record, ${median(results.without).toFixed(0)} without: ${ratio.toFixed(2)}x`,
    );
    if (results.cpuWith.length > 0) {
      console.log(
        `Neo4j CPU per transaction (median): ${median(results.cpuWith).toFixed(2)} ms with, ${median(results.cpuWithout).toFixed(2)} ms without`,
      );
    }
  } finally {
    await driver.close();
    await local?.stop();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  }
}

await main();
