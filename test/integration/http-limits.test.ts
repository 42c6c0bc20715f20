// What a client can hold of the server, bounded: requests Node refuses before a route (malformed, headers too large
// or too slow, unknown methods) answered in the envelope; body deadlines (total and idle); the connection cap; JSON
// shape limits checked while the body arrives; rooms no stalled body can hold; answers a client does not take. Over real sockets.
import { connect, type Socket } from 'node:net';
import { describe, expect, vi } from 'vitest';
import { LARGE_BODY_BYTES } from '../../src/body/read.js';
import { MAX_BODY_DEPTH, MAX_BODY_VALUES } from '../../src/json/scan.js';
import { itServed, type ServedWorld } from '../fixtures.js';
import { createWorld, newTenant, type TestWorld, tokenFor } from '../helpers.js';

const LIMITS = {
  HTTP_HEADERS_TIMEOUT_MS: '1000',
  HTTP_BODY_TIMEOUT_MS: '2500',
  HTTP_BODY_IDLE_TIMEOUT_MS: '800',
  HTTP_MAX_CONNECTIONS: '12',
  HTTP_ANSWER_TIMEOUT_MS: '500',
  HTTP_ANSWER_MS_PER_MIB: '50',
};
const it = itServed(LIMITS);

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: any;
  /** Milliseconds from the first byte sent to the answer. */
  ms: number;
}

/** Opens a socket; resolves once connected. */
function open(world: ServedWorld): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(world.port, '127.0.0.1', () => resolve(socket));
    socket.on('error', reject);
  });
}

/** Reads one HTTP answer (the server closes or sends Content-Length) from a socket. */
function answerOf(socket: Socket, started = performance.now()): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    let text = '';
    const tryParse = () => {
      const head = text.indexOf('\r\n\r\n');
      if (head < 0) return false;
      const lines = text.slice(0, head).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines.slice(1)) {
        const at = line.indexOf(':');
        headers[line.slice(0, at).toLowerCase()] = line.slice(at + 1).trim();
      }
      const length = Number(headers['content-length'] ?? Number.NaN);
      const body = text.slice(head + 4);
      if (Number.isNaN(length) || Buffer.byteLength(body) < length) return false;
      resolve({
        status: Number(lines[0]?.split(' ')[1]),
        headers,
        body: JSON.parse(body.slice(0, length)),
        ms: performance.now() - started,
      });
      return true;
    };
    socket.on('data', (d) => {
      text += d.toString('utf8');
      tryParse();
    });
    socket.on('end', () => {
      if (!tryParse()) reject(new Error(`connection ended without an answer: ${JSON.stringify(text)}`));
    });
    socket.on('error', () => {});
  });
}

async function send(world: ServedWorld, raw: string | Buffer): Promise<RawAnswer> {
  const socket = await open(world);
  const answer = answerOf(socket);
  socket.write(raw);
  try {
    return await answer;
  } finally {
    socket.destroy();
  }
}

const head = (token: string, method: string, path: string, extra = '') =>
  `${method} ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\n${extra}`;

describe('Requests Node refuses before a route: answered in the envelope', () => {
  it('headers over the size limit: 431 headers_too_large', async ({ world }) => {
    const res = await send(world, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect([res.status, res.body.STATUS, res.body.DATA.reason]).toEqual([431, 'FAIL', 'headers_too_large']);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
  });

  it('a malformed request line: 400 invalid_request', async ({ world }) => {
    const res = await send(world, 'GET /\u0001 HTTP/1.1\r\nHost: x\r\n\r\n');
    expect([res.status, res.body.DATA.reason]).toEqual([400, 'invalid_request']);
  });

  it('a method HTTP does not know: 405 method_not_allowed', async ({ world }) => {
    const res = await send(world, 'FROB /entities/types HTTP/1.1\r\nHost: x\r\n\r\n');
    expect([res.status, res.body.DATA.reason]).toEqual([405, 'method_not_allowed']);
  });

  it('headers that do not finish within HTTP_HEADERS_TIMEOUT_MS: 408 request_timeout', async ({ world }) => {
    const socket = await open(world);
    const started = performance.now();
    const answer = answerOf(socket, started);
    socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
    const res = await answer;
    socket.destroy();
    expect([res.status, res.body.DATA.reason]).toEqual([408, 'request_timeout']);
    // Node checks header deadlines every second.
    expect(res.ms).toBeGreaterThanOrEqual(900);
    expect(res.ms).toBeLessThan(3_500);
  });
});

describe('Body deadlines', () => {
  it('a body that trickles in (one byte every 300 ms) is refused at the total deadline, not held forever', async ({
    world,
  }) => {
    const token = await tokenFor(newTenant());
    const socket = await open(world);
    const started = performance.now();
    const answer = answerOf(socket, started);
    socket.write(`${head(token, 'POST', '/entities/types', 'Content-Length: 1000\r\n')}\r\n{"name":"`);
    const drip = setInterval(() => socket.writable && socket.write('a'), 300);
    const res = await answer;
    clearInterval(drip);
    socket.destroy();
    expect([res.status, res.body.DATA.reason]).toEqual([408, 'request_timeout']);
    expect(res.ms).toBeGreaterThanOrEqual(2_400);
    expect(res.ms).toBeLessThan(4_000);
  });

  it('a body that stops arriving is refused at the idle deadline', async ({ world }) => {
    const token = await tokenFor(newTenant());
    const socket = await open(world);
    const answer = answerOf(socket);
    socket.write(`${head(token, 'POST', '/entities/types', 'Content-Length: 100\r\n')}\r\n{"name":`);
    const res = await answer;
    socket.destroy();
    expect([res.status, res.body.DATA.reason]).toEqual([408, 'request_timeout']);
    expect(res.ms).toBeGreaterThanOrEqual(700);
    expect(res.ms).toBeLessThan(2_000);
  });
});

/** A plan of a 3.4 MB document of 50,000 definitions of types of 256 four-byte characters: a 33 MB answer. */
const widePlanBody = () =>
  Buffer.from(
    JSON.stringify({
      format: 'entity-metamodel/v1',
      types: Array.from({ length: 1000 }, (_, t) => ({
        name: `${String(t).padStart(4, '0')}${'\u{1F600}'.repeat(126)}`,
        attributes: Array.from({ length: 50 }, (_, a) => ({
          name: `a${a}`,
          value_type: 'json',
          cardinality: 'single',
        })),
      })),
    }),
  );

describe('An answer its client does not take', () => {
  it('resets its connection after HTTP_ANSWER_TIMEOUT_MS plus HTTP_ANSWER_MS_PER_MIB a MiB, and gives its reservation back', async ({
    world,
  }) => {
    const token = await tokenFor(newTenant());
    const body = widePlanBody();
    const socket = await open(world);
    let start = '';
    let received = 0;
    let headersAt = 0;
    const ended = new Promise<string>((resolve) => {
      socket.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
      socket.on('close', () => resolve('closed'));
    });
    const headers = new Promise<void>((resolve) => {
      socket.on('data', (d: Buffer) => {
        received += d.length;
        if (headersAt > 0) return;
        start += d.toString('latin1');
        if (start.includes('\r\n\r\n')) {
          headersAt = performance.now();
          // The client stops reading: the answer fills the sockets' buffers, and the server's write waits.
          socket.pause();
          resolve();
        }
      });
    });
    socket.write(`${head(token, 'POST', '/entities/model/plan', `Content-Length: ${body.length}\r\n`)}\r\n`);
    socket.write(body);
    await headers;
    expect(start.slice(0, 12)).toBe('HTTP/1.1 200');
    const length = Number(/content-length: (\d+)/i.exec(start)?.[1]);
    expect(length).toBeGreaterThan(30 * 1024 * 1024);
    const bound = 500 + (length / (1024 * 1024)) * 50;
    const admission = world.app.services.admission;
    expect(admission.inUse).toBeGreaterThan(0);
    // The server gives up at its bound (counted from the answer's start, a moment before its headers came), not
    // sooner: what the plan reserved is given back then.
    await vi.waitFor(() => expect(admission.inUse).toBe(0), { timeout: bound + 3_000, interval: 50 });
    expect(performance.now() - headersAt).toBeGreaterThan(bound - 500);
    // The client, reading again, finds its connection reset before the answer's end.
    socket.resume();
    expect(await ended).toMatch(/ECONNRESET|closed/);
    expect(received).toBeLessThan(length);

    // A client that reads it takes the whole answer (over a connection of its own, closed after).
    const reader = await open(world);
    const whole = new Promise<{ head: string; bytes: number }>((resolve) => {
      const chunks: Buffer[] = [];
      reader.on('data', (d: Buffer) => chunks.push(d));
      reader.on('end', () => {
        const all = Buffer.concat(chunks);
        const at = all.indexOf('\r\n\r\n');
        resolve({ head: all.toString('latin1', 0, at), bytes: all.length - at - 4 });
      });
    });
    reader.write(
      `${head(token, 'POST', '/entities/model/plan', `Content-Length: ${body.length}\r\nConnection: close\r\n`)}\r\n`,
    );
    reader.write(body);
    const taken = await whole;
    expect(taken.head.slice(0, 12)).toBe('HTTP/1.1 200');
    expect(taken.bytes).toBe(Number(/content-length: (\d+)/i.exec(taken.head)?.[1]));
    reader.destroy();
  }, 60_000);
});

describe('JSON shape, checked while the body arrives', () => {
  it(`nested deeper than ${MAX_BODY_DEPTH}: 400 json_too_deep; at the limit it is read and judged on its content`, async ({
    world,
  }) => {
    const token = await tokenFor(newTenant());
    const body = (depth: number) => `{"name":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;
    const over = await send(
      world,
      `${head(token, 'POST', '/entities/types', `Content-Length: ${body(MAX_BODY_DEPTH + 1).length}\r\n`)}\r\n${body(MAX_BODY_DEPTH + 1)}`,
    );
    expect([over.status, over.body.DATA.reason]).toEqual([400, 'json_too_deep']);
    const at = await send(
      world,
      `${head(token, 'POST', '/entities/types', `Content-Length: ${body(MAX_BODY_DEPTH).length}\r\n`)}\r\n${body(MAX_BODY_DEPTH)}`,
    );
    expect([at.status, at.body.DATA.reason]).toEqual([400, 'invalid_field']);
  });

  it(`more than ${MAX_BODY_VALUES.toLocaleString('en-US')} values (an 8 MB array of {}): 400 json_too_large, answered before the body ends`, async ({
    world,
  }) => {
    const token = await tokenFor(newTenant());
    const body = Buffer.from(`{"name":[${'{},'.repeat(2_700_000)}{}]}`);
    const socket = await open(world);
    const started = performance.now();
    const answer = answerOf(socket, started);
    socket.write(`${head(token, 'POST', '/entities/types', `Content-Length: ${body.length}\r\n`)}\r\n`);
    let sent = 0;
    let answered = false;
    void answer.then(() => {
      answered = true;
    });
    while (sent < body.length && !answered && socket.writable) {
      const ok = socket.write(body.subarray(sent, sent + 65_536));
      sent += 65_536;
      if (!ok) await new Promise((r) => socket.once('drain', r));
    }
    const res = await answer;
    socket.destroy();
    expect([res.status, res.body.DATA.reason]).toEqual([400, 'json_too_large']);
    expect(res.ms).toBeLessThan(1_000);
  });
});

describe('Connection cap (HTTP_MAX_CONNECTIONS)', () => {
  it('connections over the cap are closed at once; the server serves again when some close', async ({
    world,
  }) => {
    // Earlier tests' connections may still be closing on the server side: start from none.
    const connections = () =>
      new Promise<number>((resolve) => world.app.server.getConnections((_e, n) => resolve(n)));
    for (let i = 0; i < 100 && (await connections()) > 0; i += 1) await new Promise((r) => setTimeout(r, 50));
    expect(await connections()).toBe(0);
    const held = await Promise.all(
      Array.from({ length: Number(LIMITS.HTTP_MAX_CONNECTIONS) }, () => open(world)),
    );
    await new Promise((r) => setTimeout(r, 100));
    const extra = await open(world);
    const closed = await new Promise<boolean>((resolve) => {
      extra.on('close', () => resolve(true));
      setTimeout(() => resolve(false), 1_000);
      extra.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    });
    expect(closed).toBe(true);
    for (const s of held) s.destroy();
    await new Promise((r) => setTimeout(r, 100));
    const res = await send(world, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(res.status).toBe(200);
  });
});

describe('No room is held by a slow sender', () => {
  it('tenants each stalling a large chunked body hold only what they sent: another tenant is read and served at once', async ({
    world,
  }) => {
    // Six tenants, one stalled upload each (chunked: no length declared), each past the large-body size.
    const hogs = await Promise.all(Array.from({ length: 6 }, () => open(world)));
    for (const [i, socket] of hogs.entries()) {
      const token = await tokenFor(newTenant(`hog${i}`));
      answerOf(socket).catch(() => {});
      const chunk = `{"query":"${'x'.repeat(LARGE_BODY_BYTES + 10)}`;
      socket.write(
        `${head(token, 'POST', '/graphql', 'Transfer-Encoding: chunked\r\n')}\r\n${chunk.length.toString(16)}\r\n${chunk}\r\n`,
      );
    }
    await new Promise((r) => setTimeout(r, 200));
    // What they hold is what they sent (a block each), not what a whole body could be.
    expect(world.app.services.admission.inUse).toBeLessThanOrEqual(6 * 1024 * 1024);

    const otherToken = await tokenFor(newTenant('other'));
    const name = 'y'.repeat(LARGE_BODY_BYTES + 10);
    const body = JSON.stringify({ name });
    const res = await send(
      world,
      `${head(otherToken, 'POST', '/entities/types', `Content-Length: ${body.length}\r\n`)}\r\n${body}`,
    );
    // Judged on its content (a name that long is refused), promptly: it did not wait behind the stalled bodies.
    expect([res.status, res.body.DATA.reason], res.body.MESSAGE).toEqual([400, 'name_too_long']);
    expect(res.ms).toBeLessThan(500);
    const query = JSON.stringify({ query: '{ entityTypes(first: 5) { edges { node { name } } } }' });
    const graphql = await send(
      world,
      `${head(otherToken, 'POST', '/graphql', `Content-Length: ${query.length}\r\n`)}\r\n${query}`,
    );
    expect(graphql.status).toBe(200);
    expect(graphql.ms).toBeLessThan(500);
    for (const socket of hogs) socket.destroy();
  });
});

describe('Refusals of what a request asks for, in the envelope or as a GraphQL refusal', () => {
  const post = async (world: TestWorld, url: string, headers: Record<string, string>, payload: string) => {
    const token = await tokenFor(newTenant());
    return world.app.inject({
      method: 'POST',
      url,
      headers: { authorization: `Bearer ${token}`, ...headers },
      payload,
    });
  };

  it('a Content-Type that is not a media type: 415 unsupported_media_type, nothing read', async ({
    world,
  }) => {
    const res = await post(world, '/entities/types', { 'content-type': '/' }, '{"name":"Unread"}');
    expect([res.statusCode, res.json().STATUS, res.json().DATA.reason]).toEqual([
      415,
      'FAIL',
      'unsupported_media_type',
    ]);
  });

  it('/graphql asked for an answer other than JSON: 406 not_acceptable; JSON or a wildcard is answered', async ({
    world,
  }) => {
    const query = JSON.stringify({ query: '{ entityTypes(first: 1) { edges { node { name } } } }' });
    const refused = await post(
      world,
      '/graphql',
      { 'content-type': 'application/json', accept: 'text/plain' },
      query,
    );
    expect([refused.statusCode, refused.json().DATA.reason]).toEqual([406, 'not_acceptable']);
    const zero = await post(
      world,
      '/graphql',
      { 'content-type': 'application/json', accept: 'application/json;q=0' },
      query,
    );
    expect(zero.statusCode).toBe(406);
    for (const accept of [
      'application/json',
      'application/graphql-response+json',
      '*/*',
      'text/html;q=0.5, */*',
    ]) {
      const res = await post(world, '/graphql', { 'content-type': 'application/json', accept }, query);
      expect([accept, res.statusCode, res.json().errors]).toEqual([accept, 200, undefined]);
    }
  });

  it('a subscription: operation_not_supported, never a 5xx', async ({ world }) => {
    const res = await post(
      world,
      '/graphql',
      { 'content-type': 'application/json' },
      JSON.stringify({ query: 'subscription { x }' }),
    );
    expect(res.statusCode).toBeLessThan(500);
    expect(res.json().errors[0].extensions.reason).toBe('operation_not_supported');
  });
});

describe('GraphQL operations waiting past GRAPHQL_QUEUE_TIMEOUT_MS', () => {
  it('are answered 503 server_busy with Retry-After; the others are answered', async () => {
    const busy = await createWorld({ GRAPHQL_CONCURRENCY: '1', GRAPHQL_QUEUE_TIMEOUT_MS: '1' });
    try {
      const token = await tokenFor(newTenant());
      const answers = await Promise.all(
        Array.from({ length: 20 }, () =>
          busy.app.inject({
            method: 'POST',
            url: '/graphql',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            payload: JSON.stringify({ query: '{ entityTypes(first: 5) { edges { node { name } } } }' }),
          }),
        ),
      );
      const busyOnes = answers.filter((a) => a.statusCode === 503);
      expect(busyOnes.length).toBeGreaterThan(0);
      for (const a of busyOnes) {
        expect(a.json().DATA.reason).toBe('server_busy');
        expect(a.headers['retry-after']).toBe('1');
      }
      expect(answers.filter((a) => a.statusCode === 200).length).toBeGreaterThan(0);
      expect(answers.map((a) => a.statusCode).filter((s) => s !== 200 && s !== 503)).toEqual([]);
    } finally {
      await busy.close();
    }
  });
});
