// The refused-body storm: many concurrent requests with bodies over the service's 8 MB limit, either declared
// (Content-Length 9 MB, only the first 64 KB sent) or streamed (chunked, no length, sent until the answer comes).
// Every one should be answered 413 without the service holding the bodies.
import http from 'node:http';

export interface StormResult {
  kind: 'declared' | 'streamed';
  requests: number;
  concurrency: number;
  /** Answers by status ("reset" when the connection ended without one). */
  statuses: Record<string, number>;
  bytesSent: number;
  ms: number;
}

const CHUNK = Buffer.alloc(64 * 1024, 0x20);

function oneRequest(
  port: number,
  authorization: string,
  kind: 'declared' | 'streamed',
  bodyBytes: number,
): Promise<{ status: string; sent: number }> {
  return new Promise((resolve) => {
    let sent = 0;
    let settled = false;
    const done = (status: string) => {
      if (settled) return;
      settled = true;
      resolve({ status, sent });
      req.destroy();
    };
    const req = http.request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/entities/types',
      agent: false,
      headers: {
        authorization,
        'content-type': 'application/json',
        ...(kind === 'declared'
          ? { 'content-length': String(bodyBytes) }
          : { 'transfer-encoding': 'chunked' }),
      },
    });
    req.setTimeout(30_000, () => done('timeout'));
    req.on('error', () => done('reset'));
    req.on('response', (res) => {
      const status = String(res.statusCode);
      res.resume();
      res.on('end', () => done(status));
      res.on('error', () => done(status));
    });
    const pump = () => {
      // Declared: only the start of the body; streamed: until the limit is passed or the answer arrives.
      const limit = kind === 'declared' ? CHUNK.length : bodyBytes;
      while (!settled && sent < limit) {
        sent += CHUNK.length;
        if (!req.write(CHUNK)) {
          req.once('drain', pump);
          return;
        }
      }
      if (kind === 'streamed' && !settled && sent >= limit) req.end();
    };
    pump();
  });
}

export async function bodyStorm(
  port: number,
  authorization: string,
  kind: 'declared' | 'streamed',
  requests: number,
  concurrency: number,
  bodyBytes = 9 * 1024 * 1024,
): Promise<StormResult> {
  const started = performance.now();
  const statuses: Record<string, number> = {};
  let bytesSent = 0;
  let next = 0;
  const worker = async () => {
    while (next < requests) {
      next += 1;
      const { status, sent } = await oneRequest(port, authorization, kind, bodyBytes);
      statuses[status] = (statuses[status] ?? 0) + 1;
      bytesSent += sent;
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, requests) }, worker));
  return { kind, requests, concurrency, statuses, bytesSent, ms: performance.now() - started };
}
