// A counting semaphore shared fairly between keys (tenants): bounds how many large bodies are read, or GraphQL
// operations run, at once, so that no single tenant can hold every slot or starve the others' turns.
//
// A key holds at most `maxPerKey` slots at a time. Waiters queue per key, and a freed slot goes to the keys in turn
// (round robin over the keys that wait and are under their share), so a tenant with a hundred queued requests
// waits behind a tenant with one only once. A slot reaches its holder in a later turn of the event loop, not a
// microtask: otherwise a queue of holders that do no I/O (refusals) would run back to back, holding off every
// other request (a health probe included) until the whole queue had run.

export class SlotWaitAborted extends Error {
  constructor() {
    super('gave up waiting for a slot');
    this.name = 'SlotWaitAborted';
  }
}

interface Waiter {
  grant: () => void;
  cancel: () => void;
}

export class Slots {
  private free: number;
  private readonly held = new Map<string, number>();
  private readonly waiting = new Map<string, Waiter[]>();
  /** Keys with waiters, in the order they get their next turn. */
  private readonly turns: string[] = [];

  constructor(
    readonly size: number,
    readonly maxPerKey = Math.max(1, Math.ceil(size / 2)),
  ) {
    this.free = size;
  }

  get inUse() {
    return this.size - this.free;
  }

  get queued() {
    let n = 0;
    for (const list of this.waiting.values()) n += list.length;
    return n;
  }

  /** Slots `key` holds now. */
  heldBy(key: string) {
    return this.held.get(key) ?? 0;
  }

  /**
   * Resolves with a release function once a slot is free for `key`; release is idempotent. With `signal`, gives up
   * waiting when it aborts (rejects with SlotWaitAborted; a slot already granted is kept).
   */
  acquire(key = '', signal?: AbortSignal): Promise<() => void> {
    return new Promise((resolve, reject) => {
      /** Takes the slot now and hands it over in the next turn of the event loop. */
      const grant = () => {
        this.free -= 1;
        this.held.set(key, this.heldBy(key) + 1);
        let released = false;
        const release = () => {
          if (released) return;
          released = true;
          this.free += 1;
          const left = this.heldBy(key) - 1;
          if (left > 0) this.held.set(key, left);
          else this.held.delete(key);
          this.dispatch();
        };
        setImmediate(() => resolve(release));
      };
      if (this.free > 0 && this.heldBy(key) < this.maxPerKey && !this.waiting.has(key)) {
        grant();
        return;
      }
      if (signal?.aborted) {
        reject(new SlotWaitAborted());
        return;
      }
      const waiter: Waiter = {
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          grant();
        },
        cancel: () => reject(new SlotWaitAborted()),
      };
      const onAbort = () => {
        const list = this.waiting.get(key);
        const at = list?.indexOf(waiter) ?? -1;
        if (list && at >= 0) {
          list.splice(at, 1);
          if (list.length === 0) this.forget(key);
          waiter.cancel();
        }
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const list = this.waiting.get(key);
      if (list) list.push(waiter);
      else {
        this.waiting.set(key, [waiter]);
        this.turns.push(key);
      }
      this.dispatch();
    });
  }

  private forget(key: string) {
    this.waiting.delete(key);
    const at = this.turns.indexOf(key);
    if (at >= 0) this.turns.splice(at, 1);
  }

  /** Gives free slots to waiting keys in turn, skipping keys at their share. */
  private dispatch() {
    let looked = 0;
    while (this.free > 0 && this.turns.length > 0 && looked < this.turns.length) {
      const key = this.turns.shift() as string;
      const list = this.waiting.get(key) as Waiter[];
      if (this.heldBy(key) >= this.maxPerKey) {
        this.turns.push(key);
        looked += 1;
        continue;
      }
      looked = 0;
      const waiter = list.shift() as Waiter;
      if (list.length === 0) this.waiting.delete(key);
      else this.turns.push(key);
      waiter.grant();
    }
  }
}
