// JSON text to values, the same on the event loop and in the JSON thread (json-offload.ts), which runs this file as a
// worker. It imports nothing of the service's own: the worker loads it as it is, from dist/ or, under the
// tests, from src/ with Node.js stripping its types, where a relative import would not resolve.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import sjson from 'secure-json-parse';

/** A body that is not JSON (the caller answers invalid_json). */
export class NotJson extends Error {}

/** JSON text to a value, with __proto__ and constructor keys removed; an empty text is undefined. */
export function parseJsonText(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    // A key __proto__ or constructor is written plainly or with \u escapes: a text with neither is parsed as it is
    // (secure-json-parse searches the whole text with a regular expression, milliseconds a megabyte).
    if (!text.includes('\\u') && !text.includes('__proto__') && !text.includes('constructor')) {
      return JSON.parse(text);
    }
    return sjson.parse(text, undefined, { protoAction: 'remove', constructorAction: 'remove' });
  } catch {
    throw new NotJson();
  }
}

/** A body to parse (its bytes in shared memory), and the thread's answer (the same id). */
export type JsonTask = { id: number; parse: Uint8Array };
export type JsonResult =
  | { id: number; value: unknown }
  | { id: number; notJson: true }
  | { id: number; failed: string };

function serve(port: NonNullable<typeof parentPort>) {
  port.on('message', (task: JsonTask) => {
    try {
      const bytes = task.parse;
      const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
      port.postMessage({ id: task.id, value: parseJsonText(text) } satisfies JsonResult);
    } catch (e) {
      port.postMessage(
        (e instanceof NotJson
          ? { id: task.id, notJson: true }
          : { id: task.id, failed: String((e as Error)?.message ?? e) }) satisfies JsonResult,
      );
    }
  });
}

/**
 * Lowers this thread's scheduling priority (Linux: a thread has its own nice value, set through its thread id): when
 * the event loop has work, the processor goes to it first, and the thread's megabytes wait.
 */
function yieldToEventLoop(nice: number) {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, nice);
  } catch {
    // Not Linux, or not allowed: the thread runs at the process's priority.
  }
}

const data = workerData as { jsonThread?: boolean; nice?: number } | null;
if (parentPort && data?.jsonThread) {
  if (data.nice !== undefined) yieldToEventLoop(data.nice);
  serve(parentPort);
}
