// The request memory (app/memory.ts): configured, or derived from the heap and the container's memory limit.
import { describe, expect, it } from 'vitest';
import { containerMemoryLimit, MIN_REQUEST_MEMORY, requestMemoryBytes } from '../../src/app/memory.js';

const MIB = 1024 * 1024;

describe('request memory', () => {
  it('REQUEST_MEMORY_MB, when set, is the whole of it', () => {
    expect(requestMemoryBytes(96, 4096 * MIB, 640 * MIB)).toBe(96 * MIB);
  });

  it('derived: a fifth of the heap, at most 0.3 of what the container leaves outside it, whole MiB, 16 MiB at least', () => {
    // The Kubernetes manifest's heap (320 MB and the young generation) and limit (640Mi): the heap bounds it.
    expect(requestMemoryBytes(undefined, 344 * MIB, 640 * MIB)).toBe(68 * MIB);
    // A container barely larger than its heap: what is outside bounds it.
    expect(requestMemoryBytes(undefined, 1024 * MIB, 1124 * MIB)).toBe(30 * MIB);
    // No container limit: the heap alone.
    expect(requestMemoryBytes(undefined, 4000 * MIB, undefined)).toBe(800 * MIB);
    expect(requestMemoryBytes(undefined, 40 * MIB, 60 * MIB)).toBe(MIN_REQUEST_MEMORY);
  });

  it('reads the cgroup v2 limit, else v1; "max" or an unlimited v1 value is no limit', () => {
    const files = (map: Record<string, string>) => (path: string) => {
      const text = map[path];
      if (text === undefined) throw new Error('ENOENT');
      return text;
    };
    expect(containerMemoryLimit(files({ '/sys/fs/cgroup/memory.max': '671088640\n' }))).toBe(640 * MIB);
    expect(containerMemoryLimit(files({ '/sys/fs/cgroup/memory.max': 'max\n' }))).toBeUndefined();
    expect(
      containerMemoryLimit(files({ '/sys/fs/cgroup/memory/memory.limit_in_bytes': '536870912\n' })),
    ).toBe(512 * MIB);
    expect(
      containerMemoryLimit(files({ '/sys/fs/cgroup/memory/memory.limit_in_bytes': '9223372036854771712' })),
    ).toBeUndefined();
    expect(containerMemoryLimit(files({}))).toBeUndefined();
  });
});
