// The CLI's REST client: global fetch, every answer an envelope {STATUS, MESSAGE, DATA}. The token is kept in a
// private field and only ever written into the Authorization header.
import { randomUUID } from 'node:crypto';
import { type Envelope, NDJSON } from '../../src/contract/wire.js';
import { takesIdempotencyKey } from '../../src/contract/write-headers.js';

export type Data = Record<string, unknown>;

/** The service refused (STATUS FAIL): exit 1. */
export class Refusal extends Error {
  /** Where the refused command acted (the service, the tenant, the file), when it says so: shown with the refusal. */
  where?: { service: string; tenant?: string; file?: string };
  /** Lines to print before the refusal's own (a model document's problems, each at its line in the file). */
  detail?: string;

  constructor(
    readonly status: number,
    readonly envelope: Envelope,
  ) {
    super(envelope.MESSAGE);
    this.name = 'Refusal';
  }

  get reason(): string {
    const reason = this.envelope.DATA?.reason;
    return typeof reason === 'string' ? reason : 'unknown';
  }
}

/** No usable answer: the service could not be reached, or answered something that is not an envelope. Exit 3. */
export class TransportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TransportError';
  }
}

/** Wrong use of the command line: exit 2 with a usage line. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly usage?: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Sends of one request at most, the first included, while the service answers 503 (or 429 with Retry-After). */
export const RETRY_ATTEMPTS = 4;

/**
 * The wait before retry `attempt` + 1: the service's Retry-After (at most 5 s), else 250 ms doubling; plus up to
 * half of it at random, so that clients refused together do not all come back at the same moment.
 */
export function retryDelayMs(
  retryAfter: string | null,
  attempt: number,
  random: () => number = Math.random,
): number {
  const seconds = retryAfter === null ? Number.NaN : Number(retryAfter);
  const base =
    Number.isFinite(seconds) && seconds >= 0 ? Math.min(seconds, 5) * 1000 : 250 * 2 ** (attempt - 1);
  return base * (1 + 0.5 * random());
}

export function isEnvelope(value: unknown): value is Envelope {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    (v.STATUS === 'SUCCESS' || v.STATUS === 'FAIL') &&
    typeof v.MESSAGE === 'string' &&
    typeof v.DATA === 'object' &&
    v.DATA !== null &&
    !Array.isArray(v.DATA)
  );
}

export interface RequestOptions {
  query?: Record<string, string | undefined>;
  body?: unknown;
  /** Extra request headers (X-Change-Reason). */
  headers?: Record<string, string>;
}

export class Client {
  readonly #token: string | undefined;
  readonly #base: URL;

  /** `baseUrl`: http(s) address of the service, possibly with a path prefix. */
  constructor(baseUrl: string, token: string | undefined) {
    let base: URL;
    try {
      base = new URL(baseUrl);
    } catch {
      throw new UsageError(`--url must be an http(s) address, not "${baseUrl}".`);
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:') {
      throw new UsageError(`--url must be an http(s) address, not "${baseUrl}".`);
    }
    if (base.username || base.password) throw new UsageError('--url must not carry credentials.');
    this.#base = base;
    const trimmed = token === undefined || token.trim() === '' ? undefined : token.trim();
    // A token is printable ASCII (a JWT is base64url and dots); anything else would make fetch quote it in an error.
    if (trimmed !== undefined && !/^[\x21-\x7e]+$/.test(trimmed)) {
      throw new UsageError(
        'the token (--token or METAMODEL_TOKEN) has characters a bearer token cannot have.',
      );
    }
    this.#token = trimmed;
  }

  get baseUrl(): string {
    return this.#base.href;
  }

  get hasToken(): boolean {
    return this.#token !== undefined;
  }

  /** `path` starts with `/`; its segments must already be percent-encoded. */
  url(path: string, query: Record<string, string | undefined> = {}): string {
    const prefix = this.#base.pathname.replace(/\/+$/, '');
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, value);
    const search = params.size > 0 ? `?${params}` : '';
    return `${this.#base.origin}${prefix}${path}${search}`;
  }

  async #fetch(
    method: string,
    path: string,
    options: RequestOptions,
    accept: string,
    idempotencyKey?: string,
  ): Promise<Response> {
    const url = this.url(path, options.query);
    const headers: Record<string, string> = { ...options.headers, accept };
    if (this.#token !== undefined) headers.authorization = `Bearer ${this.#token}`;
    if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
    let body: string | undefined;
    if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.body);
    }
    try {
      return await fetch(url, { method, headers, ...(body !== undefined ? { body } : {}) });
    } catch (err) {
      // Only the network error's code: fetch's messages may quote the request's headers.
      const why = (err as { cause?: { code?: string } }).cause?.code ?? 'no connection';
      throw new TransportError(
        `cannot reach the service at ${this.#base.origin} (${why}); is it running? Set --url or METAMODEL_URL.`,
      );
    }
  }

  /** Reads one envelope; returns its DATA on SUCCESS, throws a Refusal on FAIL. */
  async #envelope<D>(res: Response, method: string, path: string): Promise<D> {
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      throw new TransportError(`the answer to ${method} ${path} was cut off (${(err as Error).message}).`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (!isEnvelope(parsed)) {
      const type = res.headers.get('content-type') ?? 'no content type';
      throw new TransportError(
        `unexpected answer to ${method} ${path}: HTTP ${res.status} (${type}), not an envelope. Is --url the metamodel service?`,
      );
    }
    if (parsed.STATUS === 'FAIL') throw new Refusal(res.status, parsed);
    return parsed.DATA as D;
  }

  /**
   * One request; returns DATA of a SUCCESS envelope. A write carries an Idempotency-Key (one per command, the same
   * on every retry), so an answer of 503 (the database away or busy), or of 429 with Retry-After (the tenant's own
   * requests holding its turns), is retried with backoff, honouring Retry-After, without the write happening twice;
   * reads are retried the same way.
   */
  async request<D = Data>(method: string, path: string, options: RequestOptions = {}): Promise<D> {
    const key = takesIdempotencyKey(method, path) ? randomUUID() : undefined;
    for (let attempt = 1; ; attempt += 1) {
      const res = await this.#fetch(method, path, options, 'application/json', key);
      // 503: the database away or the service busy; 429 with a short Retry-After: the tenant's own requests hold its
      // turns (a long one, such as a cap on keys, is not worth waiting for here).
      const wait = res.headers.get('retry-after');
      const again = res.status === 503 || (res.status === 429 && wait !== null && Number(wait) <= 5);
      if (again && attempt < RETRY_ATTEMPTS) {
        await res.text().catch(() => '');
        await new Promise((r) => setTimeout(r, retryDelayMs(res.headers.get('retry-after'), attempt)));
        continue;
      }
      return this.#envelope<D>(res, method, path);
    }
  }

  /**
   * A request answered with newline-delimited JSON: every line that is not an envelope goes to `onLine`; the last
   * line is the envelope, whose DATA is returned (or a Refusal thrown). An ordinary JSON answer (a refusal before
   * the stream began, or a service that does not stream) is read as one envelope.
   */
  async streamed<D = Data>(
    method: string,
    path: string,
    options: RequestOptions,
    onLine: (line: Data) => void,
  ): Promise<D> {
    const res = await this.#fetch(method, path, options, `${NDJSON}, application/json;q=0.5`);
    const type = (res.headers.get('content-type') ?? '').toLowerCase();
    if (!type.startsWith(NDJSON) || !res.body) return this.#envelope<D>(res, method, path);
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let pending = '';
    let final: Envelope | undefined;
    const take = (line: string) => {
      if (line.trim() === '') return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        throw new TransportError(`unexpected line in the answer to ${method} ${path}: not JSON.`);
      }
      if (isEnvelope(parsed)) final = parsed;
      else if (typeof parsed === 'object' && parsed !== null) onLine(parsed as Data);
    };
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        pending += decoder.decode(value, { stream: true });
        for (let at = pending.indexOf('\n'); at >= 0; at = pending.indexOf('\n')) {
          take(pending.slice(0, at));
          pending = pending.slice(at + 1);
        }
      }
    } catch (err) {
      if (err instanceof TransportError) throw err;
      throw new TransportError(
        `the answer to ${method} ${path} was cut off before its end (${(err as Error).message}).`,
      );
    }
    take(pending + decoder.decode());
    if (!final) {
      throw new TransportError(`the answer to ${method} ${path} ended without its final envelope.`);
    }
    if (final.STATUS === 'FAIL') throw new Refusal(res.status, final);
    return final.DATA as D;
  }
}
