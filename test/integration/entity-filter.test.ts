// Issue #14: the entities of a type filtered by their filterable references, over REST (GET /entities) and GraphQL
// (Query.entities), on the real Neo4j.

import { randomUUID } from 'node:crypto';
import { describe, expect } from 'vitest';
import { insertEntities, type NewEntity, readEntityPage } from '../../src/db/entities.js';
import { BACKFILLS } from '../../src/db/migrations.js';
import type { Row, Run } from '../../src/db/run.js';
import { nameKey } from '../../src/model/names.js';
import {
  FILTER_SCAN_WINDOW,
  MAX_FILTER_CONDITIONS,
  MAX_FILTER_GUIDS,
} from '../../src/resolvers/entity-list.js';
import { it } from '../fixtures.js';
import {
  createType,
  graphqlClient,
  newTenant,
  type Reply,
  refusalOf,
  restClient,
  type TestWorld,
  tokenFor,
  typeGuidByName,
} from '../helpers.js';

/** Statements straight through the world's driver, as src/db's functions take them. */
const runOn =
  (world: TestWorld): Run =>
  async (cypher, params = {}) =>
    (await world.driver.executeQuery(cypher, params)).records.map((r) => r.toObject() as Row);

interface Summary {
  guid: string;
  name: string;
  type_guid: string;
}

/**
 * A tenant with a table type, a person type and tags: `owner` a filterable reference to a person, `steward` a
 * reference that is not filterable, `rows` a number. Entities: named out of order, tagged and owned variously; a
 * dashboard-like other type refers to the same tags and people, and must never be listed.
 */
async function catalog(world: TestWorld) {
  const tenant = newTenant();
  const token = await tokenFor(tenant);
  const api = restClient(world.app, token);
  const gql = graphqlClient(world.app, token);
  const table = await createType(api, 'Table Asset');
  const person = await createType(api, 'Person');
  const other = await createType(api, 'Report');
  const tagType = await typeGuidByName(api, 'tag');
  const declare = async (type: string, body: Record<string, unknown>) => {
    const res = await api.post(`/entities/types/${type}/attributes`, body);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  };
  const ownerSpec = {
    name: 'Owner',
    value_type: 'entity_ref',
    cardinality: 'single',
    allowed_ref_type: person,
    filterable: true,
  };
  await declare(table, ownerSpec);
  await declare(other, ownerSpec);
  await declare(table, {
    name: 'steward',
    value_type: 'entity_ref',
    cardinality: 'single',
    allowed_ref_type: person,
  });
  await declare(table, { name: 'rows', value_type: 'number', cardinality: 'single' });
  const entity = async (type: string, name: string, values: Record<string, unknown> = {}) => {
    const res = await api.post('/entities', { type_guid: type, name, values });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.DATA.entity.guid as string;
  };
  const [pii, gold, raw] = [
    await entity(tagType, 'pii'),
    await entity(tagType, 'gold'),
    await entity(tagType, 'raw'),
  ];
  const [ann, bob] = [await entity(person, 'Ann'), await entity(person, 'Bob')];
  const rows: Record<string, string> = {};
  const add = async (name: string, values: Record<string, unknown>) => {
    rows[name] = await entity(table, name, values);
  };
  await add('orders', { tags: [pii, gold], owner: ann });
  await add('Customers', { tags: [pii], owner: bob, steward: ann });
  await add('events', { tags: [raw], owner: ann });
  await add('b-logs', { tags: [gold, raw] });
  await add('archive', {});
  await add('Audit', { tags: [pii, raw], owner: bob });
  // Another type referring to the same tags and people: never in the table's listing.
  await entity(other, 'aaa report', { tags: [pii, gold, raw], owner: ann });
  return { tenant, token, api, gql, table, person, other, tagType, pii, gold, raw, ann, bob, rows };
}

type Catalog = Awaited<ReturnType<typeof catalog>>;

const query = (type: string, where: string[] = [], extra = '') =>
  `/entities?type_guid=${type}${where.map((w) => `&where=${encodeURIComponent(w)}`).join('')}${extra}`;

/** Every row of a REST listing, following next_cursor; pages of `size`. */
async function allPages(c: Catalog, where: string[], size = 100) {
  const names: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const res: Reply = await c.api.get(
      query(c.table, where, `&page_size=${size}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    for (const e of res.body.DATA.entities as Summary[]) {
      expect(e.type_guid).toBe(c.table);
      expect(c.rows[e.name]).toBe(e.guid);
      names.push(e.name);
    }
    cursor = res.body.DATA.next_cursor;
    pages++;
  } while (cursor !== null && pages < 100);
  return names;
}

const byName = (names: string[]) =>
  [...names].sort((a, b) => (nameKey(a) < nameKey(b) ? -1 : nameKey(a) > nameKey(b) ? 1 : 0));

describe('GET /entities: a type’s entities by their references', () => {
  it('without conditions lists every entity of exactly that type, in name order, each once over pages', async ({
    world,
  }) => {
    const c = await catalog(world);
    const all = byName(Object.keys(c.rows));
    expect(all[0]).toBe('archive');
    expect(await allPages(c, [])).toEqual(all);
    expect(await allPages(c, [], 1)).toEqual(all);
    expect(await allPages(c, [], 4)).toEqual(all);
  });

  it('a condition matches references to any of its guids; several conditions must all hold', async ({
    world,
  }) => {
    const c = await catalog(world);
    const cases: [string[], string[]][] = [
      [[`tags:${c.pii}`], ['Audit', 'Customers', 'orders']],
      [[`TAGS:${c.gold}`], ['b-logs', 'orders']],
      // Any of: an entity tagged with both comes once.
      [[`tags:${c.pii},${c.gold}`], ['Audit', 'b-logs', 'Customers', 'orders']],
      // The same attribute twice: both.
      [[`tags:${c.pii}`, `tags:${c.raw}`], ['Audit']],
      [[`owner:${c.ann}`], ['events', 'orders']],
      [
        [`tags:${c.pii}`, `owner:${c.bob}`],
        ['Audit', 'Customers'],
      ],
      [[`tags:${c.raw}`, `owner:${c.ann},${c.bob}`, `tags:${c.pii},${c.gold}`], ['Audit']],
      // A guid nothing refers to, or one of another tenant: nothing matches.
      [[`tags:${randomUUID()}`], []],
      [[`owner:${c.pii}`], []],
    ];
    for (const [where, expected] of cases) {
      expect(await allPages(c, where), where.join(' & ')).toEqual(byName(expected));
      expect(await allPages(c, where, 1), where.join(' & ')).toEqual(byName(expected));
    }
  });

  it('the documented maximum (10 conditions of 100 guids) is reached with the conditions in a body: POST /entities/query answers as GET /entities', async ({
    world,
  }) => {
    const c = await catalog(world);
    const filler = (n: number) => Array.from({ length: n }, () => randomUUID());
    const post = (body: Record<string, unknown>) =>
      c.api.post('/entities/query', { type_guid: c.table, ...body });
    // the largest filter: every condition holds for Audit (tagged pii and raw, owned by bob)
    const largest = Array.from({ length: 10 }, (_, i) => ({
      attribute: i % 2 ? 'tags' : 'owner',
      any_of: [...filler(99), i % 2 ? (i % 4 === 1 ? c.pii : c.raw) : c.bob],
    }));
    expect(JSON.stringify(largest).length).toBeGreaterThan(36_000);
    const page = await post({ where: largest });
    expect([page.status, page.body.DATA.entities.map((e: { name: string }) => e.name)]).toEqual([
      200,
      ['Audit'],
    ]);
    // what a URL that long gets: a refusal of its headers, before any route
    const url = query(
      c.table,
      largest.map((w) => `${w.attribute}:${w.any_of.join(',')}`),
    );
    const viaGet = await world.app.inject({
      method: 'GET',
      url,
      headers: { authorization: `Bearer ${c.token}` },
    });
    expect(viaGet.statusCode === 431 || viaGet.statusCode === 200).toBe(true);
    // the same rows and cursors as GET for the same conditions; a cursor of either is good for both
    for (const size of [1, 2]) {
      const get = await c.api.get(query(c.table, [`tags:${c.pii}`], `&page_size=${size}`));
      const body = await post({ where: [{ attribute: 'tags', any_of: [c.pii] }], page_size: size });
      expect(body.body.DATA).toEqual(get.body.DATA);
      const next = await post({
        where: [{ attribute: 'tags', any_of: [c.pii] }],
        page_size: size,
        cursor: get.body.DATA.next_cursor,
      });
      const nextGet = await c.api.get(
        query(
          c.table,
          [`tags:${c.pii}`],
          `&page_size=${size}&cursor=${encodeURIComponent(body.body.DATA.next_cursor)}`,
        ),
      );
      expect(next.body.DATA).toEqual(nextGet.body.DATA);
    }
    for (const [body, reason] of [
      [
        { where: Array.from({ length: 11 }, () => ({ attribute: 'tags', any_of: [c.pii] })) },
        'too_many_filters',
      ],
      [{ where: [{ attribute: 'tags', any_of: filler(101) }] }, 'too_many_filter_guids'],
      [{ where: [{ attribute: 'tags', any_of: [] }] }, 'invalid_filter'],
      // no attribute name: invalid_filter, as GET's `:<guid>` (and GraphQL's)
      [{ where: [{ attribute: '', any_of: [c.pii] }] }, 'invalid_filter'],
      [{ where: [{ attribute: ' ', any_of: [c.pii] }] }, 'invalid_filter'],
      [{ where: [{ attribute: 'rows', any_of: [c.pii] }] }, 'attribute_not_filterable'],
      [{ page_size: 501 }, 'invalid_page_size'],
      [{ cursor: 'nonsense' }, 'invalid_cursor'],
      [{ colour: 'red' }, 'unknown_field'],
    ] as const) {
      const res = await post(body);
      expect([res.status, res.body.DATA.reason], JSON.stringify(body).slice(0, 60)).toEqual([400, reason]);
    }
  });

  it('REST and GraphQL answer the same rows and cursors for the same conditions', async ({ world }) => {
    const c = await catalog(world);
    // Through the typed client (client/operations/entities.graphql).
    const gqlPage = (where: { attribute: string; anyOf: string[] }[], first: number, after?: string) =>
      c.gql.entities(c.table, where, { first, after: after ?? null });
    const filters: [string[], { attribute: string; anyOf: string[] }[]][] = [
      [[], []],
      [[`tags:${c.pii},${c.raw}`], [{ attribute: 'tags', anyOf: [c.pii, c.raw] }]],
      [
        [`tags:${c.pii}`, `owner:${c.bob}`],
        [
          { attribute: 'tags', anyOf: [c.pii] },
          { attribute: 'owner', anyOf: [c.bob] },
        ],
      ],
    ];
    for (const [rest, graphql] of filters) {
      let cursor: string | null = null;
      do {
        const suffix: string = `&page_size=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
        const res: Reply = await c.api.get(query(c.table, rest, suffix));
        const viaGql = await gqlPage(graphql, 2, cursor ?? undefined);
        expect(viaGql.entities).toEqual(
          (res.body.DATA.entities as Summary[]).map((e) => ({
            guid: e.guid,
            name: e.name,
            typeGuid: e.type_guid,
          })),
        );
        // The same position gives the same cursor at both doors.
        expect(viaGql.nextCursor).toBe(res.body.DATA.next_cursor);
        cursor = res.body.DATA.next_cursor;
      } while (cursor !== null);
    }
  });

  it('refuses each bad filter with its own reason, at both doors', async ({ world }) => {
    const c = await catalog(world);
    const other = await catalog(world);
    const many = Array.from({ length: MAX_FILTER_GUIDS + 1 }, () => randomUUID()).join(',');
    const cases: [string, number, string][] = [
      [query(c.table, [`colour:${c.pii}`]), 400, 'unknown_attribute'],
      [query(c.table, [`steward:${c.ann}`]), 400, 'attribute_not_filterable'],
      [query(c.table, [`rows:${c.ann}`]), 400, 'attribute_not_filterable'],
      [query(c.table, [`tags:${many}`]), 400, 'too_many_filter_guids'],
      [
        query(
          c.table,
          Array.from({ length: MAX_FILTER_CONDITIONS + 1 }, () => `tags:${c.pii}`),
        ),
        400,
        'too_many_filters',
      ],
      [query(c.table, ['tags']), 400, 'invalid_filter'],
      [query(c.table, ['tags:']), 400, 'invalid_filter'],
      [query(c.table, [`tags:${c.pii},,${c.gold}`]), 400, 'invalid_filter'],
      [query(c.table, [`:${c.pii}`]), 400, 'invalid_filter'],
      [query(c.table, [` :${c.pii}`]), 400, 'invalid_filter'],
      // A type of another tenant behaves as unknown.
      [query(other.table, [`tags:${c.pii}`]), 404, 'unknown_entity_type'],
      [query(randomUUID()), 404, 'unknown_entity_type'],
      ['/entities', 400, 'invalid_field'],
      [query(c.table, [], '&page_size=0'), 400, 'invalid_page_size'],
      [query(c.table, [], '&cursor=nonsense'), 400, 'invalid_cursor'],
    ];
    for (const [url, status, reason] of cases) {
      const res = await c.api.get(url);
      expect([res.status, res.body.DATA?.reason], url.slice(0, 120)).toEqual([status, reason]);
    }
    // A cursor of another listing (the type list, another type's entities), or of another tenant, is refused.
    const typePage = await c.api.get('/entities/types?page_size=1');
    const foreign = await other.api.get(query(other.table, [], '&page_size=1'));
    const otherType = await c.api.get(query(c.person, [], '&page_size=1'));
    expect(otherType.body.DATA.next_cursor).toEqual(expect.any(String));
    for (const cursor of [
      typePage.body.DATA.next_cursor,
      foreign.body.DATA.next_cursor,
      otherType.body.DATA.next_cursor,
    ]) {
      const res = await c.api.get(query(c.table, [], `&cursor=${encodeURIComponent(cursor)}`));
      expect([res.status, res.body.DATA.reason]).toEqual([400, 'invalid_cursor']);
    }
    const gql = (typeGuid: string, where: { attribute: string; anyOf: string[] }[]) =>
      refusalOf(
        c.gql.request(
          'query($t: ID!, $w: [EntityReferenceFilter!]) { entities(typeGuid: $t, where: $w) { nextCursor } }' as never,
          { t: typeGuid, w: where } as never,
        ),
      );
    expect(await gql(c.table, [{ attribute: 'colour', anyOf: [c.pii] }])).toBe('unknown_attribute');
    expect(await gql(c.table, [{ attribute: 'steward', anyOf: [c.ann] }])).toBe('attribute_not_filterable');
    expect(await gql(c.table, [{ attribute: 'tags', anyOf: [] }])).toBe('invalid_filter');
    expect(await gql(c.table, [{ attribute: 'tags', anyOf: many.split(',') }])).toBe('too_many_filter_guids');
    expect(
      await gql(
        c.table,
        Array.from({ length: MAX_FILTER_CONDITIONS + 1 }, () => ({ attribute: 'tags', anyOf: [c.pii] })),
      ),
    ).toBe('too_many_filters');
    expect(await gql(other.table, [{ attribute: 'tags', anyOf: [c.pii] }])).toBe('unknown_entity_type');
  });

  it('a withdrawn attribute stops matching at once, before the purge removes its references', async ({
    world,
  }) => {
    const c = await catalog(world);
    expect(await allPages(c, [`owner:${c.ann}`])).toEqual(['events', 'orders']);
    // Hold the purge off: a transaction holding the write locks of the type's entities keeps any purge (ours after
    // the withdrawal, or another suite's) from removing their references until it ends. Reads take no locks.
    const session = world.driver.session();
    const hold = await session.beginTransaction();
    try {
      await hold.run('MATCH (e:Entity) WHERE e.tenant = $tenant AND e.type_guid = $type SET e.held = true', {
        tenant: c.tenant,
        type: c.table,
      });
      const withdrawn = await c.api.delete(`/entities/attributes/${c.table}/owner`);
      expect(withdrawn.status).toBe(200);
      const res = await c.api.get(query(c.table, [`owner:${c.ann}`]));
      expect([res.status, res.body.DATA.reason]).toEqual([409, 'attribute_def_withdrawn']);
      // The references are still stored: only the definition's state stops them from matching.
      const stored = await runOn(world)(
        `MATCH (e:Entity)-[r:REFERS_TO {attr: 'owner'}]->() WHERE e.tenant = $tenant AND e.type_guid = $type
         RETURN count(r) AS n`,
        { tenant: c.tenant, type: c.table },
      );
      expect(Number(stored[0]?.n)).toBe(4);
    } finally {
      await hold.rollback();
      await session.close();
    }
    // The other type's own "owner" is its own definition, still live.
    const reports = await c.api.get(`/entities?type_guid=${c.other}&where=owner:${c.ann}`);
    expect(reports.body.DATA.entities.map((e: Summary) => e.name)).toEqual(['aaa report']);
  });

  it('a page read after a withdrawal committed is refused even when its definitions were read before it', async ({
    world,
  }) => {
    const c = await catalog(world);
    const listing = await c.api.get(`/entities/types/${c.table}/attributes`);
    const owner = (listing.body.DATA.attributes as { name: string; guid: string }[]).find(
      (a) => a.name === 'Owner',
    );
    const page = () =>
      readEntityPage(runOn(world), {
        tenant: c.tenant,
        typeGuid: c.table,
        after: '',
        drive: { attr: 'owner', guids: [c.ann] },
        others: [],
        definitions: [owner?.guid as string],
        window: 11,
        limit: 11,
      });
    expect((await page()).current).toBe(true);
    expect((await page()).hits.map((h) => h.entity.name)).toEqual(['events', 'orders']);
    await c.api.delete(`/entities/attributes/${c.table}/owner`);
    expect((await page()).current).toBe(false);
  });

  it('a listing read from memory at an older model version is never trusted for an answer it cannot check', async ({
    world,
  }) => {
    const c = await catalog(world);
    // The type's definitions are now in memory.
    expect(await allPages(c, [`tags:${c.pii}`])).toEqual(byName(['Audit', 'Customers', 'orders']));
    // A filterable reference declared since: the listing in memory does not have it, the answer must.
    const declared = await c.api.post(`/entities/types/${c.table}/attributes`, {
      name: 'reviewer',
      value_type: 'entity_ref',
      cardinality: 'multi',
      allowed_ref_type: c.person,
      filterable: true,
    });
    expect(declared.status).toBe(201);
    const reviewed = await c.api.post('/entities', {
      type_guid: c.table,
      name: 'reviewed',
      values: { reviewer: [c.bob] },
    });
    c.rows.reviewed = reviewed.body.DATA.entity.guid;
    expect(await allPages(c, [`reviewer:${c.bob}`])).toEqual(['reviewed']);
    // A type deleted since: unknown at once, though its listing is in memory.
    const other = await createType(c.api, 'Short Lived');
    expect((await c.api.get(query(other, [`tags:${c.pii}`]))).status).toBe(200);
    expect((await c.api.delete(`/entities/types/${other}`)).status).toBe(200);
    const gone = await c.api.get(query(other, [`tags:${c.pii}`]));
    expect([gone.status, gone.body.DATA.reason]).toEqual([404, 'unknown_entity_type']);
  });

  it('with several conditions a page examines a bounded window: short pages carry a cursor, and every match comes once', async ({
    world,
  }) => {
    const c = await catalog(world);
    // 2,600 more tagged "raw": every 1,000th also "pii". The window of one page cannot reach the next match.
    const batch: NewEntity[] = Array.from({ length: 2_600 }, (_, i) => {
      const name = `zz-${String(i).padStart(5, '0')}`;
      return {
        guid: randomUUID(),
        name,
        name_key: nameKey(name),
        type_guid: c.table,
        properties: {},
        refs: [
          { attr: 'tags', pos: 0, target: c.raw },
          ...(i % 1_000 === 999 ? [{ attr: 'tags', pos: 1, target: c.pii }] : []),
        ],
      };
    });
    for (const e of batch) c.rows[e.name] = e.guid;
    await insertEntities(runOn(world), c.tenant, batch);
    const pages: number[] = [];
    const names: string[] = [];
    let cursor: string | null = null;
    do {
      const res: Reply = await c.api.get(
        query(
          c.table,
          [`tags:${c.raw}`, `tags:${c.pii}`],
          `&page_size=10${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        ),
      );
      expect(res.status).toBe(200);
      pages.push(res.body.DATA.entities.length);
      names.push(...res.body.DATA.entities.map((e: Summary) => e.name));
      cursor = res.body.DATA.next_cursor;
    } while (cursor !== null && pages.length < 20);
    expect(names).toEqual(['Audit', 'zz-00999', 'zz-01999']);
    // The raw matches number 2,603: a page examines at most the window, so at least three pages, some short.
    expect(pages.length).toBeGreaterThanOrEqual(Math.ceil(2_603 / FILTER_SCAN_WINDOW));
    // One condition: pages are full until the last.
    const single = await c.api.get(query(c.table, [`tags:${c.raw}`], '&page_size=500'));
    expect(single.body.DATA.entities).toHaveLength(500);
    expect(single.body.DATA.next_cursor).not.toBeNull();
  });

  it('data written before the listing keys existed gains them once (the migration backfill)', async ({
    world,
  }) => {
    const c = await catalog(world);
    const guid = randomUUID();
    // An entity and its reference as an earlier release wrote them: no listing key, no filter keys.
    await runOn(world)(
      `MATCH (x:Entity {guid: $pii})
       CREATE (e:Entity {tenant: $tenant, guid: $guid, name: 'legacy', name_key: 'legacy', type_guid: $type})
       CREATE (e)-[:REFERS_TO {attr: 'tags', pos: 0}]->(x)`,
      { tenant: c.tenant, guid, type: c.table, pii: c.pii },
    );
    c.rows.legacy = guid;
    expect(await allPages(c, [`tags:${c.pii}`])).not.toContain('legacy');
    const step = BACKFILLS.find((b) => b.id === 'entity-list-keys');
    for (let i = 0; i < 100; i++) {
      const [row] = await runOn(world)(step?.batch as string, { separator: '\u0000' });
      if (Number(row?.changed) === 0) break;
    }
    expect(await allPages(c, [`tags:${c.pii}`])).toEqual(byName(['Audit', 'Customers', 'legacy', 'orders']));
    expect(await allPages(c, [])).toContain('legacy');
  });
});
