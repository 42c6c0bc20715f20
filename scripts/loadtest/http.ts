// A small HTTP client for the load test's --instances N traffic: keep-alive connections per service instance, one
// request at a time per virtual client, every outcome an answer (status 0 when the connection failed or timed out).
import http from 'node:http';

export interface Answer {
  /** 0: no answer (connection refused or cut, or timed out). */
  status: number;
  body: string;
  headers: http.IncomingHttpHeaders;
  /** Why there is no answer (status 0). */
  error?: string;
  timedOut?: boolean;
}

export class HttpTarget {
  private readonly agent: http.Agent;

  constructor(
    readonly host: string,
    readonly port: number,
    maxSockets: number,
  ) {
    this.agent = new http.Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets });
  }

  send(
    method: string,
    path: string,
    headers: Record<string, string>,
    body: string | undefined,
    timeoutMs: number,
  ): Promise<Answer> {
    return new Promise((resolve) => {
      let settled = false;
      const settle = (answer: Answer) => {
        if (settled) return;
        settled = true;
        resolve(answer);
      };
      const req = http.request(
        {
          host: this.host,
          port: this.port,
          method,
          path,
          agent: this.agent,
          headers: {
            ...headers,
            ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () =>
            settle({
              status: res.statusCode ?? 0,
              body: Buffer.concat(chunks).toString('utf8'),
              headers: res.headers,
            }),
          );
          res.on('error', (e) => settle({ status: 0, body: '', headers: {}, error: e.message }));
          res.on('aborted', () => settle({ status: 0, body: '', headers: {}, error: 'response aborted' }));
        },
      );
      req.setTimeout(timeoutMs, () => {
        settle({ status: 0, body: '', headers: {}, error: 'timeout', timedOut: true });
        req.destroy();
      });
      req.on('error', (e: NodeJS.ErrnoException) =>
        settle({ status: 0, body: '', headers: {}, error: e.code ?? e.message }),
      );
      req.end(body);
    });
  }

  close() {
    this.agent.destroy();
  }
}

/** The guid of what a write answer acknowledges (type, definition or entity), if any. */
export function acknowledgedGuid(data: Record<string, unknown>): string | undefined {
  const row = (data.entity_type ?? data.attribute ?? data.entity) as { guid?: unknown } | undefined;
  return typeof row?.guid === 'string' ? row.guid : undefined;
}
