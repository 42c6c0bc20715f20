// The warm-up's rehearsal (src/db/executor.ts, rehearse): every statement runs in its one transaction, rolled back;
// and since Neo4j keeps a plan per statement text, parameter types and whether the transaction has changed anything
// yet, a read's statements also run in a fresh transaction beside it, and a write's up to its first change are
// planned (EXPLAIN) in one once it is done: the plans a request's statements take in a transaction of its own.
import type { Driver } from 'neo4j-driver';
import { describe, expect } from 'vitest';
import { rehearse } from '../../src/db/executor.js';
import { it } from '../fixtures.js';
import { newTenant } from '../helpers.js';

interface Sent {
  tx: number;
  cypher: string;
}

/** Calls a property of `target` on it (a method bound), unless `wrap` answers for that property. */
function proxied<T extends object>(target: T, wrap: (prop: string | symbol) => unknown): T {
  return new Proxy(target, {
    get(object, prop) {
      const own = wrap(prop);
      if (own !== undefined) return own;
      const value = Reflect.get(object, prop);
      return typeof value === 'function' ? value.bind(object) : value;
    },
  });
}

describe('the rehearsal', () => {
  it("runs every statement in one transaction, rolled back; the statements sent after its first change are also planned as a fresh transaction sends them (a read's run beside it, a write's up to its own first change EXPLAINed once it is done), each once; it tells which variant it planned", async ({
    world,
  }) => {
    const tenant = newTenant('rehearse');
    const sent: Sent[] = [];
    let transactions = 0;
    const driver = proxied(world.driver, (prop) =>
      prop === 'session'
        ? (config: Parameters<Driver['session']>[0]) => {
            const session = world.driver.session(config);
            return proxied(session, (p) =>
              p === 'beginTransaction'
                ? (txConfig: Parameters<typeof session.beginTransaction>[0]) => {
                    const tx = session.beginTransaction(txConfig);
                    const number = ++transactions;
                    return proxied(tx, (q) =>
                      q === 'run'
                        ? (cypher: string, params: Record<string, unknown>) => {
                            sent.push({ tx: number, cypher });
                            return tx.run(cypher, params);
                          }
                        : undefined,
                    );
                  }
                : undefined,
            );
          }
        : undefined,
    );
    const count = 'MATCH (n:RehearsalProbe {tenant: $tenant}) RETURN count(n) AS n';
    const create = 'CREATE (:RehearsalProbe {tenant: $tenant})';
    const countFirst =
      'MATCH (n:RehearsalProbe {tenant: $tenant}) WHERE n.second IS NULL RETURN count(n) AS n';
    const createSecond = 'CREATE (:RehearsalProbe {tenant: $tenant, second: true})';
    const update = 'MATCH (n:RehearsalProbe {tenant: $tenant}) SET n.seen = true';
    const touch = 'MATCH (n:RehearsalProbe {tenant: $tenant}) SET n.touched = true';
    const observed: string[] = [];
    const seen = await rehearse(
      driver,
      undefined,
      async (db) => {
        await db.write((run) => run(create, { tenant }));
        await db.write(async (run) => {
          await run(countFirst, { tenant });
          await run(createSecond, { tenant });
          await run(update, { tenant });
        });
        const first = await db.read((run) => run(count, { tenant }));
        const second = await db.readOne((run) => run(count, { tenant }));
        await db.write((run) => run(touch, { tenant }));
        return [Number(first[0]?.n), Number(second[0]?.n)];
      },
      undefined,
      undefined,
      (cypher, changed) => observed.push(`${changed ? 'changed' : 'fresh'} ${cypher}`),
    );

    // the rehearsal's transaction (the first begun) sees its own writes, and ran every statement once
    expect(seen).toEqual([2, 2]);
    const main = sent[0]?.tx;
    expect(sent.filter((s) => s.tx === main).map((s) => s.cypher)).toEqual([
      create,
      countFirst,
      createSecond,
      update,
      count,
      count,
      touch,
    ]);
    // in a fresh transaction per unit: a write's statements up to its own first change (createSecond, not update)
    // planned (EXPLAIN) once the write is done, before the next step (the last write's too); a read's statement run
    // beside the rehearsal's, once (not for the second read). The statement before the first change (create) was
    // planned fresh in the rehearsal's own transaction.
    const fresh = sent.filter((s) => s.tx !== main);
    expect(fresh.map((s) => s.cypher)).toEqual([
      `EXPLAIN ${countFirst}`,
      `EXPLAIN ${createSecond}`,
      count,
      `EXPLAIN ${touch}`,
    ]);
    expect(new Set(fresh.map((s) => s.tx)).size).toBe(3);
    const at = (cypher: string, inMain: boolean) =>
      sent.findIndex((s) => s.cypher === cypher && (s.tx === main) === inMain);
    expect(at(update, true)).toBeLessThan(at(`EXPLAIN ${countFirst}`, false));
    expect(at(`EXPLAIN ${createSecond}`, false)).toBeLessThan(at(count, false));
    expect(at(count, false)).toBeLessThan(at(count, true));
    expect(at(`EXPLAIN ${touch}`, false)).toBeGreaterThan(at(touch, true));
    // what it told of: each statement in the variant Neo4j planned (whether its transaction had changed anything)
    expect(observed).toEqual([
      `fresh ${create}`,
      `changed ${countFirst}`,
      `changed ${createSecond}`,
      `changed ${update}`,
      `fresh ${countFirst}`,
      `fresh ${createSecond}`,
      `fresh ${count}`,
      `changed ${count}`,
      `changed ${count}`,
      `changed ${touch}`,
      `fresh ${touch}`,
    ]);

    // nothing written
    const session = world.driver.session();
    try {
      const left = await session.run(count, { tenant });
      expect(Number(left.records[0]?.get('n'))).toBe(0);
    } finally {
      await session.close();
    }
  });
});
