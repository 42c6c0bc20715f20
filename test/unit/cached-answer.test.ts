// A cached page's or listing's REST answer kept as bytes (rest/envelope.ts succeedCached): made once, then the same
// buffer of its own written for every request; text more than twice as long in UTF-8 is sent but not kept. DATA's
// JSON comes in pieces, encoded a slice at a time.
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { succeed, succeedCached } from '../../src/rest/envelope.js';

async function serve(data: () => string | string[]) {
  const app = Fastify();
  const held: { body?: Buffer; made: number } = { made: 0 };
  app.get('/x', (_req, reply) =>
    succeedCached(
      reply,
      held.body,
      () => {
        held.made += 1;
        const made = data();
        return typeof made === 'string' ? [made] : made;
      },
      (body) => {
        held.body = body;
      },
    ),
  );
  await app.ready();
  return { app, held };
}

describe('an answer kept as bytes with its cached value', () => {
  it('is made once and sent as the same bytes after, the envelope succeed would send', async () => {
    const { app, held } = await serve(() => JSON.stringify({ rows: ['a', 'b'] }));
    const first = await app.inject({ method: 'GET', url: '/x' });
    const kept = held.body;
    const second = await app.inject({ method: 'GET', url: '/x' });
    expect(first.statusCode).toBe(200);
    expect(first.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(first.json()).toEqual({ STATUS: 'SUCCESS', MESSAGE: '', DATA: { rows: ['a', 'b'] } });
    expect(second.body).toBe(first.body);
    expect(Number(second.headers['content-length'])).toBe(first.rawPayload.length);
    expect(held.made).toBe(1);
    expect(held.body).toBe(kept);
    await app.close();
  });

  it('is kept in a buffer of its own when its UTF-8 form is at most twice its text, else made again each time', async () => {
    const latin = await serve(() => JSON.stringify({ name: 'naïve déjà vu' }));
    const first = await latin.app.inject({ method: 'GET', url: '/x' });
    expect(first.json().DATA).toEqual({ name: 'naïve déjà vu' });
    // its own memory, not a slice of Node's shared pool
    expect(latin.held.body?.byteOffset).toBe(0);
    expect(latin.held.body?.buffer.byteLength).toBe(latin.held.body?.length);
    await latin.app.close();

    const name = '表'.repeat(200); // three bytes a character in UTF-8
    const wide = await serve(() => JSON.stringify({ name }));
    for (let i = 0; i < 2; i++) {
      const res = await wide.app.inject({ method: 'GET', url: '/x' });
      expect(res.json().DATA).toEqual({ name });
    }
    expect(wide.held.body).toBeUndefined();
    expect(wide.held.made).toBe(2);
    await wide.app.close();
  });

  it('joins DATA from its pieces, a listing of megabytes as one buffer of its own', async () => {
    const rows = Array.from({ length: 64 }, (_, i) => JSON.stringify({ i, text: `${i}é`.repeat(10_000) }));
    const big = await serve(() => ['{"rows":[', rows.join(','), ']}']);
    const res = await big.app.inject({ method: 'GET', url: '/x' });
    expect(res.json()).toEqual({
      STATUS: 'SUCCESS',
      MESSAGE: '',
      DATA: { rows: rows.map((r) => JSON.parse(r)) },
    });
    expect(big.held.body?.equals(res.rawPayload)).toBe(true);
    expect(big.held.body?.buffer.byteLength).toBe(big.held.body?.length);
    await big.app.close();
  });
});

describe('a large answer whose client went away', () => {
  it('is not made further: the request ends with an empty answer, never a partial one', async () => {
    const app = Fastify();
    const sent: number[] = [];
    app.addHook('onSend', async (_req, reply, payload) => {
      // (a large answer is sent as its slices, a stream stating its length)
      sent.push(
        typeof payload === 'string' || Buffer.isBuffer(payload)
          ? Buffer.byteLength(payload)
          : Number(reply.getHeader('content-length')),
      );
      return payload;
    });
    const big = { rows: Array.from({ length: 200 }, (_, i) => `${i}`.repeat(50_000)) };
    const whole = Buffer.byteLength(JSON.stringify({ STATUS: 'SUCCESS', MESSAGE: '', DATA: big }));
    app.post('/write', async (_req, reply) => succeed(reply, 201, big));
    await app.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.server.address() as AddressInfo).port;
    try {
      for (const leave of [2, 5, 10]) {
        const socket = connect(port, '127.0.0.1');
        socket.on('error', () => {});
        await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
        socket.write('POST /write HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n');
        await new Promise((r) => setTimeout(r, leave));
        socket.destroy();
        await new Promise((r) => setTimeout(r, 100));
      }
      // Each ended with the whole answer or (gone while it was made, 24 MB) an empty one: at least one so.
      expect(sent).toHaveLength(3);
      for (const bytes of sent) expect([0, whole]).toContain(bytes);
      expect(sent).toContain(0);
      // Read to the end, the same answer is made whole.
      const res = await fetch(`http://127.0.0.1:${port}/write`, { method: 'POST' });
      expect(res.status).toBe(201);
      expect((await res.json()).DATA).toEqual(big);
      expect(sent.at(-1)).toBe(whole);
    } finally {
      await app.close();
    }
  });
});
