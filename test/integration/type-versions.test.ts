// A type's version and conditional requests (docs/api.md#versions-and-conditional-requests): the weak ETag of the
// type and of its listing, the same on every instance; If-None-Match answered 304; If-Match (GraphQL ifVersion) on
// rename, delete, declare and withdraw, a stale one refused 412 with the current ETag; and two writers holding the
// same version, on two instances, racing: exactly one wins.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createWorld,
  graphqlClient,
  newTenant,
  refusalOf,
  restClient,
  type TestWorld,
  tokenFor,
} from '../helpers.js';

let one: TestWorld;
let two: TestWorld;
beforeAll(async () => {
  [one, two] = await Promise.all([createWorld(), createWorld()]);
});
afterAll(async () => {
  await Promise.all([one?.close(), two?.close()]);
});

const WEAK = /^W\/"(\d+-\d+)"$/;

async function typeWith(world: TestWorld, name = 'Metric') {
  const token = await tokenFor(newTenant());
  const api = restClient(world.app, token);
  const created = await api.post('/entities/types', { name });
  return { token, api, guid: created.body.DATA.entity_type.guid as string };
}

/** A request with headers, answered as sent (status, headers, parsed body or null). */
async function send(
  world: TestWorld,
  token: string,
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  url: string,
  headers: Record<string, string> = {},
  body?: unknown,
) {
  const res = await world.app.inject({
    method,
    url,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
  return {
    status: res.statusCode,
    etag: res.headers.etag as string | undefined,
    body: res.body === '' ? null : res.json(),
  };
}

const declaration = (name: string) => ({ name, value_type: 'string', cardinality: 'single' });

describe('the ETag of a type and of its listing', () => {
  it('is the row version, weak, the same on every instance and for the type and its listing', async () => {
    const { token, guid } = await typeWith(one);
    const a = await send(one, token, 'GET', `/entities/types/${guid}`);
    const b = await send(two, token, 'GET', `/entities/types/${guid}`);
    const listing = await send(two, token, 'GET', `/entities/types/${guid}/attributes`);
    const byName = await send(one, token, 'GET', '/entities/types/by-name/metric');
    expect(a.etag).toMatch(WEAK);
    expect([b.etag, listing.etag, byName.etag]).toEqual([a.etag, a.etag, a.etag]);
    expect(a.etag).toBe(`W/"${a.body.DATA.entity_type.version}"`);
  });

  it('changes with a rename, a declaration and a withdrawal, and each write answers with the new one', async () => {
    const { token, guid } = await typeWith(one);
    const etag = async () => (await send(two, token, 'GET', `/entities/types/${guid}`)).etag;
    const seen = [await etag()];
    const renamed = await send(one, token, 'PATCH', `/entities/types/${guid}`, {}, { name: 'KPI' });
    expect(renamed.etag).toBe(await etag());
    seen.push(renamed.etag!);
    const declared = await send(
      one,
      token,
      'POST',
      `/entities/types/${guid}/attributes`,
      {},
      declaration('unit'),
    );
    expect(declared.status).toBe(201);
    expect(declared.etag).toBe(await etag());
    seen.push(declared.etag!);
    const withdrawn = await send(one, token, 'DELETE', `/entities/attributes/${guid}/unit`);
    expect(withdrawn.etag).toBe(await etag());
    seen.push(withdrawn.etag!);
    expect(new Set(seen).size).toBe(4);
    // a dry run changes nothing
    await send(one, token, 'POST', `/entities/types/${guid}/attributes?dry_run=true`, {}, declaration('x'));
    expect(await etag()).toBe(seen[3]);
  });
});

describe('If-None-Match', () => {
  it('answers 304 with no body while the type is at the version named, 200 once it changed', async () => {
    const { token, guid } = await typeWith(one);
    const first = await send(one, token, 'GET', `/entities/types/${guid}`);
    for (const [world, url] of [
      [one, `/entities/types/${guid}`],
      [two, `/entities/types/${guid}/attributes`],
      [two, '/entities/types/by-name/Metric'],
    ] as const) {
      const again = await send(world, token, 'GET', url, { 'if-none-match': first.etag! });
      expect([url, again.status, again.body]).toEqual([url, 304, null]);
      expect(again.etag).toBe(first.etag);
      // `*`, a list, and the strong form name it too
      for (const header of ['*', `W/"x", ${first.etag}`, first.etag!.slice(2)]) {
        expect((await send(world, token, 'GET', url, { 'if-none-match': header })).status).toBe(304);
      }
    }
    await send(one, token, 'POST', `/entities/types/${guid}/attributes`, {}, declaration('unit'));
    const changed = await send(two, token, 'GET', `/entities/types/${guid}`, {
      'if-none-match': first.etag!,
    });
    expect(changed.status).toBe(200);
    expect(changed.etag).not.toBe(first.etag);
  });

  it('a malformed one is invalid_precondition (400)', async () => {
    const { token, guid } = await typeWith(one);
    for (const header of [
      'abc',
      'W/abc',
      '"a" "b"',
      Array.from({ length: 17 }, (_, i) => `"${i}"`).join(','),
    ]) {
      const res = await send(one, token, 'GET', `/entities/types/${guid}`, { 'if-none-match': header });
      expect([header, res.status, res.body.DATA.reason]).toEqual([header, 400, 'invalid_precondition']);
    }
  });
});

describe('If-Match', () => {
  it('a current version lets each write through; a stale one is 412 precondition_failed with the current ETag, nothing written', async () => {
    const { token, api, guid } = await typeWith(one);
    const stale = (await send(one, token, 'GET', `/entities/types/${guid}`)).etag!;
    const renamed = await send(
      one,
      token,
      'PATCH',
      `/entities/types/${guid}`,
      { 'if-match': stale },
      { name: 'KPI' },
    );
    expect(renamed.status).toBe(200);
    const current = renamed.etag!;

    const refused = [
      await send(two, token, 'PATCH', `/entities/types/${guid}`, { 'if-match': stale }, { name: 'Other' }),
      await send(
        two,
        token,
        'POST',
        `/entities/types/${guid}/attributes`,
        { 'if-match': stale },
        declaration('u'),
      ),
      await send(two, token, 'DELETE', `/entities/attributes/${guid}/u`, { 'if-match': stale }),
      await send(two, token, 'DELETE', `/entities/types/${guid}`, { 'if-match': stale }),
      // a rename to the name it has writes nothing, and is still held to the version
      await send(two, token, 'PATCH', `/entities/types/${guid}`, { 'if-match': stale }, { name: 'KPI' }),
      // a dry run is held to it too
      await send(
        two,
        token,
        'POST',
        `/entities/types/${guid}/attributes?dry_run=true`,
        { 'if-match': stale },
        declaration('u'),
      ),
    ];
    for (const res of refused) {
      expect(res.status).toBe(412);
      expect(res.body.DATA).toEqual({
        reason: 'precondition_failed',
        version: current.slice(3, -1),
        etag: current,
      });
      expect(res.etag).toBe(current);
    }
    // nothing of it happened
    const now = await api.get(`/entities/types/${guid}`);
    expect(now.body.DATA.entity_type.name).toBe('KPI');
    expect((await api.get(`/entities/types/${guid}/attributes`)).body.DATA.attributes).toHaveLength(5);

    // with the current one, and with `*`, each goes through
    const declared = await send(
      two,
      token,
      'POST',
      `/entities/types/${guid}/attributes`,
      { 'if-match': current },
      declaration('u'),
    );
    expect(declared.status).toBe(201);
    const withdrawn = await send(one, token, 'DELETE', `/entities/attributes/${guid}/u`, {
      'if-match': declared.etag!,
    });
    expect(withdrawn.status).toBe(200);
    const deleted = await send(two, token, 'DELETE', `/entities/types/${guid}`, { 'if-match': '*' });
    expect(deleted.status).toBe(200);
  });

  it('without If-Match a write is unconditional; a malformed one is invalid_precondition', async () => {
    const { token, guid } = await typeWith(one);
    expect((await send(one, token, 'PATCH', `/entities/types/${guid}`, {}, { name: 'A' })).status).toBe(200);
    const bad = await send(
      one,
      token,
      'PATCH',
      `/entities/types/${guid}`,
      { 'if-match': 'nope' },
      { name: 'B' },
    );
    expect([bad.status, bad.body.DATA.reason]).toEqual([400, 'invalid_precondition']);
  });

  it('a recreated type (same guid) never takes an ETag of the one deleted before it', async () => {
    const { token, guid } = await typeWith(one);
    const before = (await send(one, token, 'GET', `/entities/types/${guid}`)).etag!;
    await send(one, token, 'DELETE', `/entities/types/${guid}`);
    await new Promise((r) => setTimeout(r, 5));
    const again = await send(one, token, 'POST', '/entities/types', {}, { name: 'Metric' });
    expect(again.body.DATA.entity_type.guid).toBe(guid);
    const res = await send(
      one,
      token,
      'PATCH',
      `/entities/types/${guid}`,
      { 'if-match': before },
      { name: 'X' },
    );
    expect(res.status).toBe(412);
  });
});

describe('GraphQL', () => {
  it("EntityType.version is the ETag's version; mutations take ifVersion, a stale one refused with the current version in extensions", async () => {
    const { token, guid } = await typeWith(one);
    const gql = async (world: TestWorld, query: string, variables: Record<string, unknown>) =>
      (
        await world.app.inject({
          method: 'POST',
          url: '/graphql',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          payload: JSON.stringify({ query, variables }),
        })
      ).json();
    const read = await gql(two, 'query($g: ID!) { entityType(guid: $g) { version } }', { g: guid });
    const version = read.data.entityType.version as string;
    expect((await send(one, token, 'GET', `/entities/types/${guid}`)).etag).toBe(`W/"${version}"`);

    const rename =
      'mutation($g: ID!, $n: String!, $v: String) { renameEntityType(guid: $g, name: $n, ifVersion: $v) { version } }';
    const renamed = await gql(one, rename, { g: guid, n: 'KPI', v: version });
    const next = renamed.data.renameEntityType.version as string;
    expect(next).not.toBe(version);
    const stale = await gql(two, rename, { g: guid, n: 'Other', v: version });
    expect(stale.errors[0].extensions).toMatchObject({ reason: 'precondition_failed', version: next });
    const declare =
      'mutation($g: ID!, $v: String) { declareAttribute(typeGuid: $g, input: {name: "u", valueType: "string", cardinality: "single"}, ifVersion: $v) { attribute { name } } }';
    expect((await gql(two, declare, { g: guid, v: version })).errors[0].extensions.reason).toBe(
      'precondition_failed',
    );
    expect((await gql(two, declare, { g: guid, v: next })).data.declareAttribute.attribute.name).toBe('u');
    const withdraw =
      'mutation($g: ID!, $v: String) { withdrawAttribute(typeGuid: $g, name: "u", ifVersion: $v) { dryRun } }';
    expect((await gql(one, withdraw, { g: guid, v: next })).errors[0].extensions.reason).toBe(
      'precondition_failed',
    );
    // ifVersion is at most 64 characters: at the bound it is compared (stale here), past it refused as malformed
    const atBound = await gql(one, rename, { g: guid, n: 'Other', v: 'v'.repeat(64) });
    expect(atBound.errors[0].extensions.reason).toBe('precondition_failed');
    const over = await gql(one, rename, { g: guid, n: 'Other', v: 'v'.repeat(65) });
    expect(over.errors[0].extensions.reason).toBe('invalid_precondition');
    const del = 'mutation($g: ID!, $v: String) { deleteEntityType(guid: $g, ifVersion: $v) { deleted } }';
    expect((await gql(one, del, { g: guid, v: next })).errors[0].extensions.reason).toBe(
      'precondition_failed',
    );
  });
});

describe('the typed client', () => {
  it('takes ifVersion on rename, delete, declare and withdraw', async () => {
    const { token, guid } = await typeWith(one);
    const client = graphqlClient(two.app, token);
    const version = (await client.entityType(guid))!.version;
    const renamed = await client.renameEntityType(guid, 'KPI', { ifVersion: version });
    expect(await refusalOf(client.renameEntityType(guid, 'Other', { ifVersion: version }))).toBe(
      'precondition_failed',
    );
    const input = { name: 'u', valueType: 'string', cardinality: 'single' } as const;
    expect(await refusalOf(client.declareAttribute(guid, input, { ifVersion: version }))).toBe(
      'precondition_failed',
    );
    await client.declareAttribute(guid, input, { ifVersion: renamed.version });
    expect(await refusalOf(client.withdrawAttribute(guid, 'u', { ifVersion: renamed.version }))).toBe(
      'precondition_failed',
    );
    const now = (await client.entityType(guid))!.version;
    await client.withdrawAttribute(guid, 'u', { ifVersion: now });
    expect(await refusalOf(client.deleteEntityType(guid, { ifVersion: now }))).toBe('precondition_failed');
    const last = (await client.entityType(guid))!.version;
    expect((await client.deleteEntityType(guid, { ifVersion: last })).deleted).toBe(true);
  });
});

describe('two writers holding the same version, on two instances', () => {
  it('race a rename, a declaration and a withdrawal: exactly one wins each time, the other gets 412', async () => {
    for (let round = 0; round < 5; round += 1) {
      const { token, guid } = await typeWith(one, `Race ${round}`);
      let etag = (await send(one, token, 'GET', `/entities/types/${guid}`)).etag!;
      const renames = await Promise.all([
        send(one, token, 'PATCH', `/entities/types/${guid}`, { 'if-match': etag }, { name: `A ${round}` }),
        send(two, token, 'PATCH', `/entities/types/${guid}`, { 'if-match': etag }, { name: `B ${round}` }),
      ]);
      expect(renames.map((r) => r.status).sort()).toEqual([200, 412]);
      etag = renames.find((r) => r.status === 200)!.etag!;
      const declares = await Promise.all([
        send(
          one,
          token,
          'POST',
          `/entities/types/${guid}/attributes`,
          { 'if-match': etag },
          declaration('a'),
        ),
        send(
          two,
          token,
          'POST',
          `/entities/types/${guid}/attributes`,
          { 'if-match': etag },
          declaration('b'),
        ),
      ]);
      expect(declares.map((r) => r.status).sort()).toEqual([201, 412]);
      etag = declares.find((r) => r.status === 201)!.etag!;
      const won = declares[0]!.status === 201 ? 'a' : 'b';
      await send(one, token, 'POST', `/entities/types/${guid}/attributes`, {}, declaration('c'));
      etag = (await send(two, token, 'GET', `/entities/types/${guid}`)).etag!;
      const withdrawals = await Promise.all([
        send(one, token, 'DELETE', `/entities/attributes/${guid}/${won}`, { 'if-match': etag }),
        send(two, token, 'DELETE', `/entities/attributes/${guid}/c`, { 'if-match': etag }),
      ]);
      expect(withdrawals.map((r) => r.status).sort()).toEqual([200, 412]);
    }
  });
});

describe('a REST writer and a GraphQL writer holding the same version, on two instances', () => {
  it('race a rename, a declaration, a withdrawal and a release: exactly one wins each time, the other is stale', async () => {
    /** A REST answer or a GraphQL one, as "won" or "stale" (412 / precondition_failed); anything else as itself. */
    const outcome = (r: { status: number; body: any }) => {
      if (r.body?.errors) {
        const reason = r.body.errors[0].extensions.reason;
        return reason === 'precondition_failed' ? 'stale' : reason;
      }
      if (r.body?.data) return 'won';
      return r.status === 412 ? 'stale' : r.status < 300 ? 'won' : String(r.status);
    };
    const race = async (
      restWrite: Promise<{ status: number; body: any }>,
      graphqlWrite: Promise<{ status: number; body: any }>,
    ) => {
      const answers = await Promise.all([restWrite, graphqlWrite]);
      expect(answers.map(outcome).sort()).toEqual(['stale', 'won']);
      return answers[0].status < 300 ? 'rest' : 'graphql';
    };
    for (let round = 0; round < 3; round += 1) {
      const { token, guid } = await typeWith(one, `Mixed ${round}`);
      const gql = (query: string, variables: Record<string, unknown>) =>
        send(two, token, 'POST', '/graphql', {}, { query, variables: { g: guid, ...variables } });
      const current = async () =>
        (await send(one, token, 'GET', `/entities/types/${guid}`)).body.DATA.entity_type.version;

      let v = await current();
      await race(
        send(
          one,
          token,
          'PATCH',
          `/entities/types/${guid}`,
          { 'if-match': `W/"${v}"` },
          { name: `R ${round}` },
        ),
        gql(
          'mutation($g: ID!, $v: String) { renameEntityType(guid: $g, name: "G", ifVersion: $v) { version } }',
          { v },
        ),
      );

      v = await current();
      const declared = await race(
        send(
          one,
          token,
          'POST',
          `/entities/types/${guid}/attributes`,
          { 'if-match': `W/"${v}"` },
          declaration('a'),
        ),
        gql(
          'mutation($g: ID!, $v: String) { declareAttribute(typeGuid: $g, input: {name: "b", valueType: "string", cardinality: "single"}, ifVersion: $v) { attribute { name } } }',
          { v },
        ),
      );
      const live = declared === 'rest' ? 'a' : 'b';

      v = await current();
      await race(
        send(one, token, 'DELETE', `/entities/attributes/${guid}/${live}`, { 'if-match': `W/"${v}"` }),
        gql(
          'mutation($g: ID!, $n: String!, $v: String) { withdrawAttribute(typeGuid: $g, name: $n, ifVersion: $v) { dryRun } }',
          { n: live, v },
        ),
      );

      v = await current();
      await race(
        send(
          one,
          token,
          'POST',
          `/entities/types/${guid}/former-names/release`,
          { 'if-match': `W/"${v}"` },
          { name: `Mixed ${round}` },
        ),
        gql(
          'mutation($g: ID!, $n: String!, $v: String) { releaseFormerName(guid: $g, name: $n, ifVersion: $v) { released } }',
          { n: `Mixed ${round}`, v },
        ),
      );
      expect(
        (await send(one, token, 'GET', `/entities/types/by-name/${encodeURIComponent(`Mixed ${round}`)}`))
          .status,
      ).toBe(404);
    }
  });
});
