// Long work on the one thread cut into turns of the event loop by time, not by count. A count of items a turn is
// right on one machine only: the same items take several times longer on a slower core under load, and another
// tenant's request waits one turn at each of its steps (its socket, its token, its read, its answer), so long turns
// multiply into its latency. A loop asks `due()` after each item and, when it is, awaits `turn()`: every callback
// waiting meanwhile runs first.
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
