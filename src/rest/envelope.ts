// The JSON envelope every REST response uses: {STATUS, MESSAGE, DATA}.
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import type { Envelope } from '../contract/wire.js';
import { type AppError, refusalExtensions } from '../errors.js';
import { isClosed } from '../http/connection.js';
import { encodeInSlices, encodeSlices, pieces, SLICE_CHARS, sizeWithin } from '../json/slices.js';

/** A success answer; a large one is serialised a slice at a time, the event loop turning between slices. */
export function succeed(reply: FastifyReply, status: number, data: Record<string, unknown>) {
  const body: Envelope = { STATUS: 'SUCCESS', MESSAGE: '', DATA: data };
  reply.code(status).type('application/json; charset=utf-8');
  if (sizeWithin(body, SLICE_CHARS) !== undefined) return reply.send(body);
  return sendInSlices(reply, pieces(body, true));
}

/** The envelope's text around `data`, the JSON of DATA in pieces: the same bytes `succeed` would send. */
function* successPieces(data: Iterable<string>) {
  yield '{"STATUS":"SUCCESS","MESSAGE":"","DATA":';
  yield* data;
  yield '}';
}

/**
 * Encodes `texts` a slice at a time and sends them, telling `made` of the bytes. A client gone meanwhile has nothing
 * more made for it: its request ends with an empty answer.
 */
async function sendInSlices(
  reply: FastifyReply,
  texts: Iterable<string>,
  made?: (bytes: Buffer, chars: number) => Buffer,
) {
  // Sent as the slices were made, never joined (joined, a large plan would be held twice at its end, slices and
  // copy): unless the bytes are kept (`made`) or stored with an Idempotency-Key's write, which take one buffer.
  if (!made && !reply.request.ctx?.keyed.scope) {
    const sliced = await encodeSlices(texts, () => isClosed(reply.raw));
    if (!sliced) return reply.send('');
    if (sliced.slices.length === 1) return reply.send(sliced.slices[0]);
    reply.header('content-length', sliced.bytes);
    return reply.send(Readable.from(sliced.slices, { objectMode: false }));
  }
  const encoded = await encodeInSlices(texts, () => isClosed(reply.raw));
  // Nobody reads it; it ends the request as any answer does (its hooks run: a keyed write is rolled back there, its
  // connection being closed, in app/http-hooks.ts).
  if (!encoded) return reply.send('');
  return reply.send(made?.(encoded.bytes, encoded.chars) ?? encoded.bytes);
}

/**
 * The same answer with DATA already serialised, in pieces (rows of stored texts spliced in), encoded a slice at a
 * time: the envelope around it is the same bytes `succeed` would send.
 */
export function succeedSerialised(reply: FastifyReply, status: number, data: Iterable<string>) {
  reply.code(status).type('application/json; charset=utf-8');
  return sendInSlices(reply, successPieces(data));
}

/**
 * A 200 answer kept with a cached value (a page or a listing, per model version) as its bytes: each request writes
 * the same buffer, with no text built, measured or encoded for it (a kept text would be copied twice a request: the
 * envelope's text flattened, then its UTF-8 bytes). `cached` is what was kept; `keep` takes the bytes made from
 * `data` (DATA's JSON in pieces, encoded a slice at a time) when it had none. They are a buffer of their own (never
 * a small one from Node's shared pool, which would hold its whole 8 KiB slab for as long as the cache keeps it), and
 * kept when they are at most twice the text's length, what the text itself would take; longer (mostly
 * non-Latin text), they are sent and made again next time.
 */
export function succeedCached(
  reply: FastifyReply,
  cached: Buffer | undefined,
  data: () => Iterable<string>,
  keep: (body: Buffer) => void,
) {
  reply.code(200).type('application/json; charset=utf-8');
  if (cached) return reply.send(cached);
  return sendInSlices(reply, successPieces(data()), (bytes, chars) => {
    if (bytes.length > 2 * chars) return bytes;
    let own = bytes;
    if (bytes.buffer.byteLength !== bytes.length) {
      own = Buffer.allocUnsafeSlow(bytes.length);
      bytes.copy(own);
    }
    keep(own);
    return own;
  });
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
