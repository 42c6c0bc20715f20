// The cluster path (issue #12): the service on a neo4j:// (routing) URI against the local server, and bookmarks for
// reading one's own writes on any instance: a write's answer carries Neo4j-Bookmark, a later request may send it back
// (to any instance of the same deployment), and a bookmark this API did not issue to the tenant is refused.
import type { FastifyInstance } from 'fastify';
import type { Driver } from 'neo4j-driver';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseConfig } from '../../src/config.js';
import { createDriver } from '../../src/db/driver.js';
import { newTenant, restClient, TEST_SECRET, testApp, tokenFor, untilReady } from '../helpers.js';

let routed: { app: FastifyInstance; driver: Driver };
let direct: { app: FastifyInstance; driver: Driver };

async function instance(uri: string) {
  const config = parseConfig({
    NODE_ENV: 'test',
    AUTH_JWT_SECRET: TEST_SECRET,
    NEO4J_URI: uri,
    LOG_LEVEL: 'silent',
  });
  const driver = createDriver({ uri });
  const app = await testApp({ config, driver });
  await app.ready();
  await untilReady(app);
  return { app, driver };
}

beforeAll(async () => {
  const bolt = inject('neo4jUri');
  [routed, direct] = await Promise.all([instance(bolt.replace(/^bolt:/, 'neo4j:')), instance(bolt)]);
});
afterAll(async () => {
  for (const i of [routed, direct]) {
    await i?.app.close();
    await i?.driver.close();
  }
});

describe('a neo4j:// (routing) URI', () => {
  it('serves reads and writes through the routing driver', async () => {
    const token = await tokenFor(newTenant('route'));
    const api = restClient(routed.app, token);
    const created = await api.post('/entities/types', { name: 'Routed' });
    expect(created.status).toBe(201);
    const guid = created.body.DATA.entity_type.guid as string;
    const declared = await api.post(`/entities/types/${guid}/attributes`, {
      name: 'size',
      value_type: 'number',
      cardinality: 'single',
    });
    expect(declared.status).toBe(201);
    const listed = await api.get(`/entities/types/${guid}/attributes`);
    expect((listed.body.DATA.attributes as { name: string }[]).map((a) => a.name)).toContain('size');
    expect((await api.post('/entities', { type_guid: guid, name: 'e', values: { size: 3 } })).status).toBe(
      201,
    );
    const page = await api.get('/entities/types?page_size=500');
    expect((page.body.DATA.entity_types as { name: string }[]).map((t) => t.name)).toContain('Routed');
  });
});

describe('Neo4j-Bookmark', () => {
  it('comes with every write, and is accepted back by any instance for the same tenant', async () => {
    const token = await tokenFor(newTenant('bm'));
    const onRouted = restClient(routed.app, token);
    const created = await onRouted.post('/entities/types', { name: 'Booked' });
    const bookmark = created.headers['neo4j-bookmark'];
    expect(typeof bookmark).toBe('string');
    const guid = created.body.DATA.entity_type.guid as string;
    // Sent back to the other instance: its reads wait for that commit, and see it.
    const read = await direct.app.inject({
      method: 'GET',
      url: `/entities/types/${guid}`,
      headers: { authorization: `Bearer ${token}`, 'neo4j-bookmark': bookmark as string },
    });
    expect(read.statusCode).toBe(200);
    expect(read.json().DATA.entity_type.name).toBe('Booked');
    // Reads carry none (nothing to wait for).
    expect(read.headers['neo4j-bookmark']).toBeUndefined();
  });

  it('is refused with invalid_bookmark when forged, altered, or issued to another tenant', async () => {
    const tenant = newTenant('bm');
    const token = await tokenFor(tenant);
    const created = await restClient(direct.app, token).post('/entities/types', { name: 'Mine' });
    const bookmark = created.headers['neo4j-bookmark'] as string;
    const other = await tokenFor(newTenant('bm'));
    const send = (auth: string, value: string) =>
      direct.app.inject({
        method: 'GET',
        url: '/entities/types?page_size=1',
        headers: { authorization: `Bearer ${auth}`, 'neo4j-bookmark': value },
      });
    for (const [auth, value] of [
      [other, bookmark],
      [token, `${bookmark}x`],
      [token, 'FB:kcwQl2YJOJvsTqieZP6KzHKRTclW85A='],
    ] as const) {
      const res = await send(auth, value);
      expect([res.statusCode, res.json().DATA.reason]).toEqual([400, 'invalid_bookmark']);
    }
    expect((await send(token, bookmark)).statusCode).toBe(200);
  });
});
