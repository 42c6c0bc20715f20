// Evolution in place (docs/api.md#changing-a-definition-in-place): a live definition changed without a gap, its guid
// and values kept, one change record with the difference; any change a stored value might not survive refused with
// attribute_change_not_in_place; and a model document's widening applied that way, the attribute listed and its
// values readable at every instant.

import { describe, expect } from 'vitest';
import { createExecutor } from '../../src/db/executor.js';
import { acquireLease, releaseLease } from '../../src/db/purge.js';
import { MODEL_FORMAT } from '../../src/model/plans.js';
import { it } from '../fixtures.js';
import {
  carriesDone,
  createType,
  graphqlClient,
  newTenant,
  refusalOf,
  restClient,
  type TestWorld,
  tokenFor,
} from '../helpers.js';

type Api = ReturnType<typeof restClient>;

async function setup(world: TestWorld) {
  const tenant = newTenant();
  const token = await tokenFor(tenant, { sub: 'curator' });
  const api = restClient(world.app, token);
  const type = await createType(api, 'Card');
  return { tenant, token, api, type };
}

const grade = (allowed: string[], extra: Record<string, unknown> = {}) => ({
  name: 'grade',
  value_type: 'string',
  cardinality: 'single',
  allowed_values: allowed,
  ...extra,
});

async function entitiesWith(api: Api, type: string, values: Record<string, unknown>[]) {
  const guids: string[] = [];
  for (const [i, v] of values.entries()) {
    const res = await api.post('/entities', { type_guid: type, name: `e${i}`, values: v });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    guids.push(res.body.DATA.entity.guid);
  }
  return guids;
}

const listed = async (api: Api, type: string) =>
  (await api.get(`/entities/types/${type}/attributes`)).body.DATA.attributes.filter(
    (a: any) => a.owner_type !== null,
  );

const historyOf = async (api: Api, type: string) =>
  (await api.get(`/entities/types/${type}/history?page_size=50`)).body.DATA.changes as any[];

describe('PATCH /entities/types/{guid}/attributes/{name}: a change in place', () => {
  it('widening an enumeration keeps the guid and every value, records the difference once, and a value of the new member is accepted at once', async ({
    world,
  }) => {
    const { api, type } = await setup(world);
    const declared = await api.post(
      `/entities/types/${type}/attributes`,
      grade(['A', 'B'], { required: true }),
    );
    const guid = declared.body.DATA.attribute.guid;
    const entities = await entitiesWith(api, type, [{ grade: 'A' }, { grade: 'B' }]);
    const before = (await api.get(`/entities/types/${type}`)).headers.etag;
    const res = await api.patch(
      `/entities/types/${type}/attributes/GRADE`,
      { allowed_values: ['A', 'B', 'C'] },
      { 'x-change-reason': 'grades: add C' },
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.DATA).toMatchObject({
      changed: true,
      attribute: { guid, name: 'grade', allowed_values: ['A', 'B', 'C'], required: true },
      changes: [{ field: 'allowed_values', added_count: 1, removed_count: 0, added: ['C'] }],
    });
    expect(res.headers.etag).toBeDefined();
    expect(res.headers.etag).not.toBe(before);
    expect((await listed(api, type)).map((a: any) => [a.guid, a.allowed_values])).toEqual([
      [guid, ['A', 'B', 'C']],
    ]);
    for (const [i, g] of entities.entries()) {
      expect((await api.get(`/entities/${g}`)).body.DATA.entity.values.grade).toBe(['A', 'B'][i]);
    }
    const c = await api.post('/entities', { type_guid: type, name: 'c', values: { grade: 'C' } });
    expect(c.status).toBe(201);
    const history = await historyOf(api, type);
    expect(history[0]).toMatchObject({
      kind: 'attribute_evolved',
      attribute_guid: guid,
      actor: 'curator',
      reason: 'grades: add C',
      before: { name: 'grade', allowed_values: ['A', 'B'] },
      after: { name: 'grade', allowed_values: ['A', 'B', 'C'] },
    });
    // the same change again changes nothing and records nothing
    const again = await api.patch(`/entities/types/${type}/attributes/grade`, {
      allowed_values: ['A', 'B', 'C'],
    });
    expect(again.body.DATA).toMatchObject({ changed: false, changes: [] });
    expect(await historyOf(api, type)).toHaveLength(history.length);
    // the feed filters it by kind
    const feed = await api.get('/entities/changes?kind=attribute_evolved');
    expect(feed.body.DATA.changes.map((ch: any) => ch.attribute_guid)).toEqual([guid]);
  });

  it('dropping required, another default, dropping the enumeration, turning filterable on and off; a dry run writes nothing', async ({
    world,
  }) => {
    const { api, type } = await setup(world);
    const person = await createType(api, 'Person');
    await api.post(
      `/entities/types/${type}/attributes`,
      grade(['A', 'B'], { required: true, default_value: 'A' }),
    );
    await api.post(`/entities/types/${type}/attributes`, {
      name: 'owner',
      value_type: 'entity_ref',
      cardinality: 'single',
      allowed_ref_type: person,
    });
    const path = `/entities/types/${type}/attributes`;
    const dry = await api.patch(`${path}/grade?dry_run=true`, { required: false, default_value: 'B' });
    expect(dry.body.DATA).toMatchObject({
      dry_run: true,
      changed: true,
      attribute: { required: false, default_value: 'B' },
    });
    expect((await listed(api, type)).find((a: any) => a.name === 'grade')).toMatchObject({
      required: true,
      default_value: 'A',
    });
    const done = await api.patch(`${path}/grade`, { required: null, default_value: 'B' });
    expect(done.body.DATA.changes.map((c: any) => c.field)).toEqual(['required', 'default_value']);
    const open = await api.patch(`${path}/grade`, { allowed_values: null, default_value: null });
    expect(open.body.DATA.attribute).toMatchObject({
      allowed_values: null,
      default_value: null,
      required: false,
    });
    const on = await api.patch(`${path}/owner`, { filterable: true });
    expect(on.body.DATA.attribute.filterable).toBe(true);
    const off = await api.patch(`${path}/owner`, { filterable: false });
    expect(off.body.DATA.attribute.filterable).toBe(false);
    // a value of any kind is now accepted for grade
    const z = await api.post('/entities', { type_guid: type, name: 'z', values: { grade: 'Z' } });
    expect(z.status).toBe(201);
    // filterable on a string is refused as a declaration refuses it
    const stray = await api.patch(`${path}/grade`, { filterable: false });
    expect([stray.status, stray.body.DATA.reason]).toEqual([400, 'filterable_not_supported']);
  });

  it('a change a stored value might not survive is refused with attribute_change_not_in_place, saying why; nothing written', async ({
    world,
  }) => {
    const { api, type } = await setup(world);
    await api.post(`/entities/types/${type}/attributes`, grade(['A', 'B']));
    await api.post(`/entities/types/${type}/attributes`, {
      name: 'free',
      value_type: 'string',
      cardinality: 'single',
    });
    const path = `/entities/types/${type}/attributes`;
    const history = await historyOf(api, type);
    const cases: [string, Record<string, unknown>, string][] = [
      ['grade', { allowed_values: ['A', 'C'] }, 'allowed_values removes 1 value'],
      ['grade', { required: true }, 'required false → true'],
      ['grade', { value_type: 'number', allowed_values: null }, 'value_type changes'],
      ['grade', { cardinality: 'multi' }, 'cardinality changes'],
      ['free', { allowed_values: ['x'] }, 'allowed_values added'],
    ];
    for (const [name, change, why] of cases) {
      const res = await api.patch(`${path}/${name}`, change);
      expect([name, res.status, res.body.DATA.reason]).toEqual([name, 409, 'attribute_change_not_in_place']);
      expect(res.body.MESSAGE).toContain(why);
      expect(res.body.MESSAGE).toContain('Redeclare it');
      expect(res.body.DATA.blockers.length).toBeGreaterThan(0);
    }
    expect(await historyOf(api, type)).toEqual(history);
    // declaring a live name again is still refused: evolution is its own operation
    const again = await api.post(path, grade(['A', 'B', 'C']));
    expect([again.status, again.body.DATA.reason]).toEqual([409, 'attribute_def_already_exists']);
  });

  it('refusals: unknown type, unknown name, a platform attribute, a withdrawn one, a name in the body, a stale If-Match, a bad merged value', async ({
    world,
  }) => {
    const { api, type } = await setup(world);
    await api.post(`/entities/types/${type}/attributes`, grade(['A', 'B'], { default_value: 'A' }));
    await api.post(`/entities/types/${type}/attributes`, {
      name: 'gone',
      value_type: 'string',
      cardinality: 'single',
    });
    await api.delete(`/entities/attributes/${type}/gone`);
    const path = `/entities/types/${type}/attributes`;
    const reasonOf = async (res: Promise<{ status: number; body: any }>) => {
      const r = await res;
      return [r.status, r.body.DATA.reason];
    };
    expect(await reasonOf(api.patch(`/entities/types/${crypto.randomUUID()}/attributes/grade`, {}))).toEqual([
      404,
      'unknown_entity_type',
    ]);
    expect(await reasonOf(api.patch(`${path}/nope`, { required: false }))).toEqual([
      404,
      'attribute_def_not_found',
    ]);
    expect(await reasonOf(api.patch(`${path}/tags`, { filterable: false }))).toEqual([
      400,
      'base_type_not_owner',
    ]);
    expect(await reasonOf(api.patch(`${path}/gone`, { required: false }))).toEqual([
      409,
      'attribute_def_withdrawn',
    ]);
    expect(await reasonOf(api.patch(`${path}/grade`, { name: 'other' }))).toEqual([400, 'unknown_field']);
    expect(await reasonOf(api.patch(`${path}/grade`, { descripton: 'x' }))).toEqual([400, 'unknown_field']);
    // the default must stay one of the allowed values, as a declaration's
    expect(await reasonOf(api.patch(`${path}/grade`, { default_value: 'Z' }))).toEqual([
      400,
      'default_value_not_allowed',
    ]);
    const stale = await api.patch(
      `${path}/grade`,
      { allowed_values: ['A', 'B', 'C'] },
      { 'if-match': 'W/"0-0"' },
    );
    expect([stale.status, stale.body.DATA.reason]).toEqual([412, 'precondition_failed']);
    const current = (await api.get(`/entities/types/${type}`)).headers.etag as string;
    const fresh = await api.patch(
      `${path}/grade`,
      { allowed_values: ['A', 'B', 'C'] },
      { 'if-match': current },
    );
    expect(fresh.status).toBe(200);
  });

  it('GraphQL evolveAttribute calls the same rule: changed in place, refused when not, dry run', async ({
    world,
  }) => {
    const { api, token, type } = await setup(world);
    const gql = graphqlClient(world.app, token);
    const declared = await api.post(`/entities/types/${type}/attributes`, grade(['A']));
    const dry = await gql.evolveAttribute(type, 'grade', { allowedValues: ['A', 'B'] }, { dryRun: true });
    expect(dry).toMatchObject({ dryRun: true, changed: true, attribute: { allowedValues: ['A', 'B'] } });
    expect((await listed(api, type))[0].allowed_values).toEqual(['A']);
    const done = await gql.evolveAttribute(type, 'grade', { allowedValues: ['A', 'B'] });
    expect(done).toMatchObject({
      dryRun: false,
      changed: true,
      attribute: { guid: declared.body.DATA.attribute.guid, allowedValues: ['A', 'B'] },
    });
    expect(done.changes).toEqual([
      { field: 'allowed_values', added_count: 1, removed_count: 0, added: ['B'], removed: [] },
    ]);
    expect(await refusalOf(gql.evolveAttribute(type, 'grade', { allowedValues: ['B'] }))).toBe(
      'attribute_change_not_in_place',
    );
    expect(await refusalOf(gql.evolveAttribute(type, 'grade', { valueType: 'json' }))).toBe(
      'attribute_change_not_in_place',
    );
  });
});

describe('a model document widening an enumeration: changed in place, never out of the listing', () => {
  it('plan chooses evolve_attribute; apply needs no --allow-withdraw, matches at once, and the attribute and its values are readable at every instant', async ({
    world,
  }) => {
    const { api, type } = await setup(world);
    const declared = await api.post(`/entities/types/${type}/attributes`, grade(['A', 'B']));
    const guid = declared.body.DATA.attribute.guid;
    const entities = await entitiesWith(
      api,
      type,
      Array.from({ length: 12 }, (_, i) => ({ grade: i % 2 ? 'A' : 'B' })),
    );
    const document = {
      format: MODEL_FORMAT,
      types: [{ name: 'Card', attributes: [grade(['A', 'B', 'C'])] }],
    };
    const plan = await api.post('/entities/model/plan', document);
    expect(plan.body.DATA.steps).toEqual([
      expect.objectContaining({
        action: 'evolve_attribute',
        attribute: 'grade',
        changes: [expect.objectContaining({ field: 'allowed_values', added: ['C'] })],
      }),
    ]);
    expect(plan.body.DATA.steps[0].carry).toBeUndefined();
    // A reader in a loop while the apply runs: every listing holds grade, every entity its value.
    let applying = true;
    const seen: string[] = [];
    const reader = (async () => {
      let i = 0;
      while (applying) {
        const attrs = await listed(api, type);
        seen.push(attrs.map((a: any) => a.name).join(','));
        const e = await api.get(`/entities/${entities[i % entities.length]}`);
        seen.push(String(e.body.DATA.entity.values.grade));
        i += 1;
      }
    })();
    const started = performance.now();
    const applied = await api.post('/entities/model/apply', { document, based_on: plan.body.DATA.based_on });
    const took = performance.now() - started;
    applying = false;
    await reader;
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
    expect(applied.body.DATA).toMatchObject({ matches: true, carrying: [], waiting: [] });
    expect(applied.body.DATA.applied.map((s: any) => s.action)).toEqual(['evolve_attribute']);
    expect(took).toBeLessThan(1_000);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.filter((s) => !['grade', 'A', 'B'].includes(s))).toEqual([]);
    const after = await listed(api, type);
    expect(after.map((a: any) => [a.guid, a.allowed_values])).toEqual([[guid, ['A', 'B', 'C']]]);
    const replan = await api.post('/entities/model/plan', document);
    expect(replan.body.DATA.steps).toEqual([]);
  });

  it('a change that is not in place stays a carried redeclaration, and needs --allow-withdraw', async ({
    world,
  }) => {
    const { api, type } = await setup(world);
    await api.post(`/entities/types/${type}/attributes`, grade(['A', 'B']));
    const document = { format: MODEL_FORMAT, types: [{ name: 'Card', attributes: [grade(['A', 'C'])] }] };
    const plan = await api.post('/entities/model/plan', document);
    expect(plan.body.DATA.steps.map((s: any) => s.action)).toEqual(['redeclare_attribute']);
    const refused = await api.post('/entities/model/apply', { document });
    expect(refused.body.DATA.reason).toBe('plan_not_applicable');
  });
});

describe('descriptions and display names: bounded, stored, listed, exported, planned, changed in place', () => {
  it('declared, listed (REST and GraphQL), exported; a change of them is in place; bounds and characters refused with invalid_field', async ({
    world,
  }) => {
    const { api, token, type } = await setup(world);
    const path = `/entities/types/${type}/attributes`;
    const declared = await api.post(path, {
      ...grade(['A', 'B']),
      description: '  Letter grade.\nA is best.  ',
      display_name: 'Grade',
    });
    expect(declared.status, JSON.stringify(declared.body)).toBe(201);
    expect(declared.body.DATA.attribute).toMatchObject({
      description: 'Letter grade.\nA is best.',
      display_name: 'Grade',
    });
    const row = (await listed(api, type))[0];
    expect(row).toMatchObject({ description: 'Letter grade.\nA is best.', display_name: 'Grade' });
    const gql = graphqlClient(world.app, token);
    const attrs = (await gql.typeAttributes(type))?.attributes ?? [];
    expect(attrs.find((a) => a.name === 'grade')).toMatchObject({
      description: 'Letter grade.\nA is best.',
      displayName: 'Grade',
    });
    const model = (await api.get('/entities/model')).body.DATA.model;
    expect(model.types[0].attributes[0]).toMatchObject({
      description: 'Letter grade.\nA is best.',
      display_name: 'Grade',
    });
    // a document changing only the display name plans a change in place, and apply makes it
    const document = {
      format: MODEL_FORMAT,
      types: [
        { name: 'Card', attributes: [{ ...model.types[0].attributes[0], display_name: 'Letter grade' }] },
      ],
    };
    const plan = await api.post('/entities/model/plan', document);
    expect(plan.body.DATA.steps.map((s: any) => [s.action, s.changes])).toEqual([
      ['evolve_attribute', [{ field: 'display_name', from: 'Grade', to: 'Letter grade' }]],
    ]);
    expect((await api.post('/entities/model/apply', { document })).body.DATA.matches).toBe(true);
    const changed = await api.patch(`${path}/grade`, { description: null });
    expect(changed.body.DATA.attribute).toMatchObject({ description: null, display_name: 'Letter grade' });
    expect((await historyOf(api, type))[0]).toMatchObject({
      kind: 'attribute_evolved',
      before: { name: 'grade', description: 'Letter grade.\nA is best.' },
      after: { name: 'grade', description: null },
    });
    // bounds: 1,000 and 256 characters (counted as characters, not UTF-16 units); one line for a display name
    const ok = await api.post(path, {
      name: 'long',
      value_type: 'string',
      cardinality: 'single',
      description: '😀'.repeat(1000),
      display_name: 'é'.repeat(256),
    });
    expect(ok.status).toBe(201);
    const refusals: Record<string, unknown>[] = [
      { description: 'x'.repeat(1001) },
      { display_name: 'x'.repeat(257) },
      { display_name: 'two\nlines' },
      { description: 'bell\u0007' },
      { display_name: 'zero\u200bwidth' },
      { description: 42 },
    ];
    for (const extra of refusals) {
      const res = await api.post(path, {
        name: 'other',
        value_type: 'string',
        cardinality: 'single',
        ...extra,
      });
      expect([JSON.stringify(extra).slice(0, 40), res.status, res.body.DATA.reason]).toEqual([
        JSON.stringify(extra).slice(0, 40),
        400,
        'invalid_field',
      ]);
      const patched = await api.patch(`${path}/grade`, extra);
      expect(patched.body.DATA.reason).toBe('invalid_field');
    }
    // an empty text is none
    const blank = await api.patch(`${path}/grade`, { display_name: '   ' });
    expect(blank.body.DATA.attribute.display_name).toBeNull();
  });
});

describe('a carried redeclaration is shown as it will be: nothing disappears meanwhile', () => {
  it('listing, GraphQL and export show the new definition marked redeclaring; an export made then applies as a no-op, then and after', async ({
    world,
  }) => {
    const { tenant, token, api, type } = await setup(world);
    const declared = await api.post(`/entities/types/${type}/attributes`, grade(['A', 'B']));
    const oldGuid = declared.body.DATA.attribute.guid;
    await entitiesWith(api, type, [{ grade: 'A' }, { grade: 'B' }]);
    // Hold the carry: an instance of our own takes its lease, so no purger of the suite ends it meanwhile.
    const db = createExecutor(world.driver);
    expect(await db.write((run) => acquireLease(run, `purge-def:${oldGuid}`, 'holder', 60))).toBe(true);
    try {
      const narrowed = { format: MODEL_FORMAT, types: [{ name: 'Card', attributes: [grade(['A', 'C'])] }] };
      const applied = await api.post('/entities/model/apply', { document: narrowed, allow_withdraw: true });
      expect(applied.body.DATA.carrying.map((s: any) => s.attribute)).toEqual(['grade']);
      const row = (await listed(api, type)).find((a: any) => a.name === 'grade');
      expect(row).toMatchObject({
        guid: oldGuid,
        allowed_values: ['A', 'C'],
        redeclaring: { since: expect.any(String), ends_after: expect.any(String) },
      });
      expect(Date.parse(row.redeclaring.ends_after)).toBeGreaterThanOrEqual(
        Date.parse(row.redeclaring.since),
      );
      const gql = graphqlClient(world.app, token);
      const answer = (await gql.request(
        `query($g: ID!) { entityType(guid: $g) { attributes { name allowedValues redeclaring { since endsAfter } } } }` as any,
        { g: type } as any,
      )) as any;
      expect(answer.entityType.attributes.find((a: any) => a.name === 'grade')).toMatchObject({
        allowedValues: ['A', 'C'],
        redeclaring: { since: row.redeclaring.since, endsAfter: row.redeclaring.ends_after },
      });
      const exported = (await api.get('/entities/model')).body.DATA.model;
      expect(exported.types).toEqual([{ name: 'Card', attributes: [grade(['A', 'C'])] }]);
      // the export made in the window: planned and applied now, nothing to do (nothing withdrawn for good)
      const plan = await api.post('/entities/model/plan', exported);
      expect(plan.body.DATA).toMatchObject({
        steps: [],
        redeclaring: [{ type: 'Card', attribute: 'grade', ends_after: row.redeclaring.ends_after }],
      });
      // (nothing to apply; the tenant matches only once the service has declared it)
      const again = await api.post('/entities/model/apply', { document: exported, allow_withdraw: true });
      expect(again.body.DATA).toMatchObject({
        applied: [],
        redeclaring: [{ attribute: 'grade' }],
        matches: false,
      });
      // another statement of the name meanwhile waits, with the message a declaration gets
      const other = await api.post('/entities/model/plan', {
        format: MODEL_FORMAT,
        types: [{ name: 'Card', attributes: [grade(['A', 'B', 'C'])] }],
      });
      expect(other.body.DATA.steps).toEqual([
        expect.objectContaining({
          action: 'declare_attribute',
          blocked: {
            reason: 'attribute_def_withdrawn',
            message: expect.stringContaining('is being redeclared'),
          },
        }),
      ]);
      const direct = await api.post(`/entities/types/${type}/attributes`, grade(['A']));
      expect(direct.body.MESSAGE).toBe(other.body.DATA.steps[0].blocked.message);
    } finally {
      await db.write((run) => releaseLease(run, `purge-def:${oldGuid}`, 'holder'));
    }
    await carriesDone(world, tenant);
    const after = (await listed(api, type)).find((a: any) => a.name === 'grade');
    expect(after).toMatchObject({ allowed_values: ['A', 'C'], redeclaring: null });
    expect(after.guid).not.toBe(oldGuid);
    const exportedDuring = {
      format: MODEL_FORMAT,
      types: [{ name: 'Card', attributes: [grade(['A', 'C'])] }],
    };
    const later = await api.post('/entities/model/apply', { document: exportedDuring, allow_withdraw: true });
    expect(later.body.DATA).toMatchObject({ applied: [], matches: true });
  });
});

describe("a type's description and display name", () => {
  it('set over REST (PATCH, with or without a rename) and GraphQL, recorded, exported, planned and applied; bounds refused', async ({
    world,
  }) => {
    const { token, api, type } = await setup(world);
    const described = await api.patch(`/entities/types/${type}`, {
      description: 'Playing cards.\nOne per deck.',
      display_name: 'Card',
    });
    expect(described.status, JSON.stringify(described.body)).toBe(200);
    expect(described.body.DATA.entity_type).toMatchObject({
      name: 'Card',
      description: 'Playing cards.\nOne per deck.',
      display_name: 'Card',
    });
    expect(described.headers.etag).toBe(`W/"${described.body.DATA.entity_type.version}"`);
    const history = (await api.get(`/entities/types/${type}/history?page_size=5`)).body.DATA.changes;
    expect(history[0]).toMatchObject({
      kind: 'type_described',
      before: { name: 'Card', description: null, display_name: null },
      after: { name: 'Card', description: 'Playing cards.\nOne per deck.', display_name: 'Card' },
    });
    // the same again writes nothing; a rename and a text in one body
    await api.patch(`/entities/types/${type}`, { display_name: 'Card' });
    expect((await api.get(`/entities/types/${type}/history?page_size=5`)).body.DATA.changes).toHaveLength(
      history.length,
    );
    const both = await api.patch(`/entities/types/${type}`, { name: 'Cards', display_name: null });
    expect(both.body.DATA.entity_type).toMatchObject({
      name: 'Cards',
      description: 'Playing cards.\nOne per deck.',
    });
    expect(both.body.DATA.entity_type.display_name).toBeUndefined();
    const gql = graphqlClient(world.app, token);
    const answer = (await gql.request(
      'mutation($g: ID!) { describeEntityType(guid: $g, displayName: "Deck card") { name description displayName } }' as any,
      { g: type } as any,
    )) as any;
    expect(answer.describeEntityType).toEqual({
      name: 'Cards',
      description: 'Playing cards.\nOne per deck.',
      displayName: 'Deck card',
    });
    for (const body of [{ description: 'x'.repeat(1001) }, { display_name: 'a\nb' }, { display_name: 42 }]) {
      const res = await api.patch(`/entities/types/${type}`, body);
      expect([res.status, res.body.DATA.reason]).toEqual([400, 'invalid_field']);
    }
    expect((await api.patch(`/entities/types/${type}`, {})).body.DATA.reason).toBe('empty_value');
    // exported, and a document stating others plans describe_type; applied, the type says so
    const model = (await api.get('/entities/model')).body.DATA.model;
    expect(model.types[0]).toMatchObject({
      name: 'Cards',
      description: 'Playing cards.\nOne per deck.',
      display_name: 'Deck card',
    });
    const document = { ...model, types: [{ ...model.types[0], description: 'Cards of a deck.' }] };
    const plan = await api.post('/entities/model/plan', document);
    expect(plan.body.DATA.steps).toEqual([
      expect.objectContaining({
        action: 'describe_type',
        type: 'Cards',
        changes: [{ field: 'description', from: 'Playing cards.\nOne per deck.', to: 'Cards of a deck.' }],
      }),
    ]);
    expect((await api.post('/entities/model/apply', { document })).body.DATA.matches).toBe(true);
    expect((await api.get(`/entities/types/${type}`)).body.DATA.entity_type.description).toBe(
      'Cards of a deck.',
    );
    expect((await api.post('/entities/model/plan', document)).body.DATA.steps).toEqual([]);
    // a type the document creates with texts is created, then described
    const fresh = { format: MODEL_FORMAT, types: [{ name: 'Deck', display_name: 'A deck', attributes: [] }] };
    const created = await api.post('/entities/model/apply', { document: fresh });
    expect(created.body.DATA.applied.map((s: any) => s.action)).toEqual(['create_type', 'describe_type']);
    expect((await api.get('/entities/types/by-name/Deck')).body.DATA.entity_type.display_name).toBe('A deck');
  });
});
