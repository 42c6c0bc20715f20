// vitest fixtures: what a test file needs, set up when a test first asks for it and closed after the file.
import { test as base } from 'vitest';
import { createWorld, type TestWorld } from './helpers.js';

/**
 * `it` with a `world`: an app on the run's Neo4j, made once per test file (tests take their own tenant, so they
 * share it safely) and closed after the file's last test.
 */
export const it = base.extend<{ world: TestWorld; second: TestWorld }>({
  world: [
    // biome-ignore lint/correctness/noEmptyPattern: vitest reads the fixtures a fixture needs from this pattern
    async ({}, use) => {
      const world = await createWorld();
      await use(world);
      await world.close();
    },
    { scope: 'file' },
  ],
  /** Another instance of the service on the same database (what one instance writes, the other must see). */
  second: [
    // biome-ignore lint/correctness/noEmptyPattern: vitest reads the fixtures a fixture needs from this pattern
    async ({}, use) => {
      const second = await createWorld();
      await use(second);
      await second.close();
    },
    { scope: 'file' },
  ],
});
