// The door storm's functional checks, in the suite: every shape of bench/door-shapes.ts sent (at a few connections,
// for a moment) to an app configured as the storm configures its service (bench/door-storm-config.ts), on the storm's
// own set-up (bench/door-storm-setup.ts), and judged by the storm's own verdicts (bench/door-verdict.ts): each
// answer one its shape expects, a share of them answered by the door itself, none past its door's budget; then the
// budget counters at 0, the key cap reached and kept, nothing acknowledged lost, the stray token in no log line. The
// timing ceilings (RSS under attack, the victim's p99, /healthz) are the storm's (npm run storm, its short form in CI).
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ANSWER_BUDGETS, afterTheStorm } from '../../bench/door-checks.js';
import { DOOR_SHAPES, type DoorSetup, type DoorShape } from '../../bench/door-shapes.js';
import { productionSettings, STORM_ENV } from '../../bench/door-storm-config.js';
import { setUpStorm } from '../../bench/door-storm-setup.js';
import { type DoorShapeResult, runDoorShape } from '../../bench/door-traffic.js';
import { shapeVerdict } from '../../bench/door-verdict.js';
import { apiFor } from '../../bench/service.js';
import { parseConfig } from '../../src/config.js';
import { createDriver } from '../../src/db/driver.js';
import { createLogger, LogRing } from '../../src/telemetry/logging.js';
import { newTenant, TEST_SECRET, testApp, tokenFor, untilReady } from '../helpers.js';

/** A shape's attack in the suite: a few connections, a few requests (all of them when it must pass a count). */
const CONNECTIONS = 4;
const REQUESTS = 8;
/** No more sent past this, once each connection has sent one (runDoorShape). */
const SEND_MS = 1_000;

const logLines: string[] = [];
let close: () => Promise<void> = async () => {};
let port = 0;
let setup: DoorSetup;

beforeAll(async () => {
  const uri = inject('neo4jUri');
  const config = parseConfig({
    NODE_ENV: 'test',
    AUTH_JWT_SECRET: TEST_SECRET,
    NEO4J_URI: uri,
    LOG_LEVEL: 'info',
    ...productionSettings().env,
    ...STORM_ENV,
  });
  const driver = createDriver({ uri });
  // The service's own logger (its redaction and scrubbing), every line it writes kept: the stray token planted in
  // paths must reach none of them.
  const ring = new (class extends LogRing {
    override write(line: string) {
      logLines.push(line);
      super.write(line);
    }
  })();
  const logger = createLogger({ level: 'info', ring, stdout: false });
  const app = await testApp({ config, driver, logger, logRing: ring });
  await app.ready();
  await untilReady(app);
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as AddressInfo).port;
  close = async () => {
    await app.close();
    await driver.close();
  };
  const attacker = newTenant('storm-attacker');
  const bearer = async (tenant: string, extra: { roles?: string[]; sub?: string } = {}) =>
    `Bearer ${await tokenFor(tenant, extra)}`;
  const auth = {
    attacker: await bearer(attacker),
    operator: await bearer('default', { roles: ['admin'] }),
    platform: await bearer(attacker, { roles: ['platform'], sub: 'board-service' }),
    platformWithoutRole: await bearer(attacker, { sub: 'board-service' }),
    wide: await bearer(newTenant('storm-wide')),
  };
  const stray = await tokenFor(newTenant('storm-stranger'), { sub: 'stranger@example.com' });
  const base = `http://127.0.0.1:${port}`;
  const crowd = {
    others: await Promise.all(Array.from({ length: 6 }, () => bearer(newTenant('storm-other')))),
    fresh: await Promise.all(Array.from({ length: 64 }, () => bearer(newTenant('storm-fresh')))),
  };
  setup = await setUpStorm({ api: apiFor(base, auth.attacker), driver, auth, stray, crowd, base });
}, 600_000);

afterAll(() => close());

/** Shapes whose check counts their requests: sent whole (the 300 requests on one key must write one entity). */
const COUNTED = new Set(['keyed-one-key-300']);

const small = (shape: DoorShape): DoorShape =>
  shape.whole || COUNTED.has(shape.name)
    ? shape
    : {
        ...shape,
        concurrency: Math.min(shape.concurrency, CONNECTIONS),
        requests: Math.min(shape.requests, REQUESTS),
      };

describe('the door storm, every shape (its functional checks)', () => {
  const ran: DoorShapeResult[] = [];

  it.each(DOOR_SHAPES.map((s) => [s.name, s] as const))(
    '%s: every answer one its shape expects, a share answered by the door, none past its budget',
    async (_name, shape) => {
      const result = await runDoorShape(port, setup, small(shape), 0, SEND_MS);
      ran.push(result);
      expect(shapeVerdict(shape, result, ANSWER_BUDGETS).reasons, JSON.stringify(result.answers)).toEqual([]);
    },
    120_000,
  );

  it('after them: no request past its budget, the key cap reached and kept, nothing lost, no token logged', async () => {
    expect(ran).toHaveLength(DOOR_SHAPES.length);
    const after = await afterTheStorm({
      api: apiFor(`http://127.0.0.1:${port}`, setup.auth.attacker),
      operator: setup.auth.operator,
      plainType: setup.plainType,
      stray: setup.stray,
      shapes: ran,
      logText: async () => logLines.join(''),
    });
    expect(after.reasons).toEqual([]);
    // The checks ran over something: the keyed shapes' counts were measured, and the service logged.
    expect(after.measured.oneKeyEntities).toBe(1);
    expect(after.measured.manyKeys?.exhausted).toBeGreaterThan(0);
    expect(logLines.length).toBeGreaterThan(DOOR_SHAPES.length);
  });
});
