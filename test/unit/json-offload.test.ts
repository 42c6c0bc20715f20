// The JSON thread: large bodies in shared memory parsed off the event loop, with the same result as on it, a bounded
// number handed over at a time, and the event loop taking over when the thread fails.
import { afterEach, describe, expect, it } from 'vitest';
import { JsonOffload, jsonLength } from '../../src/json-offload.js';

const opened: JsonOffload[] = [];
const offload = (options: ConstructorParameters<typeof JsonOffload>[0]) => {
  const o = new JsonOffload(options);
  opened.push(o);
  return o;
};
afterEach(async () => {
  for (const o of opened.splice(0)) await o.close();
});

/** Text in memory the thread can read (as body.ts reads large bodies). */
const shared = (text: string) => {
  const bytes = Buffer.from(new SharedArrayBuffer(Buffer.byteLength(text)));
  bytes.write(text);
  return bytes;
};
const large = (n: number) => ({
  entity: {
    name: 'big',
    values: { b0: Array.from({ length: n }, (_, k) => `${k}-${'z'.repeat(1_000)}é"\n`) },
  },
});

describe('JsonOffload', () => {
  it('parses a large body in shared memory on the thread, a smaller one or one of its own memory here', async () => {
    const o = offload({ offloadBytes: 1024 });
    const value = large(20);
    expect(await o.parse(shared(JSON.stringify(value)))).toEqual(value);
    expect(o.stats()).toMatchObject({ handed: 1, fallbacks: 0 });
    expect(await o.parse(shared('{"a":[1,2]}'))).toEqual({ a: [1, 2] });
    expect(await o.parse(Buffer.from(JSON.stringify(value)))).toEqual(value);
    expect(o.stats().handed).toBe(1);
  });

  it('hands over at most the in-flight bound at a time; the rest wait their turn and all are answered', async () => {
    const o = offload({ offloadBytes: 1024, inFlight: 2 });
    const values = Array.from({ length: 6 }, (_, i) => ({ i, ...large(20) }));
    const answers = values.map((v) => o.parse(shared(JSON.stringify(v))));
    expect(o.stats().waiting).toBe(4);
    expect(await Promise.all(answers)).toEqual(values);
    expect(o.stats()).toMatchObject({ handed: 6, waiting: 0 });
  });

  it('drops prototype keys on the thread as here, and refuses text that is not JSON', async () => {
    const o = offload({ offloadBytes: 16 });
    expect(await o.parse(shared('{"a":[1,2,{"b":"c"}],"__proto__":{"x":1}}'))).toEqual({
      a: [1, 2, { b: 'c' }],
    });
    await expect(o.parse(shared('{"a":[1,2,{"b":"c"}]'))).rejects.toThrow();
    expect(o.stats().handed).toBe(2);
  });

  it('falls back to the event loop when the thread fails (its heap exhausted), and starts a new one after', async () => {
    const o = offload({ offloadBytes: 1024, heapMb: 16 });
    // 6 MB of small objects: more than the thread's 16 MB heap once parsed.
    const many = `[${Array.from({ length: 200_000 }, (_, i) => `{"i":${i},"s":"${'x'.repeat(16)}"}`).join(',')}]`;
    const parsed = (await o.parse(shared(many))) as unknown[];
    expect(parsed).toHaveLength(200_000);
    expect(o.stats().fallbacks).toBe(1);
    const next = large(5);
    expect(await o.parse(shared(JSON.stringify(next)))).toEqual(next);
    expect(o.stats()).toMatchObject({ handed: 1, fallbacks: 1 });
  });
});

describe('jsonLength with a stop', () => {
  it('stops counting once past the stop, and is exact below it', () => {
    const value = large(100);
    const full = JSON.stringify(value).length;
    expect(jsonLength(value, full + 1)).toBeLessThanOrEqual(full);
    const stopped = jsonLength(value, 5_000);
    expect(stopped).toBeGreaterThan(5_000);
    expect(stopped).toBeLessThan(10_000);
  });
});
