// Body reading with bounded memory: the limit, memory drawn as the bytes arrive (never as declared; paused while the
// room is spent; given back on every refusal), the least rate, the slow-body timeouts and length checks, on in-memory
// streams; the slots GraphQL operations take; the paced discard of refused bodies, also over a real socket.
import { createServer, type IncomingMessage, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { releaseBody } from '../../src/body/bytes.js';
import {
  type BodyMemory,
  bodyBytesRead,
  bodyLeftUnread,
  LARGE_BODY_BYTES,
  MEMORY_PER_BODY_BYTE,
  readBody,
} from '../../src/body/read.js';
import {
  DRAIN_TURN_BYTES,
  DRAINS_RESUMED_A_TURN,
  refusedBytesDiscarded,
  takeRefusedBody,
} from '../../src/body/refused.js';
import { AppError } from '../../src/errors.js';
import { Admission } from '../../src/fairness/admission.js';
import { Slots } from '../../src/fairness/slots.js';
import { MAX_BODY_DEPTH, MAX_BODY_VALUES } from '../../src/json/scan.js';
import { parseJsonText } from '../../src/json/text.js';
import { BODY_BLOCK_BYTES } from '../../src/model/doors.js';

/** A request stand-in: a stream with headers; `complete` turns true at its end, as on IncomingMessage. */
function fakeRequest(headers: Record<string, string> = {}) {
  const stream = new PassThrough() as PassThrough & { headers: Record<string, string>; complete: boolean };
  stream.headers = headers;
  stream.complete = false;
  stream.on('end', () => {
    stream.complete = true;
  });
  return stream;
}
const asRaw = (s: PassThrough) => s as unknown as IncomingMessage;
const reasonOf = async (p: Promise<unknown>) => {
  const error = await p.then(
    () => null,
    (e: unknown) => e,
  );
  return error instanceof AppError ? `${error.status} ${error.reason}` : String(error);
};
const tick = () => new Promise((r) => setTimeout(r, 10));

/** A request memory of `capacity` bytes (the admission's room) and one request's lease of it, as body/read.ts draws it. */
function room(capacity: number, queueTimeoutMs = 10_000) {
  const admission = new Admission({ capacity, queueTimeoutMs });
  const lease = admission.lease('tenant');
  const memory: BodyMemory = { grow: (bytes) => lease.grow(bytes), release: () => lease.release() };
  return { admission, memory };
}

describe('Slots', () => {
  it('grants up to its size, queues the rest in order, and a double release frees one slot only', async () => {
    const slots = new Slots(2, 2);
    const a = await slots.acquire();
    const b = await slots.acquire();
    const order: string[] = [];
    const c = slots.acquire().then((r) => {
      order.push('c');
      return r;
    });
    const d = slots.acquire().then((r) => {
      order.push('d');
      return r;
    });
    await tick();
    expect(order).toEqual([]);
    expect(slots.queued).toBe(2);
    a();
    a();
    await tick();
    expect(order).toEqual(['c']);
    b();
    await tick();
    expect(order).toEqual(['c', 'd']);
    (await c)();
    (await d)();
    expect(slots.inUse).toBe(0);
  });

  it('one key holds at most its share (half by default), so another key is served while it waits', async () => {
    const slots = new Slots(4);
    expect(slots.maxPerKey).toBe(2);
    const hog = await Promise.all([slots.acquire('a'), slots.acquire('a')]);
    let third = false;
    const hogMore = slots.acquire('a').then((r) => {
      third = true;
      return r;
    });
    await tick();
    expect(third).toBe(false);
    expect(slots.inUse).toBe(2);
    // Two slots are free, but not for "a": another tenant takes one at once.
    const other = await slots.acquire('b');
    expect(slots.heldBy('b')).toBe(1);
    hog[0]();
    expect(await hogMore).toBeTypeOf('function');
    expect(third).toBe(true);
    other();
    hog[1]();
    (await hogMore)();
    expect(slots.inUse).toBe(0);
  });

  it('freed slots go to waiting keys in turn, not in arrival order', async () => {
    const slots = new Slots(1, 1);
    const first = await slots.acquire('a');
    const order: string[] = [];
    const waits = ['a', 'a', 'a', 'b'].map((key, i) =>
      slots.acquire(key).then((release) => {
        order.push(`${key}${i}`);
        release();
      }),
    );
    first();
    await Promise.all(waits);
    // b arrived last but is served second: the keys take turns.
    expect(order).toEqual(['a0', 'b3', 'a1', 'a2']);
  });

  it('a waiter whose signal aborts leaves the queue and is refused; the others are still served', async () => {
    const slots = new Slots(1);
    const holder = await slots.acquire('a');
    const giveUp = new AbortController();
    const gaveUp = slots.acquire('b', giveUp.signal).then(
      () => 'granted',
      (e: Error) => e.name,
    );
    const stays = slots.acquire('c');
    giveUp.abort();
    expect(await gaveUp).toBe('SlotWaitAborted');
    expect(slots.queued).toBe(1);
    holder();
    (await stays)();
    expect(slots.inUse).toBe(0);
  });
});

describe('readBody', () => {
  it('returns the bytes of a body within the limit, and checks them against Content-Length', async () => {
    const ok = fakeRequest({ 'content-length': '5' });
    const read = readBody(asRaw(ok), ok, { limit: 10 });
    ok.end('hello');
    expect((await read).toString()).toBe('hello');

    const short = fakeRequest({ 'content-length': '9' });
    const refused = readBody(asRaw(short), short, { limit: 10 });
    short.end('hello');
    expect(await reasonOf(refused)).toBe('400 invalid_body');
  });

  it('copies a large body into buffers of its own as it arrives, drawing memory per block, never as declared', async () => {
    const { admission, memory } = room(64 * 1024 * 1024);
    const ok = fakeRequest({ 'content-length': '9' });
    const read = readBody(asRaw(ok), ok, { limit: 100, largeBytes: 4, memory });
    ok.write('1234');
    ok.write('5678');
    ok.end('9');
    const body = await read;
    expect(body.toString()).toBe('123456789');
    // A buffer of its own, the body's length (not a slice of Node's pool, not the last chunk).
    expect(body.buffer.byteLength).toBe(9);
    expect(admission.inUse).toBe(BODY_BLOCK_BYTES * MEMORY_PER_BODY_BYTE);

    // 8 MB declared, 5 bytes sent, then the client goes: one block drawn, not the declared length, and given back.
    const other = room(64 * 1024 * 1024);
    const abandoned = fakeRequest({ 'content-length': String(8 * 1024 * 1024) });
    const abandonedRead = readBody(asRaw(abandoned), abandoned, { largeBytes: 4, memory: other.memory });
    abandoned.write('12345');
    await tick();
    expect(other.admission.inUse).toBe(BODY_BLOCK_BYTES * MEMORY_PER_BODY_BYTE);
    abandoned.destroy();
    expect(await reasonOf(abandonedRead)).toBe('400 invalid_body');
    expect(other.admission.inUse).toBe(0);

    const short = fakeRequest({ 'content-length': '9' });
    const shortRead = readBody(asRaw(short), short, { limit: 100, largeBytes: 4 });
    short.end('12345678');
    expect(await reasonOf(shortRead)).toBe('400 invalid_body');

    const long = fakeRequest({ 'content-length': '6' });
    const longRead = readBody(asRaw(long), long, { limit: 100, largeBytes: 4 });
    long.write('12345');
    long.end('67');
    expect(await reasonOf(longRead)).toBe('400 invalid_body');
  });

  it('refuses a declared length over the limit without reading, and marks the body unread', async () => {
    const req = fakeRequest({ 'content-length': '11' });
    expect(await reasonOf(readBody(asRaw(req), req, { limit: 10 }))).toBe('413 request_too_large');
    expect(bodyLeftUnread(asRaw(req))).toBe(true);
    // What it declared is not what crossed the thread (the fairness weighs what was read).
    expect(bodyBytesRead(asRaw(req))).toBe(0);
    const read = fakeRequest({ 'content-length': '5' });
    const body = readBody(asRaw(read), read, { limit: 10 });
    read.end('12345');
    await body;
    expect(bodyBytesRead(asRaw(read))).toBe(5);
  });

  it('refuses a streamed body the moment it passes the limit and stops reading it', async () => {
    const req = fakeRequest();
    const read = readBody(asRaw(req), req, { limit: 10 });
    req.write('0123456789');
    req.write('x');
    expect(await reasonOf(read)).toBe('413 request_too_large');
    expect(bodyLeftUnread(asRaw(req))).toBe(true);
    // Nothing keeps what follows: the stream waits, paused and with no reader, until the answer is sent and
    // takeRefusedBody discards the rest at its pace (flowing at once, it was read as fast as it came).
    expect(req.listenerCount('data')).toBe(0);
    expect(req.isPaused()).toBe(true);
  });

  it('a large body waits, paused, while the room is spent, then is read; its memory is held until released', async () => {
    const block = BODY_BLOCK_BYTES * MEMORY_PER_BODY_BYTE;
    const { admission, memory } = room(3 * block);
    // (another tenant's request takes what one may: the room less half a tenant's share, 2.25 blocks)
    const holder = await admission.acquire('other', 3 * block);
    const req = fakeRequest();
    let done = false;
    const read = readBody(asRaw(req), req, { limit: 100, largeBytes: 4, memory }).then((b) => {
      done = true;
      return b;
    });
    req.write('12345');
    req.write('678');
    await tick();
    expect(req.isPaused()).toBe(true);
    expect(admission.queued).toBe(1);
    holder();
    await tick();
    req.end('9');
    const body = await read;
    expect(body.toString()).toBe('123456789');
    expect(done).toBe(true);
    // The draw is the request's until it ends (its parsed value lives that long), not the reader's to give back.
    expect(admission.inUse).toBe(block);
    memory.release();
    expect(admission.inUse).toBe(0);
  });

  it('a wait for memory past the admission timeout is refused as busy, never as too large', async () => {
    const block = BODY_BLOCK_BYTES * MEMORY_PER_BODY_BYTE;
    const { admission, memory } = room(2 * block, 40);
    const holder = await admission.acquire('other', 1.5 * block);
    const req = fakeRequest();
    const read = readBody(asRaw(req), req, { largeBytes: 4, memory });
    req.write('12345');
    expect(await reasonOf(read)).toBe('503 server_busy');
    holder();
    expect(admission.inUse).toBe(0);
  });

  it('a body that does not finish within its deadline is refused with 408 and gives its memory back', async () => {
    const { admission, memory } = room(64 * 1024 * 1024);
    const req = fakeRequest();
    const read = readBody(asRaw(req), req, { limit: 100, largeBytes: 4, memory, timeoutMs: 30 });
    req.write('12345');
    expect(await reasonOf(read)).toBe('408 request_timeout');
    expect(admission.inUse).toBe(0);
    expect(bodyLeftUnread(asRaw(req))).toBe(true);
  });

  it('a small body that keeps trickling in is refused at its total deadline', async () => {
    const req = fakeRequest();
    const read = readBody(asRaw(req), req, { timeoutMs: 60, idleTimeoutMs: 1_000, minBytesPerSecond: 1 });
    const drip = setInterval(() => req.write(' '), 5);
    const reason = await reasonOf(read);
    clearInterval(drip);
    expect(reason).toBe('408 request_timeout');
  });

  it('a body below the least rate is cut after its grace; one above it is read to its end', async () => {
    const slow = fakeRequest();
    const begun = performance.now();
    const slowRead = readBody(asRaw(slow), slow, { graceMs: 60, minBytesPerSecond: 1_000 });
    // 200 bytes a second, against 1,000: cut once the grace and what arrived (a millisecond a byte) have passed.
    const drip = setInterval(() => slow.write(' '), 5);
    const reason = await reasonOf(slowRead);
    clearInterval(drip);
    expect(reason).toBe('408 request_timeout');
    expect(performance.now() - begun).toBeLessThan(500);

    const steady = fakeRequest();
    const steadyRead = readBody(asRaw(steady), steady, { graceMs: 30, minBytesPerSecond: 100 });
    // 400 bytes a second, against 100, for 200 ms: past the grace, within the rate.
    steady.write('[');
    const flow = setInterval(() => steady.write('1,'), 5);
    await new Promise((r) => setTimeout(r, 200));
    clearInterval(flow);
    steady.end('1]');
    expect(JSON.parse((await steadyRead).toString()).length).toBeGreaterThan(10);
  });

  it('a body that pauses longer than the idle deadline is refused; a pause while waiting for memory is not idle', async () => {
    const paused = fakeRequest();
    const read = readBody(asRaw(paused), paused, { idleTimeoutMs: 30 });
    paused.write('{');
    expect(await reasonOf(read)).toBe('408 request_timeout');

    const block = BODY_BLOCK_BYTES * MEMORY_PER_BODY_BYTE;
    const { admission, memory } = room(2 * block);
    const holder = await admission.acquire('other', 1.5 * block);
    const waiting = fakeRequest();
    const large = readBody(asRaw(waiting), waiting, {
      largeBytes: 4,
      memory,
      idleTimeoutMs: 30,
      graceMs: 30,
    });
    waiting.write('"12345');
    await new Promise((r) => setTimeout(r, 80));
    holder();
    await tick();
    waiting.end('"');
    expect((await large).toString()).toBe('"12345"');
  });

  it('refuses a body nested too deep, or holding too many values, at the first byte past the limit', async () => {
    const deep = fakeRequest();
    const tooDeep = readBody(asRaw(deep), deep);
    deep.write(`{"a":${'['.repeat(MAX_BODY_DEPTH)}`);
    expect(await reasonOf(tooDeep)).toBe('400 json_too_deep');
    expect(bodyLeftUnread(asRaw(deep))).toBe(true);

    const wide = fakeRequest();
    const tooWide = reasonOf(readBody(asRaw(wide), wide));
    const many = Buffer.from(`{"identifiers":[${'{},'.repeat(3 * MAX_BODY_VALUES)}{}]}`);
    // Sent in 64 KB pieces: refused at the piece holding value 250,001, long before the body ends.
    let sent = 0;
    while (sent < many.length && wide.listenerCount('data') > 0) {
      wide.write(many.subarray(sent, sent + 65_536));
      sent += 65_536;
      await new Promise((r) => setImmediate(r));
    }
    expect(await tooWide).toBe('400 json_too_large');
    expect(sent).toBeLessThan(many.length / 2);
  });

  it('a body whose connection closes early is refused, and memory it waited for is not kept', async () => {
    const block = BODY_BLOCK_BYTES * MEMORY_PER_BODY_BYTE;
    const { admission, memory } = room(2 * block);
    const holder = await admission.acquire('other', 1.5 * block);
    const req = fakeRequest();
    const read = readBody(asRaw(req), req, { limit: 100, largeBytes: 4, memory });
    req.write('12345');
    await tick();
    req.destroy();
    expect(await reasonOf(read)).toBe('400 invalid_body');
    holder();
    await tick();
    expect(admission.inUse).toBe(0);
  });
});

describe('takeRefusedBody', () => {
  const refusedRequest = async () => {
    const req = fakeRequest();
    let destroyed = false;
    Object.assign(req, { socket: { destroy: () => (destroyed = true) } });
    const read = readBody(asRaw(req), req, { limit: 3 });
    req.write('1234');
    await read.catch(() => {});
    return { req, destroyed: () => destroyed };
  };

  it('closes the connection when the rest of a refused body is still coming after the linger time', async () => {
    const { req, destroyed } = await refusedRequest();
    takeRefusedBody(asRaw(req), 20);
    req.write('more');
    await new Promise((r) => setTimeout(r, 60));
    expect(destroyed()).toBe(true);
  });

  it('keeps the connection when the refused body ends in time, and ignores bodies read to their end', async () => {
    const { req, destroyed } = await refusedRequest();
    takeRefusedBody(asRaw(req), 40);
    req.end('rest');
    await new Promise((r) => setTimeout(r, 80));
    expect(destroyed()).toBe(false);

    const whole = fakeRequest();
    const read = readBody(asRaw(whole), whole);
    whole.end('{}');
    await read;
    expect(bodyLeftUnread(asRaw(whole))).toBe(false);
  });
});

describe('the rest of refused bodies', () => {
  it('over a real socket: a body never read, refused after a wait, goes through the paced discard, not Node’s own', async () => {
    // Node discards a body nobody reads once the answer is sent, at full speed and past any listener: the request
    // is taken before the answer (as onSend does), after a wait that has filled the stream's buffer.
    // It comes when this turn's bytes are spent (by another refused body), so it waits, paused, for a later turn.
    const server = createServer((req, res) => {
      setTimeout(async () => {
        const other = fakeRequest();
        other.write(Buffer.alloc(2 * DRAIN_TURN_BYTES, 0x20));
        takeRefusedBody(asRaw(other));
        await new Promise((r) => process.nextTick(r));
        takeRefusedBody(req);
        expect(req.isPaused()).toBe(true);
        res.writeHead(429, { 'content-length': '2' }).end('{}');
      }, 200);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { port } = server.address() as AddressInfo;
      const before = refusedBytesDiscarded();
      const body = Buffer.alloc(8 * 1024 * 1024, 0x20);
      const status = await new Promise<number>((resolve, reject) => {
        const req = request(
          { port, host: '127.0.0.1', method: 'POST', headers: { 'content-length': String(body.length) } },
          (res) => {
            res.resume();
            req.once('finish', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
      expect(status).toBe(429);
      // (the other body's 2 MiB counted too)
      const all = body.length + 2 * DRAIN_TURN_BYTES;
      for (let i = 0; i < 100 && refusedBytesDiscarded() - before < all; i += 1) await tick();
      expect(refusedBytesDiscarded() - before).toBe(all);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it('a rest that arrived whole while the stream was held paused is read to its end', async () => {
    const req = fakeRequest();
    const read = readBody(asRaw(req), req, { limit: 3 });
    req.write('1234');
    await read.catch(() => {});
    req.end('rest');
    req.complete = true; // (as Node's parser marks it: before the end is read)
    await tick();
    expect(req.readableEnded).toBe(false);
    takeRefusedBody(asRaw(req));
    await tick();
    expect(req.readableEnded).toBe(true);
  });

  it('is discarded DRAIN_TURN_BYTES a turn of the event loop at most, all connections together, each to its end', async () => {
    const CHUNK = 64 * 1024;
    const requests = Array.from({ length: 12 }, () => {
      const req = fakeRequest();
      Object.assign(req, { socket: { destroy: () => {} } });
      return req;
    });
    // Half refused after 4 bytes of a 2.5 MB body, half refused before a byte of it was read (authentication,
    // admission), the rest of each already there (as after a wait for admission).
    for (const [i, req] of requests.entries()) {
      if (i % 2 === 0) {
        const read = readBody(asRaw(req), req, { limit: 3 });
        req.write('1234');
        await read.catch(() => {});
      } else req.write('1234');
      for (let i = 0; i < 40; i += 1) req.write(Buffer.alloc(CHUNK, 0x20));
      req.end();
    }
    const turns: number[] = [0];
    let counting = true;
    const nextTurn = () => {
      if (!counting) return;
      turns.push(0);
      setImmediate(nextTurn);
    };
    setImmediate(nextTurn);
    for (const req of requests) {
      req.on('data', (chunk: Buffer) => {
        turns[turns.length - 1] = (turns.at(-1) as number) + chunk.length;
      });
      takeRefusedBody(asRaw(req), 10_000);
    }
    await Promise.all(
      requests.map((req) => new Promise((r) => (req.readableEnded ? r(null) : req.once('end', r)))),
    );
    counting = false;
    const total = turns.reduce((a, b) => a + b, 0);
    expect(total).toBe(12 * 40 * CHUNK + 6 * 4);
    // (once the turn's bytes are spent, each body flowing may hand over the chunk it holds before it waits)
    expect(Math.max(...turns)).toBeLessThanOrEqual(DRAIN_TURN_BYTES + requests.length * CHUNK);
    // and the turns after the first: the bodies let flow again (DRAINS_RESUMED_A_TURN) add one chunk each
    expect(Math.max(...turns.slice(2))).toBeLessThanOrEqual(DRAIN_TURN_BYTES + DRAINS_RESUMED_A_TURN * CHUNK);
  });
});

describe('parseJsonText', () => {
  it('parses JSON, drops prototype keys, reads an empty body as undefined, refuses malformed JSON', () => {
    expect(parseJsonText('{"a":1,"__proto__":{"x":1}}')).toEqual({ a: 1 });
    // The key spelt with escapes, and constructor.prototype, go too (a body without either is parsed as it is).
    expect(parseJsonText('{"a":1,"\\u005f_proto__":{"x":1}}')).toEqual({ a: 1 });
    expect(parseJsonText('{"a":{"constructor":{"prototype":{"x":1}}}}')).toEqual({ a: {} });
    expect(parseJsonText('{"a":{"b":[1,"\\u0041"]}}')).toEqual({ a: { b: [1, 'A'] } });
    const plain = parseJsonText('{"a":[{"b":"proto"}]}') as object;
    expect(Object.getPrototypeOf(plain)).toBe(Object.prototype);
    expect(parseJsonText('  ')).toBeUndefined();
    expect(() => parseJsonText('{')).toThrow(/not valid JSON/);
  });
});

describe('releaseBody', () => {
  /** A body of `bytes` read through readBody: with its length declared, or sent in 64 KiB chunks without it. */
  async function bodyOf(bytes: number, declared: boolean) {
    const req = fakeRequest(declared ? { 'content-length': String(bytes) } : {});
    const read = readBody(asRaw(req), req);
    for (let sent = 0; sent < bytes; sent += 64 * 1024)
      req.write(Buffer.alloc(Math.min(64 * 1024, bytes - sent), 0x20));
    req.end();
    return read;
  }

  it('frees a large body readBody read into a buffer of its own at once, outside the heap', async () => {
    const bodies = [
      ...(await Promise.all(Array.from({ length: 4 }, () => bodyOf(4 * 1024 * 1024, true)))),
      ...(await Promise.all(Array.from({ length: 4 }, () => bodyOf(4 * 1024 * 1024, false)))),
    ];
    expect(bodies.every((b) => b.length === 4 * 1024 * 1024)).toBe(true);
    // (the chunks the bodies were sent in are garbage not yet collected: only the drop is the bodies')
    const held = process.memoryUsage().arrayBuffers;
    for (const body of bodies) releaseBody(body);
    expect(held - process.memoryUsage().arrayBuffers).toBeGreaterThanOrEqual(32 * 1024 * 1024);
    expect(bodies.every((b) => b.length === 0)).toBe(true);
  });

  it('leaves a small body, a body that came as one chunk (the stream’s own), and any other buffer as they are', async () => {
    const small = await bodyOf(LARGE_BODY_BYTES, true);
    releaseBody(small);
    expect(small.length).toBe(LARGE_BODY_BYTES);

    const chunk = Buffer.alloc(2 * LARGE_BODY_BYTES, 0x31);
    const req = fakeRequest();
    const read = readBody(asRaw(req), req);
    req.end(chunk);
    const one = await read;
    releaseBody(one);
    expect(chunk.length).toBe(2 * LARGE_BODY_BYTES);
    expect(chunk[0]).toBe(0x31);

    const other = Buffer.allocUnsafeSlow(4 * LARGE_BODY_BYTES).fill(2);
    releaseBody(other);
    expect(other.length).toBe(4 * LARGE_BODY_BYTES);
  });
});
