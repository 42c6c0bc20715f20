// A heavy door whose answer the model cache holds small (a budget's fromMemory, model/doors.ts): an attribute listing
// of a few definitions read again is admitted as a light request (no memory reserved, not two at a time); one not
// held yet, or held but large, still reserves a heavy door's memory.
import { describe, expect, vi } from 'vitest';
import { HEAVY_PER_TENANT } from '../../src/app/admission.js';
import { LIGHT_FROM_MEMORY_BYTES } from '../../src/model/doors.js';
import { it } from '../fixtures.js';
import { createType, newTenant, restClient, tokenFor } from '../helpers.js';

describe('admission of a listing held in memory', () => {
  it('small and held: light; not held yet, or held and large: a heavy door reserving its share', async ({
    world,
  }) => {
    const { admission, model } = world.app.services;
    const tenant = newTenant('light');
    const api = restClient(world.app, await tokenFor(tenant));
    const small = await createType(api, 'Small');
    const large = await createType(api, 'Large');
    const declared = await api.post(`/entities/types/${large}/attributes`, {
      name: 'grade',
      value_type: 'string',
      cardinality: 'single',
      allowed_values: Array.from({ length: 200 }, (_, i) => `${i}-${'v'.repeat(500)}`),
    });
    expect(declared.status).toBe(201);

    // What each request's memory grew by (a listing has no body: its heavy door's memory only).
    const grown: [string, number][] = [];
    const lease = admission.lease.bind(admission);
    const spy = vi.spyOn(admission, 'lease').mockImplementation((who) => {
      const held = lease(who);
      const grow = held.grow;
      return Object.assign(held, {
        grow: (more: number, signal?: AbortSignal) => {
          grown.push([who, more]);
          return grow(more, signal);
        },
      });
    });
    const reserved = async (guid: string) => {
      grown.length = 0;
      const res = await api.get(`/entities/types/${guid}/attributes`);
      expect(res.status).toBe(200);
      expect(spy.mock.calls.filter(([who]) => who === `t:${tenant}`).length).toBeGreaterThan(0);
      spy.mockClear();
      return grown.filter(([who]) => who === `t:${tenant}`).reduce((sum, [, more]) => sum + more, 0);
    };
    const heavyShare = Math.ceil(admission.maxPerTenant / HEAVY_PER_TENANT);

    expect(await reserved(small)).toBeGreaterThanOrEqual(heavyShare); // not held yet
    expect(model.cache.bytesOf(tenant, 'attributes', small)).toBeLessThanOrEqual(LIGHT_FROM_MEMORY_BYTES);
    expect(await reserved(small)).toBe(0); // held, small
    expect(await reserved(small)).toBe(0);

    expect(await reserved(large)).toBeGreaterThanOrEqual(heavyShare);
    expect(model.cache.bytesOf(tenant, 'attributes', large)).toBeGreaterThan(LIGHT_FROM_MEMORY_BYTES);
    expect(await reserved(large)).toBeGreaterThanOrEqual(heavyShare); // held, but large

    // Another tenant's look at the same guid finds nothing held for it: heavy.
    const other = restClient(world.app, await tokenFor(newTenant('other')));
    grown.length = 0;
    await other.get(`/entities/types/${small}/attributes`);
    const theirs = grown.find(([who]) => who !== `t:${tenant}`);
    expect(theirs?.[1]).toBeGreaterThanOrEqual(heavyShare);
    spy.mockRestore();
  });
});
