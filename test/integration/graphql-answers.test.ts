// Whole GraphQL answers from memory (src/schema/graphql-answers.ts): a query reading only cached kinds is answered
// once per model version and request; the next identical request gets the same bytes for a share of one version
// read; requests arriving together share one execution; a change (on any instance) makes the next request execute
// afresh; nothing else is kept (mutations, withdrawn definitions, refusals, other tenants, other variables).
import type { FastifyInstance } from 'fastify';
import { describe, expect, vi } from 'vitest';
import { itWith } from '../fixtures.js';
import { createType, createWorld, newTenant, restClient, type TestWorld, tokenFor } from '../helpers.js';

// (version reads counted one by one: without read leases, which read-leases.test.ts holds)
const it = itWith({ MODEL_READ_LEASE_MS: '0' });

const answers = (app: FastifyInstance) => app.services.model.cache.stats().byKind.graphql_answer;

async function ask(
  app: FastifyInstance,
  token: string,
  query: string,
  variables?: Record<string, unknown>,
  accept = 'application/json',
) {
  const res = await app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept },
    payload: { query, ...(variables ? { variables } : {}) },
  });
  return {
    status: res.statusCode,
    body: res.body,
    json: res.json() as { data?: Record<string, unknown>; errors?: { extensions: { reason?: string } }[] },
    queries: Number(res.headers['x-db-queries']),
    contentType: String(res.headers['content-type']),
  };
}

/** The answer's data, or an empty object when it has none (the assertions then fail on what is missing). */
const dataOf = (answer: { json: { data?: Record<string, unknown> } }) => answer.json.data ?? {};

const CATALOG = `query Catalog($first: Int) {
  entityTypes(first: $first) {
    edges { node { guid name attributeUsage { used limit } attributes { name valueType ownerType { name } allowedRefType { name } } } }
    pageInfo { hasNextPage endCursor }
  }
}`;

async function tenantWithTypes(world: TestWorld, names: string[]) {
  const tenant = newTenant('ga');
  const token = await tokenFor(tenant);
  const api = restClient(world.app, token);
  const guids: string[] = [];
  for (const name of names) guids.push(await createType(api, name));
  return { tenant, token, api, guids };
}

describe('a query reading only cached kinds', () => {
  it('is not kept, nor read whole to be copied, when its answer is larger than the cache keeps one', async () => {
    // A cache of 1 MB keeps entries of at most 64 KiB.
    const small = await createWorld({ MODEL_CACHE_MAX_MB: '1', MODEL_READ_LEASE_MS: '0' });
    try {
      const token = await tokenFor(newTenant('ga'));
      const api = restClient(small.app, token);
      const guid = await createType(api, 'Wide');
      const declared = await api.post(`/entities/types/${guid}/attributes`, {
        name: 'grade',
        value_type: 'string',
        cardinality: 'single',
        allowed_values: Array.from({ length: 200 }, (_, i) => `${i}-${'v'.repeat(500)}`),
      });
      expect(declared.status).toBe(201);
      const query = `{ entityType(guid: "${guid}") { name attributes { name allowedValues } } }`;
      const before = answers(small.app);
      const set = vi.spyOn(small.app.services.model.cache, 'set');
      const first = await ask(small.app, token, query);
      const second = await ask(small.app, token, query);
      expect(first.status).toBe(200);
      expect(first.body.length).toBeGreaterThan(small.app.services.model.cache.maxEntryBytes);
      expect(second.body).toBe(first.body);
      // Executed both times (a share of the version read is not all it cost), nothing kept.
      expect(second.queries).toBeGreaterThan(1);
      expect(answers(small.app).entries).toBe(before.entries);
      expect(answers(small.app).hits).toBe(before.hits);
      // Not even offered to the cache (that would have read the answer whole and copied it).
      expect(set.mock.calls.filter(([, kind]) => kind === 'graphql_answer')).toEqual([]);
    } finally {
      await small.close();
    }
  });

  it('is answered from memory the second time: the same bytes, a share of one version read', async ({
    world,
  }) => {
    const { token } = await tenantWithTypes(world, ['Orders', 'Invoices']);
    const first = await ask(world.app, token, CATALOG, { first: 50 });
    expect(first.status).toBe(200);
    expect(first.queries).toBeGreaterThan(1);
    const hits = answers(world.app).hits;
    const second = await ask(world.app, token, CATALOG, { first: 50 });
    expect(second.body).toBe(first.body);
    expect(second.queries).toBeGreaterThan(0);
    expect(second.queries).toBeLessThanOrEqual(1);
    expect(answers(world.app).hits).toBe(hits + 1);
  });

  it('is executed afresh after a change made through another instance, which the next answer shows', async ({
    world,
    second: other,
  }) => {
    const { token, guids } = await tenantWithTypes(world, ['Reports']);
    const onOther = restClient(other.app, token);
    const names = async () =>
      (
        dataOf(await ask(world.app, token, CATALOG, { first: 50 })).entityTypes as {
          edges: { node: { name: string; attributes: { name: string }[] } }[];
        }
      ).edges.flatMap((e) => (e.node.name === 'Reports' ? e.node.attributes.map((a) => a.name) : []));
    await names();
    expect(await names()).not.toContain('pages');
    const declared = await onOther.post(`/entities/types/${guids[0]}/attributes`, {
      name: 'pages',
      value_type: 'number',
      cardinality: 'single',
    });
    expect(declared.status).toBe(201);
    expect(await names()).toContain('pages');
    expect((await onOther.delete(`/entities/attributes/${guids[0]}/pages`)).status).toBe(200);
    expect(await names()).not.toContain('pages');
  });

  it('asked by many at once after a change, executes once; the others get its answer', async ({ world }) => {
    const { token, api } = await tenantWithTypes(world, ['Alpha']);
    await ask(world.app, token, CATALOG, { first: 20 });
    await createType(api, 'Beta'); // the kept answer is now of an older version
    const all = await Promise.all(
      Array.from({ length: 8 }, () => ask(world.app, token, CATALOG, { first: 20 })),
    );
    expect(new Set(all.map((a) => a.body)).size).toBe(1);
    expect(all[0]?.body).toContain('"Beta"');
    // One executed (its loads: more than one statement); the others paid a share of the version read at most.
    expect(all.filter((a) => a.queries > 1)).toHaveLength(1);
  });

  it('is kept per tenant, per variables and per Accept', async ({ world }) => {
    const one = await tenantWithTypes(world, ['Shared Name', 'Only In One']);
    const two = await tenantWithTypes(world, ['Shared Name']);
    const q = 'query($n: String!) { entityTypeByName(name: $n) { guid name } }';
    for (let i = 0; i < 2; i++) {
      const a = await ask(world.app, one.token, q, { n: 'shared name' });
      const b = await ask(world.app, two.token, q, { n: 'shared name' });
      expect((dataOf(a).entityTypeByName as { guid: string }).guid).toBe(one.guids[0]);
      expect((dataOf(b).entityTypeByName as { guid: string }).guid).toBe(two.guids[0]);
    }
    expect((await ask(world.app, two.token, q, { n: 'only in one' })).json.data?.entityTypeByName).toBeNull();
    expect(
      (await ask(world.app, one.token, q, { n: 'only in one' })).json.data?.entityTypeByName,
    ).not.toBeNull();
    const json = await ask(world.app, one.token, q, { n: 'shared name' });
    const gql = await ask(world.app, one.token, q, { n: 'shared name' }, 'application/graphql-response+json');
    const gqlAgain = await ask(
      world.app,
      one.token,
      q,
      { n: 'shared name' },
      'application/graphql-response+json',
    );
    expect(json.contentType).toContain('application/json');
    expect(gql.contentType).toContain('application/graphql-response+json');
    expect(gqlAgain.contentType).toBe(gql.contentType);
  });
});

describe('what is never kept', () => {
  it('withdrawn definitions (their purge state changes without a model change): executed every time', async ({
    world,
  }) => {
    const { token, guids, api } = await tenantWithTypes(world, ['Withdrawals']);
    const body = { name: 'gone', value_type: 'string', cardinality: 'single' };
    expect((await api.post(`/entities/types/${guids[0]}/attributes`, body)).status).toBe(201);
    expect((await api.delete(`/entities/attributes/${guids[0]}/gone`)).status).toBe(200);
    const q = 'query($g: ID!) { entityType(guid: $g) { name withdrawnAttributes { definition { name } } } }';
    await ask(world.app, token, q, { g: guids[0] });
    const before = answers(world.app);
    const again = await ask(world.app, token, q, { g: guids[0] });
    expect(again.json.data?.entityType).toMatchObject({
      withdrawnAttributes: [{ definition: { name: 'gone' } }],
    });
    expect(again.queries).toBeGreaterThan(1);
    expect(answers(world.app).hits).toBe(before.hits);
  });

  it('mutations: a repeated createEntityType executes again (and reports created false)', async ({
    world,
  }) => {
    const { token } = await tenantWithTypes(world, []);
    const m = 'mutation { createEntityType(name: "Again") { created } }';
    expect((await ask(world.app, token, m)).json.data).toEqual({ createEntityType: { created: true } });
    expect((await ask(world.app, token, m)).json.data).toEqual({ createEntityType: { created: false } });
  });

  it('refusals: an invalid cursor is refused each time, never replayed from memory', async ({ world }) => {
    const { token } = await tenantWithTypes(world, ['Cursor']);
    const q = 'query($a: String) { entityTypes(first: 2, after: $a) { edges { node { name } } } }';
    const hits = answers(world.app).hits;
    for (let i = 0; i < 3; i++) {
      const res = await ask(world.app, token, q, { a: 'not-a-cursor' });
      expect(res.json.errors?.[0]?.extensions.reason).toBe('invalid_cursor');
    }
    expect(answers(world.app).hits).toBe(hits);
  });
});
