// The process's request memory (the admission's room, fairness/admission.ts): what the requests running at once may hold
// together beyond the caches, derived from the heap and the container's memory limit unless REQUEST_MEMORY_MB says.
// Bodies draw from it as their bytes arrive and heavy doors what they state (app/admission.ts). A fifth of the heap:
// the parsed values and answers live there, beside the caches' MODEL_CACHE_MAX_MB; and at most three tenths of what
// the container leaves outside the heap, where the bodies' bytes and the answers' slices are.
import { readFileSync } from 'node:fs';
import { getHeapStatistics } from 'node:v8';

const MIB = 1024 * 1024;
/** The least request memory, whatever the heap: one large body and a heavy door beside it. */
export const MIN_REQUEST_MEMORY = 16 * MIB;

/** Request memory in bytes: `configuredMb`, else a fifth of the heap and at most 0.3 of the container outside it. */
export function requestMemoryBytes(
  configuredMb: number | undefined,
  heapLimit: number,
  containerLimit: number | undefined,
): number {
  if (configuredMb !== undefined) return configuredMb * MIB;
  const outside =
    containerLimit === undefined ? Number.POSITIVE_INFINITY : (containerLimit - heapLimit) * 0.3;
  const derived = Math.min(heapLimit / 5, outside);
  return Math.max(MIN_REQUEST_MEMORY, Math.floor(derived / MIB) * MIB);
}

/** The container's memory limit (cgroup v2, else v1), in bytes; undefined when there is none. */
export function containerMemoryLimit(
  read = (path: string) => readFileSync(path, 'utf8'),
): number | undefined {
  for (const path of ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes']) {
    try {
      const limit = Number(read(path).trim());
      // ("max", or v1's page-rounded 2^63 when unlimited)
      if (Number.isFinite(limit) && limit > 0 && limit < 2 ** 50) return limit;
    } catch {
      // not this cgroup version
    }
  }
  return undefined;
}

/** This process's request memory. */
export const processRequestMemory = (configuredMb: number | undefined) =>
  requestMemoryBytes(configuredMb, getHeapStatistics().heap_size_limit, containerMemoryLimit());
