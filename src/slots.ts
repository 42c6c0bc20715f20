// A counting semaphore with a FIFO queue: bounds how many large bodies are read, or GraphQL operations run, at once.

export class Slots {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly size: number) {
    this.free = size;
  }

  get inUse() {
    return this.size - this.free;
  }

  get queued() {
    return this.waiting.length;
  }

  /** Resolves with a release function once a slot is free; release is idempotent. */
  acquire(): Promise<() => void> {
    return new Promise((resolve) => {
      const grant = () => {
        let released = false;
        resolve(() => {
          if (released) return;
          released = true;
          const next = this.waiting.shift();
          if (next) next();
          else this.free += 1;
        });
      };
      if (this.free > 0) {
        this.free -= 1;
        grant();
      } else {
        this.waiting.push(grant);
      }
    });
  }
}
