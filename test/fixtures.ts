// vitest fixtures: what a test file needs, set up when a test first asks for it and closed after the file.
import { test as base } from 'vitest';
import { createWorld, type TestWorld } from './helpers.js';

/**
 * One app on the run's Neo4j, made once per test file (tests take their own tenant, so they share it safely) and
 * closed after the file's last test.
 */
const instance = (): [
  (context: object, use: (world: TestWorld) => Promise<void>) => Promise<void>,
  { scope: 'file' },
] => [
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads the fixtures a fixture needs from this pattern
  async ({}, use) => {
    const world = await createWorld();
    await use(world);
    await world.close();
  },
  { scope: 'file' },
];

/** `it` with a `world`, and a `second` instance of the service on the same database when a test asks for one. */
export const it = base.extend<{ world: TestWorld; second: TestWorld }>({
  world: instance(),
  second: instance(),
});
