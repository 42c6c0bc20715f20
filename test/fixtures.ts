// vitest fixtures: what a test file needs, set up when a test first asks for it and closed after the file.
import type { AddressInfo } from 'node:net';
import { test as base } from 'vitest';
import { createWorld, type TestWorld } from './helpers.js';

/** A world whose app also listens on a loopback port: `url` is its base (http://127.0.0.1:<port>). */
export interface ServedWorld extends TestWorld {
  url: string;
  port: number;
}

type FileFixture<T> = [
  (context: object, use: (value: T) => Promise<void>) => Promise<void>,
  { scope: 'file' },
];

/**
 * One app on the run's Neo4j, made once per test file with `env` added to the test configuration (tests take
 * their own tenant, so they share it safely) and closed after the file's last test.
 */
export function instance(env?: Record<string, string>): FileFixture<TestWorld>;
export function instance(env: Record<string, string>, options: { listen: true }): FileFixture<ServedWorld>;
export function instance(
  env: Record<string, string> = {},
  options: { listen?: boolean } = {},
): FileFixture<TestWorld | ServedWorld> {
  return [
    // biome-ignore lint/correctness/noEmptyPattern: vitest reads the fixtures a fixture needs from this pattern
    async ({}, use) => {
      const world = await createWorld(env);
      try {
        if (!options.listen) {
          await use(world);
          return;
        }
        await world.app.listen({ port: 0, host: '127.0.0.1' });
        const { port } = world.app.server.address() as AddressInfo;
        await use({ ...world, url: `http://127.0.0.1:${port}`, port });
      } finally {
        await world.close();
      }
    },
    { scope: 'file' },
  ];
}

/** `it` with a `world`, and a `second` instance of the service on the same database when a test asks for one. */
export const it = base.extend<{ world: TestWorld; second: TestWorld }>({
  world: instance(),
  second: instance(),
});

/** `it` whose `world` (and `second`, when a test asks for it) is made with `env` added to the configuration. */
export const itWith = (env: Record<string, string>) =>
  base.extend<{ world: TestWorld; second: TestWorld }>({ world: instance(env), second: instance(env) });

/** `it` whose `world` is made with `env` added to the configuration and served on a loopback port (`world.url`). */
export const itServed = (env: Record<string, string> = {}) =>
  base.extend<{ world: ServedWorld }>({ world: instance(env, { listen: true }) });
