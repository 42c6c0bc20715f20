// Applying a model document through the service (POST /entities/model/apply): everything checked before the first
// write, a plan applied only to the state it was made from, a race mid-way stopped with what remains, and
// redeclarations that carry their values to the definition stated anew.

import pino from 'pino';
import { describe, expect } from 'vitest';
import { createExecutor } from '../../src/db/executor.js';
import { acquireLease, findWithdrawn, releaseLease } from '../../src/db/purge.js';
import { createPurger } from '../../src/jobs/purge.js';
import { MODEL_FORMAT } from '../../src/model/plans.js';
import { completeCarry, judgeBatch } from '../../src/resolvers/carry.js';
import { itWith } from '../fixtures.js';
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

const it = itWith({ PURGE_BATCH_SIZE: '7' });
const itGraced = itWith({ PURGE_BATCH_SIZE: '7', PURGE_GRACE_SECONDS: '120' });
type Api = ReturnType<typeof restClient>;

async function tenantApi(world: TestWorld) {
  const tenant = newTenant();
  return { tenant, api: restClient(world.app, await tokenFor(tenant, { sub: 'release-bot' })) };
}

const doc = (types: unknown[]) => ({ format: MODEL_FORMAT, types });
const grade = (allowed: string[]) => ({
  name: 'grade',
  value_type: 'string',
  cardinality: 'single',
  allowed_values: allowed,
});

/** Everything the tenant has that an apply could change: its model document and its whole change feed. */
async function snapshot(api: Api) {
  const model = await api.get('/entities/model');
  const feed = await api.get('/entities/changes?page_size=500');
  return { model: model.body.DATA.model, changes: feed.body.DATA.changes.length };
}

async function entitiesWith(api: Api, type: string, values: Record<string, unknown>[]) {
  const guids: string[] = [];
  for (const [i, v] of values.entries()) {
    const res = await api.post('/entities', {
      type_guid: type,
      name: `e${String(i).padStart(3, '0')}`,
      values: v,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    guids.push(res.body.DATA.entity.guid);
  }
  return guids;
}

const valuesOf = async (api: Api, guids: string[], name: string) =>
  Promise.all(
    guids.map(async (g) => (await api.get(`/entities/${g}`)).body.DATA.entity.values?.[name] ?? null),
  );

describe('apply: everything is checked before the first write', () => {
  it('a blocked step (a typo in allowed_ref_type) refuses the whole apply, withdrawals allowed or not: nothing written', async ({
    world,
  }) => {
    const { api, tenant } = await tenantApi(world);
    const person = await createType(api, 'Person');
    const report = await createType(api, 'Report');
    await api.post(`/entities/types/${report}/attributes`, {
      name: 'owner',
      value_type: 'entity_ref',
      cardinality: 'single',
      allowed_ref_type: person,
    });
    const before = await snapshot(api);
    const document = doc([
      { name: 'Person', attributes: [] },
      {
        name: 'Report',
        attributes: [
          { name: 'owner', value_type: 'entity_ref', cardinality: 'single', allowed_ref_type: 'Persn' },
          { name: 'title', value_type: 'string', cardinality: 'single' },
        ],
      },
      { name: 'Audit', attributes: [] },
    ]);
    for (const allow of [false, true]) {
      const res = await api.post('/entities/model/apply', { document, allow_withdraw: allow });
      expect([res.status, res.body.DATA.reason]).toEqual([409, 'plan_not_applicable']);
      expect(res.body.DATA.tenant).toBe(tenant);
      expect(res.body.DATA.blocked.map((s: any) => [s.action, s.attribute, s.blocked.reason])).toEqual([
        ['redeclare_attribute', 'owner', 'unknown_entity_type'],
      ]);
      // the withdrawal the blocked redeclaration needs is listed too when not allowed
      expect(res.body.DATA.withdrawals.map((s: any) => s.attribute)).toEqual(allow ? [] : ['owner']);
      expect(res.body.MESSAGE).toContain('Nothing was applied');
    }
    expect(await snapshot(api)).toEqual(before);
  });

  it('a redeclaration whose new definition the type would refuse (a default naming no entity, enumerations past the budget) is blocked: nothing withdrawn', async ({
    world,
  }) => {
    const { api } = await tenantApi(world);
    const person = await createType(api, 'Person');
    const t = await createType(api, 'Deal');
    await api.post(`/entities/types/${t}/attributes`, {
      name: 'owner',
      value_type: 'entity_ref',
      cardinality: 'single',
      allowed_ref_type: person,
    });
    // six enumerations of about 0.68 MB each (4.1 MB of the type's 4 MiB): one can be stated anew at the same size
    // (what it held is freed), not with values of 1,024 characters (1.03 MB)
    const values = (tag: string, n: number, width = 680) =>
      Array.from({ length: n }, (_, i) => `${tag}${i}`.padEnd(width, '.'));
    for (let i = 0; i < 6; i += 1) {
      const res = await api.post(`/entities/types/${t}/attributes`, {
        name: `e${i}`,
        value_type: 'string',
        cardinality: 'single',
        allowed_values: values(`e${i}-`, 1000),
      });
      expect(res.status).toBe(201);
    }
    const before = await snapshot(api);
    const listed = (n: number) =>
      Array.from({ length: 6 }, (_, i) => ({
        name: `e${i}`,
        value_type: 'string',
        cardinality: 'single',
        allowed_values: i === 0 ? values('x', n) : values(`e${i}-`, 1000),
      }));
    const document = doc([
      { name: 'Person', attributes: [] },
      {
        name: 'Deal',
        attributes: [
          {
            name: 'owner',
            value_type: 'entity_ref',
            cardinality: 'single',
            allowed_ref_type: 'Person',
            default_value: '00000000-0000-4000-8000-000000000000',
          },
          ...listed(1000),
        ],
      },
    ]);
    const plan = await api.post('/entities/model/plan', document);
    const blocked = Object.fromEntries(
      plan.body.DATA.steps.map((s: any) => [s.attribute, s.blocked?.reason ?? null]),
    );
    expect(blocked).toMatchObject({ owner: 'referent_not_found', e0: null });
    const refused = await api.post('/entities/model/apply', { document, allow_withdraw: true });
    expect([refused.status, refused.body.DATA.reason]).toEqual([409, 'plan_not_applicable']);
    expect(await snapshot(api)).toEqual(before);
    // past the type's budget: e0's values grow to 1,024 characters
    const big = doc([
      {
        name: 'Deal',
        attributes: [
          { name: 'owner', value_type: 'entity_ref', cardinality: 'single', allowed_ref_type: 'Person' },
          ...listed(1000).slice(1),
          {
            name: 'e0',
            value_type: 'string',
            cardinality: 'single',
            allowed_values: values('x', 1000, 1024),
          },
        ],
      },
    ]);
    const over = await api.post('/entities/model/plan', big);
    expect(over.body.DATA.steps.map((s: any) => [s.attribute, s.blocked?.reason ?? null])).toEqual([
      ['e0', 'attribute_defs_too_large'],
    ]);
    expect((await api.post('/entities/model/apply', { document: big, allow_withdraw: true })).status).toBe(
      409,
    );
    expect(await snapshot(api)).toEqual(before);
  }, 60_000);

  it('a declaration the declare endpoint would refuse is blocked, each checked after the steps before it: nothing written', async ({
    world,
  }) => {
    const { api } = await tenantApi(world);
    const person = await createType(api, 'Person');
    const place = await createType(api, 'Place');
    const somewhere = (await api.post('/entities', { type_guid: place, name: 'somewhere' })).body.DATA.entity
      .guid;
    const t = await createType(api, 'Ledger');
    const values = (tag: string, n: number, width: number) =>
      Array.from({ length: n }, (_, i) => `${tag}${i}`.padEnd(width, '.'));
    // five enumerations of about 0.69 MB (3.4 MB of the type's 4 MiB): one more of 0.41 MB fits, a second does not
    const live = Array.from({ length: 5 }, (_, i) => ({
      name: `e${i}`,
      value_type: 'string',
      cardinality: 'single',
      allowed_values: values(`e${i}-`, 1000, 680),
    }));
    for (const a of live) expect((await api.post(`/entities/types/${t}/attributes`, a)).status).toBe(201);
    const before = await snapshot(api);
    const ref = (name: string, allowed_ref_type: string, default_value: string) => ({
      name,
      value_type: 'entity_ref',
      cardinality: 'single',
      allowed_ref_type,
      default_value,
    });
    const cases: [string, unknown[], [string, string][]][] = [
      [
        'a platform attribute name, on a type the document creates',
        [{ name: 'Audit', attributes: [{ name: ' Tags ', value_type: 'string', cardinality: 'single' }] }],
        [['Tags', 'attribute_def_already_exists']],
      ],
      [
        'a definition on the root type',
        [{ name: 'entity', attributes: [{ name: 'x', value_type: 'string', cardinality: 'single' }] }],
        [['x', 'base_type_not_owner']],
      ],
      [
        'reference defaults: no such entity, an entity of another type, any entity of a type the document creates',
        [
          { name: 'Audit', attributes: [] },
          {
            name: 'Deal',
            attributes: [
              ref('buyer', 'Person', '00000000-0000-4000-8000-000000000000'),
              ref('seller', 'Person', somewhere),
              ref('auditor', 'Audit', somewhere),
            ],
          },
        ],
        [
          ['buyer', 'referent_not_found'],
          ['seller', 'ref_type_mismatch'],
          ['auditor', 'ref_type_mismatch'],
        ],
      ],
      [
        "two declarations each within the type's budget, not both",
        [
          {
            name: 'Ledger',
            attributes: [
              ...live,
              {
                name: 'n1',
                value_type: 'string',
                cardinality: 'single',
                allowed_values: values('a', 1000, 400),
              },
              {
                name: 'n2',
                value_type: 'string',
                cardinality: 'single',
                allowed_values: values('b', 1000, 400),
              },
            ],
          },
        ],
        [['n2', 'attribute_defs_too_large']],
      ],
    ];
    for (const [what, types, blocked] of cases) {
      const document = doc(types);
      const plan = await api.post('/entities/model/plan', document);
      expect(plan.status, what).toBe(200);
      expect(
        plan.body.DATA.steps.filter((s: any) => s.blocked).map((s: any) => [s.attribute, s.blocked.reason]),
        what,
      ).toEqual(blocked);
      const res = await api.post('/entities/model/apply', { document, allow_withdraw: true });
      expect([res.status, res.body.DATA.reason], what).toEqual([409, 'plan_not_applicable']);
      expect(await snapshot(api), what).toEqual(before);
    }
    // without the second declaration the first is applied: the budget counted it as the declare endpoint does
    const one = doc([
      {
        name: 'Ledger',
        attributes: [
          ...live,
          { name: 'n1', value_type: 'string', cardinality: 'single', allowed_values: values('a', 1000, 400) },
        ],
      },
    ]);
    const applied = await api.post('/entities/model/apply', { document: one });
    expect(applied.status, JSON.stringify(applied.body.DATA).slice(0, 300)).toBe(200);
    expect(applied.body.DATA.stopped ?? null).toBeNull();
    expect(person).toBeTruthy();
  }, 60_000);

  // (a purge grace as in production: the deleted type's definitions and the carry stay as they are for the test)
  itGraced(
    'each type as it stands: a name a deleted type held, a rename to a managed name, one type listed twice, a redeclaration still carrying',
    async ({ world }) => {
      const { api } = await tenantApi(world);
      const x = (value_type = 'number') => ({ name: 'x', value_type, cardinality: 'single' });
      const stepsOf = async (document: unknown) => {
        const plan = await api.post('/entities/model/plan', document);
        expect(plan.status, JSON.stringify(plan.body.DATA)).toBe(200);
        return plan.body.DATA.steps.map((s: any) => [
          s.action,
          s.attribute ?? s.type,
          s.blocked?.reason ?? null,
        ]);
      };
      // a type deleted with its definition: created again under its name, it gets its guid back, and the definition
      // its deletion withdrew is still being purged (the declaration waits for it, as apply reports)
      const report = await createType(api, 'Report');
      expect((await api.post(`/entities/types/${report}/attributes`, x())).status).toBe(201);
      expect((await api.delete(`/entities/types/${report}`)).status).toBe(200);
      expect(await stepsOf(doc([{ name: 'Report', attributes: [x()] }]))).toEqual([
        ['create_type', 'Report', null],
        ['declare_attribute', 'x', 'attribute_def_withdrawn'],
      ]);
      // a rename to the managed type's name, not set up: blocked like its creation, and nothing written
      await createType(api, 'Foo');
      await createType(api, 'Bar');
      let before = await snapshot(api);
      const toManaged = doc([
        { name: 'Bar', attributes: [{ name: 'y', value_type: 'string', cardinality: 'single' }] },
        { name: 'dashboard', renamed_from: 'Foo' },
      ]);
      expect(await stepsOf(toManaged)).toEqual([
        ['rename_type', 'dashboard', 'type_instances_managed'],
        ['declare_attribute', 'y', null],
      ]);
      const managed = await api.post('/entities/model/apply', { document: toManaged });
      expect([managed.status, managed.body.DATA.reason]).toEqual([409, 'plan_not_applicable']);
      expect(await snapshot(api)).toEqual(before);
      // two entries naming one type (by its name and a former name, or two renames of it): refused, nothing written
      for (const twice of [
        [
          { name: 'B', renamed_from: 'Foo', attributes: [x()] },
          { name: 'Foo', attributes: [x('string')] },
        ],
        [
          { name: 'B', renamed_from: 'Foo' },
          { name: 'C', renamed_from: 'Foo' },
        ],
      ]) {
        for (const path of ['/entities/model/plan', '/entities/model/apply']) {
          const res = await api.post(path, path.endsWith('plan') ? doc(twice) : { document: doc(twice) });
          expect([res.status, res.body.DATA.reason], path).toEqual([400, 'invalid_model']);
          expect(res.body.MESSAGE).toContain('types[1]');
        }
      }
      expect(await snapshot(api)).toEqual(before);
      // a redeclaration carrying its values holds its room under the 200 limit until it is declared
      const wide = Array.from({ length: 199 }, (_, i) => ({
        name: `d${String(i).padStart(3, '0')}`,
        value_type: 'string',
        cardinality: 'single',
      }));
      expect(
        (await api.post('/entities/model/apply', { document: doc([{ name: 'Wide', attributes: wide }]) }))
          .status,
      ).toBe(200);
      // Hold the carry: an instance of our own takes its lease, so no purger of the suite ends it meanwhile.
      const wideGuid = (await api.get('/entities/types/by-name/Wide')).body.DATA.entity_type.guid as string;
      const d000 = (await api.get(`/entities/types/${wideGuid}/attributes`)).body.DATA.attributes.find(
        (a: any) => a.name === 'd000',
      ).guid as string;
      const db = createExecutor(world.driver);
      expect(await db.write((run) => acquireLease(run, `purge-def:${d000}`, 'holder', 60))).toBe(true);
      const redeclared = await api.post('/entities/model/apply', {
        document: doc([
          { name: 'Wide', attributes: [{ ...wide[0], value_type: 'number' }, ...wide.slice(1)] },
        ]),
        allow_withdraw: true,
      });
      expect(redeclared.body.DATA.carrying).toHaveLength(1);
      before = await snapshot(api);
      // (the export shows the one being redeclared as it will be: 198 live and the carrying one)
      expect(before.model.types.find((t: any) => t.name === 'Wide').attributes).toHaveLength(199);
      const more = (n: number) =>
        Array.from({ length: n }, (_, i) => ({ name: `n${i}`, value_type: 'string', cardinality: 'single' }));
      // 198 live, 1 carrying: one more fits, the second does not
      const over = doc([{ name: 'Wide', attributes: [...wide.slice(1), ...more(2)] }]);
      expect((await stepsOf(over)).filter((s: unknown[]) => s[2] !== null)).toEqual([
        ['declare_attribute', 'n1', 'too_many_attribute_defs'],
      ]);
      const refused = await api.post('/entities/model/apply', { document: over });
      expect([refused.status, refused.body.DATA.reason]).toEqual([409, 'plan_not_applicable']);
      expect(await snapshot(api)).toEqual(before);
      await db.write((run) => releaseLease(run, `purge-def:${d000}`, 'holder'));
    },
    60_000,
  );

  it('withdrawals not allowed are listed, all of them, and nothing is written; allowed, the apply makes the tenant match', async ({
    world,
  }) => {
    const { api } = await tenantApi(world);
    const t = await createType(api, 'Metric');
    for (const name of ['a', 'b']) {
      await api.post(`/entities/types/${t}/attributes`, {
        name,
        value_type: 'number',
        cardinality: 'single',
      });
    }
    const before = await snapshot(api);
    const document = doc([
      { name: 'Metric', attributes: [{ name: 'c', value_type: 'number', cardinality: 'single' }] },
      { name: 'Goal', attributes: [{ name: 'target', value_type: 'number', cardinality: 'single' }] },
    ]);
    const refused = await api.post('/entities/model/apply', { document });
    expect([refused.status, refused.body.DATA.reason]).toEqual([409, 'plan_not_applicable']);
    expect(refused.body.DATA.withdrawals.map((s: any) => s.attribute)).toEqual(['a', 'b']);
    expect(await snapshot(api)).toEqual(before);

    const applied = await api.post('/entities/model/apply', { document, allow_withdraw: true });
    expect(applied.status).toBe(200);
    expect(applied.body.DATA).toMatchObject({ matches: true, more: false, stopped: null, remaining: [] });
    expect(applied.body.DATA.applied.map((s: any) => [s.action, s.type, s.attribute ?? null])).toEqual([
      ['create_type', 'Goal', null],
      ['withdraw_attribute', 'Metric', 'a'],
      ['withdraw_attribute', 'Metric', 'b'],
      ['declare_attribute', 'Metric', 'c'],
      ['declare_attribute', 'Goal', 'target'],
    ]);
    const again = await api.post('/entities/model/plan', document);
    expect(again.body.DATA.steps).toEqual([]);
    // a second apply is a true no-op
    const noop = await api.post('/entities/model/apply', { document, allow_withdraw: true });
    expect(noop.body.DATA).toMatchObject({ applied: [], matches: true });
    expect(noop.body.DATA.model_version).toBe(noop.body.DATA.based_on);
  });

  it('takes no Idempotency-Key (it runs many transactions; sent again, it changes nothing): one sent is refused before anything', async ({
    world,
  }) => {
    const { api } = await tenantApi(world);
    const before = await snapshot(api);
    const document = doc([
      { name: 'Keyed', attributes: [{ name: 'n', value_type: 'number', cardinality: 'single' }] },
    ]);
    const res = await api.post('/entities/model/apply', { document }, { 'idempotency-key': 'apply-1' });
    expect([res.status, res.body.DATA.reason]).toEqual([400, 'idempotency_key_not_supported']);
    expect(await snapshot(api)).toEqual(before);
    // sent twice without one: the second changes nothing
    const first = await api.post('/entities/model/apply', { document });
    const second = await api.post('/entities/model/apply', { document });
    expect([first.body.DATA.applied.length, second.body.DATA.applied.length]).toEqual([2, 0]);
    expect(second.body.DATA.model_version).toBe(first.body.DATA.model_version);
  });

  it('expect_tenant naming another tenant: 409 tenant_mismatch, nothing written', async ({ world }) => {
    const { api, tenant } = await tenantApi(world);
    const before = await snapshot(api);
    const res = await api.post('/entities/model/apply', {
      document: doc([{ name: 'Anything', attributes: [] }]),
      expect_tenant: 'production',
    });
    expect([res.status, res.body.DATA.reason, res.body.DATA.tenant]).toEqual([
      409,
      'tenant_mismatch',
      tenant,
    ]);
    expect(await snapshot(api)).toEqual(before);
    const ok = await api.post('/entities/model/apply', {
      document: doc([{ name: 'Anything', attributes: [] }]),
      expect_tenant: tenant,
    });
    expect(ok.body.DATA).toMatchObject({ tenant, matches: true });
  });

  it('a plan is applied only to the state it was made from: a change in between refuses it before any write', async ({
    world,
  }) => {
    const { api } = await tenantApi(world);
    const t = await createType(api, 'Ledger');
    const document = doc([
      { name: 'Ledger', attributes: [{ name: 'n', value_type: 'number', cardinality: 'single' }] },
    ]);
    const plan = await api.post('/entities/model/plan', document);
    const basedOn = plan.body.DATA.based_on;
    expect(basedOn).toEqual(expect.any(String));
    // someone else changes the tenant's model (any type) after the plan was made
    await api.post(`/entities/types/${t}/attributes`, {
      name: 'other',
      value_type: 'string',
      cardinality: 'single',
    });
    const before = await snapshot(api);
    const stale = await api.post('/entities/model/apply', {
      document,
      based_on: basedOn,
      allow_withdraw: true,
    });
    expect([stale.status, stale.body.DATA.reason]).toEqual([409, 'model_changed']);
    expect(stale.body.DATA.based_on).not.toBe(basedOn);
    expect(await snapshot(api)).toEqual(before);
    // planned again, it applies
    const fresh = await api.post('/entities/model/plan', document);
    const ok = await api.post('/entities/model/apply', {
      document,
      based_on: fresh.body.DATA.based_on,
      allow_withdraw: true,
    });
    expect(ok.body.DATA).toMatchObject({ based_on: fresh.body.DATA.based_on, matches: true });
  });

  it('a change by another caller between two steps stops the apply with what was done and what remains; a rerun finishes', async ({
    world,
  }) => {
    const attributes = Array.from({ length: 120 }, (_, i) => ({
      name: `f${String(i).padStart(3, '0')}`,
      value_type: 'string',
      cardinality: 'single',
    }));
    const document = doc([{ name: 'Wide', attributes }]);
    // Another caller of the tenant starts changing its model a moment after the apply began (a declaration is a
    // light request: it runs beside the apply). Where it lands is up to the clock: tried with longer delays until
    // it lands between two steps (landing before the first step stops the apply with nothing applied, also right).
    let report: any = null;
    for (const delay of [150, 300, 600, 1200]) {
      const { api } = await tenantApi(world);
      const target = await createType(api, 'Wide');
      const busy = await createType(api, 'Busy');
      let applying = true;
      const writer = (async () => {
        await new Promise((r) => setTimeout(r, delay));
        for (let i = 0; applying; i += 1) {
          const res = await api.post(`/entities/types/${busy}/attributes`, {
            name: `x${i}`,
            value_type: 'string',
            cardinality: 'single',
          });
          expect(res.status).toBe(201);
        }
      })();
      const first = await api.post('/entities/model/apply', { document });
      applying = false;
      await writer;
      const listed = (await api.get(`/entities/types/${target}/attributes`)).body.DATA.attributes
        .map((a: any) => a.name)
        .filter((n: string) => n.startsWith('f'));
      if (first.status === 409) {
        // the other caller's change landed while the plan was made: refused, nothing applied; try a longer delay
        expect(first.body.DATA.reason).toBe('model_changed');
        expect(listed).toEqual([]);
        continue;
      }
      expect(first.status).toBe(200);
      const r = first.body.DATA;
      // whatever it did, it says so exactly: the tenant has the applied declarations and none of the remaining
      expect(listed.sort()).toEqual(r.applied.map((s: any) => s.attribute).sort());
      expect(r.applied.length + r.remaining.length).toBe(120);
      if (r.stopped === null) continue; // the apply was done before the other caller's first change
      expect(r.stopped.reason).toBe('model_changed');
      expect(r.matches).toBe(false);
      expect(r.remaining[0]).toEqual(r.stopped.step);
      const rerun = await api.post('/entities/model/apply', { document });
      expect(rerun.body.DATA).toMatchObject({ matches: true, stopped: null });
      expect(rerun.body.DATA.applied).toHaveLength(r.remaining.length);
      if (r.applied.length > 0) {
        report = r;
        break;
      }
    }
    expect(report?.applied.length).toBeGreaterThan(0);
    expect(report?.remaining.length).toBeGreaterThan(0);
  }, 120_000);

  it('past 500 steps an apply stops with more: true; applying again based on the version it left finishes', async ({
    world,
  }) => {
    const { api } = await tenantApi(world);
    const types = ['A', 'B', 'C'].map((n) => ({
      name: `Part ${n}`,
      attributes: Array.from({ length: 170 }, (_, i) => ({
        name: `p${i}`,
        value_type: 'number',
        cardinality: 'single',
      })),
    }));
    const document = doc(types);
    const first = await api.post(
      '/entities/model/apply',
      { document },
      { 'x-change-reason': 'models/parts.yaml' },
    );
    expect(first.status).toBe(200);
    expect(first.body.DATA).toMatchObject({ more: true, matches: false, stopped: null });
    expect(first.body.DATA.applied).toHaveLength(500);
    expect(first.body.DATA.remaining).toHaveLength(13);
    const second = await api.post('/entities/model/apply', {
      document,
      based_on: first.body.DATA.model_version,
    });
    expect(second.body.DATA).toMatchObject({ more: false, matches: true });
    expect(second.body.DATA.applied).toHaveLength(13);
    // every change the apply made records why
    const feed = await api.get('/entities/changes?page_size=500');
    const reasons = new Set(feed.body.DATA.changes.slice(0, 500).map((c: any) => c.reason));
    expect([...reasons]).toEqual(['models/parts.yaml']);
  }, 120_000);
});

describe('a redeclaration carries the values the new definition accepts', () => {
  it('widening an enumeration and requiring it (not in place) keeps every value; the plan says so first; the history says what was carried', async ({
    world,
  }) => {
    const { api, tenant } = await tenantApi(world);
    const card = await createType(api, 'Card');
    await api.post(`/entities/types/${card}/attributes`, grade(['A', 'B']));
    const values = Array.from({ length: 30 }, (_, i) =>
      i % 3 === 2 ? {} : { grade: i % 3 === 0 ? 'A' : 'B' },
    );
    const guids = await entitiesWith(api, card, values);
    const was = await valuesOf(api, guids, 'grade');
    // (a widening alone is changed in place: attributes.evolve.test.ts; required added could break a stored value)
    const document = doc([{ name: 'Card', attributes: [{ ...grade(['A', 'B', 'C']), required: true }] }]);
    const plan = await api.post('/entities/model/plan', document);
    expect(plan.body.DATA.steps).toHaveLength(1);
    expect(plan.body.DATA.steps[0]).toMatchObject({
      action: 'redeclare_attribute',
      attribute: 'grade',
      carry: { values: 20, refused: 0, complete: true },
    });
    const applied = await api.post(
      '/entities/model/apply',
      { document, allow_withdraw: true, based_on: plan.body.DATA.based_on },
      { 'x-change-reason': 'grades: add C (commit 1a2b3c)' },
    );
    expect(applied.status).toBe(200);
    expect(applied.body.DATA.carrying.map((s: any) => s.attribute)).toEqual(['grade']);
    expect(applied.body.DATA.matches).toBe(false);
    await carriesDone(world, tenant);
    expect(await valuesOf(api, guids, 'grade')).toEqual(was);
    const listing = (await api.get(`/entities/types/${card}/attributes`)).body.DATA.attributes;
    expect(listing.find((a: any) => a.name === 'grade').allowed_values).toEqual(['A', 'B', 'C']);
    const after = await api.post('/entities/model/apply', { document, allow_withdraw: true });
    expect(after.body.DATA).toMatchObject({ applied: [], matches: true });
    // the history: withdrawn (carrying), then declared anew with what it carried, each with the caller and why
    const history = (await api.get(`/entities/types/${card}/history?page_size=10`)).body.DATA.changes;
    expect(history.slice(0, 3).map((c: any) => c.kind)).toEqual([
      'attribute_declared',
      'attribute_removed',
      'attribute_withdrawn',
    ]);
    for (const c of history.slice(0, 3)) {
      expect(c).toMatchObject({ actor: 'release-bot', reason: 'grades: add C (commit 1a2b3c)' });
    }
    expect(history[0].after).toMatchObject({
      allowed_values: ['A', 'B', 'C'],
      carried: { kept: 20, refused: 0, refusals: [] },
    });
    expect(history[2].after).toMatchObject({ state: 'withdrawn', carrying_values: true });
    // a value written under the new definition: its new member is accepted
    const c = await api.post('/entities', { type_guid: card, name: 'new', values: { grade: 'C' } });
    expect(c.status).toBe(201);
  });

  it('one refusal per value type: each value the new definition refuses is removed and reported with its entity and reason', async ({
    world,
  }) => {
    const { api, tenant } = await tenantApi(world);
    const person = await createType(api, 'Person');
    const robot = await createType(api, 'Robot');
    const [alice, bob] = await entitiesWith(api, person, [{}, {}]);
    const [r2] = await entitiesWith(api, robot, [{}]);
    const t = await createType(api, 'Sample');
    const declare = (body: Record<string, unknown>) =>
      api.post(`/entities/types/${t}/attributes`, { cardinality: 'single', ...body });
    await declare({ name: 's', value_type: 'string' });
    await declare({ name: 'n', value_type: 'number', cardinality: 'multi' });
    await declare({ name: 'b', value_type: 'boolean' });
    await declare({ name: 'd', value_type: 'date' });
    await declare({ name: 'j', value_type: 'json' });
    await declare({ name: 'r', value_type: 'entity_ref', cardinality: 'multi', allowed_ref_type: person });
    const kept = await entitiesWith(api, t, [
      { s: 'red', n: [5], b: true, d: '2026-01-31', j: { a: 1 }, r: [alice] },
      { s: 'blue', n: [6], b: false, d: '2026-02-01', j: [1, 2], r: [] },
    ]);
    const [refused] = await entitiesWith(api, t, [
      { s: 'green', n: [1, 2], b: true, d: '2026-03-01', j: 'text', r: [alice, bob] },
    ]);
    const document = doc([
      { name: 'Person', attributes: [] },
      { name: 'Robot', attributes: [] },
      {
        name: 'Sample',
        attributes: [
          // string: an enumeration now; green is not in it
          { name: 's', value_type: 'string', cardinality: 'single', allowed_values: ['red', 'blue'] },
          // number: multi to single; a list of two does not fit
          { name: 'n', value_type: 'number', cardinality: 'single' },
          // boolean to string: no boolean is a string
          { name: 'b', value_type: 'string', cardinality: 'single' },
          // date: single to multi keeps it as a list of one, within an enumeration that leaves out March
          {
            name: 'd',
            value_type: 'date',
            cardinality: 'multi',
            allowed_values: ['2026-01-31', '2026-02-01'],
          },
          // json to string: only json strings are strings
          { name: 'j', value_type: 'string', cardinality: 'single' },
          // entity_ref: multi to single keeps one reference, refuses two
          { name: 'r', value_type: 'entity_ref', cardinality: 'single', allowed_ref_type: 'Person' },
        ],
      },
    ]);
    const plan = await api.post('/entities/model/plan', document);
    const carry = Object.fromEntries(plan.body.DATA.steps.map((s: any) => [s.attribute, s.carry]));
    expect(carry).toEqual({
      s: { values: 2, refused: 1, complete: true },
      n: { values: 2, refused: 1, complete: true },
      b: { values: 0, refused: 3, complete: true },
      d: { values: 2, refused: 1, complete: true },
      j: { values: 1, refused: 2, complete: true },
      r: { values: 1, refused: 1, complete: true },
    });
    const applied = await api.post('/entities/model/apply', { document, allow_withdraw: true });
    expect(applied.body.DATA.stopped).toBeNull();
    expect(applied.body.DATA.carrying).toHaveLength(6);
    await carriesDone(world, tenant);
    const read = async (g: string) => (await api.get(`/entities/${g}`)).body.DATA.entity.values;
    expect(await read(kept[0] as string)).toMatchObject({ s: 'red', n: 5, d: ['2026-01-31'], r: alice });
    expect((await read(kept[0] as string)).b ?? null).toBeNull();
    expect(await read(kept[1] as string)).toMatchObject({ s: 'blue', n: 6, d: ['2026-02-01'] });
    const gone = await read(refused as string);
    expect(gone).toMatchObject({ j: 'text' });
    for (const name of ['s', 'n', 'b', 'd', 'r']) expect(gone[name] ?? null).toBeNull();
    // each refusal reported with its entity and reason, in the new definition's record
    const history = (await api.get(`/entities/types/${t}/history?page_size=100`)).body.DATA.changes;
    const carried = Object.fromEntries(
      history
        .filter((c: any) => c.kind === 'attribute_declared' && c.after.carried)
        .map((c: any) => [c.after.name, c.after.carried]),
    );
    expect(carried.s.refusals).toEqual([
      { entity: refused, reason: 'value_not_allowed', message: expect.any(String) },
    ]);
    expect(carried.n.refusals).toEqual([
      { entity: refused, reason: 'invalid_value', message: expect.any(String) },
    ]);
    expect(carried.b.refusals.map((r: any) => r.reason)).toEqual([
      'invalid_value',
      'invalid_value',
      'invalid_value',
    ]);
    expect(carried.j.refusals.map((r: any) => r.entity).sort()).toEqual([kept[0], kept[1]].sort());
    expect(carried.r.refusals).toEqual([
      { entity: refused, reason: 'invalid_value', message: expect.any(String) },
    ]);
    expect(carried.d).toEqual({
      kept: 2,
      refused: 1,
      refusals: [{ entity: refused, reason: 'value_not_allowed', message: expect.any(String) }],
    });
    // a reference to another type's entity is refused with ref_type_mismatch
    const m = await createType(api, 'Mixed');
    await api.post(`/entities/types/${m}/attributes`, {
      name: 'who',
      value_type: 'entity_ref',
      cardinality: 'single',
      allowed_ref_type: robot,
    });
    const [w] = await entitiesWith(api, m, [{ who: r2 }]);
    await api.post('/entities/model/apply', {
      document: doc([
        {
          name: 'Mixed',
          attributes: [
            { name: 'who', value_type: 'entity_ref', cardinality: 'single', allowed_ref_type: 'Person' },
          ],
        },
      ]),
      allow_withdraw: true,
    });
    await carriesDone(world, tenant);
    const mixed = (await api.get(`/entities/types/${m}/history?page_size=5`)).body.DATA.changes[0];
    expect(mixed.after.carried.refusals).toEqual([
      { entity: w, reason: 'ref_type_mismatch', message: expect.any(String) },
    ]);
  }, 60_000);
});

describe('a carry survives curation and a restart', () => {
  it('curation writes during the carry, and a restart in the middle of its pass: no value the new definition accepts is lost', async ({
    world,
  }) => {
    const { tenant, api } = await tenantApi(world);
    const t = await createType(api, 'Ticket');
    await api.post(`/entities/types/${t}/attributes`, {
      name: 'level',
      value_type: 'number',
      cardinality: 'single',
    });
    await api.post(`/entities/types/${t}/attributes`, {
      name: 'note',
      value_type: 'string',
      cardinality: 'single',
    });
    const guids = await entitiesWith(
      api,
      t,
      Array.from({ length: 60 }, (_, i) => ({ level: i, note: `n${i}` })),
    );
    const level = (await api.get(`/entities/types/${t}/attributes`)).body.DATA.attributes.find(
      (a: any) => a.name === 'level',
    ).guid;
    // An instance of our own takes the carry's lease before the apply, so that no other purger of the suite starts
    // it; it runs two batches and stops (an instance that dies mid-pass, its lease released as it goes); any other
    // instance's purger then resumes the pass where it ended.
    const db = createExecutor(world.driver);
    let batches = 0;
    const dies = createPurger({
      db,
      logger: pino({ level: 'silent' }),
      instanceId: 'dies',
      graceSeconds: 0,
      batchSize: 7,
      onProgress: () => {
        batches += 1;
        if (batches === 2) void dies.stop();
      },
      carry: { judge: judgeBatch, complete: (guid) => completeCarry(world.app.services, guid) },
    });
    expect(await db.write((run) => acquireLease(run, `purge-def:${level}`, 'dies', 60))).toBe(true);
    const document = doc([
      {
        name: 'Ticket',
        attributes: [
          { name: 'level', value_type: 'number', cardinality: 'multi' },
          { name: 'note', value_type: 'string', cardinality: 'single' },
        ],
      },
    ]);
    const applied = await api.post('/entities/model/apply', { document, allow_withdraw: true });
    expect(applied.body.DATA.carrying).toHaveLength(1);
    // curation goes on meanwhile: new tickets with their notes; a write naming the withdrawn attribute is refused
    const writes = (async () => {
      const made: string[] = [];
      for (let i = 0; i < 20; i += 1) {
        const res = await api.post('/entities', {
          type_guid: t,
          name: `late${i}`,
          values: { note: `late ${i}` },
        });
        expect(res.status).toBe(201);
        made.push(res.body.DATA.entity.guid);
        const named = await api.post('/entities', { type_guid: t, name: `bad${i}`, values: { level: 1 } });
        expect(named.status).toBeGreaterThanOrEqual(400);
        expect(named.status).toBeLessThan(500);
      }
      return made;
    })();
    const cut = await dies.runDailyJob({ tenant });
    expect([cut.pending, batches]).toEqual([1, 2]);
    world.app.services.purger.kick();
    const deadline = Date.now() + 30_000;
    while ((await db.read((run) => findWithdrawn(run, 0, tenant))).length > 0) {
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((r) => setTimeout(r, 50));
    }
    const late = await writes;
    expect(await valuesOf(api, guids, 'level')).toEqual(guids.map((_, i) => [i]));
    expect(await valuesOf(api, guids, 'note')).toEqual(guids.map((_, i) => `n${i}`));
    expect(await valuesOf(api, late, 'note')).toEqual(late.map((_, i) => `late ${i}`));
    const history = (await api.get(`/entities/types/${t}/history?page_size=5`)).body.DATA.changes;
    expect(history[0]).toMatchObject({ kind: 'attribute_declared', actor: 'release-bot' });
    // each value judged once: the two batches before the cut are not judged again after it
    expect(history[0].after.carried).toEqual({ kept: 60, refused: 0, refusals: [] });
  }, 60_000);
});

describe('a carry goes on as soon as its grace is over, and reports every value it refuses', () => {
  it('a purger started during the grace (a restart) wakes itself when it ends: the carry is done within seconds, with no kick or sweep; each refused value is logged with its entity and reason, past the 100 the record lists', async ({
    world,
  }) => {
    const { tenant, api } = await tenantApi(world);
    const card = await createType(api, 'Card');
    await api.post(`/entities/types/${card}/attributes`, grade(['A', 'B']));
    // 5 A (kept) and 105 B (refused: the new enumeration drops B)
    const guids = await entitiesWith(
      api,
      card,
      Array.from({ length: 110 }, (_, i) => ({ grade: i < 5 ? 'A' : 'B' })),
    );
    const gradeGuid = (await api.get(`/entities/types/${card}/attributes`)).body.DATA.attributes.find(
      (a: any) => a.name === 'grade',
    ).guid;
    // The process that withdrew it is gone (no purger of the suite may take the carry: its lease is the new
    // process's), and the new one starts during a grace of 2 s: kicked once, as the server does when ready.
    const db = createExecutor(world.driver);
    expect(await db.write((run) => acquireLease(run, `purge-def:${gradeGuid}`, 'restarted', 60))).toBe(true);
    const applied = await api.post('/entities/model/apply', {
      document: doc([{ name: 'Card', attributes: [grade(['A', 'C'])] }]),
      allow_withdraw: true,
    });
    expect(applied.body.DATA.carrying).toHaveLength(1);
    const withdrawnAt = Date.now();
    let ended = 0;
    const lines: { msg: string; refused?: { entity: string; reason: string }[] }[] = [];
    const restarted = createPurger({
      db,
      logger: pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) }),
      instanceId: 'restarted',
      graceSeconds: 2,
      batchSize: 40,
      carry: {
        judge: judgeBatch,
        complete: async (guid) => {
          ended = Date.now();
          return completeCarry(world.app.services, guid);
        },
      },
    });
    try {
      restarted.kick();
      const carrying = async () =>
        (await db.read((run) => findWithdrawn(run, 0, tenant))).filter((d) => d.carrying).length;
      // nothing is done before the grace is over
      await new Promise((r) => setTimeout(r, 1_000));
      expect(await carrying()).toBe(1);
      // then the carry ends by itself: nobody kicks the purger again
      const deadline = Date.now() + 10_000;
      while ((await carrying()) > 0) {
        expect(Date.now()).toBeLessThan(deadline);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(ended - withdrawnAt).toBeGreaterThanOrEqual(1_500);
      expect(ended - withdrawnAt).toBeLessThan(8_000);
      expect(await valuesOf(api, guids, 'grade')).toEqual(guids.map((_, i) => (i < 5 ? 'A' : null)));
      // the record counts every refusal and lists the first 100; the log reports each, with its entity and reason
      const record = (await api.get(`/entities/types/${card}/history?page_size=1`)).body.DATA.changes[0];
      expect(record.after.carried).toMatchObject({ kept: 5, refused: 105 });
      expect(record.after.carried.refusals).toHaveLength(100);
      const logged = lines.filter((l) => l.msg === 'carried values refused').flatMap((l) => l.refused ?? []);
      expect(logged.map((r) => r.entity).sort()).toEqual(guids.slice(5).sort());
      expect(new Set(logged.map((r) => r.reason))).toEqual(new Set(['value_not_allowed']));
    } finally {
      await restarted.stop();
    }
  }, 60_000);
});

describe('a carrying redeclaration holds its room', () => {
  it('at the 200 limit, a declaration made while a redeclaration carries its values is refused, so the carry still ends declared with every value kept', async ({
    world,
  }) => {
    const { tenant, api } = await tenantApi(world);
    const others = Array.from({ length: 199 }, (_, i) => ({
      name: `f${String(i).padStart(3, '0')}`,
      value_type: 'string',
      cardinality: 'single',
    }));
    const full = await api.post('/entities/model/apply', {
      document: doc([{ name: 'Wide', attributes: [grade(['A', 'B']), ...others] }]),
    });
    expect(full.body.DATA).toMatchObject({ matches: true });
    const typeGuid = (await api.get('/entities/types/by-name/Wide')).body.DATA.entity_type.guid as string;
    const guids = await entitiesWith(
      api,
      typeGuid,
      Array.from({ length: 6 }, (_, i) => ({ grade: i % 2 ? 'A' : 'B' })),
    );
    const gradeGuid = (await api.get(`/entities/types/${typeGuid}/attributes`)).body.DATA.attributes.find(
      (a: any) => a.name === 'grade',
    ).guid;
    // Hold the carry: an instance of our own takes its lease, so no purger of the suite ends it meanwhile.
    const db = createExecutor(world.driver);
    expect(await db.write((run) => acquireLease(run, `purge-def:${gradeGuid}`, 'holder', 60))).toBe(true);
    const widened = await api.post('/entities/model/apply', {
      document: doc([
        { name: 'Wide', attributes: [{ ...grade(['A', 'B', 'C']), required: true }, ...others] },
      ]),
      allow_withdraw: true,
    });
    expect(widened.body.DATA.carrying.map((s: any) => s.attribute)).toEqual(['grade']);
    // 199 live and one carrying: the room of the 200th is the carry's
    const extra = await api.post(`/entities/types/${typeGuid}/attributes`, {
      name: 'extra',
      value_type: 'string',
      cardinality: 'single',
    });
    expect([extra.status, extra.body.DATA.reason]).toEqual([400, 'too_many_attribute_defs']);
    expect(extra.body.MESSAGE).toContain('1 being redeclared');
    await db.write((run) => releaseLease(run, `purge-def:${gradeGuid}`, 'holder'));
    await carriesDone(world, tenant);
    expect(await valuesOf(api, guids, 'grade')).toEqual(guids.map((_, i) => (i % 2 ? 'A' : 'B')));
    const listed = (await api.get(`/entities/types/${typeGuid}/attributes`)).body.DATA.attributes;
    expect(listed.find((a: any) => a.name === 'grade').allowed_values).toEqual(['A', 'B', 'C']);
    expect(listed.filter((a: any) => a.owner_type !== null)).toHaveLength(200);
  }, 60_000);
});

describe('X-Change-Reason: why a change was made, recorded with it', () => {
  it('REST header and GraphQL argument recorded; bad ones refused 400 invalid_change_reason with nothing written', async ({
    world,
  }) => {
    const { api, tenant } = await tenantApi(world);
    const created = await api.post(
      '/entities/types',
      { name: 'Why' },
      { 'x-change-reason': 'JIRA-42: track why' },
    );
    const guid = created.body.DATA.entity_type.guid;
    const gql = graphqlClient(world.app, await tokenFor(tenant, { sub: 'release-bot' }));
    await gql.request(
      'mutation($g: ID!) { declareAttribute(typeGuid: $g, input: {name: "x", valueType: "string", cardinality: "single"}, reason: "  from the UI  ") { attribute { name } } }' as never,
      { g: guid } as never,
    );
    const history = (await api.get(`/entities/types/${guid}/history`)).body.DATA.changes;
    expect(history.map((c: any) => [c.kind, c.reason])).toEqual([
      ['attribute_declared', 'from the UI'],
      ['type_created', 'JIRA-42: track why'],
    ]);
    const before = await snapshot(api);
    for (const bad of ['', '   ', 'x'.repeat(501), 'tab\there', 'é accents']) {
      const res = await api.post(
        `/entities/types/${guid}/attributes`,
        { name: 'y', value_type: 'string', cardinality: 'single' },
        { 'x-change-reason': bad },
      );
      expect([res.status, res.body.DATA.reason], JSON.stringify(bad)).toEqual([400, 'invalid_change_reason']);
    }
    for (const bad of ['', 'x'.repeat(501), 'a\u0007b']) {
      expect(
        await refusalOf(
          gql.request(
            'mutation($g: ID!, $r: String) { renameEntityType(guid: $g, name: "Why Not", reason: $r) { name } }' as never,
            { g: guid, r: bad } as never,
          ),
        ),
      ).toBe('invalid_change_reason');
    }
    expect(await snapshot(api)).toEqual(before);
  });

  it("the typed client's writes take a reason, recorded with each change", async ({ world }) => {
    const { api, tenant } = await tenantApi(world);
    const client = graphqlClient(world.app, await tokenFor(tenant, { sub: 'ui' }));
    const made = await client.createEntityType('Typed', { reason: 'r1 create' });
    const guid = made.entityType.guid;
    await client.declareAttribute(
      guid,
      { name: 'x', valueType: 'string', cardinality: 'single' },
      { reason: 'r2 declare' },
    );
    await client.withdrawAttribute(guid, 'x', { reason: 'r3 withdraw' });
    await client.renameEntityType(guid, 'Typed Two', { reason: 'r4 rename' });
    await client.releaseFormerName(guid, 'Typed', { reason: 'r5 release' });
    await client.deleteEntityType(guid, { reason: 'r6 delete' });
    const history = (await api.get(`/entities/types/${guid}/history?page_size=10`)).body.DATA.changes;
    expect(history.map((c: any) => [c.kind, c.reason, c.actor])).toEqual([
      ['type_deleted', 'r6 delete', 'ui'],
      ['type_name_released', 'r5 release', 'ui'],
      ['type_renamed', 'r4 rename', 'ui'],
      ['attribute_withdrawn', 'r3 withdraw', 'ui'],
      ['attribute_declared', 'r2 declare', 'ui'],
      ['type_created', 'r1 create', 'ui'],
    ]);
  });
});
