// A client that goes away while its request waits for (or has just been given) its admission turn gives the turn
// back (app/admission.ts, http/connection.ts): before, a turn granted after the connection had closed stayed taken,
// and once a tenant's TENANT_CONCURRENCY turns were taken so, every later request of the tenant waited until refused.
// Real sockets, so that connections really close (its own file: the world is served on a port).
import { request } from 'node:http';
import { describe, expect } from 'vitest';
import { itServed } from '../fixtures.js';
import { newTenant, tokenFor } from '../helpers.js';

describe('a client that goes away while its request waits for its turn', () => {
  const served = itServed({ TENANT_CONCURRENCY: '1', ADMISSION_QUEUE_TIMEOUT_MS: '4000' });

  served(
    "gives its turn up: the tenant's next requests are served (the turn is never left taken)",
    async ({ world }) => {
      const tenant = newTenant('leaves');
      const token = await tokenFor(tenant);
      const url = new URL('/entities/types?page_size=500', world.url);
      // Eight requests at once, one running and seven waiting (one at a time for the tenant), whose clients go away
      // at once: before the fix, each waiter granted after its connection had closed kept its turn for ever.
      for (let round = 0; round < 3; round += 1) {
        const sockets = Array.from({ length: 8 }, () => {
          const req = request(url, { headers: { authorization: `Bearer ${token}` } });
          req.on('error', () => {});
          req.end();
          return req;
        });
        await new Promise((r) => setTimeout(r, 20));
        for (const req of sockets) req.destroy();
        await new Promise((r) => setTimeout(r, 50));
      }
      const admission = world.app.services.admission;
      for (let i = 0; i < 100 && (admission.queued > 0 || admission.runningBy(`t:${tenant}`) > 0); i += 1) {
        await new Promise((r) => setTimeout(r, 20));
      }
      expect([admission.queued, admission.runningBy(`t:${tenant}`)]).toEqual([0, 0]);
      const started = Date.now();
      const after = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
      expect(after.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(3_000);
    },
    30_000,
  );
});
