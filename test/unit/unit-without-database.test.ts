// The unit tests run without a database: their vitest project has no global set-up (vitest.config.ts), so
// `npx vitest run test/unit` starts no Neo4j, and CI runs them before its database is up. A unit test that reached for
// the run's Neo4j (the test world, its fixtures, the provided URI, a local Neo4j of its own) would fail there.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, inject, it } from 'vitest';

const DIR = path.join(import.meta.dirname);
const REACHES_NEO4J = [
  /from '\.\.\/helpers\.js'/,
  /from '\.\.\/fixtures\.js'/,
  /inject\('neo4jUri'\)/,
  /startLocalNeo4j\(/,
  /createDriver\(/,
];

describe('the unit tests', () => {
  it('are given no Neo4j (their project runs no global set-up)', () => {
    expect(inject('neo4jUri')).toBeUndefined();
  });

  it('none reaches for a database', () => {
    const files = readdirSync(DIR).filter(
      (f) => f.endsWith('.test.ts') && f !== path.basename(import.meta.filename),
    );
    expect(files.length).toBeGreaterThan(40);
    const reaching = files.filter((f) => {
      const text = readFileSync(path.join(DIR, f), 'utf8');
      return REACHES_NEO4J.some((pattern) => pattern.test(text));
    });
    expect(reaching).toEqual([]);
  });
});
