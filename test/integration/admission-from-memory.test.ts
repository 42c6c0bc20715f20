// A heavy door whose answer the model cache holds small (a budget's fromMemory, model/doors.ts): an attribute listing
// of a few definitions read again is admitted as a light request (no memory reserved, not two at a time); one not
// held yet, or held but large, still takes a heavy door's turn.
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

    const acquire = vi.spyOn(admission, 'acquire');
    // The bytes each listing request reserved when it took its turn.
    const reserved = async (guid: string) => {
      acquire.mockClear();
      const res = await api.get(`/entities/types/${guid}/attributes`);
      expect(res.status).toBe(200);
      const calls = acquire.mock.calls.filter(([who]) => who === `t:${tenant}`);
      expect(calls).toHaveLength(1);
      return calls[0]?.[1] as number;
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
    acquire.mockClear();
    await other.get(`/entities/types/${small}/attributes`);
    const theirs = acquire.mock.calls.find(([who]) => who !== `t:${tenant}`);
    expect(theirs?.[1]).toBeGreaterThanOrEqual(heavyShare);
    acquire.mockRestore();
  });
});
