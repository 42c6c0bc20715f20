// Megabytes of JSON parsed and serialised off the event loop.
//
// The service answers every request on one thread. A body of megabytes takes milliseconds to parse, an answer of
// megabytes longer to serialise and encode (a 4 MB entity: about 12 ms), and while it does nothing else is answered:
// one tenant sending such requests back to back delays every other tenant's. Texts and values past OFFLOAD_BYTES go
// to the JSON thread instead (json-thread.ts, one worker), where the operating system shares the processor between it
// and the event loop: the event loop then pays only for handing the value over (a copy, about a fifth of the
// serialisation; a body's bytes are read where they are) and goes on answering meanwhile.
//
// Bounds: at most IN_FLIGHT tasks are handed over at a time (each holds a copy of its value until the thread takes
// it), the others wait their turn in order, holding only what their request already holds; the thread's heap is
// capped (THREAD_HEAP_MB). A thread that fails (its heap exhausted, a crash) fails only the tasks it held, which
// then run on the event loop as they would without it, and the next task starts a new thread.
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { type JsonResult, type JsonTask, NotJson, parseJsonText, serialiseJson } from './json-thread.js';

/** Texts and values (by their JSON length) from this size on are handled by the JSON thread. */
export const OFFLOAD_BYTES = 256 * 1024;
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
    return this.options.offloadBytes ?? OFFLOAD_BYTES;
  }

  /** Tasks the thread answered, and tasks that fell back to the event loop (for the metrics and the tests). */
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

  /** Whether `value`'s JSON text is long enough to be serialised on the thread (counted up to the threshold). */
  isLarge(value: unknown): boolean {
    return jsonLength(value, this.offloadBytes) > this.offloadBytes;
  }

  /**
   * A value to its JSON text's bytes: a small value (by jsonLength) on the event loop, a large one on the thread
   * (`large`: the caller has counted it already).
   */
  async serialise(value: unknown, large = this.isLarge(value)): Promise<Buffer> {
    if (!large) return Buffer.from(serialiseJson(value));
    try {
      const result = await this.run({ id: 0, serialise: value }, []);
      if ('bytes' in result) {
        const b = result.bytes;
        return Buffer.from(b.buffer, b.byteOffset, b.byteLength);
      }
      throw new ThreadFailed();
    } catch (e) {
      if (!(e instanceof ThreadFailed)) throw e;
      this.fallbacks++;
      return Buffer.from(serialiseJson(value));
    }
  }

  /** A text already serialised (an answer spliced from stored JSON texts) to its UTF-8 bytes, the large on the thread. */
  async encode(text: string): Promise<Buffer> {
    if (text.length < this.offloadBytes) return Buffer.from(text);
    try {
      const result = await this.run({ id: 0, encode: text }, []);
      if ('bytes' in result)
        return Buffer.from(result.bytes.buffer, result.bytes.byteOffset, result.bytes.byteLength);
      throw new ThreadFailed();
    } catch (e) {
      if (!(e instanceof ThreadFailed)) throw e;
      this.fallbacks++;
      return Buffer.from(text);
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
        // A value that cannot be handed over (a function, a symbol inside): the event loop serialises it.
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

/** The service's JSON thread (one per process, started at the first large text or value). */
export const jsonOffload = new JsonOffload();
