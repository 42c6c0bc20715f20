// The JSON envelope every REST response uses: {STATUS, MESSAGE, DATA}.
import type { FastifyReply } from 'fastify';
import type { Envelope } from '../contract/wire.js';
import { type AppError, refusalExtensions } from '../errors.js';
import { SLICE_CHARS, serialiseInSlices, sizeWithin } from '../json-slices.js';

/** A success answer; a large one is serialised a slice at a time, the event loop turning between slices. */
export function succeed(reply: FastifyReply, status: number, data: Record<string, unknown>) {
  const body: Envelope = { STATUS: 'SUCCESS', MESSAGE: '', DATA: data };
  reply.code(status).type('application/json; charset=utf-8');
  if (sizeWithin(body, SLICE_CHARS) !== undefined) return reply.send(body);
  return serialiseInSlices(body).then((bytes) => reply.send(bytes));
}

/**
 * The same answer with DATA already serialised (a cached page's, serialised once per model version): the envelope
 * around it is the same bytes `succeed` would send.
 */
export function succeedSerialised(reply: FastifyReply, status: number, dataJson: string) {
  return reply.code(status).type('application/json; charset=utf-8').send(successText(dataJson));
}

const successText = (dataJson: string) => `{"STATUS":"SUCCESS","MESSAGE":"","DATA":${dataJson}}`;

/**
 * A 200 answer kept with a cached value (a page or a listing, per model version) as its bytes: each request writes
 * the same buffer, with no text built, measured or encoded for it (before, each made two copies of the answer: the
 * envelope's text flattened, then its UTF-8 bytes). `cached` is what was kept; `keep` takes the bytes made from
 * `dataJson` when it had none. They get a buffer of their own (a small one from Node's shared pool would hold its
 * whole 8 KiB slab for as long as the cache keeps it). They are kept when their UTF-8 form is at most twice the
 * text's length, what the text took when it was kept instead; longer (mostly non-Latin text), the text is sent and
 * made again next time.
 */
export function succeedCached(
  reply: FastifyReply,
  cached: Buffer | undefined,
  dataJson: () => string,
  keep: (body: Buffer) => void,
) {
  let body: Buffer | string | undefined = cached;
  if (!body) {
    const text = successText(dataJson());
    const length = Buffer.byteLength(text, 'utf8');
    if (length <= 2 * text.length) {
      const bytes = Buffer.allocUnsafeSlow(length);
      bytes.write(text, 'utf8');
      keep(bytes);
      body = bytes;
    } else body = text;
  }
  return reply.code(200).type('application/json; charset=utf-8').send(body);
}

export function failBody(
  error: Pick<AppError, 'reason' | 'message'> & { details?: Record<string, unknown> },
): Envelope {
  return { STATUS: 'FAIL', MESSAGE: error.message, DATA: { ...error.details, reason: error.reason } };
}

const REFUSAL = Symbol('refusal');

/** The reason a reply was refused with, if it was (for metrics). */
export const refusalOf = (reply: FastifyReply): string | undefined =>
  (reply as FastifyReply & { [REFUSAL]?: string })[REFUSAL];

/**
 * Puts a refusal on the reply (its status, Retry-After, the reason the metrics count) and returns its body. On
 * /graphql (`graphql: true`) the envelope also carries the GraphQL `errors` a GraphQL client reads (GraphiQL shows
 * them), with the reason in `extensions.reason` as for refusals inside an operation.
 */
export function refusalAnswer(reply: FastifyReply, error: AppError, options: { graphql?: boolean } = {}) {
  (reply as FastifyReply & { [REFUSAL]?: string })[REFUSAL] = error.reason;
  if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
  reply.code(error.status).type('application/json; charset=utf-8');
  return options.graphql
    ? {
        ...failBody(error),
        errors: [{ message: error.message, extensions: refusalExtensions(error.reason, error.status) }],
      }
    : failBody(error);
}

/** Sends a refusal (see refusalAnswer). */
export function fail(reply: FastifyReply, error: AppError, options: { graphql?: boolean } = {}) {
  return reply.send(refusalAnswer(reply, error, options));
}

/** The reply is not a refusal after all (a refusal replaced by a stored answer, on send). */
export function clearRefusal(reply: FastifyReply) {
  (reply as FastifyReply & { [REFUSAL]?: string })[REFUSAL] = undefined;
}
