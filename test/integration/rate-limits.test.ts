// Nothing unbounded before admission (app/auth.ts, app/admission.ts): requests without a token already verified are
// counted per client address and all together, and refused 429 rate_limited past either, before any work is spent on
// them; a verified token's requests are never counted; the address is the peer's, or the one a trusted proxy
// forwards; a tenant's first request sets the tenant up inside its admission turn, not before it.
import { test as base, describe, expect, vi } from 'vitest';
import { instance, itWith } from '../fixtures.js';
import { newTenant, type TestWorld, tokenFor } from '../helpers.js';

const limited = itWith({ UNVERIFIED_PER_ADDRESS_PER_SECOND: '5', UNVERIFIED_PER_SECOND: '1000' });
// (a file's fixtures are shared by name: the proxied instance has a name of its own)
const proxied = base.extend<{ proxiedWorld: TestWorld }>({
  proxiedWorld: instance({
    UNVERIFIED_PER_ADDRESS_PER_SECOND: '3',
    UNVERIFIED_PER_SECOND: '8',
    TRUSTED_PROXIES: '127.0.0.1',
  }),
});

/** Waits until the limits' one-second window has started again. */
const nextWindow = () => new Promise((r) => setTimeout(r, 1_100));

describe('requests without a verified token', () => {
  limited(
    'bad tokens, unknown paths and new tokens share an address’s bucket; verified tokens and probes never wait on it',
    async ({ world }) => {
      const verified = await tokenFor(newTenant('known'));
      const call = (url: string, token?: string) =>
        world.app.inject({ method: 'GET', url, headers: token ? { authorization: `Bearer ${token}` } : {} });
      expect((await call('/entities/types?page_size=1', verified)).statusCode).toBe(200);
      await nextWindow();
      const answers = [];
      for (let i = 0; i < 5; i += 1) answers.push(await call('/entities/types', `bad.${i}.token`));
      expect(answers.map((a) => a.statusCode)).toEqual([401, 401, 401, 401, 401]);
      const over = await call('/entities/types', 'bad.6.token');
      expect([over.statusCode, over.json().DATA.reason]).toEqual([429, 'rate_limited']);
      expect(Number(over.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect((await call('/nowhere')).json().DATA.reason).toBe('rate_limited');
      expect((await call('/docs')).json().DATA?.reason).toBe('rate_limited');
      // A new token is counted too, until the window turns.
      const fresh = await tokenFor(newTenant('fresh'));
      expect((await call('/entities/types?page_size=1', fresh)).json().DATA.reason).toBe('rate_limited');
      // Meanwhile the verified token and the probes are served.
      expect((await call('/entities/types?page_size=1', verified)).statusCode).toBe(200);
      expect((await call('/healthz')).statusCode).toBe(200);
      expect((await call('/readyz')).statusCode).toBe(200);
      await nextWindow();
      expect((await call('/entities/types?page_size=1', fresh)).statusCode).toBe(200);
    },
  );

  limited('X-Forwarded-For is ignored from a peer no configuration trusts', async ({ world }) => {
    await nextWindow();
    const statuses = [];
    for (let i = 0; i < 6; i += 1) {
      const res = await world.app.inject({
        method: 'GET',
        url: '/entities/types',
        headers: { authorization: 'Bearer bad', 'x-forwarded-for': `10.0.0.${i}` },
      });
      statuses.push(res.statusCode);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
  });

  proxied(
    'behind a trusted proxy each forwarded address has its bucket; all of them share one',
    async ({ proxiedWorld: world }) => {
      await nextWindow();
      const from = (address: string) =>
        world.app.inject({
          method: 'GET',
          url: '/entities/types',
          headers: { authorization: 'Bearer bad', 'x-forwarded-for': address },
        });
      const a = [];
      for (let i = 0; i < 4; i += 1) a.push((await from('10.0.0.1')).statusCode);
      expect(a).toEqual([401, 401, 401, 429]);
      const b = [];
      for (let i = 0; i < 3; i += 1) b.push((await from('10.0.0.2')).statusCode);
      expect(b).toEqual([401, 401, 401]);
      // Six passed their address's bucket this second (a refusal there is not counted in all: one address's flood
      // does not spend everyone's bucket); two more pass, then the bucket of all is spent, whatever the address.
      const c = [];
      for (const address of ['10.0.0.3', '10.0.0.4', '10.0.0.5']) c.push(await from(address));
      expect(c.map((r) => r.statusCode)).toEqual([401, 401, 429]);
      expect((c[2] as (typeof c)[number]).json().DATA.reason).toBe('rate_limited');
      expect((c[2] as (typeof c)[number]).json().MESSAGE).not.toMatch(/your address/);
    },
  );
});

describe("a tenant's set-up", () => {
  limited(
    'runs inside its first request’s admission turn (among the new tenants’), after the turn is taken',
    async ({ world }) => {
      const { admission, tenants } = world.app.services;
      const order: string[] = [];
      const take = admission.acquire.bind(admission);
      const setUp = tenants.ensure.bind(tenants);
      const acquire = vi.spyOn(admission, 'acquire').mockImplementation((...args) => {
        order.push(`turn ${args[0]}`);
        return take(...args);
      });
      const ensure = vi.spyOn(tenants, 'ensure').mockImplementation((tenant: string) => {
        order.push(`set-up t:${tenant}`);
        return setUp(tenant);
      });
      try {
        await nextWindow();
        const tenant = newTenant('new');
        const res = await world.app.inject({
          method: 'GET',
          url: '/entities/types?page_size=1',
          headers: { authorization: `Bearer ${await tokenFor(tenant)}` },
        });
        expect(res.statusCode, res.body).toBe(200);
        // Its turn among the tenants not set up yet (one tenant's share for all of them), then its set-up.
        const at = order.indexOf(`set-up t:${tenant}`);
        expect(at).toBeGreaterThan(0);
        expect(order[at - 1]).toBe('turn new-tenants');
        // Set up, its next request takes a turn of its own.
        order.length = 0;
        await world.app.inject({
          method: 'GET',
          url: '/entities/types?page_size=1',
          headers: { authorization: `Bearer ${await tokenFor(tenant)}` },
        });
        expect(order[0]).toBe(`turn t:${tenant}`);
      } finally {
        acquire.mockRestore();
        ensure.mockRestore();
      }
    },
  );
});
