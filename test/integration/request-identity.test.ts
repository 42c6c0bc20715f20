// A request's identity travels with it: a caller's well-formed x-request-id is kept (answer header, change records),
// a malformed one is replaced; every Neo4j transaction of a request carries its id and route as metadata, seen in
// SHOW TRANSACTIONS while it runs.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContext } from '../../src/context.js';
import { createWorld, newTenant, type TestWorld, tokenFor } from '../helpers.js';

let world: TestWorld;
beforeAll(async () => {
  world = await createWorld();
});
afterAll(async () => {
  await world?.close();
});

async function createWithId(tenant: string, requestId: string | undefined) {
  const token = await tokenFor(tenant);
  return world.app.inject({
    method: 'POST',
    url: '/entities/types',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      ...(requestId === undefined ? {} : { 'x-request-id': requestId }),
    },
    payload: JSON.stringify({ name: `T ${randomUUID().slice(0, 8)}` }),
  });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('x-request-id', () => {
  it("a caller's well-formed id is the request's id: in the answer header and in the change record", async () => {
    const tenant = newTenant();
    const sent = `gw-${randomUUID()}`;
    const res = await createWithId(tenant, sent);
    expect(res.statusCode).toBe(201);
    expect(res.headers['x-request-id']).toBe(sent);
    const guid = res.json().DATA.entity_type.guid;
    const history = await world.app.inject({
      method: 'GET',
      url: `/entities/types/${guid}/history`,
      headers: { authorization: `Bearer ${await tokenFor(tenant)}` },
    });
    expect(history.json().DATA.changes.map((c: { request_id: string }) => c.request_id)).toEqual([sent]);
  });

  it.each([
    ['the longest kept (128 characters)', 'a'.repeat(128), true],
    ["AWS's trace id form", 'Root=1-67891233-abcdef012345678912345678', true],
    ['a trace id with a colon and a slash', 'edge:7f/01+ab.c_d', true],
    ['too long (129 characters)', 'a'.repeat(129), false],
    ['empty', '', false],
    ['with a space', 'my id', false],
    ['with a quote', 'id"x', false],
    ['starting with a dash', '-abc', false],
    ['non-ASCII', 'idé', false],
    [
      'a compact JWS',
      `${Buffer.from('{"alg":"HS256"}').toString('base64url')}.${Buffer.from('{"sub":"x"}').toString('base64url')}.c2ln`,
      false,
    ],
  ])('%s: kept %s', async (_label, sent, kept) => {
    const res = await createWithId(newTenant(), sent);
    expect(res.statusCode).toBe(201);
    if (kept) expect(res.headers['x-request-id']).toBe(sent);
    else expect(String(res.headers['x-request-id'])).toMatch(UUID);
  });

  it('without one, the service makes a new id per request', async () => {
    const tenant = newTenant();
    const a = await createWithId(tenant, undefined);
    const b = await createWithId(tenant, undefined);
    expect(String(a.headers['x-request-id'])).toMatch(UUID);
    expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
  });
});

describe('transaction metadata', () => {
  it('every transaction of a request carries its id and route, visible in SHOW TRANSACTIONS while it runs', async () => {
    const tenant = newTenant();
    const requestId = `meta-${randomUUID()}`;
    const ctx = createContext(
      world.app.services,
      { subject: 'tester', tenant, roles: new Set(), crossTenant: false },
      { requestId, operation: 'POST /entities/types' },
    );
    const seen = async () => {
      const session = world.driver.session();
      try {
        const result = await session.run(
          'SHOW TRANSACTIONS YIELD metaData, currentQuery RETURN metaData, currentQuery',
        );
        return result.records
          .map((r) => r.get('metaData') as Record<string, unknown>)
          .filter((m) => m.request_id === requestId);
      } finally {
        await session.close();
      }
    };
    // a write transaction, held open while another session looks
    const inWrite = await ctx.db.write(async (run) => {
      await run('RETURN 1 AS one');
      return seen();
    });
    expect(inWrite).toEqual([{ request_id: requestId, operation: 'POST /entities/types' }]);
    // a read transaction too
    const inRead = await ctx.db.read(async (run) => {
      await run('RETURN 1 AS one');
      return seen();
    });
    expect(inRead).toEqual([{ request_id: requestId, operation: 'POST /entities/types' }]);
    // and none once they are done
    expect(await seen()).toEqual([]);
  });
});
