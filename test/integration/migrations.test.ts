// Schema migrations (src/db/migrations.ts): applied at every start, they run only what the database lacks. A database
// already migrated costs the reads of its schema and its backfill markers; a missing index is created again.
import { describe, expect } from 'vitest';
import { createExecutor } from '../../src/db/executor.js';
import { MIGRATIONS, migrate, schemaObjectOf } from '../../src/db/migrations.js';
import { it } from '../fixtures.js';

describe('schema migrations', () => {
  it('every statement names the constraint or index it creates or drops (so that a present one is skipped)', () => {
    expect(MIGRATIONS.filter((statement) => schemaObjectOf(statement) === null)).toEqual([]);
    expect(schemaObjectOf('DROP CONSTRAINT old_one IF EXISTS')).toEqual({ name: 'old_one', creates: false });
  });

  it('on a migrated database: three reads and no write; a missing index is created again, and only it', async ({
    world,
  }) => {
    const db = createExecutor(world.driver);
    await migrate(db);
    const before = db.stats.queries;
    await migrate(db);
    expect(db.stats.queries - before).toBe(3); // constraints, indexes, backfill markers

    // An index not hinted by any statement (the idempotency sweep's), dropped and migrated back.
    await world.driver.executeQuery('DROP INDEX idempotency_expiry IF EXISTS');
    const again = db.stats.queries;
    await migrate(db);
    expect(db.stats.queries - again).toBe(5); // the reads, the one CREATE INDEX, awaitIndexes
    const names = await world.driver.executeQuery(
      "SHOW INDEXES YIELD name WHERE name = 'idempotency_expiry' RETURN name",
    );
    expect(names.records).toHaveLength(1);
  });
});
