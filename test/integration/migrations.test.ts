// Schema migrations (src/db/migrations.ts): a start trusts the database's mark of a full migration by this release
// (one read); otherwise, and in the server's check once ready, they run only what the database lacks: a migrated
// database costs the reads of its schema and its backfill markers, and a missing index is created again.
import { describe, expect, vi } from 'vitest';
import { createExecutor } from '../../src/db/executor.js';
import {
  checkSchemaInFull,
  MIGRATIONS,
  migrate,
  SCHEMA_DIGEST,
  schemaObjectOf,
} from '../../src/db/migrations.js';
import { it } from '../fixtures.js';

// (one after another: they change the shared database's mark and schema)
describe.sequential('schema migrations', () => {
  it('every statement names the constraint or index it creates or drops (so that a present one is skipped)', () => {
    expect(MIGRATIONS.filter((statement) => schemaObjectOf(statement) === null)).toEqual([]);
    expect(schemaObjectOf('DROP CONSTRAINT old_one IF EXISTS')).toEqual({ name: 'old_one', creates: false });
  });

  it('a database marked by this release costs one read at start; the full check reads the schema and marks it', async ({
    world,
  }) => {
    const db = createExecutor(world.driver);
    await migrate(db);
    const before = db.stats.queries;
    expect(await migrate(db)).toEqual({ checked: 'marked', changed: [] });
    expect(db.stats.queries - before).toBe(1); // the mark

    const full = db.stats.queries;
    expect(await migrate(db, { trustMark: false })).toEqual({ checked: 'full', changed: [] });
    expect(db.stats.queries - full).toBe(4); // constraints, indexes, backfill markers; the mark written again
  });

  it("another release's mark migrates in full and marks the database with this release's digest", async ({
    world,
  }) => {
    const db = createExecutor(world.driver);
    await migrate(db);
    await world.driver.executeQuery(
      "MATCH (m:SchemaMark {id: 'metamodel'}) SET m.digest = 'another release'",
    );
    expect((await migrate(db)).checked).toBe('full');
    const mark = await world.driver.executeQuery(
      "MATCH (m:SchemaMark {id: 'metamodel'}) RETURN m.digest AS digest",
    );
    expect(mark.records.map((r) => r.get('digest'))).toEqual([SCHEMA_DIGEST]);
    expect((await migrate(db)).checked).toBe('marked');
  });

  it('an index dropped by hand: the start trusts the mark, the check once ready creates it again and says so', async ({
    world,
  }) => {
    const db = createExecutor(world.driver);
    await migrate(db);
    const present = async () =>
      (
        await world.driver.executeQuery(
          "SHOW INDEXES YIELD name WHERE name = 'idempotency_expiry' RETURN name",
        )
      ).records.length;
    // An index not hinted by any statement (the idempotency sweep's), dropped and migrated back.
    await world.driver.executeQuery('DROP INDEX idempotency_expiry IF EXISTS');
    expect((await migrate(db)).checked).toBe('marked');
    expect(await present()).toBe(0);

    const warn = vi.fn();
    const again = db.stats.queries;
    expect(await checkSchemaInFull(db, { warn })).toEqual({
      checked: 'full',
      changed: ['idempotency_expiry'],
    });
    // the reads, the one CREATE INDEX, awaitIndexes, the mark
    expect(db.stats.queries - again).toBe(6);
    expect(await present()).toBe(1);
    expect(warn).toHaveBeenCalledWith(
      { changed: ['idempotency_expiry'] },
      'schema objects were missing or left over: migrated again',
    );
  });

  it('a failed check once ready is a warning, never a rejection', async ({ world }) => {
    const db = createExecutor(world.driver);
    const failing = { ...db, read: () => Promise.reject(new Error('database away')) } as unknown as typeof db;
    const warn = vi.fn();
    expect(await checkSchemaInFull(failing, { warn })).toBeUndefined();
    expect(warn).toHaveBeenCalledTimes(1);
  });
});
