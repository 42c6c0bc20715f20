// Faults: Neo4j gone while requests are in flight (503 storage_unavailable, not ready, then recovery with no
// acknowledged write lost), and SIGTERM draining a real server process. The database goes away behind a proxy that
// resets its connections and refuses new ones, as its dying process would; CI's load test (`--fault
// neo4j-restart`) kills a real Neo4j under load and starts it again.
import { type ChildProcess, spawn } from 'node:child_process';
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { AppDeps } from '../../src/app/build.js';
import { WARMUP_ROUNDS } from '../../src/app/warmup.js';
import { parseConfig } from '../../src/config.js';
import { createDriver } from '../../src/db/driver.js';
import { freePort } from '../../src/db/local-neo4j.js';
import {
  newTenant,
  operatorToken,
  restClient,
  TEST_SECRET,
  testApp,
  tokenFor,
  untilReady,
} from '../helpers.js';
import { cuttableProxy } from '../net-proxy.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A ready app whose Neo4j is behind a proxy the test can cut (closed after the file's tests). */
async function appBehindProxy(deps: Partial<Pick<AppDeps, 'warmupRounds' | 'rampAfterReady'>> = {}) {
  const neo4j = await cuttableProxy(inject('neo4jUri'));
  cleanups.push(() => neo4j.close());
  const driver = createDriver({ uri: neo4j.uri });
  cleanups.push(() => driver.close());
  const config = parseConfig({ AUTH_JWT_SECRET: TEST_SECRET, NEO4J_URI: neo4j.uri, LOG_LEVEL: 'silent' });
  const app = await testApp({ config, driver, ...deps });
  cleanups.push(() => app.close());
  await untilReady(app);
  return { neo4j, app };
}

describe('Neo4j outage', () => {
  it('answers 503 storage_unavailable and not-ready during the outage, recovers by itself, loses no acknowledged write', async () => {
    // the full warm-up, as a deployment runs it: readiness after the outage is what this test checks
    const { neo4j, app } = await appBehindProxy({ warmupRounds: WARMUP_ROUNDS.max, rampAfterReady: true });
    const api = restClient(app, await tokenFor(newTenant()));

    // traffic that keeps running through the outage
    const acknowledged: { name: string; guid: string }[] = [];
    const statuses: number[] = [];
    const reasons = new Set<string>();
    let running = true;
    const traffic = (async () => {
      for (let i = 0; running; i++) {
        const res = await api.post('/entities/types', { name: `fault-${i}` });
        statuses.push(res.status);
        if (res.status === 201)
          acknowledged.push({ name: `fault-${i}`, guid: res.body.DATA.entity_type.guid });
        else reasons.add(res.body.DATA.reason);
        await sleep(20);
      }
    })();

    for (let i = 0; i < 120 && acknowledged.length < 5; i++) await sleep(250);
    expect(acknowledged.length).toBeGreaterThanOrEqual(5);
    await neo4j.cut(); // every connection reset mid-flight, none accepted: as a crash looks from here
    const before = statuses.length;
    // Not-ready as soon as the service sees the database gone (polled, not slept: at most 10 s).
    let outage = await app.inject({ method: 'GET', url: '/readyz' });
    for (let i = 0; i < 100 && outage.statusCode !== 503; i++) {
      await sleep(100);
      outage = await app.inject({ method: 'GET', url: '/readyz' });
    }
    expect(outage.statusCode).toBe(503);
    expect(outage.json()).toMatchObject({ STATUS: 'FAIL', DATA: { reason: 'storage_unavailable' } });
    const downMetrics = await app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `Bearer ${await operatorToken()}` },
    });
    expect(downMetrics.body).toMatch(/^metamodel_ready 0$/m);
    const during = await api.get('/entities/types');
    expect([during.status, during.body.DATA.reason]).toEqual([503, 'storage_unavailable']);
    // Every route answers within the bound while the database is away (issue #17): 503 with Retry-After, REST and
    // GraphQL alike, in well under NEO4J_CONNECT_TIMEOUT_MS (2 s) plus the request's own work.
    const typeGuid = acknowledged[0]?.guid as string;
    const token = await tokenFor(newTenant());
    type Answer = { statusCode: number; headers: Record<string, unknown>; body: string };
    const rest = async (
      call: Promise<{ status: number; headers: Record<string, unknown>; body: unknown }>,
    ) => {
      const res = await call;
      return { statusCode: res.status, headers: res.headers, body: JSON.stringify(res.body) };
    };
    const fresh = restClient(app, token);
    const attempts: [string, () => Promise<Answer>][] = [
      ['create a type', () => rest(api.post('/entities/types', { name: 'during outage' }))],
      ['create an entity', () => rest(api.post('/entities', { type_guid: typeGuid, name: 'e' }))],
      [
        'declare',
        () =>
          rest(
            api.post(`/entities/types/${typeGuid}/attributes`, {
              name: 'during',
              value_type: 'string',
              cardinality: 'single',
            }),
          ),
      ],
      ['read an entity', () => rest(api.get(`/entities/${typeGuid}`))],
      ['a page of types (new tenant)', () => rest(fresh.get('/entities/types'))],
      [
        'GraphQL query',
        () =>
          app.inject({
            method: 'POST',
            url: '/graphql',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            payload: { query: '{ entityTypes(first: 3) { edges { node { name } } } }' },
          }),
      ],
      [
        'GraphQL mutation',
        () =>
          app.inject({
            method: 'POST',
            url: '/graphql',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            payload: { query: 'mutation { createEntityType(name: "x") { created } }' },
          }),
      ],
    ];
    for (const [what, attempt] of attempts) {
      const started = Date.now();
      const res = await attempt();
      const ms = Date.now() - started;
      expect([what, res.statusCode, res.body.includes('storage_unavailable')]).toEqual([what, 503, true]);
      expect([what, Number(res.headers['retry-after']) >= 1]).toEqual([what, true]);
      expect([what, ms < 2_500]).toEqual([what, true]);
    }

    await neo4j.restore();
    let ready = false;
    for (let i = 0; i < 60 && !ready; i++) {
      ready = (await app.inject({ method: 'GET', url: '/readyz' })).statusCode === 200;
      if (!ready) await sleep(500);
    }
    expect(ready).toBe(true);
    // Ready means warmed (issue #17): the warm-up ran again after the database came back, before /readyz said 200.
    const metrics = await app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `Bearer ${await operatorToken()}` },
    });
    expect(metrics.body).toMatch(/^metamodel_ready 1$/m);
    expect(Number(/^metamodel_warmups_total (\d+)$/m.exec(metrics.body)?.[1])).toBeGreaterThanOrEqual(2);
    const recovered = statuses.length;
    // requests begun during the outage may still be waiting out their retries; new ones succeed
    for (let i = 0; i < 80 && !statuses.slice(recovered).includes(201); i++) await sleep(250);
    running = false;
    await traffic;

    expect(statuses.slice(before, recovered)).toContain(503); // refused during the outage...
    expect([...reasons]).toEqual(['storage_unavailable']); // ...with that reason only: never a 500
    expect(statuses.slice(recovered).filter((s) => s === 201).length).toBeGreaterThan(0); // and serving again
    for (const { name, guid } of acknowledged) {
      const res = await api.post('/entities/types', { name });
      expect([res.status, res.body.DATA.entity_type.guid], name).toEqual([200, guid]);
    }
  }, 240_000);

  it('idle when the database goes away and comes back (a quiet restart): the heartbeat finds it away, and the service warms up again before it serves', async () => {
    const { neo4j, app } = await appBehindProxy();
    const api = restClient(app, await tokenFor(newTenant()));
    expect((await api.post('/entities/types', { name: 'before' })).status).toBe(201);
    const warmups = async () => {
      const metrics = await app.inject({
        method: 'GET',
        url: '/metrics',
        headers: { authorization: `Bearer ${await operatorToken()}` },
      });
      return Number(/^metamodel_warmups_total (\d+)$/m.exec(metrics.body)?.[1]);
    };
    const before = await warmups();
    // (the warm-up's background rounds run statements: they would find the database away too)
    await app.readiness.backgroundSettled();
    // No request and no /readyz while the database is away (metrics need no database): only the heartbeat sees it.
    await neo4j.cut();
    const states = new Set<string>();
    for (let i = 0; i < 200 && !states.has('down'); i++) {
      states.add(app.readiness.state);
      await sleep(50);
    }
    await sleep(2_000);
    await neo4j.restore();
    for (let i = 0; i < 200 && app.readiness.state !== 'ready'; i++) {
      states.add(app.readiness.state);
      await sleep(50);
    }
    expect(states.has('down')).toBe(true);
    expect(app.readiness.state).toBe('ready');
    expect(await warmups()).toBe(before + 1);
    expect((await api.post('/entities/types', { name: 'after' })).status).toBe(201);
  }, 60_000);
});

describe('SIGTERM', () => {
  let server: ChildProcess | undefined;
  afterAll(() => {
    server?.kill('SIGKILL');
  });

  it('drains the request in flight, then closes the HTTP server and then the driver (logged in that order), exits 0, and wrote nothing to stdout but pino records', async () => {
    const port = await freePort();
    server = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      env: {
        ...process.env,
        PORT: String(port),
        NEO4J_URI: inject('neo4jUri'),
        AUTH_JWT_SECRET: TEST_SECRET,
        LOG_LEVEL: 'info',
        PURGE_CRON: '*/5 * * * * *',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let stdout = '';
    server.stdout?.on('data', (d) => {
      output += d;
      stdout += d;
    });
    server.stderr?.on('data', (d) => {
      output += d;
    });
    for (let i = 0; i < 120 && !output.includes('Server listening'); i++) await sleep(250);
    expect(output).toContain('Server listening');
    const token = await tokenFor(newTenant());
    const base = `http://127.0.0.1:${port}`;
    // traffic once ready, as a load balancer sends it (transactions are refused until the warm-up has run)
    let ready = 0;
    for (let i = 0; i < 60 && ready !== 200; i++) {
      ready = (await fetch(`${base}/readyz`)).status;
      if (ready !== 200) await sleep(250);
    }
    expect(ready).toBe(200);
    // Requests that once wrote outside the log (a subscription printed a block to stdout; bad GET variables and a
    // refused token went to an error line): stdout must stay one JSON log record per line.
    const auth = { authorization: `Bearer ${token}` };
    for (const init of [
      { url: '/graphql', method: 'POST', body: JSON.stringify({ query: 'subscription { x }' }) },
      { url: '/graphql?query=%7B__typename%7D&variables=%5D', method: 'GET' },
      { url: '/entities/types', method: 'GET', token: 'eyJhbGciOiJIUzI1NiJ9.e30.c2lnbmF0dXJl' },
    ]) {
      const res = await fetch(`${base}${init.url}`, {
        method: init.method,
        headers: {
          ...(init.token ? { authorization: `Bearer ${init.token}` } : auth),
          ...(init.body ? { 'content-type': 'application/json' } : {}),
        },
        body: init.body,
      });
      expect([init.url, res.status < 500]).toEqual([init.url, true]);
    }
    // a request whose body arrives slowly is in flight when the signal comes
    const inFlight = fetch(`${base}/entities/types`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: new ReadableStream({
        async start(controller) {
          controller.enqueue(new TextEncoder().encode('{"name":'));
          await sleep(1500);
          controller.enqueue(new TextEncoder().encode('"Drained"}'));
          controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    await sleep(500);
    const exited = new Promise<number | null>((resolve) => server!.once('exit', (code) => resolve(code)));
    server.kill('SIGTERM');
    const res = await inFlight;
    expect(res.status).toBe(201);
    expect(((await res.json()) as any).DATA.entity_type.name).toBe('Drained');
    expect(await exited).toBe(0);
    expect(output).toContain('shutting down');
    const lines = stdout.split('\n').filter((line) => line.length > 0);
    expect(lines.length).toBeGreaterThan(3);
    for (const line of lines) {
      const record = (() => {
        try {
          return JSON.parse(line) as { level?: unknown };
        } catch {
          return undefined;
        }
      })();
      expect([line, typeof record?.level]).toEqual([line, 'number']);
      expect(line).not.toContain('c2lnbmF0dXJl'); // no token, not even a forged one, in the log
    }
    // server.ts logs each step of its shutdown: the in-flight request answered (above) before the server closed,
    // the driver closed after it ('stopped' follows driver.close()).
    const messages = lines.map((line) => (JSON.parse(line) as { msg?: string }).msg);
    const step = (msg: string) => messages.indexOf(msg);
    expect(step('shutting down')).toBeGreaterThan(-1);
    expect(step('http server closed')).toBeGreaterThan(step('shutting down'));
    expect(step('stopped')).toBeGreaterThan(step('http server closed'));
    // The pages were made before the service listened (a first visit made them, holding every request ~350 ms).
    expect(step('pages prepared')).toBeGreaterThan(-1);
    expect(step('pages prepared')).toBeLessThan(
      messages.findIndex((msg) => msg?.startsWith('Server listening')),
    );
  });
});
