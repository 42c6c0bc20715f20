// Issue #13, part 1: every metamodel change is recorded in its own transaction (who, when, what, the request id,
// before/after), readable as a type's history (newest first) and as the tenant's change feed (oldest first, every
// change exactly once, also under concurrent writers).
import { describe, expect } from 'vitest';
import { CHANGE_KINDS } from '../../src/model/changes.js';
import { GRAPHQL_LIMITS } from '../../src/model/graphql-limits.js';
import { FEED_FILTER_WINDOW } from '../../src/resolvers/changes.js';
import { it } from '../fixtures.js';
import {
  carriesDone,
  createType,
  graphqlClient,
  graphqlCountingParses,
  newTenant,
  type Reply,
  refusalOf,
  restClient,
  type TestWorld,
  tokenFor,
} from '../helpers.js';

interface Change {
  id: string;
  at: string;
  kind: string;
  type_guid: string;
  attribute_guid: string | null;
  actor: string | null;
  request_id: string | null;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

async function tenantApi(world: TestWorld, sub = 'alice@example.com') {
  const tenant = newTenant();
  const api = restClient(world.app, await tokenFor(tenant, { sub }));
  return { tenant, api };
}

type Api = ReturnType<typeof restClient>;

/** Every page of a type's history, newest first. */
async function wholeHistory(api: Api, guid: string, pageSize = 100) {
  const all: Change[] = [];
  let cursor: string | null = null;
  do {
    const query: string = `page_size=${pageSize}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const res: Reply = await api.get(`/entities/types/${guid}/history?${query}`);
    expect(res.status).toBe(200);
    all.push(...res.body.DATA.changes);
    cursor = res.body.DATA.next_cursor;
  } while (cursor);
  return all;
}

/** Reads the feed from `after` until a page says nothing more is ready; returns the changes and where to resume. */
async function drainFeed(api: Api, after: string | null, pageSize = 100, filter = '') {
  const changes: Change[] = [];
  let cursor = after;
  for (;;) {
    const query = `page_size=${pageSize}${cursor ? `&after=${encodeURIComponent(cursor)}` : ''}${filter}`;
    const res = await api.get(`/entities/changes?${query}`);
    expect(res.status).toBe(200);
    changes.push(...res.body.DATA.changes);
    cursor = res.body.DATA.next_cursor;
    if (!res.body.DATA.has_more) return { changes, cursor: cursor as string };
  }
}

const requestIdOf = (res: Reply) => String(res.headers['x-request-id']);

describe('history: every kind of change is recorded, with who, when, the request id and before/after', () => {
  it('type created, renamed, deleted and recreated (same guid, one history); attributes declared, withdrawn, removed by the purge', async ({
    world,
  }) => {
    const { tenant, api } = await tenantApi(world);
    const created = await api.post('/entities/types', { name: 'Report' });
    const guid = created.body.DATA.entity_type.guid as string;
    const other = await createType(api, 'Person');
    const renamed = await api.patch(`/entities/types/${guid}`, { name: 'Report Card' });
    const declared = await api.post(`/entities/types/${guid}/attributes`, {
      name: 'grade',
      value_type: 'string',
      cardinality: 'single',
      allowed_values: ['A', 'B'],
      default_value: 'A',
    });
    const owner = await api.post(`/entities/types/${guid}/attributes`, {
      name: 'owner',
      value_type: 'entity_ref',
      cardinality: 'single',
      allowed_ref_type: other,
      filterable: true,
    });
    const withdrawn = await api.delete(`/entities/attributes/${guid}/grade`);
    expect([declared.status, owner.status, withdrawn.status]).toEqual([201, 201, 200]);
    await world.app.services.purger.idle();
    const operator = await tokenFor('default', { roles: ['admin'], sub: 'ops-on-call' });
    const purge = await restClient(world.app, operator).post('/admin/jobs/purge', { tenant });
    expect(purge.status).toBe(200);
    // the operator who ran the purge by hand is its actor, with the purge request's id
    const deleted = await api.delete(`/entities/types/${guid}`);
    expect(deleted.status).toBe(200);
    const recreated = await api.post('/entities/types', { name: 'report card' });
    expect(recreated.body.DATA.entity_type.guid).toBe(guid);

    const history = await wholeHistory(api, guid);
    expect(history.map((c) => c.kind)).toEqual([
      'type_created',
      'type_deleted',
      'attribute_removed',
      'attribute_withdrawn',
      'attribute_declared',
      'attribute_declared',
      'type_renamed',
      'type_created',
    ]);
    const [again, gone, removed, withdrawal, ownerDecl, gradeDecl, rename, first] = history as Change[];
    const alice = { actor: 'alice@example.com' };
    expect(first).toMatchObject({
      ...alice,
      type_guid: guid,
      attribute_guid: null,
      request_id: requestIdOf(created),
      before: null,
      after: { name: 'Report', origin: 'user_defined', catalog_level: true },
    });
    expect(rename).toMatchObject({
      ...alice,
      request_id: requestIdOf(renamed),
      before: { name: 'Report' },
      after: { name: 'Report Card' },
    });
    expect(gradeDecl).toMatchObject({
      ...alice,
      attribute_guid: declared.body.DATA.attribute.guid,
      request_id: requestIdOf(declared),
      before: null,
      after: {
        name: 'grade',
        value_type: 'string',
        cardinality: 'single',
        allowed_values: ['A', 'B'],
        allowed_ref_type: null,
        required: false,
        default_value: 'A',
        filterable: false,
      },
    });
    expect(ownerDecl?.after).toMatchObject({ name: 'owner', allowed_ref_type: other, filterable: true });
    expect(withdrawal).toMatchObject({
      ...alice,
      attribute_guid: declared.body.DATA.attribute.guid,
      request_id: requestIdOf(withdrawn),
      before: { name: 'grade', state: 'live' },
      after: { name: 'grade', state: 'withdrawn' },
    });
    expect(removed).toMatchObject({
      kind: 'attribute_removed',
      actor: 'ops-on-call',
      request_id: requestIdOf(purge),
      attribute_guid: declared.body.DATA.attribute.guid,
      before: { name: 'grade', state: 'withdrawn', values_removed: 0 },
      after: null,
    });
    expect(gone).toMatchObject({
      ...alice,
      request_id: requestIdOf(deleted),
      before: {
        name: 'Report Card',
        origin: 'user_defined',
        withdrawn_attributes: [{ guid: owner.body.DATA.attribute.guid, name: 'owner' }],
      },
      after: null,
    });
    expect(again).toMatchObject({ request_id: requestIdOf(recreated), after: { name: 'report card' } });
    // newest first, times never decreasing backwards
    const times = history.map((c) => Date.parse(c.at));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    expect(new Set(history.map((c) => c.id)).size).toBe(history.length);
  });

  it('the platform setting up the dashboard type is recorded once; later rows record nothing', async ({
    world,
  }) => {
    const tenant = newTenant();
    const platform = restClient(world.app, await tokenFor(tenant, { roles: ['platform'], sub: 'bi-sync' }));
    const first = await platform.post('/platform/dashboards', { name: 'Revenue' });
    await platform.post('/platform/dashboards', { name: 'Costs' });
    const guid = first.body.DATA.entity_type.guid;
    const history = await wholeHistory(restClient(world.app, await tokenFor(tenant)), guid);
    expect(history).toHaveLength(1);
    expect(history[0]).toMatchObject({
      kind: 'managed_type_set_up',
      actor: 'bi-sync',
      request_id: requestIdOf(first),
      before: null,
      after: { name: 'dashboard', catalog_level: true, label: 'Dashboard', creatable: false },
    });
  });

  it('refused changes, dry runs and create-or-get of an existing name record nothing', async ({ world }) => {
    const { api } = await tenantApi(world);
    const guid = await createType(api, 'Thing');
    const declare = { name: 'a', value_type: 'number', cardinality: 'single' };
    await api.post(`/entities/types/${guid}/attributes`, declare);
    expect((await api.post(`/entities/types/${guid}/attributes`, declare)).status).toBe(409);
    expect(
      (await api.post(`/entities/types/${guid}/attributes?dry_run=true`, { ...declare, name: 'b' })).status,
    ).toBe(200);
    expect((await api.delete(`/entities/attributes/${guid}/a?dry_run=true`)).status).toBe(200);
    expect((await api.post('/entities/types', { name: 'THING' })).status).toBe(200);
    expect((await api.patch(`/entities/types/${guid}`, { name: 'dashboard' })).status).toBe(409);
    // a rename to the name it has, spelt the same (once trimmed), is answered with the type and writes nothing
    const same = await api.patch(`/entities/types/${guid}`, { name: '  Thing ' });
    expect([same.status, same.body.DATA.entity_type.name]).toEqual([200, 'Thing']);
    const history = await wholeHistory(api, guid);
    expect(history.map((c) => c.kind)).toEqual(['attribute_declared', 'type_created']);
    // a change of letter case is a rename
    expect((await api.patch(`/entities/types/${guid}`, { name: 'THING' })).status).toBe(200);
    expect((await wholeHistory(api, guid)).map((c) => c.kind)[0]).toBe('type_renamed');
  });

  it("a history's cursor is bound to its type: another type's history refuses it", async ({ world }) => {
    const { api } = await tenantApi(world);
    const one = await createType(api, 'One');
    const two = await createType(api, 'Two');
    for (const guid of [one, two]) {
      await api.post(`/entities/types/${guid}/attributes`, {
        name: 'a',
        value_type: 'number',
        cardinality: 'single',
      });
    }
    const cursor = (await api.get(`/entities/types/${one}/history?page_size=1`)).body.DATA
      .next_cursor as string;
    const own = await api.get(`/entities/types/${one}/history?cursor=${encodeURIComponent(cursor)}`);
    expect(own.body.DATA.changes.map((c: Change) => c.kind)).toEqual(['type_created']);
    const other = await api.get(`/entities/types/${two}/history?cursor=${encodeURIComponent(cursor)}`);
    expect([other.status, other.body.DATA.reason]).toEqual([400, 'invalid_cursor']);
  });
});

describe('history: paging and tenancy', () => {
  it('is keyset-paged newest first: every record once, at any page size', async ({ world }) => {
    const { api } = await tenantApi(world);
    const guid = await createType(api, 'Paged');
    for (let i = 0; i < 7; i += 1) {
      await api.post(`/entities/types/${guid}/attributes`, {
        name: `a${i}`,
        value_type: 'string',
        cardinality: 'single',
      });
    }
    const whole = await wholeHistory(api, guid, 500);
    expect(whole).toHaveLength(8);
    expect(whole.map((c) => c.after?.name)).toEqual(['a6', 'a5', 'a4', 'a3', 'a2', 'a1', 'a0', 'Paged']);
    for (const size of [1, 3, 7, 8]) expect(await wholeHistory(api, guid, size)).toEqual(whole);
    const firstPage = await api.get(`/entities/types/${guid}/history?page_size=3`);
    expect(firstPage.body.DATA.changes).toHaveLength(3);
    expect(firstPage.body.DATA.next_cursor).toEqual(expect.any(String));
    const lastPage = await api.get(`/entities/types/${guid}/history?page_size=8`);
    expect(lastPage.body.DATA.next_cursor).toBeNull();
  });

  it("another tenant's type is unknown, its cursors invalid; page sizes outside 1..500 are refused", async ({
    world,
  }) => {
    const a = await tenantApi(world);
    const b = await tenantApi(world);
    const guid = await createType(a.api, 'Secret');
    await a.api.post(`/entities/types/${guid}/attributes`, {
      name: 'x',
      value_type: 'json',
      cardinality: 'multi',
    });
    const foreign = await b.api.get(`/entities/types/${guid}/history`);
    expect(foreign.status).toBe(404);
    expect(foreign.body.DATA.reason).toBe('unknown_entity_type');
    expect((await b.api.get('/entities/types/nope/history')).body.DATA.reason).toBe('unknown_entity_type');

    const page = await a.api.get(`/entities/types/${guid}/history?page_size=1`);
    const cursor = encodeURIComponent(page.body.DATA.next_cursor);
    const bOwn = await createType(b.api, 'Secret');
    const stolen = await b.api.get(`/entities/types/${bOwn}/history?cursor=${cursor}`);
    expect(stolen.status).toBe(400);
    expect(stolen.body.DATA.reason).toBe('invalid_cursor');
    // cursors of one list are refused by the others
    const typeCursor = (await a.api.get('/entities/types?page_size=1')).body.DATA.next_cursor;
    const feedCursor = (await a.api.get('/entities/changes?page_size=1')).body.DATA.next_cursor;
    for (const [url, c] of [
      [`/entities/types/${guid}/history?cursor=`, typeCursor],
      [`/entities/types/${guid}/history?cursor=`, feedCursor],
      ['/entities/changes?after=', typeCursor],
      ['/entities/changes?after=', cursor],
      ['/entities/types?cursor=', feedCursor],
    ]) {
      const res = await a.api.get(`${url}${encodeURIComponent(decodeURIComponent(c as string))}`);
      expect(res.body.DATA.reason, url).toBe('invalid_cursor');
    }
    for (const size of ['0', '501', 'x']) {
      const res = await a.api.get(`/entities/types/${guid}/history?page_size=${size}`);
      expect(res.body.DATA.reason).toBe('invalid_page_size');
      expect((await a.api.get(`/entities/changes?page_size=${size}`)).body.DATA.reason).toBe(
        'invalid_page_size',
      );
    }
    expect((await a.api.get(`/entities/types/${guid}/history?page_size=500`)).status).toBe(200);
    expect((await a.api.get('/entities/changes?page_size=500')).status).toBe(200);
    expect((await a.api.get('/entities/changes?page_size=1')).status).toBe(200);
  });
});

describe('change feed', () => {
  it("starts at the tenant's first change, oldest first; an empty page keeps the cursor; only the tenant's own changes", async ({
    world,
  }) => {
    const { api } = await tenantApi(world);
    const other = await tenantApi(world);
    await createType(other.api, 'Noise');
    const start = await drainFeed(api, null);
    expect(start.changes).toEqual([]);
    const t1 = await createType(api, 'One');
    const t2 = await createType(api, 'Two');
    await api.patch(`/entities/types/${t1}`, { name: 'Uno' });
    const read = await drainFeed(api, start.cursor);
    expect(read.changes.map((c) => [c.kind, c.type_guid])).toEqual([
      ['type_created', t1],
      ['type_created', t2],
      ['type_renamed', t1],
    ]);
    const idle = await api.get(`/entities/changes?after=${encodeURIComponent(read.cursor)}`);
    expect(idle.body.DATA).toMatchObject({ changes: [], has_more: false });
    expect(await drainFeed(api, idle.body.DATA.next_cursor)).toMatchObject({ changes: [] });
    // from the start again: the same changes
    expect((await drainFeed(api, null, 1)).changes).toEqual(read.changes);
  });

  it('filtered by type, attribute name and kinds (all must hold): the same changes as the whole feed filtered by hand', async ({
    world,
  }) => {
    const { api, tenant } = await tenantApi(world);
    const card = await createType(api, 'Card');
    const deck = await createType(api, 'Deck');
    const declare = (t: string, name: string, extra: Record<string, unknown> = {}) =>
      api.post(`/entities/types/${t}/attributes`, {
        name,
        value_type: 'string',
        cardinality: 'single',
        ...extra,
      });
    await declare(card, 'grade', { allowed_values: ['A', 'B'] });
    await declare(deck, 'grade');
    await declare(card, 'note');
    // grade on Card redeclared (a new definition, a new guid): the name still finds both
    await api.post('/entities/model/apply', {
      document: {
        format: 'entity-metamodel/v1',
        types: [
          {
            name: 'Card',
            attributes: [
              { name: 'Grade', value_type: 'string', cardinality: 'single', allowed_values: ['A', 'C'] },
              { name: 'note', value_type: 'string', cardinality: 'single' },
            ],
          },
        ],
      },
      allow_withdraw: true,
    });
    await carriesDone(world, tenant);
    await api.patch(`/entities/types/${deck}`, { name: 'Pack' });
    const all = (await drainFeed(api, null)).changes;
    const cases: [string, (c: Change) => boolean][] = [
      [`&type_guid=${card}`, (c) => c.type_guid === card],
      [
        '&attribute=GRADE',
        (c) =>
          c.kind.startsWith('attribute_') && ((c.after ?? c.before) as any).name.toLowerCase() === 'grade',
      ],
      [
        `&attribute=grade&type_guid=${card}`,
        (c) =>
          c.type_guid === card &&
          c.kind.startsWith('attribute_') &&
          ((c.after ?? c.before) as any).name.toLowerCase() === 'grade',
      ],
      [
        '&kind=attribute_withdrawn,type_renamed',
        (c) => ['attribute_withdrawn', 'type_renamed'].includes(c.kind),
      ],
      [
        `&kind=attribute_declared&type_guid=${deck}`,
        (c) => c.kind === 'attribute_declared' && c.type_guid === deck,
      ],
    ];
    for (const [filter, keep] of cases) {
      for (const size of [1, 100]) {
        expect((await drainFeed(api, null, size, filter)).changes, filter).toEqual(all.filter(keep));
      }
    }
    expect((await drainFeed(api, null, 100, '&attribute=grade')).changes.map((c) => c.kind)).toEqual([
      'attribute_declared',
      'attribute_declared',
      'attribute_withdrawn',
      'attribute_removed',
      'attribute_declared',
    ]);
    for (const bad of [
      '&kind=attribute_eaten',
      '&attribute=',
      `&attribute=${'x'.repeat(300)}`,
      '&type_guid=%20',
      '&type_guid=zz',
      `&type_guid=${card}x`,
    ]) {
      const res = await api.get(`/entities/changes?page_size=5${bad}`);
      expect([res.status, res.body.DATA.reason], bad).toEqual([400, 'invalid_filter']);
    }
    // GraphQL: the same filter, the same changes
    const gql = graphqlClient(world.app, await tokenFor(tenant, { sub: 'alice@example.com' }));
    const viaGql: string[] = [];
    let after: string | null = null;
    for (;;) {
      const page = await gql.modelChanges({
        first: 2,
        after,
        attribute: 'grade',
        typeGuid: card,
        kinds: ['attribute_declared', 'attribute_removed'],
      });
      viaGql.push(...page.changes.map((c) => c.id));
      after = page.nextCursor;
      if (!page.hasMore) break;
    }
    expect(viaGql).toEqual(
      all
        .filter((c) => c.type_guid === card && ['attribute_declared', 'attribute_removed'].includes(c.kind))
        .filter((c) => ((c.after ?? c.before) as any).name.toLowerCase() === 'grade')
        .map((c) => c.id),
    );
    expect(await refusalOf(gql.request('{ modelChanges(attribute: "") { hasMore } }' as never))).toBe(
      'invalid_filter',
    );
    expect(await refusalOf(gql.request('{ modelChanges(typeGuid: "zz") { hasMore } }' as never))).toBe(
      'invalid_filter',
    );
    // more kinds than there are, every one known: refused as too many, counted before they are read
    const many = await world.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: {
        authorization: `Bearer ${await tokenFor(tenant)}`,
        'content-type': 'application/json',
      },
      payload: {
        query: 'query($k: [ModelChangeKind!]) { modelChanges(kinds: $k) { hasMore } }',
        variables: { k: Array.from({ length: 200_000 }, () => 'attribute_declared') },
      },
    });
    expect(many.json().errors[0].extensions.reason).toBe('invalid_filter');
    expect(many.json().errors[0].message).toMatch(/^At most \d+ kinds of change/);
    // every kind once is the most: accepted; one more (a kind twice) refused
    expect((await api.get(`/entities/changes?page_size=5&kind=${CHANGE_KINDS.join(',')}`)).status).toBe(200);
    const twice = await world.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { authorization: `Bearer ${await tokenFor(tenant)}`, 'content-type': 'application/json' },
      payload: {
        query: 'query($k: [ModelChangeKind!]) { modelChanges(kinds: $k) { hasMore } }',
        variables: { k: [...CHANGE_KINDS, CHANGE_KINDS[0]] },
      },
    });
    expect(twice.json().errors[0].extensions.reason).toBe('invalid_filter');
  });

  it('a filtered page examines a bounded window: past it, an empty page with has_more, and the match on a later page', async ({
    world,
  }) => {
    const { api } = await tenantApi(world);
    for (let i = 0; i < FEED_FILTER_WINDOW + 10; i += 1) await createType(api, `Noise ${i}`);
    const t = await createType(api, 'Signal');
    await api.post(`/entities/types/${t}/attributes`, {
      name: 'x',
      value_type: 'string',
      cardinality: 'single',
    });
    const first = await api.get('/entities/changes?page_size=10&kind=attribute_declared');
    expect(first.body.DATA).toMatchObject({ changes: [], has_more: true });
    const rest = await drainFeed(api, first.body.DATA.next_cursor, 10, '&kind=attribute_declared');
    expect(rest.changes.map((c) => [c.kind, c.type_guid])).toEqual([['attribute_declared', t]]);
    // the cursor of a filtered page is a position in the feed: unfiltered from there, what follows
    const tail = await drainFeed(api, first.body.DATA.next_cursor, 500);
    expect(tail.changes.map((c) => c.kind).slice(-2)).toEqual(['type_created', 'attribute_declared']);
  }, 60_000);

  it('a consumer reading while writers write gets every change exactly once, each type in the order it changed', async ({
    world,
  }) => {
    const { api } = await tenantApi(world);
    const writers = 8;
    const perWriter = 16;
    const expected = new Set<string>();
    let writing = true;
    const consumer = (async () => {
      const seen: Change[] = [];
      let cursor: string | null = null;
      while (writing) {
        const page = await drainFeed(api, cursor, 7);
        seen.push(...page.changes);
        cursor = page.cursor;
      }
      return { seen, cursor };
    })();
    await Promise.all(
      Array.from({ length: writers }, async (_, w) => {
        for (let i = 0; i < perWriter; i += 1) {
          const created = await api.post('/entities/types', { name: `w${w}-t${i}` });
          expected.add(requestIdOf(created));
          const guid = created.body.DATA.entity_type.guid;
          const declared = await api.post(`/entities/types/${guid}/attributes`, {
            name: 'a',
            value_type: 'string',
            cardinality: 'single',
          });
          expected.add(requestIdOf(declared));
          if (i % 3 === 0)
            expected.add(requestIdOf(await api.patch(`/entities/types/${guid}`, { name: `w${w}-r${i}` })));
        }
      }),
    );
    writing = false;
    const { seen, cursor } = await consumer;
    seen.push(...(await drainFeed(api, cursor, 7)).changes);
    const ids = seen.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length); // nothing twice
    expect(new Set(seen.map((c) => c.request_id))).toEqual(expected); // nothing missed, nothing else
    expect(seen).toHaveLength(expected.size);
    // each type: created, then declared, then renamed
    const byType = new Map<string, string[]>();
    for (const c of seen) byType.set(c.type_guid, [...(byType.get(c.type_guid) ?? []), c.kind]);
    for (const kinds of byType.values()) {
      expect(kinds.slice(0, 2)).toEqual(['type_created', 'attribute_declared']);
    }
    // read again from the start, once every write has committed: the same changes, now all in time order (read
    // while writers wrote, a change could come after a later one it was concurrent with, never before one it
    // followed)
    const again = (await drainFeed(api, null, 500)).changes;
    expect(new Set(again.map((c) => c.id))).toEqual(new Set(ids));
    const times = again.map((c) => c.at);
    expect([...times].sort()).toEqual(times);
  }, 120_000);

  it('a page stops before the record that would take its before/after past 1 MiB, and carries at least one', async ({
    world,
  }) => {
    const { api } = await tenantApi(world);
    const big = Array.from({ length: 1000 }, (_, i) => `${String(i).padStart(4, '0')}${'v'.repeat(1010)}`);
    const types = [await createType(api, 'Big one'), await createType(api, 'Big two')];
    const start = (await drainFeed(api, null)).cursor;
    for (let i = 0; i < 5; i += 1) {
      const res = await api.post(`/entities/types/${types[i % 2]}/attributes`, {
        name: `e${i}`,
        value_type: 'string',
        cardinality: 'single',
        allowed_values: big,
      });
      expect(res.status).toBe(201);
    }
    const first = await api.get(`/entities/changes?after=${encodeURIComponent(start)}&page_size=500`);
    // each record's after is 1,017,158 characters: one fits in 1 MiB (1,048,576), a second would pass it
    expect(JSON.stringify(first.body.DATA.changes[0].after).length).toBe(1_017_158);
    expect(first.body.DATA.changes.map((c: Change) => c.after?.name)).toEqual(['e0']);
    expect(first.body.DATA.has_more).toBe(true);
    const rest = await drainFeed(api, first.body.DATA.next_cursor, 500);
    expect(rest.changes.map((c) => c.after?.name)).toEqual(['e1', 'e2', 'e3', 'e4']);
    const one = await api.get(`/entities/types/${types[0]}/history?page_size=1`);
    expect(one.body.DATA.changes).toHaveLength(1);
    expect((await wholeHistory(api, types[0] as string)).length).toBe(4);
  }, 60_000);

  it('the page bound counts UTF-8 bytes: records of CJK text stop a page by the bytes they carry', async ({
    world,
  }) => {
    const { tenant, api } = await tenantApi(world);
    const type = await createType(api, 'Wide history');
    const start = (await drainFeed(api, null)).cursor;
    for (let i = 0; i < 3; i += 1) {
      const values = Array.from({ length: 200 }, (_, j) => `${i}.${j}:`.padEnd(1_024, '字'));
      const res = await api.post(`/entities/types/${type}/attributes`, {
        name: `w${i}`,
        value_type: 'string',
        cardinality: 'single',
        allowed_values: values,
      });
      expect(res.status).toBe(201);
    }
    const first = await api.get(`/entities/changes?after=${encodeURIComponent(start)}&page_size=500`);
    const after = JSON.stringify(first.body.DATA.changes[0].after);
    // about 205,000 characters a record (three fit 1 MiB so counted), about 614,000 bytes (two do not)
    expect(3 * after.length).toBeLessThan(1_048_576);
    expect(2 * Buffer.byteLength(after)).toBeGreaterThan(1_048_576);
    expect(first.body.DATA.changes.map((c: Change) => c.after?.name)).toEqual(['w0']);
    expect(first.body.DATA.has_more).toBe(true);
    const history = await api.get(`/entities/types/${type}/history?page_size=500`);
    expect(history.body.DATA.changes.map((c: Change) => c.after?.name)).toEqual(['w2']);
    expect((await wholeHistory(api, type)).length).toBe(4);
    // records an earlier release wrote, their length in code points: read at four bytes a character
    await world.driver.executeQuery(
      `MATCH (c:ModelChange {tenant: $tenant}) WHERE c.type_guid = $type
       SET c.bytes = size(coalesce(c.before, '')) + size(coalesce(c.after, '')) REMOVE c.bytes_utf8`,
      { tenant, type },
    );
    const legacy = await api.get(`/entities/types/${type}/history?page_size=500`);
    expect(legacy.body.DATA.changes.map((c: Change) => c.after?.name)).toEqual(['w2']);
    expect((await wholeHistory(api, type)).length).toBe(4);
  }, 60_000);
});

describe('GraphQL: EntityType.history and modelChanges', () => {
  it('answer the same changes as REST, page for page', async ({ world }) => {
    const tenant = newTenant();
    const token = await tokenFor(tenant, { sub: 'gql-user' });
    const api = restClient(world.app, token);
    const gql = graphqlClient(world.app, token);
    const guid = await createType(api, 'Both');
    await gql.declareAttribute(guid, { name: 'n', valueType: 'number', cardinality: 'single' } as never);
    await gql.renameEntityType(guid, 'Both Ways');
    const rest = await wholeHistory(api, guid);
    const asRest = (c: any) => ({
      id: c.id,
      at: c.at,
      kind: c.kind,
      type_guid: c.typeGuid,
      attribute_guid: c.attributeGuid,
      actor: c.actor,
      request_id: c.requestId,
      reason: c.reason,
      before: c.before,
      after: c.after,
    });
    const viaGql: Change[] = [];
    let after: string | null = null;
    do {
      const type = await gql.typeHistory(guid, { first: 2, after });
      const history = type?.history;
      viaGql.push(...(history?.edges ?? []).map((e) => asRest(e.node)));
      after = history?.pageInfo.hasNextPage ? (history.pageInfo.endCursor ?? null) : null;
    } while (after);
    expect(viaGql).toEqual(rest);
    expect(rest.map((c) => c.kind)).toEqual(['type_renamed', 'attribute_declared', 'type_created']);

    const feed = await gql.modelChanges({ first: 500 });
    expect(feed.changes.map(asRest)).toEqual((await drainFeed(api, null, 500)).changes);
    expect(feed.hasMore).toBe(false);
    const again = await gql.modelChanges({ after: feed.nextCursor });
    expect(again).toMatchObject({ changes: [], nextCursor: feed.nextCursor, hasMore: false });
    expect(await refusalOf(gql.modelChanges({ first: 0 }))).toBe('invalid_page_size');
    expect(await refusalOf(gql.modelChanges({ after: 'forged.cursor' }))).toBe('invalid_cursor');
    expect(await refusalOf(gql.typeHistory(guid, { first: 501 }))).toBe('invalid_page_size');
  });

  it('the histories of a page of types are read together, in one round of statements', async ({ world }) => {
    const tenant = newTenant();
    const token = await tokenFor(tenant);
    const api = restClient(world.app, token);
    const gql = graphqlClient(world.app, token);
    for (const name of ['h1', 'h2', 'h3', 'h4']) await createType(api, name);
    const query = `{ entityTypes(first: 500) { edges { node { name history(first: 5) { edges { node { kind } } } } } } }`;
    const res = await gql.request(query as never);
    const edges = (res as any).entityTypes.edges as { node: { name: string; history: any } }[];
    const mine = edges.filter((e) => /^h\d$/.test(e.node.name));
    expect(mine.map((e) => e.node.history.edges.map((x: any) => x.node.kind))).toEqual([
      ['type_created'],
      ['type_created'],
      ['type_created'],
      ['type_created'],
    ]);
    // the system types have no history: an empty connection, not an error
    expect(edges.find((e) => e.node.name === 'table')?.node.history.edges).toEqual([]);
    // the page (model version and the page itself) plus the histories (heads and records): not one per type
    expect(gql.lastQueries()).toBeLessThanOrEqual(4);
  });
});

describe("GraphQL: a record's stored texts are answered as stored, never parsed", () => {
  it('its before and after, in every alias asking for them, are spliced into the answer as the database holds them', async ({
    world,
  }) => {
    const tenant = newTenant();
    const token = await tokenFor(tenant);
    const api = restClient(world.app, token);
    const big = Array.from({ length: 1000 }, (_, i) => `${String(i).padStart(4, '0')}${'v'.repeat(500)}`);
    const guid = await createType(api, 'Parsed once');
    const declared = await api.post(`/entities/types/${guid}/attributes`, {
      name: 'e',
      value_type: 'string',
      cardinality: 'single',
      allowed_values: big,
      default_value: `0007${'v'.repeat(500)}`,
    });
    expect(declared.status).toBe(201);
    const field = `entityType(guid: "${guid}") { history(first: 10) { edges { node { id at before after } } } }`;
    const { res, parses } = await graphqlCountingParses(
      world.app,
      token,
      `{ a0: ${field} a1: ${field} a2: ${field} }`,
      400_000,
    );
    // The declaration's record (its after holds the enumeration): 3 aliases of 4 fields parsed it 12 times, then
    // once; now never.
    expect(parses).toBe(0);
    const text = res.body;
    const body = JSON.parse(text);
    expect(body.errors).toBeUndefined();
    // The same records as REST's history, field for field, in every alias.
    const rest = await api.get(`/entities/types/${guid}/history?page_size=10`);
    expect(rest.status).toBe(200);
    const records = rest.body.DATA.changes as { id: string; at: string; before: unknown; after: unknown }[];
    expect(records[0]?.after).toMatchObject({ allowed_values: big });
    for (const alias of ['a0', 'a1', 'a2']) {
      expect(body.data[alias].history.edges.map((e: { node: unknown }) => e.node)).toEqual(
        records.map(({ id, at, before, after }) => ({ id, at, before, after })),
      );
    }
  });
});

describe('GraphQL: what histories cost is charged before their texts are read', () => {
  it('histories whose before/after pass the answer budget together are refused with result_too_large; under it, answered', async ({
    world,
  }) => {
    const tenant = newTenant();
    const token = await tokenFor(tenant);
    const api = restClient(world.app, token);
    const big = Array.from({ length: 1000 }, (_, i) => `${String(i).padStart(4, '0')}${'v'.repeat(1010)}`);
    // A record of 1,017,158 characters a type (a page stops at 1 MiB): as many types as fit in the answer bound are
    // answered, one more is refused.
    const under = Math.floor(GRAPHQL_LIMITS.maxAnswerBytes / 1_017_158);
    const types: string[] = [];
    for (let t = 0; t <= under; t += 1) {
      const guid = await createType(api, `Heavy ${t}`);
      types.push(guid);
      for (let i = 0; i < 1; i += 1) {
        const res = await api.post(`/entities/types/${guid}/attributes`, {
          name: `e${i}`,
          value_type: 'string',
          cardinality: 'single',
          allowed_values: big,
        });
        expect(res.status).toBe(201);
      }
    }
    const query = (n: number) =>
      `{ ${types
        .slice(0, n)
        .map(
          (g, i) =>
            `t${i}: entityType(guid: "${g}") { history(first: 10) { edges { node { kind after } } } }`,
        )
        .join(' ')} }`;
    const post = async (n: number) => {
      const res = await world.app.inject({
        method: 'POST',
        url: '/graphql',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ query: query(n) }),
      });
      return { ...res.json(), queries: Number(res.headers['x-db-queries']) };
    };
    // The first ask puts the types in the model cache: what a later one sends is the version, the heads, the texts.
    expect((await post(under + 1)).errors?.[0]?.extensions?.reason).toBe('result_too_large');
    const over = await post(under + 1);
    expect(over.errors?.[0]?.extensions?.reason).toBe('result_too_large');
    expect(over.data).toBeNull();
    // The records' heads and the version (unless a read lease holds it): refused before the texts were read.
    expect([1, 2]).toContain(over.queries);
    const answered = await post(under);
    expect(answered.errors).toBeUndefined();
    expect(answered.data[`t${under - 1}`].history.edges).toHaveLength(2);
    expect([2, 3]).toContain(answered.queries);
  }, 120_000);
});
