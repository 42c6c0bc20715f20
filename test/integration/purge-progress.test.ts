import { describe, expect } from 'vitest';
import { itServed, type ServedWorld } from '../fixtures.js';
import { createType, newTenant, operatorToken, restClient, tokenFor } from '../helpers.js';

const it = itServed({ PURGE_BATCH_SIZE: '2' });

const NDJSON = 'application/x-ndjson';
const ENTITIES = 5;

/**
 * A tenant whose type has 5 entities carrying `unit` (single: 5 values) and `labels` (multi: 10 values), both
 * withdrawn straight in the database, so that no background purge has removed anything yet: the daily job then
 * removes all 15 values itself, in 3 batches of at most 2 instances per definition.
 */
async function withdrawnWithValues(world: ServedWorld) {
  const tenant = newTenant('progress');
  const api = restClient(world.app, await tokenFor(tenant));
  const type = await createType(api, 'Metric');
  for (const [name, cardinality] of [
    ['unit', 'single'],
    ['labels', 'multi'],
  ]) {
    const res = await api.post(`/entities/types/${type}/attributes`, {
      name,
      value_type: 'string',
      cardinality,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  }
  for (let i = 0; i < ENTITIES; i++) {
    const res = await api.post('/entities', {
      type_guid: type,
      name: `m${i}`,
      values: { unit: 'ms', labels: ['a', 'b'] },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  }
  await world.driver.executeQuery(
    `MATCH (a:AttributeDefinition {tenant: $tenant, owner_guid: $type}) WHERE a.name_key IN ['unit', 'labels']
     SET a.state = 'withdrawn', a.withdrawn_at = datetime(), a.purge_cursor = '', a.values_removed = 0`,
    { tenant, type },
  );
  return { tenant, type };
}

async function purge(world: ServedWorld, body: unknown, headers: Record<string, string>) {
  const res = await fetch(`${world.url}/admin/jobs/purge`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
}

const lines = (text: string) =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l));

async function purgeMetric(world: ServedWorld, name: 'values_removed' | 'definitions_removed') {
  const res = await world.app.inject({
    method: 'GET',
    url: '/metrics',
    headers: { authorization: `Bearer ${await operatorToken()}` },
  });
  const match = new RegExp(`^metamodel_purge_${name}_total (\\d+)$`, 'm').exec(res.body);
  return Number(match?.[1] ?? Number.NaN);
}

describe('POST /admin/jobs/purge, Accept: application/x-ndjson', () => {
  it('streams progress lines with a total, then the SUCCESS envelope with the report', async ({ world }) => {
    const { tenant, type } = await withdrawnWithValues(world);
    const valuesBefore = await purgeMetric(world, 'values_removed');
    const definitionsBefore = await purgeMetric(world, 'definitions_removed');

    const res = await purge(
      world,
      { tenant },
      { authorization: `Bearer ${await operatorToken()}`, accept: NDJSON },
    );
    expect(res.status, res.text).toBe(200);
    expect(res.type).toBe('application/x-ndjson; charset=utf-8');
    expect(res.text.endsWith('\n')).toBe(true);
    const all = lines(res.text);
    const final = all.at(-1);
    const progress = all.slice(0, -1).map((l) => {
      expect(Object.keys(l)).toEqual(['progress']);
      return l.progress;
    });

    // first: the job holds its lease and knows what it will go through; nothing done yet
    expect(progress[0]).toEqual({
      definitions_total: 2,
      definitions_done: 0,
      definitions_removed: 0,
      values_removed: 0,
      batches: 0,
    });
    // then one line per batch (3 per definition) and one per finished definition
    expect(progress).toHaveLength(1 + 6 + 2);
    for (let i = 1; i < progress.length; i++) {
      const [before, now] = [progress[i - 1], progress[i]];
      expect(now.definitions_total).toBe(2);
      for (const field of ['definitions_done', 'definitions_removed', 'values_removed', 'batches']) {
        expect(now[field]).toBeGreaterThanOrEqual(before[field]);
      }
    }
    expect(progress.some((p) => p.values_removed > 0 && p.values_removed < 15)).toBe(true);
    expect(progress.at(-1)).toEqual({
      definitions_total: 2,
      definitions_done: 2,
      definitions_removed: 2,
      values_removed: 15,
      batches: 6,
    });

    expect(final).toMatchObject({ STATUS: 'SUCCESS', MESSAGE: '' });
    expect(Object.keys(final.DATA).sort()).toEqual(['batches', 'pending', 'removed', 'values_removed']);
    expect(final.DATA).toMatchObject({ values_removed: 15, batches: 6, pending: 0 });
    expect(final.DATA.removed.map((r: any) => [r.name, r.type_guid, r.values_removed]).sort()).toEqual([
      ['labels', type, 10],
      ['unit', type, 5],
    ]);
    const left = await world.driver.executeQuery(
      'MATCH (a:AttributeDefinition {tenant: $tenant, owner_guid: $type}) RETURN count(a) AS n',
      { tenant, type },
    );
    expect(left.records[0]!.get('n')).toBe(0);
    // the metrics listener still hears of the run
    expect(await purgeMetric(world, 'values_removed')).toBe(valuesBefore + 15);
    expect(await purgeMetric(world, 'definitions_removed')).toBe(definitionsBefore + 2);
  });

  it('the final line carries the same DATA as the ordinary response, which is unchanged', async ({
    world,
  }) => {
    const streamed = await withdrawnWithValues(world);
    const plain = await withdrawnWithValues(world);
    const auth = { authorization: `Bearer ${await operatorToken()}` };
    const s = await purge(world, { tenant: streamed.tenant }, { ...auth, accept: NDJSON });
    const p = await purge(world, { tenant: plain.tenant }, auth);

    expect(p.status).toBe(200);
    expect(p.type).toBe('application/json; charset=utf-8');
    const envelope = JSON.parse(p.text);
    expect(p.text).toBe(JSON.stringify({ STATUS: 'SUCCESS', MESSAGE: '', DATA: envelope.DATA }));
    const final = lines(s.text).at(-1);
    const shape = (data: any, type: string) => ({
      ...data,
      removed: data.removed
        .map((r: any) => ({ ...r, guid: typeof r.guid, type_guid: r.type_guid === type }))
        .sort((a: any, b: any) => a.name.localeCompare(b.name)),
    });
    expect(shape(final.DATA, streamed.type)).toEqual(shape(envelope.DATA, plain.type));
    expect(envelope.DATA.removed).toHaveLength(2);
  });

  it('a job that fails midway ends the stream with a FAIL envelope after its progress lines', async ({
    world,
  }) => {
    const { tenant, type } = await withdrawnWithValues(world);
    // `unit` goes first and is removed; a stored `labels` value that is not a list makes its batch fail in Neo4j
    await world.driver.executeQuery(
      `MATCH (a:AttributeDefinition {tenant: $tenant, owner_guid: $type, name_key: 'unit'})
       SET a.withdrawn_at = a.withdrawn_at - duration('PT1M')
       WITH a MATCH (e:Entity {tenant: $tenant, type_guid: $type, name: 'm3'}) SET e['attr.labels'] = 42`,
      { tenant, type },
    );
    const auth = { authorization: `Bearer ${await operatorToken()}` };
    const res = await purge(world, { tenant }, { ...auth, accept: NDJSON });
    expect([res.status, res.type], res.text).toEqual([200, 'application/x-ndjson; charset=utf-8']);
    const all = lines(res.text);
    const final = all.at(-1);
    expect(final).toEqual({
      STATUS: 'FAIL',
      MESSAGE: expect.stringMatching(/^Unexpected error \(request [0-9a-f-]+\)\.$/),
      DATA: { reason: 'internal_error' },
    });
    const progress = all.slice(0, -1).map((l) => l.progress);
    expect(progress.length).toBeGreaterThan(1);
    expect(progress.at(-1)).toMatchObject({
      definitions_total: 2,
      definitions_done: 1,
      definitions_removed: 1,
    });

    // the lease was released: with the bad value gone, the next run removes `labels`
    await world.driver.executeQuery(
      `MATCH (e:Entity {tenant: $tenant, type_guid: $type, name: 'm3'}) REMOVE e['attr.labels']`,
      { tenant, type },
    );
    const again = await purge(world, { tenant }, auth);
    expect(again.status, again.text).toBe(200);
    expect(JSON.parse(again.text).DATA.removed.map((r: any) => r.name)).toEqual(['labels']);
  });

  it('streams only when Accept lists application/x-ndjson with a q above 0', async ({ world }) => {
    const auth = { authorization: `Bearer ${await operatorToken()}` };
    const tenant = newTenant('accept');
    for (const [accept, streamed] of [
      ['text/html, application/x-ndjson', true],
      ['Application/X-NDJSON; q=0.8', true],
      [`${NDJSON}, application/json;q=0.5`, true],
      ['application/json', false],
      ['*/*', false],
      [`${NDJSON};q=0`, false],
    ] as const) {
      const res = await purge(world, { tenant }, { ...auth, accept });
      expect([accept, res.status, res.type]).toEqual([
        accept,
        200,
        streamed ? 'application/x-ndjson; charset=utf-8' : 'application/json; charset=utf-8',
      ]);
      const last = lines(res.text).at(-1);
      expect(last).toEqual({
        STATUS: 'SUCCESS',
        MESSAGE: '',
        DATA: { removed: [], values_removed: 0, batches: 0, pending: 0 },
      });
    }
  });

  it('refusals before the job starts are ordinary envelopes with their status codes', async ({ world }) => {
    const tenant = newTenant('refused');
    const operator = { authorization: `Bearer ${await operatorToken()}`, accept: NDJSON };
    await world.driver.executeQuery(
      "MERGE (l:JobLease {name: $name}) SET l.holder = 'someone-else', l.until = datetime() + duration('PT1M')",
      { name: `purge-daily:${tenant}` },
    );
    const cases: [Record<string, string>, unknown, number, string][] = [
      [{ accept: NDJSON }, { tenant }, 401, 'unauthenticated'],
      [
        { authorization: `Bearer ${await tokenFor(tenant, { roles: ['admin'] })}`, accept: NDJSON },
        { tenant },
        403,
        'not_authorized',
      ],
      [operator, { tenant: 5 }, 400, 'invalid_field'],
      [operator, { tenant }, 409, 'purge_already_running'],
    ];
    for (const [headers, body, status, reason] of cases) {
      const res = await purge(world, body, headers);
      expect([res.status, res.type], res.text).toEqual([status, 'application/json; charset=utf-8']);
      const envelope = JSON.parse(res.text);
      expect(envelope).toEqual({ STATUS: 'FAIL', MESSAGE: expect.any(String), DATA: { reason } });
      expect(envelope.MESSAGE).not.toBe('');
    }
  });
});
