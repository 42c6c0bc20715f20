import { createRequire } from 'node:module';
import { configDefaults, defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const require = createRequire(import.meta.url);

/**
 * Files that count what the purge does in one tenant: every service instance's background pass removes any
 * tenant's withdrawn data, so another file's instance running beside them could do part of the work they count.
 * They run after the others, one at a time.
 */
const ALONE = ['test/integration/purge-progress.test.ts', 'test/integration/attributes.lifecycle.test.ts'];

/**
 * The files that take longest, started first: in a fresh clone vitest has no durations cached and starts the larger
 * files first, which left the longest (a small file) to run alone at the end while the other worker sat idle.
 */
const LONGEST = [
  'test/integration/door-storm.test.ts',
  'test/integration/model-apply.test.ts',
  'test/integration/model.test.ts',
  'test/browser/ui.test.ts',
  'test/integration/limits.test.ts',
];

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]) {
    const rank = (f: TestSpecification) => {
      const at = LONGEST.findIndex((p) => f.moduleId.endsWith(p));
      return at < 0 ? LONGEST.length : at;
    };
    return [...(await super.sort(files))].sort((a, b) => rank(a) - rank(b));
  }
}

/** Files that replace a module (vi.mock): they get modules of their own. */
const ISOLATED = ['test/unit/graphql-selections.test.ts'];

/**
 * The run's Neo4j (test/global-setup.ts), set up for the projects whose files use one: vitest runs a project's global
 * set-up only when files of that project are selected, so `npx vitest run test/unit` starts no database.
 */
const WITH_NEO4J = { globalSetup: ['test/global-setup.ts'] };

export default defineConfig({
  // Node (and so the externalised Pothos and Yoga) loads graphql's CommonJS entry; make test code load the same
  // one, or two copies of graphql meet in one schema ("from another module or realm").
  resolve: { alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }] },
  test: {
    testTimeout: 60_000,
    hookTimeout: 180_000,
    pool: 'forks',
    // A worker keeps the modules it has loaded from one file to the next: the service's module graph is loaded
    // once per worker, not once per file (measured on six integration files: 14 s of CPU isolated, 8 s shared).
    // Files that replace a module (vi.mock) are isolated (their own project below).
    isolate: false,
    // One test file per core (vitest's default is one less, a single file at a time on 2 cores): the files wait on
    // Neo4j more than they compute. Measured on 2 cores against a running Neo4j, modules isolated: 1 worker
    // 204-235 s, 2 workers 129 s, 3 workers 155 s; with shared modules from a fresh Neo4j (npm test): 2 workers
    // 107-112 s, 3 workers 114 s.
    maxWorkers: '100%',
    minWorkers: 1,
    reporters: ['default'],
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        extends: true,
        // The unit tests: no database, no service on one (test/unit/unit-without-database.test.ts holds them to it).
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...ISOLATED],
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: { name: 'isolated', include: ISOLATED, isolate: true, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: {
          ...WITH_NEO4J,
          name: 'parallel',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/unit/**', ...ALONE],
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          ...WITH_NEO4J,
          name: 'alone',
          include: ALONE,
          // One process for the group: its files run one after the other.
          poolOptions: { forks: { singleFork: true } },
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
