// The rest of refused bodies: read and discarded after the answer (a lingering close, as web servers do: closing a
// socket with unread data makes the kernel send a reset, which can destroy the answer before the client reads it),
// at a bounded pace for all connections together, and the connection closed once a body has flowed LINGER_MS without
// ending. The bodies are those refused part-read (body/read.ts: past a bound) and those never read (a request refused
// before its body: authentication, admission).
import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import { bodyLeftUnread } from './read.js';

/** How long the rest of a refused body may flow (be read and discarded) before the connection is closed. */
export const LINGER_MS = 5_000;

/**
 * Bytes of refused bodies discarded in one turn of the event loop, all connections together (each body flowing when
 * they are spent may add the chunk it holds). Node discards an unread body at full speed once its answer is sent:
 * large waiting bodies refused at their admission timeout (one moment, when they queued together) would be read and
 * thrown away in one go, holding the event loop while /healthz waits.
 */
export const DRAIN_TURN_BYTES = 1024 * 1024;

/** Refused bodies let flow again at each turn of the event loop (the others wait for the next turns). */
export const DRAINS_RESUMED_A_TURN = 4;

/**
 * Takes the rest of the body of a request answered before its body ended, to be discarded at the pace above; called
 * before the answer is sent (app/http-hooks.ts, onSend). Once the answer is sent, Node discards a body nobody reads
 * itself, at full speed and past any listener (IncomingMessage._dump at the response's finish): unless the body is
 * marked as read by the application (`_consuming`, what Node sets at the first read), which is done here.
 */
export function takeRefusedBody(raw: IncomingMessage, lingerMs = LINGER_MS) {
  if (raw.complete !== false || raw.readableEnded) {
    // A rest that arrived whole while readBody held the stream paused: its end is read, and the request let go.
    if (raw.complete === true && !raw.readableEnded && bodyLeftUnread(raw)) raw.resume();
    return;
  }
  if (taken.has(raw)) return;
  taken.add(raw);
  (raw as IncomingMessage & { _consuming?: boolean })._consuming = true;
  drains.add(raw, lingerMs);
}

const taken = new WeakSet<IncomingMessage>();
let discarded = 0;

/** Bytes of refused bodies discarded since the process started (tests, metrics). */
export const refusedBytesDiscarded = () => discarded;

interface Drain {
  raw: IncomingMessage;
  /** Flowing time left before the connection is closed; counted only while it flows (waiting is not its doing). */
  leftMs: number;
  since: number;
  timer: NodeJS.Timeout | undefined;
}

/**
 * The refused bodies being discarded. Each flows until the turn's bytes are spent, and then waits, paused, for a
 * later turn; each turn lets DRAINS_RESUMED_A_TURN of those waiting flow again, first come first served. A body whose
 * client sends nothing takes no turn's bytes and holds no place (a few slow clients cannot stop the others' bodies
 * being discarded), and nothing runs while no body waits.
 */
class Drains {
  private spent = 0;
  private turnEnds = false;
  private readonly waiting = new Set<Drain>();

  constructor(
    private readonly turnBytes: number,
    private readonly resumedATurn: number,
  ) {}

  add(raw: IncomingMessage, lingerMs: number) {
    const drain: Drain = { raw, leftMs: lingerMs, since: 0, timer: undefined };
    raw.on('data', (chunk: Buffer) => this.took(drain, chunk.length));
    const done = () => {
      this.waiting.delete(drain);
      clearTimeout(drain.timer);
    };
    raw.once('end', done);
    raw.once('close', done);
    if (this.spent < this.turnBytes) this.flow(drain);
    else this.wait(drain);
  }

  private flow(drain: Drain) {
    drain.since = performance.now();
    drain.timer = setTimeout(() => {
      // An injected request (tests, light-my-request) has a stand-in socket with nothing to close.
      const socket = drain.raw.socket as { destroy?: unknown } | null;
      if (typeof socket?.destroy === 'function') drain.raw.socket.destroy();
    }, drain.leftMs);
    drain.timer.unref();
    drain.raw.resume();
  }

  private took(drain: Drain, bytes: number) {
    this.spent += bytes;
    discarded += bytes;
    this.endTurnSoon();
    if (this.spent >= this.turnBytes) this.wait(drain);
  }

  private wait(drain: Drain) {
    drain.raw.pause();
    if (drain.timer !== undefined) {
      clearTimeout(drain.timer);
      drain.timer = undefined;
      drain.leftMs -= performance.now() - drain.since;
    }
    this.waiting.add(drain);
    this.endTurnSoon();
  }

  private endTurnSoon() {
    if (this.turnEnds) return;
    this.turnEnds = true;
    setImmediate(() => {
      this.turnEnds = false;
      this.spent = 0;
      let resumed = 0;
      for (const drain of this.waiting) {
        if (resumed === this.resumedATurn) break;
        this.waiting.delete(drain);
        if (drain.raw.destroyed || drain.raw.readableEnded) continue;
        this.flow(drain);
        resumed += 1;
      }
      if (this.waiting.size > 0) this.endTurnSoon();
    });
  }
}

const drains = new Drains(DRAIN_TURN_BYTES, DRAINS_RESUMED_A_TURN);
