// Request bodies: read as bytes under the 8 MB limit, then parsed as JSON once (prototype keys stripped).
//
// Memory is bounded whatever clients send. A body that declares a length over the limit is refused before a byte
// of it is kept. A body without a declared length (chunked) is counted as it arrives and refused the moment it
// passes the limit; what it sent so far is dropped. The rest of a refused body is read and discarded (a lingering
// close, as web servers do: closing a socket with unread data makes the kernel send a reset, which can destroy
// the 413 before the client reads it), for at most LINGER_MS after the answer; then the connection is closed.
// Bodies above LARGE_BODY_BYTES are read a few at a time: a large body waits for a slot with its socket paused,
// which pushes back on the client through TCP instead of piling up in memory. The worst case is then
// (connections × LARGE_BODY_BYTES) + (slots × limit), not connections × limit. A large body that takes longer
// than LARGE_BODY_TIMEOUT_MS to arrive gives up its slot with a 408, so slow senders cannot hold the slots.
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import sjson from 'secure-json-parse';
import { AppError, refuse } from './errors.js';
import { Slots } from './slots.js';

export const BODY_LIMIT_BYTES = 8 * 1024 * 1024;
/** Bodies above this size take a slot (a typical declaration is a few KB; a full enumeration of long values can pass it). */
export const LARGE_BODY_BYTES = 256 * 1024;
export const LARGE_BODY_SLOTS = 4;
export const LARGE_BODY_TIMEOUT_MS = 30_000;
/** How long the rest of a refused body is read and discarded after the answer before the connection is closed. */
export const LINGER_MS = 5_000;

export const tooLarge = () => new AppError('request_too_large', 413, 'The request body exceeds 8 MB.');

export interface BodyReaderOptions {
  limit?: number;
  largeBytes?: number;
  slots?: Slots;
  largeTimeoutMs?: number;
}

/** Marks a request whose body was not read to its end: its answer must close the connection. */
export const UNREAD_BODY = Symbol('unreadBody');
type Marked = IncomingMessage & { [UNREAD_BODY]?: boolean };

export const bodyLeftUnread = (raw: IncomingMessage) => (raw as Marked)[UNREAD_BODY] === true;

/** Reads a body (stream) to a Buffer under the limit, with the large-body slots; rejects with an AppError. */
export function readBody(raw: IncomingMessage, payload: Readable, options: BodyReaderOptions = {}) {
  const limit = options.limit ?? BODY_LIMIT_BYTES;
  const largeBytes = options.largeBytes ?? LARGE_BODY_BYTES;
  const slots = options.slots ?? defaultSlots;
  const largeTimeoutMs = options.largeTimeoutMs ?? LARGE_BODY_TIMEOUT_MS;

  return new Promise<Buffer>((resolve, reject) => {
    const declaredHeader = raw.headers['content-length'];
    const declared = declaredHeader === undefined ? null : Number(declaredHeader);
    if (declared !== null && declared > limit) {
      (raw as Marked)[UNREAD_BODY] = true;
      reject(tooLarge());
      return;
    }

    let chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    let release: (() => void) | null = null;
    let waitingForSlot = false;
    let timer: NodeJS.Timeout | null = null;

    const cleanup = () => {
      payload.removeListener('data', onData);
      payload.removeListener('end', onEnd);
      payload.removeListener('error', onError);
      payload.removeListener('close', onClose);
      if (timer) clearTimeout(timer);
      release?.();
      release = null;
      chunks = [];
    };
    const settle = (error: AppError | null, body?: Buffer) => {
      if (settled) return;
      settled = true;
      if (error) {
        // Keep nothing more: the rest of the body is discarded as it arrives (see lingerAfterRefusal).
        (raw as Marked)[UNREAD_BODY] = !raw.complete;
      }
      cleanup();
      if (error) payload.resume();
      if (error) reject(error);
      else resolve(body as Buffer);
    };

    function onData(chunk: Buffer | string) {
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      size += buffer.length;
      if (size > limit) return settle(tooLarge());
      chunks.push(buffer);
      if (size > largeBytes && release === null && !waitingForSlot) {
        waitingForSlot = true;
        payload.pause();
        void slots.acquire().then((granted) => {
          waitingForSlot = false;
          if (settled) return granted();
          release = granted;
          timer = setTimeout(
            () => settle(new AppError('request_timeout', 408, 'The request body took too long to arrive.')),
            largeTimeoutMs,
          );
          timer.unref();
          payload.resume();
        });
      }
    }
    function onEnd() {
      if (declared !== null && size !== declared) {
        return settle(refuse.badRequest('invalid_body', 'The body length does not match Content-Length.'));
      }
      settle(null, chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    }
    function onError() {
      settle(refuse.badRequest('invalid_body', 'The request body could not be read.'));
    }
    function onClose() {
      if (!settled) settle(refuse.badRequest('invalid_body', 'The connection closed before the body ended.'));
    }

    payload.on('data', onData);
    payload.on('end', onEnd);
    payload.on('error', onError);
    payload.on('close', onClose);
  });
}

const defaultSlots = new Slots(LARGE_BODY_SLOTS);

/**
 * After the answer to a request whose body was refused unread: discard the rest of the body as it arrives, and
 * close the connection if it has not ended within `lingerMs` (a client streaming on regardless).
 */
export function lingerAfterRefusal(raw: IncomingMessage, lingerMs = LINGER_MS) {
  if (!bodyLeftUnread(raw) || raw.complete) return;
  const timer = setTimeout(() => raw.socket?.destroy(), lingerMs);
  timer.unref();
  raw.once('end', () => clearTimeout(timer));
  raw.once('close', () => clearTimeout(timer));
  raw.resume();
}

/** JSON text to a value, with __proto__ and constructor keys removed; an empty body is undefined. */
export function parseJsonBody(body: Buffer): unknown {
  const text = body.toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return sjson.parse(text, undefined, { protoAction: 'remove', constructorAction: 'remove' });
  } catch {
    throw refuse.badRequest('invalid_json', 'The body is not valid JSON.');
  }
}
