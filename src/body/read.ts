// Request bodies: read as bytes under the 8 MB limit, their JSON shape checked as they arrive, then parsed once
// (prototype keys stripped).
//
// Memory is bounded whatever clients send, and counted as it is used. A body that declares a length over the limit
// is refused before a byte of it is kept; one without a declared length (chunked) is refused the moment it passes the
// limit. Nothing is allocated for what a body declares: past its first LARGE_BODY_BYTES, its bytes are copied into
// blocks of our own as they arrive, each block first drawn from the process's request memory (the admission's room,
// MEMORY_PER_BODY_BYTE a byte: the bytes, their one copy, the parsed value), its tenant's share of it capped; when
// the room is spent the socket is paused until room is free (pushing back through TCP), and a wait past the
// admission's timeout is refused as busy (429/503), never as too large. A body refused or abandoned gives its
// blocks and its draw back at once (the blocks' memory detached, not left to the collector).
// Its JSON shape (nesting depth, number of values) is followed chunk by chunk (json/scan.ts) and refused at the first
// byte past a limit, so a hostile shape is never parsed; its long strings and long arrays are parsed in pieces, the
// event loop turning between them (json/pieces.ts). The rest of a refused body is read and discarded at a bounded
// pace (body/refused.ts); then the connection is closed.
// Time is bounded too: a body must keep up a least rate (MIN_BODY_RATE after a grace, as a web server's minimum
// request rate), never pause longer than the idle deadline, and end within the total deadline; a wait for memory
// counts in none of them. A slow sender is answered 408 and gives up what it held.
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { type AppError, refuse } from '../errors.js';
import { InvalidLongString, LONG_STRING_BYTES, type LongStringOptions } from '../json/long-strings.js';
import { EmptyGroup, GROUP_BYTES, LONG_ARRAY_BYTES, parseInPieces } from '../json/pieces.js';
import {
  type ArraySpan,
  JsonShapeScanner,
  MAX_BODY_DEPTH,
  MAX_BODY_VALUES,
  MAX_OBJECT_MEMBERS,
  type StringSpan,
  shapeRefusal,
} from '../json/scan.js';
import { assertWellFormed, invalidJson, parseJsonText } from '../json/text.js';
import { BODY_LIMIT_BYTES } from '../model/doors.js';
import { mayHoldLoneSurrogate } from '../model/text.js';
import { BodyBytes } from './bytes.js';

/** A body's first bytes, read without a draw from the request memory (a typical write is a few KB). */
export const LARGE_BODY_BYTES = 64 * 1024;
/** What a body's byte holds at most while it is read, parsed and handled: the bytes, their copy, the value. */
export const MEMORY_PER_BODY_BYTE = 3;
/** Default deadlines for a body: all of it, the longest pause between two of its chunks, and its least rate. */
export const BODY_TIMEOUT_MS = 30_000;
export const BODY_IDLE_TIMEOUT_MS = 10_000;
export const BODY_GRACE_MS = 5_000;
export const MIN_BODY_BYTES_PER_SECOND = 32 * 1024;

/** The refusal of a body past `limit`: the spec's 8 MB, or the smaller one a door states (DoorBudget.bodyBytes). */
export const tooLarge = (limit = BODY_LIMIT_BYTES) =>
  refuse(
    'request_too_large',
    limit === BODY_LIMIT_BYTES
      ? `The request body exceeds 8 MB (${BODY_LIMIT_BYTES.toLocaleString('en-US')} bytes).`
      : `The request body exceeds ${limit.toLocaleString('en-US')} bytes, the most this route takes.`,
  );
export const tooSlow = () => refuse('request_timeout', 'The request body took too long to arrive.');

/** Where a body's memory is drawn from: its request's lease of the admission's room (app/admission.ts). */
export interface BodyMemory {
  /** Takes `bytes` more; resolves once taken, rejects with a refusal (busy) or when `signal` aborts. */
  grow(bytes: number, signal?: AbortSignal): Promise<void>;
  /** Gives back everything taken (a refused or abandoned body). */
  release(): void;
}

export interface BodyReaderOptions {
  limit?: number;
  largeBytes?: number;
  memory?: BodyMemory;
  timeoutMs?: number;
  idleTimeoutMs?: number;
  graceMs?: number;
  minBytesPerSecond?: number;
  /** The thresholds of the parse in pieces (tests move them, to cross them with small bodies). */
  pieces?: { stringBytes: number; arrayBytes: number; groupBytes: number };
}

/** Marks a request whose body was not read to its end: its answer must close the connection. */
export const UNREAD_BODY = Symbol('unreadBody');
/** The bytes of its body a request was read (what crossed the thread, whatever it declared). */
const BODY_BYTES_READ = Symbol('bodyBytesRead');
type Marked = IncomingMessage & { [UNREAD_BODY]?: boolean; [BODY_BYTES_READ]?: number };

/** The bytes of `raw`'s body read so far (0 when none was read: refused unread, or no body). */
export const bodyBytesRead = (raw: IncomingMessage) => (raw as Marked)[BODY_BYTES_READ] ?? 0;

export const bodyLeftUnread = (raw: IncomingMessage) => (raw as Marked)[UNREAD_BODY] === true;

/** Reads a body (stream) to a Buffer under the limits, drawing its memory as it arrives; rejects with an AppError. */
export function readBody(raw: IncomingMessage, payload: Readable, options: BodyReaderOptions = {}) {
  return new Promise<Buffer>((resolve, reject) => {
    new BodyReader(raw, payload, options, resolve, reject).start();
  });
}

/** One body being read: its bytes, its shape, its deadlines and its memory. */
class BodyReader {
  private readonly limit: number;
  private readonly declared: number | null;
  private readonly bytes: BodyBytes;
  private readonly scanner: JsonShapeScanner;
  private settled = false;
  private waiting = false;
  /** The stream ended while a chunk waited for memory: the body ends once that chunk is kept. */
  private endedWhileWaiting = false;
  private readonly giveUp = new AbortController();
  private readonly begun = performance.now();
  /** Time spent waiting for memory (ms): no deadline counts it. */
  private waited = 0;
  private deadline: NodeJS.Timeout | undefined;
  private idle: NodeJS.Timeout | undefined;

  constructor(
    private readonly raw: IncomingMessage,
    private readonly payload: Readable,
    private readonly options: BodyReaderOptions,
    private readonly resolve: (body: Buffer) => void,
    private readonly reject: (error: AppError) => void,
  ) {
    this.limit = options.limit ?? BODY_LIMIT_BYTES;
    const header = raw.headers['content-length'];
    this.declared = header === undefined ? null : Number(header);
    this.bytes = new BodyBytes(options.largeBytes ?? LARGE_BODY_BYTES);
    const pieces = options.pieces;
    this.scanner = new JsonShapeScanner(
      MAX_BODY_DEPTH,
      MAX_BODY_VALUES,
      pieces?.stringBytes ?? LONG_STRING_BYTES,
      MAX_OBJECT_MEMBERS,
      pieces?.arrayBytes ?? LONG_ARRAY_BYTES,
      pieces?.groupBytes ?? GROUP_BYTES,
    );
  }

  start() {
    if (this.declared !== null && this.declared > this.limit) {
      (this.raw as Marked)[UNREAD_BODY] = true;
      this.reject(tooLarge(this.limit));
      return;
    }
    this.arm();
    this.payload.on('data', this.onData);
    this.payload.on('end', this.onEnd);
    this.payload.on('error', this.onError);
    this.payload.on('close', this.onClose);
  }

  /** (Re)arms the deadlines from what has arrived: the idle one, and the rate's (grace plus a second per rate). */
  private arm() {
    clearTimeout(this.idle);
    clearTimeout(this.deadline);
    if (this.waiting) return;
    const o = this.options;
    this.idle = setTimeout(() => this.settle(tooSlow()), o.idleTimeoutMs ?? BODY_IDLE_TIMEOUT_MS);
    const rate = o.minBytesPerSecond ?? MIN_BODY_BYTES_PER_SECOND;
    const allowed = Math.min(
      o.timeoutMs ?? BODY_TIMEOUT_MS,
      (o.graceMs ?? BODY_GRACE_MS) + (1000 * this.bytes.size) / rate,
    );
    const left = allowed + this.waited - (performance.now() - this.begun);
    this.deadline = setTimeout(() => this.settle(tooSlow()), Math.max(0, left));
    this.idle.unref();
    this.deadline.unref();
  }

  private readonly onData = (chunk: Buffer | string) => {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    const size = this.bytes.size + buffer.length;
    (this.raw as Marked)[BODY_BYTES_READ] = size;
    if (size > this.limit) return this.settle(tooLarge(this.limit));
    if (this.declared !== null && size > this.declared) {
      return this.settle(refuse('invalid_body', 'The body length does not match Content-Length.'));
    }
    const violation = this.scanner.push(buffer);
    if (violation) return this.settle(shapeRefusal(violation));
    const needs = this.bytes.needs(buffer.length);
    if (needs === 0 || !this.options.memory) {
      this.bytes.add(buffer);
      return this.arm();
    }
    this.drawFor(buffer, needs * MEMORY_PER_BODY_BYTE);
  };

  /** Waits, paused, for `bytes` of memory, then keeps `buffer` and reads on. */
  private drawFor(buffer: Buffer, bytes: number) {
    this.waiting = true;
    this.payload.pause();
    this.arm();
    const since = performance.now();
    (this.options.memory as BodyMemory).grow(bytes, this.giveUp.signal).then(
      () => {
        this.waiting = false;
        this.waited += performance.now() - since;
        if (this.settled) return;
        this.bytes.add(buffer);
        if (this.endedWhileWaiting) return this.onEnd();
        this.arm();
        this.payload.resume();
      },
      (error: unknown) => {
        this.waiting = false;
        // (a refusal: busy; an abort: the body was settled while it waited)
        if ((error as AppError).reason !== undefined) this.settle(error as AppError);
      },
    );
  }

  private readonly onEnd = () => {
    if (this.waiting) {
      this.endedWhileWaiting = true;
      return;
    }
    if (this.declared !== null && this.bytes.size !== this.declared) {
      return this.settle(refuse('invalid_body', 'The body length does not match Content-Length.'));
    }
    this.settle(null);
  };

  private readonly onError = () => {
    this.settle(refuse('invalid_body', 'The request body could not be read.'));
  };

  private readonly onClose = () => {
    // (a stream that ended while its last chunk waited for memory closes after its end: the body is whole)
    if (!this.settled && !this.endedWhileWaiting)
      this.settle(refuse('invalid_body', 'The connection closed before the body ended.'));
  };

  private settle(error: AppError | null) {
    if (this.settled) return;
    this.settled = true;
    const { payload, scanner } = this;
    payload.removeListener('data', this.onData);
    payload.removeListener('end', this.onEnd);
    payload.removeListener('error', this.onError);
    payload.removeListener('close', this.onClose);
    clearTimeout(this.deadline);
    clearTimeout(this.idle);
    this.giveUp.abort();
    if (error) {
      // Keep nothing more: what was held is given back now, the rest of the body discarded as it arrives.
      (this.raw as Marked)[UNREAD_BODY] = !this.raw.complete;
      this.bytes.drop();
      this.options.memory?.release();
      // (the rest waits, paused, until the answer is sent: body/refused.ts then discards it at a bounded pace)
      payload.pause();
      this.reject(error);
      return;
    }
    const body = this.bytes.whole();
    if (scanner.longStrings.length > 0 || scanner.longArrays.length > 0) {
      piecesIn.set(body, { strings: scanner.longStrings, arrays: scanner.longArrays });
    }
    this.resolve(body);
  }
}

/** Where the long strings and long arrays of a body lie (json/pieces.ts), for the bodies that have any. */
const piecesIn = new WeakMap<Buffer, { strings: readonly StringSpan[]; arrays: readonly ArraySpan[] }>();

/**
 * A body read by readBody to its value (parseJsonText), its long strings decoded a slice at a time
 * (json/long-strings.ts); refused (invalid_body) if `gone()` tells that the client left while they were, so that
 * the route does not run for nobody.
 */
export async function parseJsonBody(body: Buffer, options: LongStringOptions = {}): Promise<unknown> {
  // JSON text is UTF-8 (RFC 8259): a body that is not is refused, not read with its bad bytes replaced by U+FFFD (a
  // type named "caf\xe9" in Latin-1 would be created as "caf\ufffd"). One native pass over the bytes.
  if (!isUtf8(body)) throw refuse('invalid_json', 'The body is not valid JSON: it is not UTF-8 text.');
  const value = await parseUtf8Json(body, options);
  // Every string at any depth well-formed (model/text.ts); only a surrogate's escape can write one that is not.
  if (value !== undefined && mayHoldLoneSurrogate(body)) assertWellFormed(value, 'The body');
  return value;
}

/** A UTF-8 body's value, its long strings and arrays parsed in pieces (json/pieces.ts); undefined: no body. */
async function parseUtf8Json(body: Buffer, options: LongStringOptions): Promise<unknown> {
  const pieces = piecesIn.get(body);
  if (pieces === undefined) return parseJsonText(body.toString('utf8'));
  let value: unknown;
  try {
    value = await parseInPieces(body, pieces.strings, pieces.arrays, parseJsonText, options);
  } catch (error) {
    if (error instanceof InvalidLongString || error instanceof EmptyGroup) throw invalidJson();
    throw error;
  }
  // (a body with a long string or array is never empty: undefined is the client gone)
  if (value === undefined) throw refuse('invalid_body', 'The connection closed before the body was parsed.');
  return value;
}
