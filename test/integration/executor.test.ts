// The executor's single-statement read (auto-commit): counted, one statement only, refusals mapped like the rest.
import { describe, expect } from 'vitest';
import { createDriver } from '../../src/db/driver.js';
import { createExecutor } from '../../src/db/executor.js';
import { freePort } from '../../src/db/local-neo4j.js';
import { AppError } from '../../src/errors.js';
import { it } from '../fixtures.js';

describe('readOne', () => {
  it('runs one statement, counts it, and returns its rows', async ({ world }) => {
    const stats = { queries: 0 };
    const db = createExecutor(world.driver, { stats });
    const rows = await db.readOne((run) => run('UNWIND [1, 2, 3] AS x RETURN x * $k AS y', { k: 2 }));
    expect(rows.map((r) => r.y)).toEqual([2, 4, 6]);
    expect(stats.queries).toBe(1);
  });

  it('refuses a second statement (several statements belong in a transaction: read)', async ({ world }) => {
    const db = createExecutor(world.driver);
    await expect(
      db.readOne(async (run) => {
        await run('RETURN 1');
        return run('RETURN 2');
      }),
    ).rejects.toThrow(/one statement/);
  });

  it('answers 503 storage_unavailable when Neo4j is unreachable, without hanging', async () => {
    const driver = createDriver({ uri: `bolt://127.0.0.1:${await freePort()}` });
    try {
      const started = Date.now();
      const error = await createExecutor(driver)
        .readOne((run) => run('RETURN 1'))
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).reason).toBe('storage_unavailable');
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      await driver.close();
    }
  });
});
