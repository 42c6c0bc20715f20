// Large bodies parsed off the event loop.
//
// The service answers every request on one thread. A body of megabytes takes milliseconds to parse, and while it is
// parsed nothing else is answered: one tenant sending such bodies back to back delays every other tenant's requests.
// A body of LARGE_JSON_BYTES or more is read into memory shared with the JSON thread (body.ts, its large-body
// regions) and parsed there (json-thread.ts, one worker), at the lowest scheduling priority: the event loop hands
// it over without a copy and goes on answering, and the processor goes to the event loop first.
//
// Answers stay on the event loop: handing a value of megabytes to the thread means copying it, which costs about as
// much as serialising it (measured under the door storm: a 4 MB entity, 16 ms of the event loop a read either way),
// and sending an answer as bytes made for it cost more than sending its text (the allocation, and the collections
// its external memory brings on: a 4 MB entity read's p99 under the storm 37-55 ms as text, 80-84 as bytes).
//
// Bounds: at most IN_FLIGHT bodies are handed over at a time, the others wait their turn in order, holding only what
// their request already holds (its large-body slot); the thread's heap is capped (THREAD_HEAP_MB). A thread that
// fails (its heap exhausted, a crash) fails only the bodies it held, which are then parsed on the event loop as they
// would be without it, and the next body starts a new thread.
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { type JsonResult, type JsonTask, NotJson, parseJsonText } from './json-thread.js';

/** Bodies from this size on are parsed by the JSON thread. */
export const LARGE_JSON_BYTES = 256 * 1024;
/** Tasks handed to the thread at a time. */
export const IN_FLIGHT = 2;
/**
 * The JSON thread's scheduling priority (nice value, Linux): the lowest, so that the event loop takes the processor
 * whenever it has work (another tenant's request) and the thread's megabytes use what is left.
 */
export const THREAD_NICE = 19;
/** The JSON thread's heap (old generation). */
export const THREAD_HEAP_MB = 64;

/**
 * The length of `value`'s JSON text, counted in one step per value (no text is made), in UTF-16 code units: a
 * character outside ASCII counts once, an escaped one once rather than its escape. Counting stops once past
 * `stopPast`: the result is then more than `stopPast` and at most the true length.
 */
export function jsonLength(value: unknown, stopPast = Number.POSITIVE_INFINITY): number {
  let n = 0;
  const walk = (item: unknown): void => {
    if (n > stopPast) return;
    switch (typeof item) {
      case 'string':
        n += item.length + 2;
        return;
      case 'number':
      case 'bigint':
        n += String(item).length;
        return;
      case 'boolean':
        n += item ? 4 : 5;
        return;
      case 'object': {
        if (item === null) {
          n += 4;
          return;
        }
        const toJSON = (item as { toJSON?: unknown }).toJSON;
        if (typeof toJSON === 'function') {
          walk(toJSON.call(item));
          return;
        }
        if (Array.isArray(item)) {
          n += item.length === 0 ? 2 : 1 + item.length;
          for (const element of item) {
            if (element === undefined || typeof element === 'function' || typeof element === 'symbol') n += 4;
            else walk(element);
            if (n > stopPast) return;
          }
          return;
        }
        let empty = true;
        n += 1;
        for (const key of Object.keys(item)) {
          const member = (item as Record<string, unknown>)[key];
          if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
          empty = false;
          n += key.length + 4;
          walk(member);
          if (n > stopPast) return;
        }
        n += empty ? 1 : 0;
        return;
      }
      default:
        return;
    }
  };
  walk(value);
  return n;
}

type Pending = {
  task: JsonTask;
  transfer: ArrayBuffer[];
  resolve: (result: JsonResult) => void;
  reject: (error: Error) => void;
};

/** Why a task did not run on the thread (the caller runs it on the event loop). */
class ThreadFailed extends Error {}

export class JsonOffload {
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly waiting: Pending[] = [];
  private readonly running = new Map<number, Pending>();
  private handed = 0;
  private fallbacks = 0;

  constructor(
    private readonly options: {
      offloadBytes?: number;
      inFlight?: number;
      heapMb?: number;
      nice?: number;
    } = {},
  ) {}

  get offloadBytes() {
    return this.options.offloadBytes ?? LARGE_JSON_BYTES;
  }

  /** Bodies the thread parsed, and bodies that fell back to the event loop (for the tests). */
  stats() {
    return { handed: this.handed, fallbacks: this.fallbacks, waiting: this.waiting.length };
  }

  /**
   * A body's bytes to its value. A large body in memory both threads share (a SharedArrayBuffer: the large-body
   * regions of body.ts) is parsed on the thread, which reads it where it is; any other is parsed here (handing
   * megabytes over by copying them costs the event loop about as much as parsing them).
   */
  async parse(bytes: Buffer): Promise<unknown> {
    if (bytes.length < this.offloadBytes || !(bytes.buffer instanceof SharedArrayBuffer)) {
      return parseJsonText(bytes.toString('utf8'));
    }
    try {
      const result = await this.run({ id: 0, parse: bytes }, []);
      if ('notJson' in result) throw new NotJson();
      if ('value' in result) return result.value;
      throw new ThreadFailed();
    } catch (e) {
      if (!(e instanceof ThreadFailed)) throw e;
      this.fallbacks++;
      return parseJsonText(bytes.toString('utf8'));
    }
  }

  /** Stops the thread (tasks held fall back to the event loop); the next task starts a new one. */
  async close() {
    const worker = this.worker;
    this.worker = null;
    this.failRunning();
    await worker?.terminate();
  }

  private run(task: JsonTask, transfer: ArrayBuffer[]): Promise<JsonResult> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ task, transfer, resolve, reject });
      this.pump();
    });
  }

  private pump() {
    while (this.running.size < (this.options.inFlight ?? IN_FLIGHT) && this.waiting.length > 0) {
      const next = this.waiting.shift() as Pending;
      const id = this.nextId++;
      const task = { ...next.task, id } as JsonTask;
      try {
        this.thread().postMessage(task, next.transfer);
      } catch {
        // Bytes that cannot be handed over: the event loop parses them.
        next.reject(new ThreadFailed());
        continue;
      }
      this.running.set(id, next);
    }
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const here = import.meta.url;
    const file = new URL(here.endsWith('.ts') ? './json-thread.ts' : './json-thread.js', here);
    const worker = new Worker(fileURLToPath(file), {
      workerData: { jsonThread: true, nice: this.options.nice ?? THREAD_NICE },
      resourceLimits: {
        maxOldGenerationSizeMb: this.options.heapMb ?? THREAD_HEAP_MB,
        maxYoungGenerationSizeMb: 4,
      },
      stdout: false,
      stderr: false,
    });
    worker.unref();
    worker.on('message', (result: JsonResult) => {
      const pending = this.running.get(result.id);
      if (!pending) return;
      this.running.delete(result.id);
      this.handed++;
      pending.resolve(result);
      this.pump();
    });
    const fail = () => {
      if (this.worker !== worker) return;
      this.worker = null;
      this.failRunning();
      this.pump();
    };
    worker.on('error', fail);
    worker.on('exit', fail);
    this.worker = worker;
    return worker;
  }

  private failRunning() {
    const running = [...this.running.values()];
    this.running.clear();
    for (const pending of running) pending.reject(new ThreadFailed());
  }
}

/** The service's JSON thread (one per process, started at the first large body). */
export const jsonOffload = new JsonOffload();
