// GET /entities/types/{guid}/attributes, the lifecycle of a definition (docs/api.md#lifecycle-of-a-definition), the
// withdraw endpoint and the purge.

import pino from 'pino';
import { describe, expect } from 'vitest';
import { createExecutor } from '../../src/db/executor.js';
import { acquireLease, findWithdrawn, purgeBatch, releaseLease, startPass } from '../../src/db/purge.js';
import { createPurger } from '../../src/jobs/purge.js';
import { itWith } from '../fixtures.js';
import {
  createType,
  newTenant,
  operatorToken,
  restClient,
  type TestWorld,
  tokenFor,
  typeGuidByName,
} from '../helpers.js';

const it = itWith({ PURGE_BATCH_SIZE: '4' });

async function setup(world: TestWorld) {
  const tenant = newTenant();
  const api = restClient(world.app, await tokenFor(tenant));
  const type = await createType(api, 'Dataset');
  const list = async () =>
    (await api.get(`/entities/types/${type}/attributes`)).body.DATA.attributes as any[];
  return { tenant, api, type, list };
}

const purgeNow = async (world: TestWorld, tenant: string) =>
  restClient(world.app, await operatorToken()).post('/admin/jobs/purge', { tenant });

describe('GET /entities/types/{guid}/attributes', () => {
  it('a new type lists exactly the five platform attributes, owner_type null, every field present', async ({
    world,
  }) => {
    const { api, list } = await setup(world);
    const attrs = await list();
    expect(attrs.map((a) => a.name)).toEqual(['domain', 'env', 'tags', 'classification', 'groups']);
    const refs: Record<string, [string, string]> = {
      domain: ['single', 'domain'],
      env: ['single', 'env'],
      tags: ['multi', 'tag'],
      classification: ['single', 'classification'],
      groups: ['multi', 'group'],
    };
    for (const a of attrs) {
      const [cardinality, refName] = refs[a.name]!;
      expect(a).toEqual({
        guid: expect.any(String),
        name: a.name,
        owner_type: null,
        value_type: 'entity_ref',
        cardinality,
        allowed_values: null,
        allowed_ref_type: await typeGuidByName(api, refName),
        required: false,
        default_value: null,
        filterable: true,
        origin: 'system',
        description: null,
        display_name: null,
        redeclaring: null,
      });
    }
  });

  it('the platform attributes are the same on every type, including system types and the root', async ({
    world,
  }) => {
    const { api, list } = await setup(world);
    const own = await list();
    for (const name of ['table', 'entity', 'tag']) {
      const guid = await typeGuidByName(api, name);
      expect((await api.get(`/entities/types/${guid}/attributes`)).body.DATA.attributes).toEqual(own);
    }
  });

  it('lists declared definitions after the platform ones, in name order', async ({ world }) => {
    const { api, type, list } = await setup(world);
    for (const name of ['zeta', 'Alpha']) {
      await api.post(`/entities/types/${type}/attributes`, {
        name,
        value_type: 'string',
        cardinality: 'single',
      });
    }
    const names = (await list()).map((a) => a.name);
    expect(names).toEqual(['domain', 'env', 'tags', 'classification', 'groups', 'Alpha', 'zeta']);
  });

  it('an unresolvable or foreign guid → unknown_entity_type (404)', async ({ world }) => {
    const { api } = await setup(world);
    const foreign = await createType(restClient(world.app, await tokenFor(newTenant())), 'Theirs');
    for (const guid of ['missing', foreign]) {
      const res = await api.get(`/entities/types/${guid}/attributes`);
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ STATUS: 'FAIL', DATA: { reason: 'unknown_entity_type' } });
    }
  });
});

describe('withdraw: DELETE /entities/attributes/{type_guid}/{name}', () => {
  it('moves a live definition to withdrawn (200); it disappears from the listing', async ({ world }) => {
    const { api, type, list } = await setup(world);
    await api.post(`/entities/types/${type}/attributes`, {
      name: 'Old',
      value_type: 'string',
      cardinality: 'single',
    });
    const res = await api.delete(`/entities/attributes/${type}/old`);
    expect(res.status).toBe(200);
    expect(res.body.DATA).toMatchObject({ withdrawn: true, attribute: { name: 'Old', state: 'withdrawn' } });
    expect((await list()).some((a) => a.name === 'Old')).toBe(false);
  });

  it('refusals: unknown name 404, already withdrawn 409, platform attribute 400, unknown type 404', async ({
    world,
  }) => {
    const { api, type } = await setup(world);
    await api.post(`/entities/types/${type}/attributes`, {
      name: 'x',
      value_type: 'string',
      cardinality: 'single',
    });
    expect((await api.delete(`/entities/attributes/${type}/nope`)).body.DATA.reason).toBe(
      'attribute_def_not_found',
    );
    expect((await api.delete(`/entities/attributes/${type}/x`)).status).toBe(200);
    const again = await api.delete(`/entities/attributes/${type}/x`);
    expect([again.status, again.body.DATA.reason]).toEqual([409, 'attribute_def_withdrawn']);
    const tags = await api.delete(`/entities/attributes/${type}/tags`);
    expect([tags.status, tags.body.DATA.reason]).toEqual([400, 'base_type_not_owner']);
    const unknown = await api.delete('/entities/attributes/missing/x');
    expect([unknown.status, unknown.body.DATA.reason]).toEqual([404, 'unknown_entity_type']);
    // An unknown type is answered as such before anything about the name, with or without dry_run.
    for (const url of [
      '/entities/attributes/missing/tags',
      '/entities/attributes/missing/tags?dry_run=true',
    ]) {
      const res = await api.delete(url);
      expect([url, res.status, res.body.DATA.reason]).toEqual([url, 404, 'unknown_entity_type']);
    }
    const dryTags = await api.delete(`/entities/attributes/${type}/tags?dry_run=true`);
    expect([dryTags.status, dryTags.body.DATA.reason]).toEqual([400, 'base_type_not_owner']);
  });

  it('?dry_run=true reports how many stored values and instances would be removed, and changes nothing', async ({
    world,
  }) => {
    const { api, type, list } = await setup(world);
    await api.post(`/entities/types/${type}/attributes`, {
      name: 'labels',
      value_type: 'string',
      cardinality: 'multi',
    });
    await api.post('/entities', { type_guid: type, name: 'a', values: { labels: ['x', 'y'] } });
    await api.post('/entities', { type_guid: type, name: 'b', values: { labels: ['z'] } });
    await api.post('/entities', { type_guid: type, name: 'c' });
    const dry = await api.delete(`/entities/attributes/${type}/labels?dry_run=true`);
    expect(dry.status).toBe(200);
    expect(dry.body.DATA).toMatchObject({ dry_run: true, impact: { instances: 2, values: 3 } });
    expect((await list()).some((a) => a.name === 'labels')).toBe(true);
  });
});

describe('live → withdrawn → removed → declared afresh, with stored values', () => {
  it('runs the whole cycle; values (properties and reference relationships) are gone before the name is free', async ({
    world,
  }) => {
    const { tenant, api, type, list } = await setup(world);
    const person = await createType(api, 'Person');
    await api.post(`/entities/types/${type}/attributes`, {
      name: 'score',
      value_type: 'number',
      cardinality: 'single',
    });
    await api.post(`/entities/types/${type}/attributes`, {
      name: 'owners',
      value_type: 'entity_ref',
      cardinality: 'multi',
      allowed_ref_type: person,
    });
    const people = [];
    for (const name of ['ann', 'bob'])
      people.push((await api.post('/entities', { type_guid: person, name })).body.DATA.entity.guid);
    const entities = [];
    for (let i = 0; i < 10; i++) {
      const res = await api.post('/entities', {
        type_guid: type,
        name: `d${i}`,
        values: { score: i, owners: people },
      });
      expect(res.status).toBe(201);
      entities.push(res.body.DATA.entity.guid);
    }
    const countData = async () => {
      const r = await world.driver.executeQuery(
        `MATCH (e:Entity {tenant: $tenant, type_guid: $type})
         OPTIONAL MATCH (e)-[r:REFERS_TO {attr: 'owners'}]->()
         RETURN count(DISTINCT CASE WHEN e['attr.score'] IS NOT NULL THEN e END) AS scores, count(r) AS refs`,
        { tenant, type },
      );
      return { scores: r.records[0]!.get('scores'), refs: r.records[0]!.get('refs') };
    };
    expect(await countData()).toEqual({ scores: 10, refs: 20 });

    // withdraw both; the name cannot be declared while the data is being removed
    expect((await api.delete(`/entities/attributes/${type}/score`)).status).toBe(200);
    expect((await api.delete(`/entities/attributes/${type}/owners`)).status).toBe(200);
    expect((await api.get(`/entities/${entities[0]}`)).body.DATA.entity.values).toEqual({});
    expect(
      (
        await api.post(`/entities/types/${type}/attributes`, {
          name: 'score',
          value_type: 'string',
          cardinality: 'single',
        })
      ).body.DATA.reason,
    ).toBe('attribute_def_withdrawn');

    // the background purge removes the data in batches of 4
    await world.app.services.purger.idle();
    expect(await countData()).toEqual({ scores: 0, refs: 0 });

    // the daily job removes the definitions whose data is gone
    const job = await purgeNow(world, tenant);
    expect(job.status).toBe(200);
    expect(job.body.DATA.removed.map((r: any) => r.name).sort(), JSON.stringify(job.body)).toEqual([
      'owners',
      'score',
    ]);
    const removed = await world.driver.executeQuery(
      'MATCH (a:AttributeDefinition {tenant: $tenant, owner_guid: $type}) RETURN count(a) AS n',
      { tenant, type },
    );
    expect(removed.records[0]!.get('n')).toBe(0);

    // declared afresh with another shape; old values do not come back
    const fresh = await api.post(`/entities/types/${type}/attributes`, {
      name: 'score',
      value_type: 'string',
      cardinality: 'single',
    });
    expect(fresh.status).toBe(201);
    expect((await api.get(`/entities/${entities[3]}`)).body.DATA.entity.values).toEqual({});
    expect((await list()).map((a) => a.name)).toContain('score');
  });

  it('a definition whose data is not yet fully removed stays withdrawn through the daily job', async ({
    world,
  }) => {
    const { tenant, api, type } = await setup(world);
    const executor = createExecutor(world.driver);
    await api.post(`/entities/types/${type}/attributes`, {
      name: 'n',
      value_type: 'number',
      cardinality: 'single',
    });
    for (let i = 0; i < 9; i++)
      await api.post('/entities', { type_guid: type, name: `e${i}`, values: { n: i } });
    // withdraw straight in the database so no background purge starts, then remove one batch only
    await world.driver.executeQuery(
      `MATCH (a:AttributeDefinition {tenant: $tenant, owner_guid: $type, name_key: 'n'})
       SET a.state = 'withdrawn', a.withdrawn_at = datetime(), a.purge_cursor = '', a.values_removed = 0`,
      { tenant, type },
    );
    const [def] = (await executor.read((run) => findWithdrawn(run, 0, tenant))).filter(
      (d) => d.owner_guid === type,
    );
    await executor.write((run) => startPass(run, def!.guid));
    const first = await executor.write((run) => purgeBatch(run, def!, '', 4));
    expect(first).toMatchObject({ scanned: 4, removed: 4 });
    // "restart": a new purger (another process) resumes from the stored cursor and finishes
    const purger = createPurger({
      db: executor,
      logger: pino({ level: 'silent' }),
      instanceId: 'restarted',
      graceSeconds: 0,
      batchSize: 4,
    });
    const report = await purger.runDailyJob({ tenant });
    expect(report.removed.map((r) => r.name)).toEqual(['n']);
    expect(report.removed[0]!.values_removed).toBe(9);
    expect(report.batches).toBe(2); // resumed after the 4 already removed: 4 + 1, not a fresh pass of 3 batches
    const left = await world.driver.executeQuery(
      `MATCH (e:Entity {tenant: $tenant, type_guid: $type}) WHERE e['attr.n'] IS NOT NULL RETURN count(e) AS n`,
      { tenant, type },
    );
    expect(left.records[0]!.get('n')).toBe(0);
  });

  it('a pass begun inside the grace period does not count: the definition stays withdrawn', async ({
    world,
  }) => {
    const { tenant, api, type } = await setup(world);
    const graceful = createPurger({
      db: createExecutor(world.driver),
      logger: pino({ level: 'silent' }),
      instanceId: 'graceful',
      graceSeconds: 3600,
    });
    await api.post(`/entities/types/${type}/attributes`, {
      name: 'g',
      value_type: 'string',
      cardinality: 'single',
    });
    await api.delete(`/entities/attributes/${type}/g`);
    const report = await graceful.runDailyJob({ tenant });
    expect(report.removed).toEqual([]);
    expect(report.pending).toBe(1);
    expect(
      (
        await api.post(`/entities/types/${type}/attributes`, {
          name: 'g',
          value_type: 'string',
          cardinality: 'single',
        })
      ).body.DATA.reason,
    ).toBe('attribute_def_withdrawn');
  });
});

describe('the purge lease, with several instances', () => {
  const lease = () => `purge-test:${newTenant()}`;
  const take = (world: TestWorld, name: string, holder: string, firing: string | null = null) =>
    createExecutor(world.driver).write((run) => acquireLease(run, name, holder, 60, firing));

  it('is taken by exactly one of many instances asking at once', async ({ world }) => {
    const name = lease();
    // An existing, free lease (the race that matters: no unique-index entry to serialise the askers).
    expect(await take(world, name, 'setup')).toBe(true);
    await createExecutor(world.driver).write((run) => releaseLease(run, name, 'setup'));
    const got = await Promise.all(Array.from({ length: 12 }, (_, i) => take(world, name, `instance-${i}`)));
    expect(got.filter(Boolean)).toHaveLength(1);
  });

  it('runs each scheduled firing once: an instance asking after the first run ended does not run it again', async ({
    world,
  }) => {
    const name = lease();
    const firing = '2026-11-23T03:00:00.000Z';
    expect(await take(world, name, 'a', firing)).toBe(true);
    await createExecutor(world.driver).write((run) => releaseLease(run, name, 'a'));
    expect(await take(world, name, 'b', firing)).toBe(false); // the lease is free, but the firing was run
    expect(await take(world, name, 'b', '2026-11-24T03:00:00.000Z')).toBe(true); // the next firing
    expect(await take(world, name, 'a')).toBe(false); // held by b
  });
});

describe('POST /admin/jobs/purge', () => {
  it('is for administrators of the default tenant and cross-tenant accounts only (403 not_authorized otherwise)', async ({
    world,
  }) => {
    const t = newTenant();
    for (const token of [
      await tokenFor(t),
      await tokenFor(t, { roles: ['admin'] }),
      await tokenFor('default'),
    ]) {
      const res = await restClient(world.app, token).post('/admin/jobs/purge', { tenant: t });
      expect(res.status).toBe(403);
      expect(res.body.DATA.reason).toBe('not_authorized');
    }
    const cross = await restClient(world.app, await tokenFor(t, { crossTenant: true })).post(
      '/admin/jobs/purge',
      { tenant: t },
    );
    expect(cross.status).toBe(200);
    expect(cross.body.DATA).toMatchObject({ removed: [], values_removed: 0 });
  });

  it('only one run at a time: a second run while the lease is held is refused with purge_already_running', async ({
    world,
  }) => {
    const t = newTenant();
    await world.driver.executeQuery(
      "MERGE (l:JobLease {name: $name}) SET l.holder = 'someone-else', l.until = datetime() + duration('PT1M')",
      { name: `purge-daily:${t}` },
    );
    const res = await restClient(world.app, await operatorToken()).post('/admin/jobs/purge', { tenant: t });
    expect([res.status, res.body.DATA.reason], JSON.stringify(res.body)).toEqual([
      409,
      'purge_already_running',
    ]);
  });
});
