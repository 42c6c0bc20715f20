// The JSON thread: large values serialised and large bodies parsed off the event loop, with the same result as on
// it, a bounded number handed over at a time, and the event loop taking over when the thread fails.
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

const large = (n: number) => ({
  entity: {
    name: 'big',
    values: { b0: Array.from({ length: n }, (_, k) => `${k}-${'z'.repeat(1_000)}é"\n`) },
  },
});

describe('JsonOffload', () => {
  it('serialises a value past the threshold on the thread, a smaller one on the event loop, to the same bytes', async () => {
    const o = offload({ offloadBytes: 64 * 1024 });
    const small = { a: [1, 'two', null], b: { c: true } };
    expect((await o.serialise(small)).toString('utf8')).toBe(JSON.stringify(small));
    expect(o.stats().handed).toBe(0);
    const value = large(200);
    const bytes = await o.serialise(value);
    expect(bytes.toString('utf8')).toBe(JSON.stringify(value));
    expect(o.stats()).toMatchObject({ handed: 1, fallbacks: 0 });
  });

  it('hands over at most the in-flight bound at a time; the rest wait their turn and all are answered', async () => {
    const o = offload({ offloadBytes: 1024, inFlight: 2 });
    const values = Array.from({ length: 6 }, (_, i) => ({ i, ...large(20) }));
    const answers = values.map((v) => o.serialise(v));
    expect(o.stats().waiting).toBe(4);
    const texts = (await Promise.all(answers)).map((b) => b.toString('utf8'));
    expect(texts).toEqual(values.map((v) => JSON.stringify(v)));
    expect(o.stats()).toMatchObject({ handed: 6, waiting: 0 });
  });

  it('encodes a long serialised text to its UTF-8 bytes on the thread, a short one on the event loop', async () => {
    const o = offload({ offloadBytes: 1024 });
    expect((await o.encode('{"a":"é"}')).toString('utf8')).toBe('{"a":"é"}');
    const text = JSON.stringify(large(10));
    const bytes = await o.encode(text);
    expect(bytes.equals(Buffer.from(text))).toBe(true);
    expect(o.stats()).toMatchObject({ handed: 1, fallbacks: 0 });
  });

  it('parses on the thread, refusing text that is not JSON', async () => {
    const o = offload({ offloadBytes: 16 });
    const shared = (text: string) => {
      const bytes = Buffer.from(new SharedArrayBuffer(Buffer.byteLength(text)));
      bytes.write(text);
      return bytes;
    };
    expect(await o.parse(shared('{"a":[1,2,{"b":"c"}],"__proto__":{"x":1}}'))).toEqual({
      a: [1, 2, { b: 'c' }],
    });
    await expect(o.parse(shared('{"a":[1,2,{"b":"c"}]'))).rejects.toThrow();
    expect(o.stats().handed).toBe(2);
  });

  it('falls back to the event loop when the thread fails (its heap exhausted), and starts a new one after', async () => {
    const o = offload({ offloadBytes: 1024, heapMb: 16 });
    const value = large(40_000); // 40 MB: past the thread's heap
    expect((await o.serialise(value)).length).toBe(Buffer.byteLength(JSON.stringify(value)));
    expect(o.stats().fallbacks).toBe(1);
    const next = large(5);
    expect((await o.serialise(next)).toString('utf8')).toBe(JSON.stringify(next));
    expect(o.stats()).toMatchObject({ handed: 1, fallbacks: 1 });
  });

  it('serialises on the event loop a value that cannot be handed over (a function inside)', async () => {
    const o = offload({ offloadBytes: 1024 });
    const value = { ...large(5), skipped: () => 1 };
    expect((await o.serialise(value)).toString('utf8')).toBe(JSON.stringify(value));
    expect(o.stats().fallbacks).toBe(1);
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
