// The rest of refused bodies: read and discarded after the answer (a lingering close, as web servers do: closing a
// socket with unread data makes the kernel send a reset, which can destroy the answer before the client reads it),
// at a bounded pace for all connections together, and the connection closed if a body has not ended within
// LINGER_MS. The bodies are those refused part-read (body.ts: past a bound) and those never read (a request refused
// before its body: authentication, admission).
import type { IncomingMessage } from 'node:http';
import { bodyLeftUnread } from './body.js';

/** How long the rest of a refused body is read and discarded after the answer before the connection is closed. */
export const LINGER_MS = 5_000;

/**
 * After the answer to a request whose body was refused unread (a body past its bound, or never read: a request
 * refused before its body, by authentication or admission): discard the rest of the body as it arrives, at most
 * DRAIN_TURN_BYTES of all such bodies a turn of the event loop, and close the connection if it has not ended within
 * `lingerMs` (a client streaming on regardless).
 */
export function lingerAfterRefusal(raw: IncomingMessage, lingerMs = LINGER_MS) {
  if (raw.complete || !(bodyLeftUnread(raw) || (raw.complete === false && !raw.readableEnded))) return;
  // An injected request (tests, light-my-request) has a stand-in socket with nothing to close.
  const timer = setTimeout(() => {
    const socket = raw.socket as { destroy?: unknown } | null;
    if (typeof socket?.destroy === 'function') raw.socket.destroy();
  }, lingerMs);
  timer.unref();
  raw.once('end', () => clearTimeout(timer));
  raw.once('close', () => clearTimeout(timer));
  drains.add(raw);
}

/**
 * Bytes of refused bodies discarded in one turn of the event loop, all connections together. Node discards an unread
 * body at full speed once its answer is sent: 30 waiting 6 MB bodies refused at their admission timeout (one moment,
 * since they had queued together) were read and thrown away in one go, 100 to 150 ms of the event loop and a full
 * collection, while /healthz waited.
 */
export const DRAIN_TURN_BYTES = 1024 * 1024;

/** Refused bodies let flow again at each turn of the event loop (the others wait for the next turns). */
export const DRAINS_RESUMED_A_TURN = 4;

/**
 * The refused bodies being discarded. Each flows until the turn's bytes are spent, and then waits, paused, for a
 * later turn; each turn lets DRAINS_RESUMED_A_TURN of those waiting flow again, first come first served. A body whose
 * client sends nothing takes no turn's bytes and holds no place (a few slow clients cannot stop the others' bodies
 * being discarded), and nothing runs while no body waits.
 */
class Drains {
  private spent = 0;
  private turnEnds = false;
  private readonly waiting: IncomingMessage[] = [];

  constructor(
    private readonly turnBytes: number,
    private readonly resumedATurn: number,
  ) {}

  add(raw: IncomingMessage) {
    raw.on('data', (chunk: Buffer) => this.took(raw, chunk.length));
    if (this.spent < this.turnBytes) raw.resume();
    else this.wait(raw);
  }

  private took(raw: IncomingMessage, bytes: number) {
    this.spent += bytes;
    this.endTurnSoon();
    if (this.spent >= this.turnBytes) this.wait(raw);
  }

  private wait(raw: IncomingMessage) {
    raw.pause();
    if (!this.waiting.includes(raw)) this.waiting.push(raw);
    this.endTurnSoon();
  }

  private endTurnSoon() {
    if (this.turnEnds) return;
    this.turnEnds = true;
    setImmediate(() => {
      this.turnEnds = false;
      this.spent = 0;
      for (const raw of this.waiting.splice(0, this.resumedATurn)) {
        if (!raw.destroyed && !raw.readableEnded) raw.resume();
      }
      if (this.waiting.length > 0) this.endTurnSoon();
    });
  }
}

const drains = new Drains(DRAIN_TURN_BYTES, DRAINS_RESUMED_A_TURN);
