// The CLI's REST client (cli/src/client.ts) against a scripted HTTP server: a write carries an Idempotency-Key,
// the same one on every retry of a 503 (honouring Retry-After); reads carry none; operators' routes none.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Client, RETRY_ATTEMPTS, Refusal } from '../../cli/src/client.js';

const servers: ReturnType<typeof createServer>[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

/** A server answering each request with the next scripted status (503s and 429s with Retry-After: 0). */
async function scripted(statuses: number[]) {
  const seen: { method: string; url: string; key: string | undefined }[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    seen.push({
      method: req.method ?? '',
      url: req.url ?? '',
      key: req.headers['idempotency-key'] as string,
    });
    const status = statuses.shift() ?? 500;
    const ok = status < 400;
    res.writeHead(status, {
      'content-type': 'application/json',
      ...(status === 503 || status === 429 ? { 'retry-after': '0' } : {}),
    });
    res.end(
      JSON.stringify(
        ok
          ? { STATUS: 'SUCCESS', MESSAGE: '', DATA: { done: true } }
          : { STATUS: 'FAIL', MESSAGE: 'away', DATA: { reason: 'storage_unavailable' } },
      ),
    );
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const client = new Client(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, 'token');
  return { client, seen };
}

describe('the CLI client and 503s', () => {
  it('retries a write with the same Idempotency-Key until it is answered', async () => {
    const { client, seen } = await scripted([503, 503, 201]);
    expect(await client.request('POST', '/entities/types', { body: { name: 'A' } })).toEqual({ done: true });
    expect(seen).toHaveLength(3);
    expect(new Set(seen.map((s) => s.key)).size).toBe(1);
    expect(seen[0]?.key).toMatch(/^[0-9a-f-]{36}$/);
  });

  it(`gives up after ${RETRY_ATTEMPTS} sends with the refusal; each command has its own key`, async () => {
    const { client, seen } = await scripted(Array(RETRY_ATTEMPTS).fill(503).concat([200]));
    const refused = await client.request('DELETE', '/entities/types/g').catch((e) => e);
    expect(refused).toBeInstanceOf(Refusal);
    expect((refused as Refusal).reason).toBe('storage_unavailable');
    await client.request('PATCH', '/entities/types/g', { body: { name: 'B' } });
    expect(seen).toHaveLength(RETRY_ATTEMPTS + 1);
    expect(seen[RETRY_ATTEMPTS]?.key).not.toBe(seen[0]?.key);
  });

  it("retries a 429 with Retry-After (its tenant's own requests held its turns) with the same key", async () => {
    const { client, seen } = await scripted([429, 201]);
    expect(await client.request('POST', '/entities/types', { body: { name: 'A' } })).toEqual({ done: true });
    expect(seen).toHaveLength(2);
    expect(seen[0]?.key).toBe(seen[1]?.key);
  });

  it('reads and operators’ routes carry no key (reads are retried too)', async () => {
    const { client, seen } = await scripted([503, 200, 200]);
    await client.request('GET', '/entities/types');
    await client.request('POST', '/admin/logs');
    expect(seen.map((s) => [s.method, s.key])).toEqual([
      ['GET', undefined],
      ['GET', undefined],
      ['POST', undefined],
    ]);
  });
});
