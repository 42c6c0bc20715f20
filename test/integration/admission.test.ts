// Admission at the doors (app/admission.ts): a tenant runs a few requests at once, two heavy ones; a large body draws
// its memory as it arrives and a heavy route the memory its budget states once its body is in, a tenant at most half
// of REQUEST_MEMORY_MB; the rest wait, and another tenant is served meanwhile. (Refusals past the queue and the wait:
// unit/admission.test.ts.)
import { describe, expect } from 'vitest';
import { itWith } from '../fixtures.js';
import { createType, newTenant, restClient, tokenFor } from '../helpers.js';

// 16 MiB: a tenant holds 8, one history request (its budget states more) at a time.
const it = itWith({ REQUEST_MEMORY_MB: '16' });

describe('admission of expensive requests', () => {
  it("one tenant's flood of heavy requests waits its turn while another tenant is served", async ({
    world,
  }) => {
    const flood = newTenant('flood');
    const token = await tokenFor(flood);
    const api = restClient(world.app, token);
    const guid = await createType(api, 'Busy');
    const other = restClient(world.app, await tokenFor(newTenant('other')));
    const otherGuid = await createType(other, 'Calm');
    const history = (t: string, g: string) =>
      world.app.inject({
        method: 'GET',
        url: `/entities/types/${g}/history?page_size=500`,
        headers: { authorization: `Bearer ${t}` },
      });
    const floodAnswers = Array.from({ length: 120 }, () => history(token, guid));
    const admission = world.app.services.admission;
    for (let i = 0; i < 200 && admission.queued < 100; i++) await new Promise((r) => setTimeout(r, 5));
    // the flood runs two at a time (its share of heavy requests); the rest wait
    expect(admission.holdersOf(`t:${flood}`)).toBeLessThanOrEqual(2);
    expect(admission.queued).toBeGreaterThan(100);
    const calm = await other.get(`/entities/types/${otherGuid}/history`);
    expect(calm.status).toBe(200);
    // served while most of the flood was still waiting
    expect(admission.queued).toBeGreaterThan(50);
    const answers = await Promise.all(floodAnswers);
    expect(answers.map((a) => a.statusCode)).toEqual(Array(120).fill(200));
    expect(admission.inUse).toBe(0);
    // a light route is served whatever the tenant's heavy requests do
    expect((await api.get('/entities/types?page_size=1')).status).toBe(200);
  });

  it("a withdrawal is a heavy door (a dry run walks up to 50,000 instances): one tenant's flood of dry runs runs two at a time", async ({
    world,
  }) => {
    const flood = newTenant('dry-runs');
    const api = restClient(world.app, await tokenFor(flood));
    const guid = await createType(api, 'Counted');
    expect(
      (
        await api.post(`/entities/types/${guid}/attributes`, {
          name: 'n',
          value_type: 'string',
          cardinality: 'single',
        })
      ).status,
    ).toBe(201);
    for (let i = 0; i < 5; i++) {
      expect(
        (await api.post('/entities', { type_guid: guid, name: `e${i}`, values: { n: 'x' } })).status,
      ).toBe(201);
    }
    let done = false;
    const answers = Promise.all(
      Array.from({ length: 60 }, () => api.delete(`/entities/attributes/${guid}/n?dry_run=true`)),
    ).finally(() => {
      done = true;
    });
    const admission = world.app.services.admission;
    let most = 0;
    let queued = 0;
    for (let i = 0; i < 5_000 && !done; i++) {
      most = Math.max(most, admission.holdersOf(`t:${flood}`));
      queued = Math.max(queued, admission.queued);
      await new Promise((r) => setTimeout(r, 2));
    }
    expect((await answers).map((a) => a.status)).toEqual(Array(60).fill(200));
    // (the rest waited their turn, in memory)
    expect(queued).toBeGreaterThan(10);
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(2);
  });

  it('a large body reserves its share at any door, and gives it back when answered', async ({ world }) => {
    const token = await tokenFor(newTenant('big'));
    const padded = JSON.stringify({ name: 'Padded', note: 'x'.repeat(1024 * 1024) });
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        world.app.inject({
          method: 'POST',
          url: '/entities/types',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          payload: padded,
        }),
      ),
    );
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 200, 200, 200, 200, 201]);
    expect(world.app.services.admission.inUse).toBe(0);
  });
});
