import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  // Node (and so the externalised Pothos and Yoga) loads graphql's CommonJS entry; make test code load the same
  // one, or two copies of graphql meet in one schema ("from another module or realm").
  resolve: { alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }] },
  test: {
    globalSetup: ['test/global-setup.ts'],
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 180_000,
    pool: 'forks',
    // One test file per core (vitest's default is one less, a single file at a time on 2 cores): the files wait on
    // Neo4j more than they compute. Measured on 2 cores against a running Neo4j: 1 worker 204-235 s, 2 workers
    // 129 s, 3 workers 155 s.
    maxWorkers: '100%',
    minWorkers: 1,
    reporters: ['default'],
  },
});
