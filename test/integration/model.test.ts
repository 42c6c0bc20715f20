// Issue #13, parts 2 and 3 (server side): the tenant's metamodel as one document (export, its JSON Schema), and the
// plan that says what applying a document would change.
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect } from 'vitest';
import { countAttributeData } from '../../src/db/attributes.js';
import { MAX_ATTRIBUTE_DEFS } from '../../src/model/limits.js';
import {
  GRAPHQL_PLAN_MAX_DOCUMENT_BYTES,
  MODEL_FORMAT,
  MODEL_MAX_DEFINITIONS,
  MODEL_MAX_ROW_BYTES,
  PLAN_MAX_IMPACTS,
  PLAN_MAX_REFERENTS,
} from '../../src/model/plans.js';
import { it } from '../fixtures.js';
import {
  createType,
  fingerprint,
  graphqlClient,
  newTenant,
  refusalOf,
  restClient,
  type TestWorld,
  tokenFor,
} from '../helpers.js';

type Api = ReturnType<typeof restClient>;

async function tenantApi(world: TestWorld) {
  const tenant = newTenant();
  return { tenant, api: restClient(world.app, await tokenFor(tenant)) };
}

const exportOf = async (api: Api) => {
  const res = await api.get('/entities/model');
  expect(res.status).toBe(200);
  return res.body.DATA.model;
};

const planOf = async (api: Api, document: unknown) => {
  const res = await api.post('/entities/model/plan', document);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.DATA as { steps: any[]; unchanged: { types: number; attributes: number } };
};

/** A tenant with user types, references between them, every kind of definition, and one on a system type. */
async function richTenant(api: Api) {
  const person = await createType(api, 'Person');
  const report = await createType(api, 'Report');
  const declare = (guid: string, body: Record<string, unknown>) =>
    api.post(`/entities/types/${guid}/attributes`, body).then((r) => expect(r.status).toBe(201));
  await declare(report, {
    name: 'Grade',
    value_type: 'string',
    cardinality: 'single',
    allowed_values: ['A', 'B'],
    default_value: 'A',
    required: true,
  });
  await declare(report, {
    name: 'owner',
    value_type: 'entity_ref',
    cardinality: 'single',
    allowed_ref_type: person,
    filterable: true,
  });
  await declare(report, { name: 'scores', value_type: 'number', cardinality: 'multi' });
  await declare(person, { name: 'profile', value_type: 'json', cardinality: 'single' });
  const table = (await api.post('/entities/types', { name: 'table' })).body.DATA.entity_type.guid;
  await declare(table, {
    name: 'steward',
    value_type: 'entity_ref',
    cardinality: 'multi',
    allowed_ref_type: person,
  });
  await createType(api, 'Empty');
  return { person, report, table };
}

describe('export: GET /entities/model', () => {
  it('lists the user-defined types and any type with declared definitions, by name, definitions by name, references by name', async ({
    world,
  }) => {
    const { api } = await tenantApi(world);
    await richTenant(api);
    expect(await exportOf(api)).toEqual({
      format: MODEL_FORMAT,
      types: [
        { name: 'Empty', attributes: [] },
        { name: 'Person', attributes: [{ name: 'profile', value_type: 'json', cardinality: 'single' }] },
        {
          name: 'Report',
          attributes: [
            {
              name: 'Grade',
              value_type: 'string',
              cardinality: 'single',
              allowed_values: ['A', 'B'],
              required: true,
              default_value: 'A',
            },
            {
              name: 'owner',
              value_type: 'entity_ref',
              cardinality: 'single',
              allowed_ref_type: 'Person',
              filterable: true,
            },
            { name: 'scores', value_type: 'number', cardinality: 'multi' },
          ],
        },
        {
          name: 'table',
          attributes: [
            { name: 'steward', value_type: 'entity_ref', cardinality: 'multi', allowed_ref_type: 'Person' },
          ],
        },
      ],
    });
  });

  it('a new tenant exports no types; the document validates against /schemas/metamodel.json (public)', async ({
    world,
  }) => {
    const { api } = await tenantApi(world);
    expect(await exportOf(api)).toEqual({ format: MODEL_FORMAT, types: [] });
    const rich = await tenantApi(world);
    await richTenant(rich.api);
    const res = await world.app.inject({ method: 'GET', url: '/schemas/metamodel.json' });
    expect(res.statusCode).toBe(200);
    const validate = new Ajv2020({ strict: false }).compile(res.json());
    const document = await exportOf(rich.api);
    expect(validate(document), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ ...document, format: 'other' })).toBe(false);
    expect(
      validate({
        format: MODEL_FORMAT,
        types: [{ name: 'x', attributes: [{ name: 'a', value_type: 'text' }] }],
      }),
    ).toBe(false);
  });

  it('withdrawn definitions are not exported; a renamed type is exported under its current name', async ({
    world,
  }) => {
    const { api } = await tenantApi(world);
    const guid = await createType(api, 'Old');
    await api.post(`/entities/types/${guid}/attributes`, {
      name: 'gone',
      value_type: 'date',
      cardinality: 'single',
    });
    await api.delete(`/entities/attributes/${guid}/gone`);
    await api.patch(`/entities/types/${guid}`, { name: 'New' });
    expect((await exportOf(api)).types).toEqual([{ name: 'New', attributes: [] }]);
  });

  it('a model past 6 MiB of enumerations and defaults is refused with model_too_large before it is read', async ({
    world,
  }) => {
    const { api } = await tenantApi(world);
    const big = Array.from({ length: 1000 }, (_, i) => `${String(i).padStart(4, '0')}${'v'.repeat(1010)}`);
    const types = [await createType(api, 'B1'), await createType(api, 'B2')];
    for (let i = 0; i < 7; i += 1) {
      const res = await api.post(`/entities/types/${types[i % 2]}/attributes`, {
        name: `e${i}`,
        value_type: 'string',
        cardinality: 'single',
        allowed_values: big,
      });
      expect(res.status).toBe(201);
      const exported = await api.get('/entities/model');
      // 6 enumerations of 1,015,999 characters fit in 6 MiB (6,291,456); the seventh does not
      if (i < 6) expect(exported.status).toBe(200);
      else expect([exported.status, exported.body.DATA.reason]).toEqual([400, 'model_too_large']);
    }
  }, 60_000);
});

describe('export bounds', () => {
  it(`more than ${MODEL_MAX_DEFINITIONS.toLocaleString('en-US')} live definitions: model_too_large; at the bound, exported`, async ({
    world,
  }) => {
    const { tenant, api } = await tenantApi(world);
    // 251 types of 200 definitions, written straight in the database (50,200 declarations would take minutes)
    await world.driver.executeQuery(
      `UNWIND range(0, 250) AS i
       CREATE (t:EntityType {tenant: $tenant, guid: $tenant + '-t' + i, name: 'T' + i, name_key: 't' + right('00' + i, 3),
                             origin: 'user_defined', catalog_level: true})
       WITH t
       UNWIND range(0, 199) AS j
       CREATE (t)-[:HAS_ATTRIBUTE]->(:AttributeDefinition {tenant: $tenant, owner_guid: t.guid, guid: t.guid + '-a' + j,
         name: 'a' + j, name_key: 'a' + j, origin: 'user_defined', state: 'live', value_type: 'string',
         cardinality: 'single', required: false, filterable: false, json_utf8: 0, default_utf8: 0})`,
      { tenant },
    );
    const over = await api.get('/entities/model');
    expect([over.status, over.body.DATA.reason]).toEqual([400, 'model_too_large']);
    expect(over.body.MESSAGE).toContain('50,000 definitions');
    await world.driver.executeQuery(
      `MATCH (a:AttributeDefinition {tenant: $tenant, owner_guid: $guid}) DETACH DELETE a`,
      { tenant, guid: `${tenant}-t250` },
    );
    const at = await exportOf(api);
    expect(at.types).toHaveLength(251);
    expect(at.types.reduce((n: number, t: { attributes: unknown[] }) => n + t.attributes.length, 0)).toBe(
      50_000,
    );
  }, 120_000);
});

describe('plan: POST /entities/model/plan', () => {
  it(`counts the impact of the first ${PLAN_MAX_IMPACTS} withdrawals; later ones carry impact null`, async ({
    world,
  }) => {
    const { api } = await tenantApi(world);
    const guid = await createType(api, 'Many');
    for (let i = 0; i <= PLAN_MAX_IMPACTS; i += 1) {
      await api.post(`/entities/types/${guid}/attributes`, {
        name: `w${String(i).padStart(2, '0')}`,
        value_type: 'number',
        cardinality: 'single',
      });
    }
    const plan = await planOf(api, { format: MODEL_FORMAT, types: [{ name: 'Many', attributes: [] }] });
    expect(plan.steps).toHaveLength(PLAN_MAX_IMPACTS + 1);
    expect(plan.steps.filter((s) => s.impact !== null)).toHaveLength(PLAN_MAX_IMPACTS);
    expect(plan.steps.at(-1)).toMatchObject({
      action: 'withdraw_attribute',
      attribute: `w${PLAN_MAX_IMPACTS}`,
      impact: null,
    });
  });

  it('export with former_names writes renamed_from: planned on a tenant holding the old name, a rename, not a second type', async ({
    world,
  }) => {
    const staging = await tenantApi(world);
    const prod = await tenantApi(world);
    for (const { api } of [staging, prod]) {
      const guid = await createType(api, 'Metric');
      await api.post(`/entities/types/${guid}/attributes`, {
        name: 'unit',
        value_type: 'string',
        cardinality: 'single',
      });
    }
    const metric = (await staging.api.get('/entities/types/by-name/Metric')).body.DATA.entity_type.guid;
    await staging.api.patch(`/entities/types/${metric}`, { name: 'Measure' });
    await staging.api.patch(`/entities/types/${metric}`, { name: 'KPI' });
    expect((await exportOf(staging.api)).types[0]).toEqual({
      name: 'KPI',
      attributes: [{ name: 'unit', value_type: 'string', cardinality: 'single' }],
    });
    const withNames = (await staging.api.get('/entities/model?former_names=true')).body.DATA.model;
    expect(withNames.types[0]).toMatchObject({ name: 'KPI', renamed_from: ['Measure', 'Metric'] });
    // production still calls it Metric (the name it was created under resolves to it): the plan renames
    const plan = await planOf(prod.api, withNames);
    expect(plan.steps.map((s) => [s.action, s.type, s.from ?? null])).toEqual([
      ['rename_type', 'KPI', 'Metric'],
    ]);
    const gql = graphqlClient(world.app, await tokenFor(staging.tenant));
    const viaGql = (await gql.request('{ model(formerNames: true) }' as never)) as {
      model: { types: unknown[] };
    };
    expect(viaGql.model).toEqual(withNames);
  });

  it('a type the document creates with the very definitions of a type it does not list: the step says it looks like a rename', async ({
    world,
  }) => {
    const { api } = await tenantApi(world);
    const guid = await createType(api, 'Metric');
    for (const name of ['unit', 'Scale']) {
      await api.post(`/entities/types/${guid}/attributes`, {
        name,
        value_type: 'string',
        cardinality: 'single',
      });
    }
    const spec = (name: string) => ({ name, value_type: 'string', cardinality: 'single' });
    const plan = await planOf(api, {
      format: MODEL_FORMAT,
      types: [
        { name: 'KPI', attributes: [spec('scale'), spec('unit')] },
        { name: 'Other', attributes: [spec('unit')] },
      ],
    });
    expect(plan.steps.filter((s) => s.action === 'create_type')).toEqual([
      { action: 'create_type', type: 'KPI', type_guid: null, looks_like_rename_of: 'Metric' },
      { action: 'create_type', type: 'Other', type_guid: null },
    ]);
  });

  it('a type listed without `attributes` leaves its definitions alone; `attributes: []` withdraws them; an empty `attributes:` is refused', async ({
    world,
  }) => {
    const { api } = await tenantApi(world);
    const guid = await createType(api, 'Kept');
    await api.post(`/entities/types/${guid}/attributes`, {
      name: 'a',
      value_type: 'number',
      cardinality: 'single',
    });
    const untouched = await planOf(api, { format: MODEL_FORMAT, types: [{ name: 'Kept' }] });
    expect(untouched.steps).toEqual([]);
    expect(untouched.unchanged).toEqual({ types: 1, attributes: 0 });
    // not managed, but still renamed or created as the document says
    const renamed = await planOf(api, {
      format: MODEL_FORMAT,
      types: [{ name: 'Kept Too', renamed_from: 'Kept' }],
    });
    expect(renamed.steps.map((s) => s.action)).toEqual(['rename_type']);
    const none = await planOf(api, { format: MODEL_FORMAT, types: [{ name: 'Kept', attributes: [] }] });
    expect(none.steps.map((s) => [s.action, s.attribute])).toEqual([['withdraw_attribute', 'a']]);
    const empty = await api.post('/entities/model/plan', {
      format: MODEL_FORMAT,
      types: [{ name: 'Kept', attributes: null }],
    });
    expect([empty.status, empty.body.DATA.reason]).toEqual([400, 'invalid_model']);
    expect(empty.body.MESSAGE).toContain('attributes: []');
  });

  it('the export of a tenant planned on that tenant: no steps; on an empty tenant: every type and definition', async ({
    world,
  }) => {
    const { api, tenant } = await tenantApi(world);
    await richTenant(api);
    const document = await exportOf(api);
    expect(await planOf(api, document)).toEqual({
      tenant,
      based_on: expect.any(String),
      steps: [],
      unchanged: { types: 4, attributes: 5 },
      // (the export names every type an export lists: nothing is left out)
      drift: { types: [], unmanaged: [], more: false },
      redeclaring: [],
    });

    const empty = await tenantApi(world);
    const plan = await planOf(empty.api, document);
    expect(plan.unchanged).toEqual({ types: 1, attributes: 0 }); // table exists everywhere
    expect(plan.steps.map((s) => [s.action, s.type, s.attribute ?? null])).toEqual([
      ['create_type', 'Empty', null],
      ['create_type', 'Person', null],
      ['create_type', 'Report', null],
      ['declare_attribute', 'Person', 'profile'],
      ['declare_attribute', 'Report', 'Grade'],
      ['declare_attribute', 'Report', 'owner'],
      ['declare_attribute', 'Report', 'scores'],
      ['declare_attribute', 'table', 'steward'],
    ]);
    expect(plan.steps.find((s) => s.attribute === 'owner')).toMatchObject({
      type_guid: null,
      spec: { allowed_ref_type: 'Person', filterable: true },
    });
    expect(plan.steps.find((s) => s.attribute === 'steward')?.type_guid).toEqual(expect.any(String));
    // planning writes nothing
    expect(await exportOf(empty.api)).toEqual({ format: MODEL_FORMAT, types: [] });
  });

  it('withdrawals with their impact, changed definitions to redeclare, renames, and blocked steps', async ({
    world,
  }) => {
    const { api } = await tenantApi(world);
    const { report, person } = await richTenant(api);
    const e1 = await api.post('/entities', { type_guid: report, name: 'r1', values: { scores: [1, 2, 3] } });
    expect(e1.status).toBe(201);
    await api.post(`/entities/types/${person}/attributes`, {
      name: 'nick',
      value_type: 'string',
      cardinality: 'single',
    });
    await api.delete(`/entities/attributes/${person}/nick`);
    await api.patch(`/entities/types/${person}`, { name: 'Human' });
    const document = {
      format: MODEL_FORMAT,
      types: [
        // Person was renamed to Human: the document names it back (its name resolves to it)
        {
          name: 'Person',
          attributes: [
            { name: 'profile', value_type: 'json', cardinality: 'single' },
            { name: 'nick', value_type: 'string', cardinality: 'single' },
          ],
        },
        {
          name: 'Report Card',
          renamed_from: 'Report',
          attributes: [
            {
              name: 'grade',
              value_type: 'string',
              cardinality: 'single',
              allowed_values: ['A', 'B'],
              required: true,
              default_value: 'A',
            },
            {
              name: 'owner',
              value_type: 'entity_ref',
              cardinality: 'single',
              allowed_ref_type: 'person',
              filterable: true,
            },
            {
              name: 'notes',
              value_type: 'string',
              cardinality: 'single',
              allowed_values: ['x'],
              default_value: 'x',
            },
            { name: 'link', value_type: 'entity_ref', cardinality: 'single', allowed_ref_type: 'Nowhere' },
          ],
        },
        { name: 'Dashboard', attributes: [] },
      ],
    };
    const plan = await planOf(api, document);
    expect(
      plan.steps.map((s) => [s.action, s.type, s.attribute ?? s.from ?? null, s.blocked?.reason ?? null]),
    ).toEqual([
      ['rename_type', 'Person', 'Human', null],
      ['rename_type', 'Report Card', 'Report', null],
      ['create_type', 'Dashboard', null, 'type_instances_managed'],
      ['withdraw_attribute', 'Report Card', 'scores', null],
      ['declare_attribute', 'Person', 'nick', 'attribute_def_withdrawn'],
      ['declare_attribute', 'Report Card', 'notes', null],
      ['declare_attribute', 'Report Card', 'link', 'unknown_entity_type'],
    ]);
    expect(plan.steps[3]).toMatchObject({
      type_guid: report,
      current: { name: 'scores', value_type: 'number', cardinality: 'multi' },
      impact: { instances: 1, values: 3, complete: true },
    });
    expect(plan.unchanged).toEqual({ types: 0, attributes: 3 });

    // a definition whose specification differs is to be withdrawn and declared again
    const changed = {
      format: MODEL_FORMAT,
      types: [
        { name: 'Human', attributes: [{ name: 'profile', value_type: 'string', cardinality: 'single' }] },
      ],
    };
    const redeclare = await planOf(api, changed);
    expect(redeclare.steps).toEqual([
      {
        action: 'redeclare_attribute',
        type: 'Human',
        type_guid: person,
        attribute: 'profile',
        spec: { name: 'profile', value_type: 'string', cardinality: 'single' },
        current: { name: 'profile', value_type: 'json', cardinality: 'single' },
        changes: [{ field: 'value_type', from: 'json', to: 'string' }],
        impact: { instances: 0, values: 0, complete: true },
        carry: { values: 0, refused: 0, complete: true },
      },
    ]);
  });

  it('a widened enumeration: the step says which values it adds and removes, and summarises the live definition', async ({
    world,
  }) => {
    const { api } = await tenantApi(world);
    const guid = await createType(api, 'Card');
    const long = 'x'.repeat(300);
    await api.post(`/entities/types/${guid}/attributes`, {
      name: 'grade',
      value_type: 'string',
      cardinality: 'single',
      allowed_values: ['A', 'B', long],
      default_value: long,
    });
    const plan = await planOf(api, {
      format: MODEL_FORMAT,
      types: [
        {
          name: 'Card',
          attributes: [
            {
              name: 'grade',
              value_type: 'string',
              cardinality: 'single',
              allowed_values: ['A', 'B', 'C'],
              default_value: 'A',
              required: true,
            },
          ],
        },
      ],
    });
    expect(plan.steps).toHaveLength(1);
    expect(plan.steps[0].current).toEqual({
      name: 'grade',
      value_type: 'string',
      cardinality: 'single',
      allowed_values_count: 3,
      default_value_chars: 302,
    });
    expect(plan.steps[0].changes).toEqual([
      { field: 'allowed_values', added_count: 1, removed_count: 1, added: ['C'], removed: [long] },
      { field: 'required', from: false, to: true },
      { field: 'default_value', from_chars: 302, to: 'A' },
    ]);
  });
});

describe('plan bounds: what it reads is counted first, and its answer grows with the document, not the store', () => {
  it(`reference defaults naming more than ${PLAN_MAX_REFERENTS.toLocaleString('en-US')} distinct entities: model_too_large; at the bound, each checked`, async ({
    world,
  }) => {
    const { api } = await tenantApi(world);
    await createType(api, 'Person');
    const guid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
    // a multi reference default holds at most 1,000 entities: one definition per thousand
    const document = (entities: number) => ({
      format: MODEL_FORMAT,
      types: [
        {
          name: 'Deal',
          attributes: Array.from({ length: Math.ceil(entities / 1000) }, (_, d) => ({
            name: `r${d}`,
            value_type: 'entity_ref',
            cardinality: 'multi',
            allowed_ref_type: 'Person',
            default_value: Array.from({ length: Math.min(1000, entities - d * 1000) }, (_, i) =>
              guid(d * 1000 + i),
            ),
          })),
        },
      ],
    });
    // one over; and one over counted once, however many definitions name it
    const over = await api.post('/entities/model/plan', document(PLAN_MAX_REFERENTS + 1));
    expect([over.status, over.body.DATA.reason]).toEqual([400, 'model_too_large']);
    const repeated = document(PLAN_MAX_REFERENTS);
    repeated.types[0]!.attributes.push({ ...repeated.types[0]!.attributes[0]!, name: 'again' });
    expect((await api.post('/entities/model/plan', repeated)).status).toBe(200);
    expect([over.status, over.body.DATA.reason]).toEqual([400, 'model_too_large']);
    expect(over.body.MESSAGE).toContain(PLAN_MAX_REFERENTS.toLocaleString('en-US'));
    const plan = await planOf(api, document(PLAN_MAX_REFERENTS));
    expect(
      plan.steps.filter((s: any) => s.action === 'declare_attribute').map((s: any) => s.blocked?.reason),
    ).toEqual(Array.from({ length: PLAN_MAX_REFERENTS / 1000 }, () => 'referent_not_found'));
  });

  it('types naming more than 6 MiB of enumerations and defaults: model_too_large before they are read; REST and GraphQL', async ({
    world,
  }) => {
    const { tenant, api } = await tenantApi(world);
    const big = Array.from({ length: 1000 }, (_, i) => `${String(i).padStart(4, '0')}${'v'.repeat(1010)}`);
    const types = [await createType(api, 'P1'), await createType(api, 'P2')];
    for (let i = 0; i < 7; i += 1) {
      const res = await api.post(`/entities/types/${types[i % 2]}/attributes`, {
        name: `e${i}`,
        value_type: 'string',
        cardinality: 'single',
        allowed_values: big,
      });
      expect(res.status).toBe(201);
    }
    // a 100-byte document naming both types: the plan would read 7 MB
    const document = { format: MODEL_FORMAT, types: [{ name: 'P1' }, { name: 'P2' }] };
    const over = await api.post('/entities/model/plan', document);
    expect([over.status, over.body.DATA.reason]).toEqual([400, 'model_too_large']);
    expect(over.body.MESSAGE).toContain('a plan reads at most 6,291,456');
    const gql = graphqlClient(world.app, await tokenFor(tenant));
    expect(
      await refusalOf(
        gql.request(
          'query($d: JSON!) { modelPlan(document: $d) { unchanged { types } } }' as never,
          {
            d: document,
          } as never,
        ),
      ),
    ).toBe('model_too_large');
    // one of the two types is within the bound: its plan is read, and its withdrawal steps are small
    const one = await api.post('/entities/model/plan', {
      format: MODEL_FORMAT,
      types: [{ name: 'P2', attributes: [] }],
    });
    expect(one.status).toBe(200);
    expect(
      one.body.DATA.steps.map(
        (s: { current: { allowed_values_count: number } }) => s.current.allowed_values_count,
      ),
    ).toEqual([1000, 1000, 1000]);
    expect(JSON.stringify(one.body).length).toBeLessThan(4_000);
  }, 60_000);

  it(`a document of ${MODEL_MAX_DEFINITIONS.toLocaleString('en-US')} definitions is planned; one more: model_too_large before any is checked, plan and apply`, async ({
    world,
  }) => {
    const { tenant, api } = await tenantApi(world);
    await api.get('/entities/types?page_size=1'); // (the tenant set up: its system types)
    const before = await fingerprint(world.driver, tenant);
    const perType = MODEL_MAX_DEFINITIONS / 1000;
    const document = {
      format: MODEL_FORMAT,
      types: Array.from({ length: 1000 }, (_, t) => ({
        name: `Doc ${t}`,
        attributes: Array.from({ length: perType }, (_, a) => ({
          name: `a${a}`,
          value_type: 'json',
          cardinality: 'multi',
        })),
      })),
    };
    // at the bound: planned (every type created, every definition declared)
    const atBound = await api.post('/entities/model/plan', document);
    expect(atBound.status).toBe(200);
    expect(atBound.body.DATA.steps).toHaveLength(1000 + MODEL_MAX_DEFINITIONS);
    // one more: refused before any is checked
    document.types[0]?.attributes.push({ name: 'one_more', value_type: 'json', cardinality: 'multi' });
    const plan = await api.post('/entities/model/plan', document);
    expect([plan.status, plan.body.DATA.reason]).toEqual([400, 'model_too_large']);
    expect(plan.body.MESSAGE).toContain(
      `holds ${(MODEL_MAX_DEFINITIONS + 1).toLocaleString('en-US')} definitions`,
    );
    const apply = await api.post('/entities/model/apply', { document, allow_withdraw: false });
    expect([apply.status, apply.body.DATA.reason]).toEqual([400, 'model_too_large']);
    expect(await fingerprint(world.driver, tenant)).toEqual(before);
  }, 60_000);

  it('GraphQL: model and modelPlan each cost what they can read; two in one operation are refused before either runs', async ({
    world,
  }) => {
    const { tenant } = await tenantApi(world);
    const token = await tokenFor(tenant);
    const post = (query: string) =>
      world.app.inject({
        method: 'POST',
        url: '/graphql',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        payload: { query },
      });
    const doc = `{format: "${MODEL_FORMAT}", types: []}`;
    expect((await post('{ model }')).json().data).toEqual({ model: { format: MODEL_FORMAT, types: [] } });
    for (const query of [
      '{ a: model b: model }',
      `{ a: modelPlan(document: ${doc}) { unchanged { types } } b: modelPlan(document: ${doc}) { unchanged { types } } }`,
      `{ model p: modelPlan(document: ${doc}) { unchanged { types } } }`,
    ]) {
      expect((await post(query)).json().errors?.[0]?.extensions?.reason, query).toBe('query_too_costly');
    }
  });
});

describe('plan: POST /entities/model/plan (continued)', () => {
  it('a withdrawal dry run counts at most IMPACT_SCAN_MAX instances and says when it stopped', async ({
    world,
  }) => {
    const { tenant, api } = await tenantApi(world);
    const guid = await createType(api, 'Counted');
    await api.post(`/entities/types/${guid}/attributes`, {
      name: 'n',
      value_type: 'number',
      cardinality: 'single',
    });
    for (const i of [1, 2, 3]) {
      expect((await api.post('/entities', { type_guid: guid, name: `e${i}`, values: { n: i } })).status).toBe(
        201,
      );
    }
    const dry = await api.delete(`/entities/attributes/${guid}/n?dry_run=true`);
    expect(dry.body.DATA.impact).toEqual({ instances: 3, values: 3, complete: true });
    const counted = await world.app.services.db.read((run) =>
      countAttributeData(run, { tenant, typeGuid: guid, nameKey: 'n', multi: false, reference: false }, 2),
    );
    expect(counted).toEqual({ instances: 2, values: 2, complete: false });
  });

  it('a malformed document is refused with invalid_model, a declaration with the declare endpoint’s own reason, saying where', async ({
    world,
  }) => {
    const { api } = await tenantApi(world);
    const cases: [unknown, string, string][] = [
      // The router passes the body on as sent: the plan's own rules and reasons, as through GraphQL.
      [[], 'invalid_model', 'document'],
      [{}, 'invalid_model', 'format'],
      [{ types: [] }, 'invalid_model', 'format'],
      [{ format: MODEL_FORMAT }, 'invalid_model', 'types'],
      [{ format: MODEL_FORMAT, types: [], extra: 1 }, 'invalid_model', 'unknown field'],
      [{ $schema: false, format: MODEL_FORMAT, types: [] }, 'invalid_model', '$schema'],
      [{ format: MODEL_FORMAT, types: [{ name: 'a' }, { name: ' A ' }] }, 'invalid_model', 'types[1].name'],
      [{ format: MODEL_FORMAT, types: [{ name: '' }] }, 'empty_value', 'types[0].name'],
      [{ format: MODEL_FORMAT, types: [{ name: 'a', colour: 'red' }] }, 'invalid_model', 'types[0]'],
      [
        {
          format: MODEL_FORMAT,
          types: [{ name: 'a', attributes: [{ name: 'x', value_type: 'text', cardinality: 'single' }] }],
        },
        'unknown_value_type',
        'types[0].attributes[0]',
      ],
      [
        {
          format: MODEL_FORMAT,
          types: [
            {
              name: 'a',
              attributes: [{ name: 'x', value_type: 'string', cardinality: 'single', filterable: true }],
            },
          ],
        },
        'filterable_not_supported',
        'types[0].attributes[0]',
      ],
      [
        {
          format: MODEL_FORMAT,
          types: [
            {
              name: 'a',
              attributes: [
                { name: 'x', value_type: 'string', cardinality: 'single' },
                { name: 'X', value_type: 'number', cardinality: 'single' },
              ],
            },
          ],
        },
        'invalid_model',
        'types[0].attributes[1]',
      ],
      [
        { format: MODEL_FORMAT, types: Array.from({ length: 1001 }, (_, i) => ({ name: `t${i}` })) },
        'invalid_model',
        'more than 1000',
      ],
      [
        {
          format: MODEL_FORMAT,
          types: [
            {
              name: 'a',
              attributes: Array.from({ length: MAX_ATTRIBUTE_DEFS + 1 }, (_, i) => ({
                name: `x${i}`,
                value_type: 'string',
                cardinality: 'single',
              })),
            },
          ],
        },
        'too_many_attribute_defs',
        'types[0].attributes',
      ],
    ];
    for (const [document, reason, where] of cases) {
      const res = await api.post('/entities/model/plan', document);
      expect([res.status, res.body.DATA.reason], JSON.stringify(document).slice(0, 80)).toEqual([
        400,
        reason,
      ]);
      expect(res.body.MESSAGE).toContain(where);
    }
    const atLimit = {
      format: MODEL_FORMAT,
      types: Array.from({ length: 1000 }, (_, i) => ({ name: `t${i}` })),
    };
    expect((await planOf(api, atLimit)).steps).toHaveLength(1000);
  }, 60_000);
});

describe('GraphQL: modelPlan plans documents of what an operation reserves', () => {
  it(`at most ${GRAPHQL_PLAN_MAX_DOCUMENT_BYTES.toLocaleString('en-US')} bytes of document: past it, model_too_large before it is read; REST plans it`, async ({
    world,
  }) => {
    const { api } = await tenantApi(world);
    const token = await tokenFor(newTenant());
    // one enumeration of distinct values of up to 1,000 characters, the last one cut to the size wanted
    const documentOf = (bytes: number) => {
      const values: string[] = [];
      const doc = () => ({
        format: MODEL_FORMAT,
        types: [
          {
            name: 'Padded',
            attributes: [{ name: 'p', value_type: 'string', cardinality: 'single', allowed_values: values }],
          },
        ],
      });
      while (JSON.stringify(doc()).length + 1_004 <= bytes)
        values.push(`${values.length}:`.padEnd(1_000, 'x'));
      const room = bytes - JSON.stringify(doc()).length - 3;
      values.push(`${values.length}:`.padEnd(room, 'x'));
      expect(JSON.stringify(doc()).length).toBe(bytes);
      return doc();
    };
    const plan = async (document: unknown) =>
      (
        await world.app.inject({
          method: 'POST',
          url: '/graphql',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          payload: JSON.stringify({
            query: 'query($d: JSON!) { modelPlan(document: $d) { basedOn } }',
            variables: { d: document },
          }),
        })
      ).json();
    // (counted as its JSON text, each object and list a byte more: this one holds 6 of them)
    const at = await plan(documentOf(GRAPHQL_PLAN_MAX_DOCUMENT_BYTES - 6));
    expect(at.errors, JSON.stringify(at.errors)).toBeUndefined();
    const over = await plan(documentOf(GRAPHQL_PLAN_MAX_DOCUMENT_BYTES + 1));
    expect(over.errors[0].extensions.reason).toBe('model_too_large');
    expect(
      (await api.post('/entities/model/plan', documentOf(GRAPHQL_PLAN_MAX_DOCUMENT_BYTES + 1))).status,
    ).toBe(200);
  });
});

describe('GraphQL: model and modelPlan', () => {
  it('answer what REST answers (same resolvers), refusals with the same reasons', async ({ world }) => {
    const tenant = newTenant();
    const token = await tokenFor(tenant);
    const api = restClient(world.app, token);
    const gql = graphqlClient(world.app, token);
    await richTenant(api);
    const document = await exportOf(api);
    const viaGql = (await gql.request('{ model }' as never)) as { model: unknown };
    expect(viaGql.model).toEqual(document);
    const changed = { ...document, types: [...document.types, { name: 'Brand New', attributes: [] }] };
    const query = `query($d: JSON!) { modelPlan(document: $d) {
      steps { action type typeGuid from attribute spec refTypeGuid current changes impact { instances values complete } blocked { reason message } }
      unchanged { types attributes } } }`;
    const res = (await gql.request(query as never, { d: changed } as never)) as any;
    const rest = await planOf(api, changed);
    expect(res.modelPlan.unchanged).toEqual(rest.unchanged);
    expect(res.modelPlan.steps).toEqual([
      {
        action: 'create_type',
        type: 'Brand New',
        typeGuid: null,
        from: null,
        attribute: null,
        spec: null,
        refTypeGuid: null,
        current: null,
        changes: null,
        impact: null,
        blocked: null,
      },
    ]);
    expect(await refusalOf(gql.request(query as never, { d: { format: 'x', types: [] } } as never))).toBe(
      'invalid_model',
    );
  });
});

describe(`the rows of a model document: at most ${MODEL_MAX_ROW_BYTES.toLocaleString('en-US')} bytes beside its texts, names counted`, () => {
  /** 400 user types of 50 reference definitions each, written straight in the database, named `name(prefix)`. */
  async function namedModel(world: TestWorld, tenant: string, name: (prefix: string) => string) {
    await world.driver.executeQuery(
      `UNWIND range(0, 399) AS i
       WITH i, $tail AS tail
       CREATE (t:EntityType {tenant: $tenant, guid: $tenant + '-t' + i, name: 't' + right('00' + i, 3) + tail,
                             name_key: 't' + right('00' + i, 3) + tail, origin: 'user_defined', catalog_level: true})
       WITH t, tail
       UNWIND range(0, 49) AS j
       CREATE (t)-[:HAS_ATTRIBUTE]->(a:AttributeDefinition {tenant: $tenant, owner_guid: t.guid, guid: t.guid + '-a' + j,
         name: 'a' + right('0' + j, 2) + tail, name_key: 'a' + right('0' + j, 2) + tail, origin: 'user_defined',
         state: 'live', value_type: 'entity_ref', cardinality: 'single', required: false, filterable: false,
         json_utf8: 0, default_utf8: 0, allowed_ref_type: $tenant + '-t0'})`,
      { tenant, tail: name('t000').slice(4) },
    );
  }
  const long = (prefix: string) => prefix + 'x'.repeat(256 - prefix.length);
  const short = (prefix: string) => prefix;

  it('a model whose names take its rows past the bound is refused before it is read, by export and plan alike; with short names the same model is exported', async ({
    world,
  }) => {
    const { tenant, api } = await tenantApi(world);
    await namedModel(world, tenant, long);
    // 20,000 definitions: about 41 MB of rows with names of 256 characters (the referenced type's at 1 KB)
    const exported = await api.get('/entities/model');
    expect([exported.status, exported.body.DATA.reason]).toEqual([400, 'model_too_large']);
    expect(exported.body.MESSAGE).toContain('names and rows');
    const types = Array.from({ length: 400 }, (_, i) => ({
      name: long(`t${String(i).padStart(3, '0')}`),
      attributes: [],
    }));
    const planned = await api.post('/entities/model/plan', { format: MODEL_FORMAT, types });
    expect([planned.status, planned.body.DATA.reason]).toEqual([400, 'model_too_large']);
    expect(planned.body.MESSAGE).toContain('names and rows');

    const other = await tenantApi(world);
    await namedModel(world, other.tenant, short);
    const model = await exportOf(other.api);
    expect(model.types.filter((t: { attributes: unknown[] }) => t.attributes.length === 50)).toHaveLength(
      400,
    );
  }, 60_000);

  it("a plan whose steps repeat the document's long type names past the bound is refused, nothing planned", async ({
    world,
  }) => {
    const { tenant, api } = await tenantApi(world);
    // 250 types named with 256 four-byte characters, 200 short definitions each: a 3.5 MB document whose 50,000
    // declaration steps each repeat their type's kilobyte name (about 58 MB of steps)
    const typeName = (i: number) => `${String.fromCodePoint(0x20000 + i)}${'😀'.repeat(255)}`;
    const types = Array.from({ length: 250 }, (_, i) => ({
      name: typeName(i),
      attributes: Array.from({ length: 200 }, (_, j) => ({
        name: `a${j}`,
        value_type: 'string',
        cardinality: 'single',
      })),
    }));
    expect((await api.get('/entities/types?page_size=1')).status).toBe(200); // the tenant set up
    const before = await fingerprint(world.driver, tenant);
    const planned = await api.post('/entities/model/plan', { format: MODEL_FORMAT, types });
    expect([planned.status, planned.body.DATA.reason]).toEqual([400, 'model_too_large']);
    expect(planned.body.MESSAGE).toContain('steps take more than');
    const applied = await api.post('/entities/model/apply', { document: { format: MODEL_FORMAT, types } });
    expect([applied.status, applied.body.DATA.reason]).toEqual([400, 'model_too_large']);
    expect(await fingerprint(world.driver, tenant)).toEqual(before);
    // half of it is planned
    const half = await planOf(api, { format: MODEL_FORMAT, types: types.slice(0, 100) });
    expect(half.steps).toHaveLength(100 + 100 * 200);
  }, 120_000);
});

describe('drift: what the tenant has that the document does not mention', () => {
  it('types the document does not name, and types it lists without attributes, are reported (left alone); REST and GraphQL alike', async ({
    world,
  }) => {
    const tenant = newTenant();
    const token = await tokenFor(tenant);
    const api = restClient(world.app, token);
    const dataset = await createType(api, 'Dataset');
    await api.post(`/entities/types/${dataset}/attributes`, {
      name: 'rows',
      value_type: 'number',
      cardinality: 'single',
    });
    const team = await createType(api, 'Team');
    await api.post(`/entities/types/${team}/attributes`, {
      name: 'lead',
      value_type: 'string',
      cardinality: 'single',
    });
    await api.post(`/entities/types/${team}/attributes`, {
      name: 'size',
      value_type: 'number',
      cardinality: 'single',
    });
    const table = (await api.get('/entities/types/by-name/table')).body.DATA.entity_type.guid;
    await api.post(`/entities/types/${table}/attributes`, {
      name: 'owner',
      value_type: 'string',
      cardinality: 'single',
    });
    await createType(api, 'Empty');
    // "Data Set" replaces Dataset without renamed_from: a new type is planned, and Dataset is said to be left behind
    const document = {
      format: MODEL_FORMAT,
      types: [
        { name: 'Data Set', attributes: [{ name: 'rows', value_type: 'number', cardinality: 'single' }] },
        { name: 'Team' },
      ],
    };
    const plan = await planOf(api, document);
    expect(plan.steps.map((s) => [s.action, s.type, s.looks_like_rename_of ?? null])).toEqual([
      ['create_type', 'Data Set', 'Dataset'],
      ['declare_attribute', 'Data Set', null],
    ]);
    expect((plan as any).drift).toEqual({
      types: [
        { name: 'Dataset', type_guid: dataset, attributes: 1 },
        { name: 'Empty', type_guid: expect.any(String), attributes: 0 },
        { name: 'table', type_guid: table, attributes: 1 },
      ],
      unmanaged: [{ name: 'Team', type_guid: team, attributes: 2 }],
      more: false,
    });
    const gql = graphqlClient(world.app, token);
    const answer = await gql.request(
      'query($d: JSON!) { modelPlan(document: $d) { drift } }' as any,
      { d: document } as any,
    );
    expect((answer as any).modelPlan.drift).toEqual((plan as any).drift);
    // a type named by a former name is the type the document names: no drift
    await api.patch(`/entities/types/${dataset}`, { name: 'Datasets' });
    const renamed = await planOf(api, {
      format: MODEL_FORMAT,
      types: [
        { name: 'Dataset', attributes: [{ name: 'rows', value_type: 'number', cardinality: 'single' }] },
      ],
    });
    expect((renamed as any).drift.types.map((t: any) => t.name)).toEqual(['Empty', 'table', 'Team']);
  });
});
