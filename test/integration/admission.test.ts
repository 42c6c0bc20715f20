// Admission at the doors (app/admission.ts): a heavy route's requests reserve the memory their budget states before
// their body is read, a tenant at most half of REQUEST_MEMORY_MB; past a tenant's queue they are refused (429
// tenant_busy), and another tenant is served meanwhile. Small requests to light routes take no turn.
import { describe, expect } from 'vitest';
import { itWith } from '../fixtures.js';
import { createType, newTenant, restClient, tokenFor } from '../helpers.js';

// 16 MiB: a tenant holds 8, one history request (its budget states more) at a time.
const it = itWith({ REQUEST_MEMORY_MB: '16' });

describe('admission of expensive requests', () => {
  it("one tenant's flood of heavy requests waits its turn, its overflow is refused 429 tenant_busy; another tenant is served", async ({
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
    const calm = await other.get(`/entities/types/${otherGuid}/history`);
    expect(calm.status).toBe(200);
    const answers = await Promise.all(floodAnswers);
    const statuses = answers.map((a) => a.statusCode);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0);
    const refused = answers.filter((a) => a.statusCode !== 200);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) {
      expect([r.statusCode, r.json().DATA.reason, r.headers['retry-after']]).toEqual([
        429,
        'tenant_busy',
        '1',
      ]);
    }
    expect(world.app.services.admission.inUse).toBe(0);
    // light routes take no turn: a tenant's page of types is served whatever its heavy requests do
    expect((await api.get('/entities/types?page_size=1')).status).toBe(200);
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
