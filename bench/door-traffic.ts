// The door storm's traffic: each shape of bench/door-shapes.ts sent at its concurrency over keep-alive connections,
// every answer read whole and classified ("status reason"), its size and the statements it cost (x-db-queries)
// kept per door, so that the run can hold each door to its stated budget under attack.
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import type { DoorRequest, DoorSetup, DoorShape } from './door-shapes.js';
import { percentile } from './lib.js';
import { answerKey } from './storm.js';

export interface DoorShapeResult {
  name: string;
  label: string;
  doors: string[];
  requests: number;
  concurrency: number;
  /** Answers by "status reason". */
  answers: Record<string, number>;
  /** Answers not among the shape's expected ones. */
  unexpected: Record<string, number>;
  ms: number;
  answerMs: { p50: number; p99: number; max: number };
  /** The largest answer (bytes) and the most statements one request cost. */
  largestAnswer: number;
  mostStatements: number;
  /** When the shape ran (epoch ms), for the probes' windows. */
  from: number;
  to: number;
}

/** Enough of an answer to read its reason; the rest is counted. */
const KEEP = 64 * 1024;
const epoch = () => performance.timeOrigin + performance.now();

/** Writes a request's body as its shape says: whole, only its start, or its start and then a byte at a time. */
function writeBody(req: http.ClientRequest, r: DoorRequest, body: Buffer | undefined) {
  if (!body || (r.sendBytes === undefined && r.trickleMs === undefined)) return req.end(body);
  const start = body.subarray(0, r.sendBytes ?? 0);
  if (start.length > 0) req.write(start);
  if (r.trickleMs === undefined) return;
  let at = start.length;
  const drip = setInterval(() => {
    if (req.destroyed || at >= body.length) {
      clearInterval(drip);
      if (!req.destroyed) req.end();
      return;
    }
    req.write(body.subarray(at, at + 1));
    at += 1;
  }, r.trickleMs);
  req.once('close', () => clearInterval(drip));
}

function send(
  port: number,
  agent: http.Agent,
  setup: DoorSetup,
  r: DoorRequest,
  body: Buffer | undefined,
  client: string,
): Promise<{ key: string; bytes: number; statements: number; ms: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const auth = r.auth ?? 'attacker';
    const length = body && r.trickleMs === undefined ? { 'content-length': String(body.length) } : {};
    const req = http.request({
      host: '127.0.0.1',
      port,
      method: r.method,
      path: r.path,
      agent,
      headers: {
        // Each connection a client of its own (the service trusts this proxy's X-Forwarded-For in the storm).
        'x-forwarded-for': client,
        ...(auth === 'none' ? {} : { authorization: setup.auth[auth] }),
        ...(body ? { 'content-type': 'application/json', ...length } : {}),
        ...r.headers,
      },
      timeout: 120_000,
    });
    const done = (key: string, bytes = 0, statements = 0) =>
      resolve({ key, bytes, statements, ms: performance.now() - started });
    req.on('timeout', () => {
      req.destroy();
      done('timeout');
    });
    req.on('error', () => done('reset'));
    if (r.abandonAfterMs !== undefined) {
      // The client goes away: whatever the service does next, it is told by the connection closing.
      setTimeout(() => {
        done('abandoned');
        req.destroy();
      }, r.abandonAfterMs);
    }
    req.on('response', (res) => {
      const kept: Buffer[] = [];
      let bytes = 0;
      res.on('data', (chunk: Buffer) => {
        if (bytes < KEEP) kept.push(chunk);
        bytes += chunk.length;
        const pace = r.readBytesPerSecond;
        if (pace !== undefined) {
          res.pause();
          setTimeout(() => res.resume(), (chunk.length / pace) * 1000);
        }
      });
      res.on('end', () => {
        // A REST success counts as its status, a GraphQL one as "200 data", a refusal as "status reason"; a page,
        // metrics text or an answer too large to keep as its status (a large GraphQL one as data).
        const status = res.statusCode ?? 0;
        const json = String(res.headers['content-type'] ?? '').includes('json');
        const key = !json
          ? String(status)
          : bytes > KEEP
            ? r.path.startsWith('/graphql')
              ? `${status} data`
              : String(status)
            : answerKey(status, Buffer.concat(kept).toString());
        done(key, bytes, Number(res.headers['x-db-queries'] ?? 0));
      });
      res.on('error', () => done('reset'));
    });
    writeBody(req, r, body);
  });
}

/** Runs one shape to its end; a body of more than 64 KB is made once per eight requests (the client's own cost). */
export async function runDoorShape(
  port: number,
  setup: DoorSetup,
  shape: DoorShape,
  /** Keep sending until this long has passed (so that the victim's requests meanwhile are enough for a p99). */
  minMs = 0,
  /**
   * Send no more once this long has passed and every connection has sent one (unless the shape is `whole`): the
   * shape's requests are its size on a fast machine, and its attack is its concurrency kept up, not their number.
   */
  maxMs = Number.POSITIVE_INFINITY,
): Promise<DoorShapeResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: shape.concurrency });
  const bodies = new Map<number, Buffer>();
  const bodyOf = (i: number, r: DoorRequest) => {
    if (r.body === undefined) return undefined;
    const cached = bodies.get(i % 8);
    if (cached) return cached;
    const buffer = Buffer.from(typeof r.body === 'string' ? r.body : JSON.stringify(r.body));
    if (buffer.length > 64 * 1024) bodies.set(i % 8, buffer);
    return buffer;
  };
  const answers: Record<string, number> = {};
  const times: number[] = [];
  let largestAnswer = 0;
  let mostStatements = 0;
  let next = 0;
  const from = epoch();
  const started = performance.now();
  const round = Math.min(shape.concurrency, shape.requests);
  const more = () => {
    const ms = performance.now() - started;
    if (ms < minMs) return true;
    if (next >= shape.requests) return false;
    return shape.whole === true || ms < maxMs || next < round;
  };
  // (an address per connection, in a /16 of the shape's own)
  const net = [...shape.name].reduce((h, c) => (h * 31 + c.charCodeAt(0)) % 250, 7) + 1;
  const worker = async (w: number) => {
    const client = `10.${net}.${w >> 8}.${w & 255}`;
    while (more()) {
      const i = next++;
      const r = shape.request(setup, i);
      const out = await send(port, agent, setup, r, bodyOf(i, r), client);
      answers[out.key] = (answers[out.key] ?? 0) + 1;
      times.push(out.ms);
      largestAnswer = Math.max(largestAnswer, out.bytes);
      mostStatements = Math.max(mostStatements, out.statements);
    }
  };
  await Promise.all(Array.from({ length: Math.min(shape.concurrency, shape.requests) }, (_, w) => worker(w)));
  agent.destroy();
  times.sort((a, b) => a - b);
  const unexpected = Object.fromEntries(Object.entries(answers).filter(([k]) => !shape.expected.includes(k)));
  return {
    name: shape.name,
    label: shape.label,
    doors: shape.doors,
    requests: next,
    concurrency: shape.concurrency,
    answers,
    unexpected,
    ms: performance.now() - started,
    answerMs: { p50: percentile(times, 50), p99: percentile(times, 99), max: times[times.length - 1] ?? 0 },
    largestAnswer,
    mostStatements,
    from,
    to: epoch(),
  };
}
