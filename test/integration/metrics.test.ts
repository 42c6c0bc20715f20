// GET /metrics: Prometheus text for operators (or the scrape token), by route pattern and refusal reason, Neo4j
// statements, engine cache and purge progress; never a tenant, guid or name in it.
import { describe, expect } from 'vitest';
import { itWith } from '../fixtures.js';
import { newTenant, operatorToken, restClient, type TestWorld, tokenFor } from '../helpers.js';

const SCRAPE_TOKEN = 'scrape-token-that-is-long-enough-0123456789';
// (version reads counted one by one: without read leases, which read-leases.test.ts holds)
const it = itWith({ METRICS_TOKEN: SCRAPE_TOKEN, MODEL_READ_LEASE_MS: '0' });

const scrape = async (world: TestWorld, authorization?: string) =>
  world.app.inject({ method: 'GET', url: '/metrics', headers: authorization ? { authorization } : {} });

/** The value of one sample line, e.g. sample(text, 'x_total', {route: '/a'}); null when absent. */
function sample(text: string, name: string, labels: Record<string, string>) {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`)))
      return Number(line.split(' ').pop());
  }
  return null;
}

describe('GET /metrics', () => {
  it('counts requests by route pattern, status and reason, with latency and Neo4j statements, and no tenant data', async ({
    world,
  }) => {
    const tenant = newTenant('metrics');
    const api = restClient(world.app, await tokenFor(tenant));
    const created = await api.post('/entities/types', { name: 'Metered Thing' });
    const guid = created.body.DATA.entity_type.guid as string;
    await api.get(`/entities/types/${guid}/attributes`);
    await api.get('/entities/types?cursor=not-a-cursor');
    const res = await scrape(world, `Bearer ${await operatorToken()}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/plain');
    const text = res.body;
    expect(
      sample(text, 'metamodel_http_requests_total', { route: '/entities/types', status: '201', reason: '' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sample(text, 'metamodel_http_requests_total', {
        route: '/entities/types',
        status: '400',
        reason: 'invalid_cursor',
      }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sample(text, 'metamodel_http_request_duration_seconds_count', {
        route: '/entities/types/:guid/attributes',
        method: 'GET',
      }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sample(text, 'metamodel_neo4j_queries_total', { route: '/entities/types' }),
    ).toBeGreaterThanOrEqual(1);
    for (const name of [
      'metamodel_engine_cache_hits_total',
      'metamodel_engine_cache_misses_total',
      'metamodel_purge_values_removed_total',
      'metamodel_refused_body_bytes_total',
      'metamodel_process_resident_memory_bytes',
    ]) {
      expect(sample(text, name, {}), name).not.toBeNull();
    }
    expect(text).not.toContain(tenant);
    expect(text).not.toContain(guid);
    expect(text).not.toContain('Metered');
  });

  it('counts engine cache use and purge progress', async ({ world }) => {
    const api = restClient(world.app, await tokenFor(newTenant()));
    const type = (await api.post('/entities/types', { name: 'Purged' })).body.DATA.entity_type.guid as string;
    await api.post(`/entities/types/${type}/attributes`, {
      name: 'n',
      value_type: 'number',
      cardinality: 'single',
    });
    for (const name of ['a', 'b', 'c'])
      await api.post('/entities', { type_guid: type, name, values: { n: 1 } });
    const before = await scrape(world, `Bearer ${SCRAPE_TOKEN}`);
    expect(sample(before.body, 'metamodel_engine_cache_hits_total', {})).toBeGreaterThanOrEqual(2);
    await api.delete(`/entities/attributes/${type}/n`);
    await world.app.services.purger.idle();
    const after = await scrape(world, `Bearer ${SCRAPE_TOKEN}`);
    expect(sample(after.body, 'metamodel_purge_values_removed_total', {})).toBeGreaterThanOrEqual(3);
  });

  it('counts model cache hits and misses per kind of read, its bytes, and the shared version reads', async ({
    world,
  }) => {
    const api = restClient(world.app, await tokenFor(newTenant()));
    const before = (await scrape(world, `Bearer ${SCRAPE_TOKEN}`)).body;
    await api.get('/entities/types?page_size=7'); // a miss, then
    await api.get('/entities/types?page_size=7'); // a hit
    const after = (await scrape(world, `Bearer ${SCRAPE_TOKEN}`)).body;
    const delta = (name: string, labels: Record<string, string> = {}) =>
      (sample(after, name, labels) ?? 0) - (sample(before, name, labels) ?? 0);
    expect(delta('metamodel_model_cache_hits_total', { kind: 'type_page' })).toBeGreaterThanOrEqual(1);
    expect(delta('metamodel_model_cache_misses_total', { kind: 'type_page' })).toBeGreaterThanOrEqual(1);
    expect(delta('metamodel_model_version_requests_total')).toBeGreaterThanOrEqual(2);
    expect(sample(after, 'metamodel_model_cache_bytes', {})).toBeGreaterThan(0);
    for (const name of [
      'metamodel_model_cache_evictions_total',
      'metamodel_model_cache_invalidations_total',
    ]) {
      expect(sample(after, name, {}), name).not.toBeNull();
    }
  });

  it('is refused without a token (401), to users who are not operators (403), and with a wrong scrape token', async ({
    world,
  }) => {
    expect((await scrape(world)).statusCode).toBe(401);
    const user = await scrape(world, `Bearer ${await tokenFor(newTenant())}`);
    expect([user.statusCode, user.json().DATA.reason]).toEqual([403, 'not_authorized']);
    expect((await scrape(world, `Bearer ${SCRAPE_TOKEN}x`)).statusCode).toBe(401);
    expect((await scrape(world, `Bearer ${SCRAPE_TOKEN}`)).statusCode).toBe(200);
  });
});
