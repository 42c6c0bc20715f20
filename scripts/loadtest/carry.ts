// The load test's carried redeclaration: while the traffic runs, one tenant narrows an enumeration to the values in
// use through POST /entities/model/apply (a change that could invalidate stored values, so not made in place: a
// redeclaration that carries its values), with a curator creating entities with and without that attribute all
// along. Afterwards every value written before the withdrawal, all of them valid under the new definition, must
// still be there, and each write after it refused with a 4xx, never a 5xx.
import { randomUUID } from 'node:crypto';
import { mintToken } from '../../src/auth/tokens.js';
import { outcomes } from './invariants.js';

/** The grades the curator writes. */
const GRADES = ['A', 'B'];
/** The enumeration declared first; the apply narrows it to GRADES. */
const DECLARED = ['A', 'B', 'C'];
/** Entities with a grade before the traffic: what the carry's pass walks under load. */
const SEEDED = 400;

interface CarryRun {
  base: string;
  authorization: string;
  type: string;
  /** Entities acknowledged with a grade, and that grade. */
  graded: Map<string, string>;
  /** Entities acknowledged without one. */
  plain: string[];
  faults: string[];
  refusedAfter: number;
  applied?: { status: number; carrying: number };
}

async function call(
  run: { base: string; authorization: string },
  method: string,
  path: string,
  body?: unknown,
) {
  const res = await fetch(`${run.base}${path}`, {
    method,
    headers: {
      authorization: run.authorization,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  let data: Record<string, unknown> = {};
  try {
    data = (JSON.parse(text) as { DATA?: Record<string, unknown> }).DATA ?? {};
  } catch {}
  return { status: res.status, data };
}

const doc = (allowed: string[]) => ({
  format: 'entity-metamodel/v1',
  types: [
    {
      name: 'Carried',
      attributes: [
        { name: 'grade', value_type: 'string', cardinality: 'single', allowed_values: allowed },
        { name: 'note', value_type: 'string', cardinality: 'single' },
      ],
    },
  ],
});

/** A tenant of its own with the Carried type and SEEDED graded entities. */
export async function setUpCarry(base: string, secret: string): Promise<CarryRun> {
  const tenant = `load-carry-${randomUUID().slice(0, 8)}`;
  const run = { base, authorization: `Bearer ${await mintToken(secret, { tenant, sub: 'carry-curator' })}` };
  const applied = await call(run, 'POST', '/entities/model/apply', { document: doc(DECLARED) });
  if (applied.status !== 200) throw new Error(`carry setup: apply ${applied.status}`);
  const found = await call(run, 'GET', '/entities/types/by-name/Carried');
  const type = (found.data.entity_type as { guid: string }).guid;
  const graded = new Map<string, string>();
  for (let i = 0; i < SEEDED; i += 8) {
    await Promise.all(
      Array.from({ length: Math.min(8, SEEDED - i) }, async (_, k) => {
        const grade = GRADES[(i + k) % 2] as string;
        const res = await call(run, 'POST', '/entities', {
          type_guid: type,
          name: `seed-${i + k}`,
          values: { grade, note: `n${i + k}` },
        });
        if (res.status !== 201) throw new Error(`carry setup: entity ${res.status}`);
        graded.set((res.data.entity as { guid: string }).guid, grade);
      }),
    );
  }
  return { ...run, type, graded, plain: [], faults: [], refusedAfter: 0 };
}

/**
 * During the traffic: a curator writes entities with a grade (and without) for `seconds`; a third of the way in,
 * the enumeration is narrowed by an apply that carries the values.
 */
export async function carryUnderTraffic(run: CarryRun, seconds: number) {
  const until = Date.now() + seconds * 1000;
  let withdrawn = false;
  const curator = (async () => {
    for (let i = 0; Date.now() < until; i += 1) {
      const grade = GRADES[i % 2] as string;
      const withGrade = i % 3 !== 0;
      const res = await call(run, 'POST', '/entities', {
        type_guid: run.type,
        name: `live-${i}`,
        values: withGrade ? { grade, note: `l${i}` } : { note: `l${i}` },
      });
      if (res.status === 201) {
        const guid = (res.data.entity as { guid: string }).guid;
        if (withGrade) run.graded.set(guid, grade);
        else run.plain.push(guid);
      } else if (res.status >= 500) {
        run.faults.push(`POST /entities: ${res.status}`);
      } else if (withGrade && withdrawn) {
        run.refusedAfter += 1; // the attribute is withdrawn, then declared anew: 4xx while it is carried
      } else if (res.status !== 429 && res.status !== 503) {
        run.faults.push(`POST /entities: ${res.status} ${String(res.data.reason)}`);
      }
    }
  })();
  await new Promise((r) => setTimeout(r, (seconds * 1000) / 3));
  const applied = await call(run, 'POST', '/entities/model/apply', {
    document: doc(GRADES),
    allow_withdraw: true,
  });
  withdrawn = true;
  run.applied = {
    status: applied.status,
    carrying: (applied.data.carrying as unknown[] | undefined)?.length ?? 0,
  };
  await curator;
}

/** After the traffic: waits for the carry to end, then checks every value acknowledged with a grade is there. */
export async function checkCarry(run: CarryRun) {
  const deadline = Date.now() + 120_000;
  let declared = false;
  while (Date.now() < deadline) {
    const listing = await call(run, 'GET', `/entities/types/${run.type}/attributes`);
    const grade = (
      listing.data.attributes as
        | { name: string; allowed_values: string[] | null; redeclaring?: unknown }[]
        | undefined
    )?.find((a) => a.name === 'grade');
    // (shown as it will be while carried, marked redeclaring: the carry has ended once the mark is gone)
    if (grade?.allowed_values?.length === GRADES.length && !grade.redeclaring) {
      declared = true;
      break;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  const lost: string[] = [];
  const guids = [...run.graded.keys()];
  for (let i = 0; i < guids.length; i += 16) {
    await Promise.all(
      guids.slice(i, i + 16).map(async (guid) => {
        const res = await call(run, 'GET', `/entities/${guid}`);
        const values = (res.data.entity as { values?: Record<string, unknown> } | undefined)?.values ?? {};
        if (values.grade !== run.graded.get(guid)) lost.push(`${guid}: ${String(values.grade)}`);
      }),
    );
  }
  const ok =
    declared &&
    lost.length === 0 &&
    run.faults.length === 0 &&
    run.applied?.status === 200 &&
    run.applied.carrying === 1;
  outcomes.push({
    name: 'carried-redeclaration-loses-no-value',
    ok,
    detail: `${run.graded.size} entities acknowledged with a grade (${SEEDED} before the traffic), ${run.plain.length} without; apply ${run.applied?.status} carrying ${run.applied?.carrying}; the new definition ${declared ? 'declared' : 'NOT declared within 120 s'}; ${lost.length} values lost; ${run.refusedAfter} writes naming the attribute refused while it was carried`,
    problems: [...lost.slice(0, 5), ...run.faults.slice(0, 5)],
    cases: run.graded.size,
  });
}
