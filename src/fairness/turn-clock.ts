// Long work on the one thread cut into turns of the event loop by time, not by count. A count of items a turn is
// right on one machine only: 2,000 definitions checked or planned were a few milliseconds on a fast core and 10 to
// 16 ms on a slower one under load, and another tenant's request waits one turn at each of its steps (its socket,
// its token, its read, its answer), so a plan took a light request from 13 to 90 ms at p99. A loop asks `due()`
// after each item and, when it is, awaits `turn()`: every callback waiting meanwhile runs first.
import { setImmediate as nextTurn } from 'node:timers/promises';

/** The longest a piece of long work holds the event loop before it gives a turn to others, in ms. */
export const TURN_MS = 2;

export class TurnClock {
  private since = performance.now();

  /** Whether this work has held the event loop TURN_MS since its last turn. */
  due(): boolean {
    return performance.now() - this.since >= TURN_MS;
  }

  /** Gives the event loop a turn; the clock starts again when it comes back. */
  async turn(): Promise<void> {
    await nextTurn();
    this.since = performance.now();
  }
}
