// A quiet restart (npm run bench:quiet-restart): Neo4j killed (SIGKILL) and started again while the service has no
// request at all, then 16 clients (4 tenants) each send one keyed type creation at once, retrying a 503 after 1 to 1.5 s,
// `--runs` times. Nothing but the service's heartbeat can tell it that the database went away (db/readiness.ts).
// Reported for each run: whether the service saw the database away at all; in seconds from Neo4j accepting
// connections again, the first, the median and the last client's success; the slowest single answer, and the
// refusals (503) on the way.
//   npm run bench:quiet-restart -- [--runs 3]
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import type { Driver } from 'neo4j-driver';
import pino from 'pino';
import { buildApp } from '../src/app/build.js';
import { mintToken } from '../src/auth/tokens.js';
import { parseConfig } from '../src/config.js';
import { createDriver } from '../src/db/driver.js';
import { createExecutor } from '../src/db/executor.js';
import { freePort, type LocalNeo4j, startLocalNeo4j } from '../src/db/local-neo4j.js';
import { migrate } from '../src/db/migrations.js';
import { percentile, runsOption, sleep } from './lib.js';

const CLIENTS = 16;
const TENANTS = 4;
/** Quiet before the kill (the heartbeat's time and more), and Neo4j down before it is started again. */
const QUIET_MS = 3_000;
const DOWN_MS = 3_000;
/** A client not served this long after the restart fails the run. */
const RUN_TIMEOUT_MS = 120_000;

const runs = runsOption(3);

const dataDir = await mkdtemp(path.join(os.tmpdir(), 'quiet-restart-'));
const port = await freePort();
let neo4j: LocalNeo4j | undefined;
let driver: Driver | undefined;
let app: FastifyInstance | undefined;
try {
  neo4j = await startLocalNeo4j({ dataDir, port, heapMb: 1024 });
  driver = createDriver({ uri: neo4j.uri });
  await migrate(createExecutor(driver));
  const secret = randomUUID() + randomUUID();
  const config = parseConfig({
    NODE_ENV: 'test',
    AUTH_JWT_SECRET: secret,
    NEO4J_URI: neo4j.uri,
    LOG_LEVEL: 'silent',
  });
  app = await buildApp({ config, driver, logger: pino({ level: 'silent' }) });
  const service = app;
  await service.ready();
  await service.readiness.whenReady();
  const tokens = await Promise.all(
    Array.from({ length: TENANTS }, (_, i) => mintToken(secret, { tenant: `quiet-${i}` })),
  );
  const create = (client: number, name: string, key: string) =>
    service.inject({
      method: 'POST',
      url: '/entities/types',
      headers: {
        authorization: `Bearer ${tokens[client % TENANTS]}`,
        'content-type': 'application/json',
        'idempotency-key': key,
      },
      payload: { name },
    });
  for (let client = 0; client < TENANTS; client++) {
    const res = await create(client, 'Set-up', randomUUID());
    if (res.statusCode !== 201) throw new Error(`set-up: ${res.statusCode} ${res.body}`);
  }
  console.log(
    `Neo4j killed after ${QUIET_MS / 1000} s without a request, started again ${DOWN_MS / 1000} s later; then ` +
      `${CLIENTS} clients over ${TENANTS} tenants send a keyed type creation each at once (seconds from Neo4j ` +
      'accepting connections):',
  );
  console.log('| run | went down | first success | median | last | slowest answer | refused 503 |');
  console.log('| --: | --------- | ------------: | -----: | ---: | -------------: | ----------: |');
  for (let run = 1; run <= runs; run++) {
    await service.readiness.backgroundSettled();
    await sleep(QUIET_MS);
    // Whether the service saw the outage at all (only its heartbeat can): polled from the kill to the last answer.
    let wentDown = false;
    const watch = setInterval(() => {
      if (service.readiness.state === 'down') wentDown = true;
    }, 20);
    neo4j.process.kill('SIGKILL');
    await sleep(DOWN_MS);
    neo4j = await startLocalNeo4j({ dataDir, port, heapMb: 1024 });
    const up = performance.now();
    const successes: number[] = [];
    let slowest = 0;
    let refused = 0;
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, client) => {
        const key = randomUUID();
        for (;;) {
          const sent = performance.now();
          const res = await create(client, `Quiet ${run} ${client} ${key.slice(0, 8)}`, key);
          slowest = Math.max(slowest, performance.now() - sent);
          if (res.statusCode === 201) {
            successes.push(performance.now() - up);
            return;
          }
          if (res.statusCode !== 503) throw new Error(`run ${run}: ${res.statusCode} ${res.body}`);
          if (performance.now() - up > RUN_TIMEOUT_MS) {
            throw new Error(
              `run ${run}: client ${client} not served ${RUN_TIMEOUT_MS / 1000} s after the restart`,
            );
          }
          refused += 1;
          await sleep(1_000 + Math.random() * 500);
        }
      }),
    );
    clearInterval(watch);
    successes.sort((a, b) => a - b);
    const s = (ms: number) => (ms / 1000).toFixed(2);
    console.log(
      `| ${run} | ${wentDown ? 'yes' : 'no'} | ${s(successes[0] as number)} | ${s(percentile(successes, 50))} | ` +
        `${s(successes[successes.length - 1] as number)} | ${s(slowest)} | ${refused} |`,
    );
    await service.readiness.whenReady();
  }
} finally {
  await app?.close();
  await driver?.close();
  await neo4j?.stop();
  await rm(dataDir, { recursive: true, force: true });
}
