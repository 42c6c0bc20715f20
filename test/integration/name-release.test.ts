// Releasing a former name (docs/api.md#decisions-where-the-specification-is-silent, "Releasing a former name"): the
// name a type was created under keeps resolving to it after a rename until it is released; then creating the name
// makes a new type with a new guid, the history records the release, concurrent creates on two instances converge,
// and the refusals name the holder.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { releasedNameGuid, typeGuid } from '../../src/model/names.js';
import { MODEL_FORMAT } from '../../src/model/plans.js';
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

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** A tenant with a type created as "One" and renamed to "Three". */
async function renamedType(world = one) {
  const tenant = newTenant();
  const token = await tokenFor(tenant);
  const api = restClient(world.app, token);
  const guid = (await api.post('/entities/types', { name: 'One' })).body.DATA.entity_type.guid as string;
  expect((await api.patch(`/entities/types/${guid}`, { name: 'Three' })).status).toBe(200);
  const release = (name: string, headers?: Record<string, string>) =>
    api.post(`/entities/types/${guid}/former-names/release`, { name }, headers);
  return { tenant, token, api, guid, release };
}

describe('POST /entities/types/{guid}/former-names/release', () => {
  it('frees the name it was created under: creating it then makes a new type, with the guid the release named', async () => {
    const { tenant, api, guid, release } = await renamedType();
    expect(guid).toBe(typeGuid(tenant, 'one'));
    // before: the name still resolves to the renamed type
    const before = await api.post('/entities/types', { name: 'one' });
    expect([before.status, before.body.DATA.entity_type.guid, before.body.DATA.created]).toEqual([
      200,
      guid,
      false,
    ]);
    const versionBefore = (await api.get(`/entities/types/${guid}`)).body.DATA.entity_type.version;

    const released = await release(' ONE ');
    expect(released.status).toBe(200);
    expect(released.body.DATA.released).toBe(true);
    const row = released.body.DATA.entity_type;
    expect(row).toMatchObject({ guid, name: 'Three' });
    expect(row.version).not.toBe(versionBefore);
    expect(released.headers.etag).toBe(`W/"${row.version}"`);
    expect(row.former_names).toEqual([
      { name: 'One', left_at: expect.stringMatching(ISO), released_at: expect.stringMatching(ISO) },
    ]);

    // the name resolves to no type now
    expect((await api.get('/entities/types/by-name/one')).status).toBe(404);
    // released again: already free, nothing written (the version stays)
    const again = await release('One');
    expect([again.status, again.body.DATA.released, again.body.DATA.entity_type.version]).toEqual([
      200,
      false,
      row.version,
    ]);

    // creating the name makes a new type, whose guid is the one derived from the guid the name resolved to
    const created = await api.post('/entities/types', { name: 'One' });
    expect([created.status, created.body.DATA.created]).toEqual([201, true]);
    const fresh = created.body.DATA.entity_type.guid;
    expect(fresh).not.toBe(guid);
    expect(fresh).toBe(releasedNameGuid(tenant, 'one', guid));
    expect((await api.get('/entities/types/by-name/one')).body.DATA.entity_type.guid).toBe(fresh);
    expect((await api.get(`/entities/types/${guid}`)).body.DATA.entity_type.name).toBe('Three');

    // the history records the release: the name, the guid it resolved to, the guid a new type takes
    const history = (await api.get(`/entities/types/${guid}/history`)).body.DATA.changes;
    expect(history[0]).toMatchObject({
      kind: 'type_name_released',
      before: { name: 'One', guid },
      after: { guid: fresh },
    });
    const feed = (await api.get('/entities/changes?kind=type_name_released')).body.DATA.changes;
    expect(feed.map((c: { type_guid: string }) => c.type_guid)).toEqual([guid]);
  });

  it('a type created under a released name keeps it through its renames, gets its guid back when recreated, and can release it too', async () => {
    const { tenant, api, guid, release } = await renamedType();
    expect((await release('One')).body.DATA.released).toBe(true);
    const second = (await api.post('/entities/types', { name: 'One' })).body.DATA.entity_type.guid;
    // renamed away, the name it was created under still resolves to it (not to the first type)
    expect((await api.patch(`/entities/types/${second}`, { name: 'Four' })).status).toBe(200);
    const resolved = await api.post('/entities/types', { name: 'one' });
    expect([resolved.status, resolved.body.DATA.entity_type.guid]).toEqual([200, second]);
    // renamed back, deleted and recreated: its guid again
    await api.patch(`/entities/types/${second}`, { name: 'One' });
    expect((await api.delete(`/entities/types/${second}`)).status).toBe(200);
    const recreated = await api.post('/entities/types', { name: 'One' });
    expect([recreated.status, recreated.body.DATA.entity_type.guid]).toEqual([201, second]);
    // released by it in turn, the name takes a third guid, neither of the first two
    await api.patch(`/entities/types/${second}`, { name: 'Five' });
    const byNew = await api.post(`/entities/types/${second}/former-names/release`, { name: 'One' });
    expect(byNew.body.DATA.released).toBe(true);
    const third = (await api.post('/entities/types', { name: 'One' })).body.DATA.entity_type.guid;
    expect(third).toBe(releasedNameGuid(tenant, 'one', second));
    expect(new Set([guid, second, third]).size).toBe(3);
  });

  it('another type may be renamed to a released name; a type never renamed still gets its guid back', async () => {
    const { tenant, api, release } = await renamedType();
    const other = (await api.post('/entities/types', { name: 'Other' })).body.DATA.entity_type.guid;
    const refused = await api.patch(`/entities/types/${other}`, { name: 'One' });
    expect([refused.status, refused.body.DATA.reason]).toEqual([409, 'type_name_taken']);
    await release('One');
    const renamed = await api.patch(`/entities/types/${other}`, { name: 'One' });
    expect([renamed.status, renamed.body.DATA.entity_type.name]).toEqual([200, 'One']);
    expect((await api.get('/entities/types/by-name/one')).body.DATA.entity_type.guid).toBe(other);

    const plain = (await api.post('/entities/types', { name: 'Plain' })).body.DATA.entity_type.guid;
    expect(plain).toBe(typeGuid(tenant, 'plain'));
    await api.delete(`/entities/types/${plain}`);
    expect((await api.post('/entities/types', { name: 'Plain' })).body.DATA.entity_type.guid).toBe(plain);
  });

  it('refuses the current name and a name held by another type (name_not_held, naming the holder), and what rename refuses', async () => {
    const { api, guid, release } = await renamedType();
    const current = await release('three');
    expect([current.status, current.body.DATA.reason]).toEqual([409, 'name_not_held']);
    expect(current.body.DATA.holder).toEqual({ guid, name: 'Three', held_as: 'current_name' });

    const other = (await api.post('/entities/types', { name: 'Two' })).body.DATA.entity_type.guid;
    await api.patch(`/entities/types/${other}`, { name: 'Twenty' });
    for (const [name, heldAs, holderName] of [
      ['Twenty', 'current_name', 'Twenty'],
      ['two', 'former_name', 'Twenty'],
    ]) {
      const res = await release(name as string);
      expect([res.status, res.body.DATA.reason]).toEqual([409, 'name_not_held']);
      expect(res.body.DATA.holder).toEqual({ guid: other, name: holderName, held_as: heldAs });
    }

    const unknown = await api.post(
      '/entities/types/00000000-0000-4000-8000-000000000000/former-names/release',
      {
        name: 'One',
      },
    );
    expect([unknown.status, unknown.body.DATA.reason]).toEqual([404, 'unknown_entity_type']);
    const root = (await api.get('/entities/types/by-name/entity')).body.DATA.entity_type.guid;
    const system = await api.post(`/entities/types/${root}/former-names/release`, { name: 'One' });
    expect([system.status, system.body.DATA.reason]).toEqual([409, 'type_not_user_defined']);
    // a name at the length bound is compared (one the type never had: already free, nothing written), past it refused
    const longest = await release('n'.repeat(256));
    expect([longest.status, longest.body.DATA.released]).toEqual([200, false]);
    for (const [body, reason] of [
      [{ name: '  ' }, 'empty_value'],
      [{ name: 'x'.repeat(257) }, 'name_too_long'],
      [{ name: 7 }, 'invalid_field'],
      [{}, 'empty_value'],
    ] as const) {
      const res = await api.post(`/entities/types/${guid}/former-names/release`, body);
      expect([res.status, res.body.DATA.reason], JSON.stringify(body)).toEqual([400, reason]);
    }
    // nothing of that was written: the name still resolves to the type
    expect((await api.get('/entities/types/by-name/One')).body.DATA.entity_type.guid).toBe(guid);
  });

  it('takes If-Match (a stale version is 412, nothing released) and is another tenant’s unknown type', async () => {
    const { api, guid, release } = await renamedType();
    const etag = (await api.get(`/entities/types/${guid}`)).headers.etag as string;
    await api.post(`/entities/types/${guid}/attributes`, {
      name: 'u',
      value_type: 'string',
      cardinality: 'single',
    });
    const stale = await release('One', { 'if-match': etag });
    expect([stale.status, stale.body.DATA.reason]).toEqual([412, 'precondition_failed']);
    expect((await api.get('/entities/types/by-name/One')).body.DATA.entity_type.guid).toBe(guid);
    const current = (await api.get(`/entities/types/${guid}`)).headers.etag as string;
    expect((await release('One', { 'if-match': current })).body.DATA.released).toBe(true);

    const stranger = restClient(one.app, await tokenFor(newTenant()));
    const foreign = await stranger.post(`/entities/types/${guid}/former-names/release`, { name: 'One' });
    expect([foreign.status, foreign.body.DATA.reason]).toEqual([404, 'unknown_entity_type']);
  });

  it('a plan of the model creates the released name anew instead of answering the renamed type', async () => {
    const { api, guid, release } = await renamedType();
    const planOf = async () =>
      (
        await api.post('/entities/model/plan', {
          format: MODEL_FORMAT,
          types: [{ name: 'One', attributes: [] }],
        })
      ).body.DATA;
    const held = await planOf();
    expect(held.steps.some((s: { action: string }) => s.action === 'create_type')).toBe(false);
    await release('One');
    const freed = await planOf();
    expect(freed.steps).toContainEqual(expect.objectContaining({ action: 'create_type', type: 'One' }));
    expect(freed.steps.some((s: { type_guid?: string }) => s.type_guid === guid)).toBe(false);
  });
});

describe('concurrent creates of a released name', () => {
  it('on two instances converge on one type: one 201, every other answer the same type', async () => {
    const { tenant, token, release } = await renamedType();
    await release('One');
    const apis = [restClient(one.app, token), restClient(two.app, token)];
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        apis[i % 2]!.post('/entities/types', { name: i % 3 ? 'one' : 'ONE' }),
      ),
    );
    const guids = new Set(answers.map((a) => a.body.DATA.entity_type.guid));
    expect(guids.size).toBe(1);
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
    expect(answers.every((a) => a.status === 200 || a.status === 201)).toBe(true);
    const [fresh] = guids;
    expect(fresh).not.toBe(typeGuid(tenant, 'one'));
  });
});

describe('concurrent releases of one name', () => {
  it('on two instances: exactly one releases it (one history record), the others find it already free', async () => {
    const { token, guid } = await renamedType();
    const apis = [restClient(one.app, token), restClient(two.app, token)];
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        apis[i % 2]!.post(`/entities/types/${guid}/former-names/release`, { name: 'One' }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
    expect(answers.filter((a) => a.body.DATA.released === true)).toHaveLength(1);
    const history = (await apis[0]!.get(`/entities/types/${guid}/history`)).body.DATA.changes;
    expect(history.filter((c: { kind: string }) => c.kind === 'type_name_released')).toHaveLength(1);
  });
});

describe('GraphQL releaseFormerName and the typed client', () => {
  it('releases with ifVersion, answers released and the row with releasedAt; refusals carry the holder', async () => {
    const { token, guid } = await renamedType();
    const client = graphqlClient(two.app, token);
    const type = await client.entityType(guid);
    expect(await refusalOf(client.releaseFormerName(guid, 'One', { ifVersion: 'stale' }))).toBe(
      'precondition_failed',
    );
    const result = await client.releaseFormerName(guid, 'One', { ifVersion: type!.version });
    expect(result.released).toBe(true);
    expect(result.entityType.formerNames).toEqual([
      { name: 'One', leftAt: expect.stringMatching(ISO), releasedAt: expect.stringMatching(ISO) },
    ]);
    expect((await client.releaseFormerName(guid, 'One')).released).toBe(false);

    const answer = (
      await one.app.inject({
        method: 'POST',
        url: '/graphql',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        payload: JSON.stringify({
          query: 'mutation($g: ID!) { releaseFormerName(guid: $g, name: "Three") { released } }',
          variables: { g: guid },
        }),
      })
    ).json();
    expect(answer.errors[0].extensions).toMatchObject({
      reason: 'name_not_held',
      holder: { guid, name: 'Three', held_as: 'current_name' },
    });
  });
});
