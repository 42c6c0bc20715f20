// A cached page's or listing's REST answer kept as bytes (rest/envelope.ts succeedCached): made once, then the same
// buffer written for every request; text longer in UTF-8 than the model cache counts for it is sent but not kept.
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { succeedCached } from '../../src/rest/envelope.js';

async function serve(data: () => string) {
  const app = Fastify();
  const held: { body?: Buffer; made: number } = { made: 0 };
  app.get('/x', (_req, reply) =>
    succeedCached(
      reply,
      held.body,
      () => {
        held.made += 1;
        return data();
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

  it('is not kept when its UTF-8 form is longer than its text (the model cache counts a byte a character)', async () => {
    const { app, held } = await serve(() => JSON.stringify({ name: 'naïve 表' }));
    for (let i = 0; i < 2; i++) {
      const res = await app.inject({ method: 'GET', url: '/x' });
      expect(res.json().DATA).toEqual({ name: 'naïve 表' });
    }
    expect(held.body).toBeUndefined();
    expect(held.made).toBe(2);
    await app.close();
  });
});
