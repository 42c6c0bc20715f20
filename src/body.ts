// Request bodies: read as bytes under the 8 MB limit, their JSON shape checked as they arrive, then parsed once
// (prototype keys stripped).
//
// Memory is bounded whatever clients send. A body that declares a length over the limit is refused before a byte
// of it is kept. A body without a declared length (chunked) is counted as it arrives and refused the moment it
// passes the limit; what it sent so far is dropped. Its JSON shape (nesting depth, number of values) is followed
// chunk by chunk (json-scan.ts) and refused at the first byte past a limit, so a hostile shape is never parsed; a
// body's long strings and long arrays are parsed in pieces, the event loop turning between them (json-pieces.ts).
// The rest of a refused body is read and discarded (a lingering close, as web servers do: closing a socket with
// unread data makes the kernel send a reset, which can destroy the 413 before the client reads it), for at most
// LINGER_MS after the answer, at a bounded pace (refused-bodies.ts); then the connection is closed.
// Bodies above LARGE_BODY_BYTES are read a few at a time: a large body waits for a slot with its socket paused,
// which pushes back on the client through TCP instead of piling up in memory. The worst case is then
// (connections × LARGE_BODY_BYTES) + (slots × limit), not connections × limit. The slots are shared fairly
// between tenants (slots.ts): one tenant holds at most half of them.
// Time is bounded too: a body must arrive within a total deadline, and never pause longer than the idle deadline
// (waiting for a slot does not count as idle); a slow sender is answered 408 and gives up what it held.
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import sjson from 'secure-json-parse';
import { type AppError, refuse } from './errors.js';
import { InvalidLongString, LONG_STRING_BYTES } from './json-long-strings.js';
import { EmptyGroup, GROUP_BYTES, LONG_ARRAY_BYTES, parseInPieces } from './json-pieces.js';
import {
  type ArraySpan,
  JsonShapeScanner,
  MAX_BODY_DEPTH,
  MAX_BODY_VALUES,
  MAX_OBJECT_MEMBERS,
  type ShapeViolation,
  type StringSpan,
} from './json-scan.js';
import { BODY_LIMIT_BYTES } from './model/doors.js';
import { Slots } from './slots.js';

/** Bodies above this size take a slot (a typical declaration or entity write is a few KB). */
export const LARGE_BODY_BYTES = 64 * 1024;
export const LARGE_BODY_SLOTS = 4;
/** Default deadlines for a body: all of it, and the longest pause between two of its chunks. */
export const BODY_TIMEOUT_MS = 30_000;
export const BODY_IDLE_TIMEOUT_MS = 10_000;

/** The refusal of a body past `limit`: the spec's 8 MB, or the smaller one a door states (DoorBudget.bodyBytes). */
export const tooLarge = (limit = BODY_LIMIT_BYTES) =>
  refuse(
    'request_too_large',
    limit === BODY_LIMIT_BYTES
      ? `The request body exceeds 8 MB (${BODY_LIMIT_BYTES.toLocaleString('en-US')} bytes).`
      : `The request body exceeds ${limit.toLocaleString('en-US')} bytes, the most this route takes.`,
  );
export const tooSlow = () => refuse('request_timeout', 'The request body took too long to arrive.');

const shapeRefusal = (violation: ShapeViolation) =>
  violation === 'depth'
    ? refuse('json_too_deep', `The body nests arrays and objects deeper than ${MAX_BODY_DEPTH} levels.`)
    : violation === 'members'
      ? refuse(
          'json_too_large',
          `An object in the body has more than ${MAX_OBJECT_MEMBERS.toLocaleString('en-US')} members.`,
        )
      : refuse(
          'json_too_large',
          `The body holds more than ${MAX_BODY_VALUES.toLocaleString('en-US')} JSON values.`,
        );

export interface BodyReaderOptions {
  limit?: number;
  largeBytes?: number;
  slots?: Slots;
  /** Who sends the body (a tenant): large-body slots are shared fairly between keys. */
  key?: string;
  timeoutMs?: number;
  idleTimeoutMs?: number;
}

/** Marks a request whose body was not read to its end: its answer must close the connection. */
export const UNREAD_BODY = Symbol('unreadBody');
/** The bytes of its body a request was read (what crossed the thread, whatever it declared). */
const BODY_BYTES_READ = Symbol('bodyBytesRead');
type Marked = IncomingMessage & { [UNREAD_BODY]?: boolean; [BODY_BYTES_READ]?: number };

/** The bytes of `raw`'s body read so far (0 when none was read: refused unread, or no body). */
export const bodyBytesRead = (raw: IncomingMessage) => (raw as Marked)[BODY_BYTES_READ] ?? 0;

export const bodyLeftUnread = (raw: IncomingMessage) => (raw as Marked)[UNREAD_BODY] === true;

/** Reads a body (stream) to a Buffer under the limits, with the large-body slots; rejects with an AppError. */
export function readBody(raw: IncomingMessage, payload: Readable, options: BodyReaderOptions = {}) {
  const limit = options.limit ?? BODY_LIMIT_BYTES;
  const largeBytes = options.largeBytes ?? LARGE_BODY_BYTES;
  const slots = options.slots ?? defaultSlots;
  const timeoutMs = options.timeoutMs ?? BODY_TIMEOUT_MS;
  const idleTimeoutMs = options.idleTimeoutMs ?? BODY_IDLE_TIMEOUT_MS;

  return new Promise<Buffer>((resolve, reject) => {
    const declaredHeader = raw.headers['content-length'];
    const declared = declaredHeader === undefined ? null : Number(declaredHeader);
    if (declared !== null && declared > limit) {
      (raw as Marked)[UNREAD_BODY] = true;
      reject(tooLarge(limit));
      return;
    }

    const scanner = new JsonShapeScanner(
      MAX_BODY_DEPTH,
      MAX_BODY_VALUES,
      LONG_STRING_BYTES,
      MAX_OBJECT_MEMBERS,
      LONG_ARRAY_BYTES,
      GROUP_BYTES,
    );
    let chunks: Buffer[] = [];
    // A large body of declared length is copied into one buffer of that length as it arrives (its admission reserved
    // it already): each chunk is garbage at once, where kept chunks outlived the young generation and their memory
    // stayed with the allocator until a full collection.
    let whole: Buffer | null = null;
    let size = 0;
    let settled = false;
    let release: (() => void) | null = null;
    let waitingForSlot = false;
    const giveUpWaiting = new AbortController();
    const deadline = setTimeout(() => settle(tooSlow()), timeoutMs);
    deadline.unref();
    let idle: NodeJS.Timeout | null = null;
    const armIdle = () => {
      if (idle) clearTimeout(idle);
      idle = setTimeout(() => settle(tooSlow()), idleTimeoutMs);
      idle.unref();
    };

    const cleanup = (body?: Buffer) => {
      payload.removeListener('data', onData);
      payload.removeListener('end', onEnd);
      payload.removeListener('error', onError);
      payload.removeListener('close', onClose);
      clearTimeout(deadline);
      if (idle) clearTimeout(idle);
      giveUpWaiting.abort();
      // A body read whole keeps its slot until it has been parsed (releaseBody).
      if (body && release) heldSlots.set(body, release);
      else release?.();
      release = null;
      chunks = [];
      whole = null;
    };
    function settle(error: AppError | null, body?: Buffer) {
      if (settled) return;
      settled = true;
      if (error) {
        // Keep nothing more: the rest of the body is discarded as it arrives (see refused-bodies.ts).
        (raw as Marked)[UNREAD_BODY] = !raw.complete;
      } else if (body && (scanner.longStrings.length > 0 || scanner.longArrays.length > 0)) {
        piecesIn.set(body, { strings: scanner.longStrings, arrays: scanner.longArrays });
      }
      cleanup(body);
      // (the rest waits, paused, until the answer is sent: refused-bodies.ts then discards it at a bounded pace)
      if (error) payload.pause();
      if (error) reject(error);
      else resolve(body as Buffer);
    }

    function onData(chunk: Buffer | string) {
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      size += buffer.length;
      (raw as Marked)[BODY_BYTES_READ] = size;
      if (size > limit) return settle(tooLarge(limit));
      const violation = scanner.push(buffer);
      if (violation) return settle(shapeRefusal(violation));
      if (declared !== null && declared > largeBytes) {
        if (size > declared)
          return settle(refuse('invalid_body', 'The body length does not match Content-Length.'));
        whole ??= Buffer.allocUnsafeSlow(declared);
        buffer.copy(whole, size - buffer.length);
      } else chunks.push(buffer);
      if (size > largeBytes && release === null && !waitingForSlot) {
        waitingForSlot = true;
        payload.pause();
        // Waiting for a slot is not the sender's pause: the idle deadline starts again once it is granted.
        if (idle) clearTimeout(idle);
        slots.acquire(options.key ?? '', giveUpWaiting.signal).then(
          (granted) => {
            waitingForSlot = false;
            if (settled) return granted();
            release = granted;
            armIdle();
            payload.resume();
          },
          () => {}, // gave up: the body was settled while it waited
        );
        return;
      }
      if (!waitingForSlot) armIdle();
    }
    function onEnd() {
      if (declared !== null && size !== declared) {
        return settle(refuse('invalid_body', 'The body length does not match Content-Length.'));
      }
      if (whole) {
        made.add(whole);
        return settle(null, whole);
      }
      if (chunks.length === 1) return settle(null, chunks[0] as Buffer);
      const joined = Buffer.concat(chunks, size);
      // (past Node's pool size a concatenation has a buffer of its own; a part of the pool is never detached)
      if (size > largeBytes && joined.buffer.byteLength === size) made.add(joined);
      settle(null, joined);
    }
    function onError() {
      settle(refuse('invalid_body', 'The request body could not be read.'));
    }
    function onClose() {
      if (!settled) settle(refuse('invalid_body', 'The connection closed before the body ended.'));
    }

    armIdle();
    payload.on('data', onData);
    payload.on('end', onEnd);
    payload.on('error', onError);
    payload.on('close', onClose);
  });
}

/** The large bodies' buffers readBody made, each its own (releaseBody detaches only those). */
const made = new WeakSet<Buffer>();
/** The large-body slots held by bodies read but not yet parsed (releaseBody gives them back). */
const heldSlots = new WeakMap<Buffer, () => void>();
/** Where the long strings and long arrays of a body lie (json-pieces.ts), for the bodies that have any. */
const piecesIn = new WeakMap<Buffer, { strings: readonly StringSpan[]; arrays: readonly ArraySpan[] }>();

const defaultSlots = new Slots(LARGE_BODY_SLOTS);

/**
 * Gives a large body's slot and bytes back at once, once it has been parsed: its slot goes to the next large body,
 * and a buffer of its own (what a large body is read into) is detached, its memory freed now rather than at the
 * next full collection (a body waits and is read long enough for its buffer's object to reach the old generation:
 * 6 MB bodies one after another left tens of megabytes outside the heap). Only a large body's buffer readBody made
 * is detached (a body that came as one chunk is the stream's own; a small one is left to the young generation).
 * Nothing may read `body` after.
 */
export function releaseBody(body: Buffer) {
  heldSlots.get(body)?.();
  heldSlots.delete(body);
  if (made.delete(body)) (body.buffer as ArrayBuffer & { transfer(length: number): ArrayBuffer }).transfer(0);
}

/**
 * A body read by readBody to its value (parseJsonText), its long strings decoded a slice at a time
 * (json-long-strings.ts); refused (invalid_body) if `gone()` tells that the client left while they were, so that
 * the route does not run for nobody.
 */
export async function parseJsonBody(body: Buffer, gone?: () => boolean): Promise<unknown> {
  // JSON text is UTF-8 (RFC 8259): a body that is not is refused, not read with its bad bytes replaced by U+FFFD (a
  // type named "caf\xe9" in Latin-1 was created as "caf\ufffd"). One native pass, about a millisecond for 8 MB.
  if (!isUtf8(body)) throw refuse('invalid_json', 'The body is not valid JSON: it is not UTF-8 text.');
  const pieces = piecesIn.get(body);
  if (pieces === undefined) return parseJsonText(body.toString('utf8'));
  let value: unknown;
  try {
    value = await parseInPieces(body, pieces.strings, pieces.arrays, parseJsonText, { gone });
  } catch (error) {
    if (error instanceof InvalidLongString || error instanceof EmptyGroup) throw invalidJson();
    throw error;
  }
  // (a body with a long string or array is never empty: undefined is the client gone)
  if (value === undefined) throw refuse('invalid_body', 'The connection closed before the body was parsed.');
  return value;
}

const invalidJson = () => refuse('invalid_json', 'The body is not valid JSON.');

/** JSON text to a value, with __proto__ and constructor keys removed; an empty text is undefined. */
export function parseJsonText(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    // A key __proto__ or constructor is written plainly or with \u escapes: a body with neither is parsed as it is
    // (secure-json-parse searches the whole text with a regular expression, milliseconds a megabyte).
    if (!text.includes('\\u') && !text.includes('__proto__') && !text.includes('constructor')) {
      return JSON.parse(text);
    }
    return sjson.parse(text, undefined, { protoAction: 'remove', constructorAction: 'remove' });
  } catch {
    throw invalidJson();
  }
}
