// The REST routes table of docs/api.md lists every route the router serves (the route table of src/rest/schemas.ts),
// so a route cannot land without its line in the reference.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ROUTES } from '../../src/rest/schemas.js';

const API = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');

/** The method-and-path cells of the "REST routes" table: `GET /a/{b}`, `GET /x`, `GET /y` (several per cell). */
function documentedRoutes(): Set<string> {
  const section = API.slice(
    API.indexOf('\n## REST routes\n'),
    API.indexOf('\n## ', API.indexOf('\n## REST routes\n') + 1),
  );
  const found = new Set<string>();
  for (const line of section.split('\n')) {
    const cell = /^\| (.*?) \|/.exec(line)?.[1];
    if (!cell) continue;
    for (const m of cell.matchAll(/`(GET|POST|PATCH|DELETE) (\/[^`?[ ]*)/g)) {
      found.add(`${m[1]} ${m[2]!.replace(/\{[^}]*\}/g, '{}')}`);
    }
    if (/^`\/graphql`/.test(cell)) {
      found.add('GET /graphql');
      found.add('POST /graphql');
    }
  }
  return found;
}

describe('the REST routes table of docs/api.md', () => {
  it('lists every route of the route table (parameters compared by place, not name)', () => {
    const documented = documentedRoutes();
    const served = Object.values(ROUTES).map((r) => `${r.method} ${r.path.replace(/:\w+/g, '{}')}`);
    expect(served.length).toBeGreaterThan(25);
    expect(served.filter((route) => !documented.has(route))).toEqual([]);
  });
});
