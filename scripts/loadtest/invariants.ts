// The invariants checked in Neo4j after the traffic: one type per name, at most 200 definitions per type,
// every acknowledged write there, nothing half-written.
import type { Driver } from 'neo4j-driver';
import { cluster } from './cluster.js';
import { CHECK_BATCH, DATABASE, LIMIT } from './options.js';
import {
  ackEntities,
  ackedBy,
  ackTypes,
  answerChecks,
  answersCounted,
  conditionals,
  declarations,
  redeclared,
  serverErrorCount,
  serverErrors,
  tenants,
  typeAnswers,
  type Written,
} from './state.js';

export interface Outcome {
  name: string;
  ok: boolean;
  detail: string;
  problems: string[];
  /** How many cases it checked: an invariant over none proves nothing, and fails (verdict.ts). */
  cases: number;
}
export const outcomes: Outcome[] = [];

export async function rows(driver: Driver, cypher: string, params: Record<string, unknown> = {}) {
  const { records } = await driver.executeQuery(cypher, params, { database: DATABASE });
  return records.map((r) => r.toObject() as Record<string, unknown>);
}

async function batched<T>(items: T[], work: (batch: T[]) => Promise<void>) {
  for (let i = 0; i < items.length; i += CHECK_BATCH) await work(items.slice(i, i + CHECK_BATCH));
}

export const sameValue = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** With an instance killed: how many of the items checked it had acknowledged. */
function byKilled(items: { guid: string }[]) {
  const victim = cluster?.victim;
  if (!victim) return '';
  const acked = ackedBy[victim.index]!;
  return `; ${items.filter((i) => acked.has(i.guid)).length} of them acknowledged by the killed instance ${victim.name}`;
}

/** Every invariant, each as an outcome. */
export async function checkDatabase(driver: Driver) {
  await checkGraph(driver);
  await checkTypes(driver);
  await checkDeclarations(driver);
  await checkEntities(driver);
  checkAnswers();
}

/** Over the whole graph: one type per name, at most 200 definitions per type, one definition per name, no edge
 * between tenants. */
async function checkGraph(driver: Driver) {
  const runTenants = tenants.map((t) => t.id);
  const [names] = await rows(
    driver,
    `MATCH (t:EntityType)
     WITH t.tenant AS tenant, t.name_key AS k, count(*) AS c
     RETURN sum(c) AS types, sum(CASE WHEN tenant IN $tenants THEN c ELSE 0 END) AS mine,
            sum(CASE WHEN c > 1 THEN 1 ELSE 0 END) AS duplicated`,
    { tenants: runTenants },
  );
  outcomes.push({
    name: 'one-type-per-name',
    ok: Number(names?.duplicated) === 0,
    detail: `${names?.types} types checked, ${names?.mine} in this run's tenants; ${names?.duplicated} names with more than one type`,
    problems: [],
    cases: Number(names?.mine ?? 0),
  });

  const [limit] = await rows(
    driver,
    `MATCH (a:AttributeDefinition) WHERE a.state = 'live' AND a.origin = 'user_defined'
     WITH a.tenant AS tenant, a.owner_guid AS owner, count(*) AS c
     RETURN count(*) AS types, sum(c) AS definitions, coalesce(max(c), 0) AS max,
            sum(CASE WHEN c > $limit THEN 1 ELSE 0 END) AS over,
            sum(CASE WHEN c = $limit AND tenant IN $tenants THEN 1 ELSE 0 END) AS full`,
    { tenants: runTenants, limit: LIMIT },
  );
  outcomes.push({
    name: 'at-most-200-definitions',
    ok: Number(limit?.over) === 0 && Number(limit?.max) <= LIMIT,
    detail: `${limit?.definitions} live definitions on ${limit?.types} types checked; max ${limit?.max} per type; ${limit?.full} of this run's types at the limit`,
    problems: [],
    cases: Number(limit?.types ?? 0),
  });

  const [unique] = await rows(
    driver,
    `MATCH (a:AttributeDefinition)
     WITH a.tenant AS tenant, a.owner_guid AS owner, a.name_key AS k, count(*) AS c
     RETURN sum(c) AS definitions, sum(CASE WHEN c > 1 THEN 1 ELSE 0 END) AS duplicated`,
  );
  outcomes.push({
    name: 'one-definition-per-name',
    ok: Number(unique?.duplicated) === 0,
    detail: `${unique?.definitions} definitions checked (live and withdrawn); ${unique?.duplicated} names held twice`,
    problems: [],
    cases: Number(unique?.definitions ?? 0),
  });

  const [edges] = await rows(
    driver,
    `MATCH (a)-[r]->(b) WHERE a.tenant IS NOT NULL AND b.tenant IS NOT NULL
     RETURN count(r) AS checked, count(CASE WHEN a.tenant <> b.tenant THEN r END) AS cross`,
  );
  outcomes.push({
    name: 'no-cross-tenant-edge',
    ok: Number(edges?.cross) === 0,
    detail: `${edges?.checked} relationships checked; ${edges?.cross} cross tenants`,
    problems: [],
    cases: Number(edges?.checked ?? 0),
  });
}

/** Acknowledged types are there, under the name acknowledged. */
async function checkTypes(driver: Driver) {
  const typeProblems: string[] = [];
  const typeList = [...ackTypes].map(([guid, t]) => ({ guid, tenant: t.tenant, key: t.key }));
  let typesFound = 0;
  await batched(typeList, async (batch) => {
    const found = await rows(
      driver,
      `UNWIND $batch AS r MATCH (t:EntityType {guid: r.guid}) WHERE t.tenant = r.tenant
       RETURN t.guid AS guid, t.name_key AS key`,
      { batch },
    );
    const byGuid = new Map(found.map((f) => [f.guid as string, f.key as string]));
    for (const t of batch) {
      const key = byGuid.get(t.guid);
      if (key === undefined) typeProblems.push(`type ${t.guid} (${t.tenant} ${t.key}) missing`);
      else if (key !== t.key) typeProblems.push(`type ${t.guid} is named ${key}, acknowledged as ${t.key}`);
      else typesFound += 1;
    }
  });
  outcomes.push({
    name: 'acknowledged-types-kept',
    ok: typeProblems.length === 0,
    detail: `${typeList.length} acknowledged types checked, ${typesFound} found${byKilled(typeList)}`,
    problems: typeProblems,
    cases: typeList.length,
  });
}

/** Acknowledged declarations: live unless withdrawn since; an acknowledged withdrawal is not live again. */
async function checkDeclarations(driver: Driver) {
  const declarationProblems: string[] = [];
  const declarationList = [...declarations].map(([guid, d]) => ({ guid, ...d }));
  const counts = { live: 0, withdrawn: 0, unknown: 0 };
  await batched(declarationList, async (batch) => {
    const found = await rows(
      driver,
      `UNWIND $batch AS r MATCH (a:AttributeDefinition {guid: r.guid}) WHERE a.tenant = r.tenant
       RETURN a.guid AS guid, a.state AS state, a.owner_guid AS owner, a.name_key AS key,
              EXISTS { MATCH (:EntityType {guid: a.owner_guid})-[:HAS_ATTRIBUTE]->(a) } AS attached`,
      { batch: batch.map(({ guid, tenant }) => ({ guid, tenant })) },
    );
    const byGuid = new Map(found.map((f) => [f.guid as string, f]));
    for (const d of batch) {
      const f = byGuid.get(d.guid);
      if (d.withdrawal === 'none') {
        counts.live += 1;
        if (!f) declarationProblems.push(`definition ${d.guid} (${d.tenant} ${d.typeGuid} ${d.key}) missing`);
        else if (f.state !== 'live' || f.owner !== d.typeGuid || f.key !== d.key || f.attached !== true) {
          declarationProblems.push(
            `definition ${d.guid} (${d.key}): state ${f.state}, owner ${f.owner}, key ${f.key}, attached ${f.attached}`,
          );
        }
      } else if (d.withdrawal === 'done') {
        counts.withdrawn += 1;
        if (f && f.state !== 'withdrawn') {
          declarationProblems.push(`withdrawn definition ${d.guid} (${d.key}) is ${f.state} again`);
        } else if (f && redeclared.has(d.guid)) {
          declarationProblems.push(
            `withdrawn definition ${d.guid} (${d.key}) still there, yet its name was declared again`,
          );
        }
      } else {
        counts.unknown += 1;
      }
    }
  });
  outcomes.push({
    name: 'acknowledged-declarations-kept',
    ok: declarationProblems.length === 0,
    detail: `${declarationList.length} acknowledged declarations checked: ${counts.live} live, ${counts.withdrawn} withdrawn (not live), ${counts.unknown} with an unanswered withdrawal (not checked)${byKilled(declarationList)}`,
    problems: declarationProblems,
    cases: counts.live + counts.withdrawn,
  });
}

/** Acknowledged entities, and their values for definitions that no withdrawal touched. */
async function checkEntities(driver: Driver) {
  const entityProblems: string[] = [];
  const entityList = [...ackEntities].map(([guid, e]) => ({ guid, ...e }));
  /** The definition a value was written under was never withdrawn (nor was a withdrawal of it sent). */
  const steady = (written: Written<unknown>) => declarations.get(written.def)?.withdrawal === 'none';
  let valuesChecked = 0;
  await batched(entityList, async (batch) => {
    const found = await rows(
      driver,
      `UNWIND $batch AS r MATCH (e:Entity {guid: r.guid}) WHERE e.tenant = r.tenant
       RETURN e.guid AS guid, e.type_guid AS type, [k IN r.keys | e['attr.' + k]] AS values,
              [(e)-[x:REFERS_TO]->(t:Entity) | {attr: x.attr, pos: x.pos, target: t.guid}] AS refs`,
      {
        batch: batch.map((e) => ({ guid: e.guid, tenant: e.tenant, keys: e.scalars.map((s) => s.key) })),
      },
    );
    const byGuid = new Map(found.map((f) => [f.guid as string, f]));
    for (const e of batch) {
      const f = byGuid.get(e.guid);
      if (!f) {
        entityProblems.push(`entity ${e.guid} (${e.tenant}) missing`);
        continue;
      }
      if (f.type !== e.typeGuid)
        entityProblems.push(`entity ${e.guid}: type ${f.type}, written as ${e.typeGuid}`);
      const stored = f.values as unknown[];
      e.scalars.forEach((s, i) => {
        if (!steady(s)) return;
        valuesChecked += 1;
        if (!sameValue(stored[i], s.value)) {
          entityProblems.push(
            `entity ${e.guid} ${s.key}: stored ${JSON.stringify(stored[i])}, written ${JSON.stringify(s.value)}`,
          );
        }
      });
      const refs = f.refs as { attr: string; pos: number; target: string }[];
      for (const r of e.refs) {
        if (!steady(r)) continue;
        valuesChecked += 1;
        const targets = refs
          .filter((x) => x.attr === r.key)
          .sort((a, b) => Number(a.pos) - Number(b.pos))
          .map((x) => x.target);
        if (!sameValue(targets, r.value)) {
          entityProblems.push(
            `entity ${e.guid} ${r.key}: refers to ${targets.join(',')}, written ${r.value}`,
          );
        }
      }
    }
  });
  outcomes.push({
    name: 'acknowledged-entities-kept',
    ok: entityProblems.length === 0,
    detail: `${entityList.length} acknowledged entities checked, ${valuesChecked} values of never-withdrawn definitions compared${byKilled(entityList)}`,
    problems: entityProblems,
    cases: entityList.length,
  });
}

/** The checks made on the answers: create-or-get converges (one guid per name, at most one "created"), no 5xx. */
function checkAnswers() {
  for (const answers of typeAnswers.values()) {
    answerChecks['create-or-get converges'].checked += 1;
    if (answers.guids.size > 1 || answers.created > 1) {
      answerChecks['create-or-get converges'].failed += 1;
      if (answerChecks['create-or-get converges'].samples.length < 5) {
        answerChecks['create-or-get converges'].samples.push(
          `guids ${[...answers.guids].join(',')}, created ${answers.created} times`,
        );
      }
    }
  }
  for (const [name, c] of Object.entries(answerChecks)) {
    outcomes.push({
      name: `answers: ${name}`,
      ok: c.failed === 0,
      detail: `${c.checked} checked, ${c.failed} failed`,
      problems: c.samples,
      cases: c.checked,
    });
  }
  // The conditional writes were made (a run that sent none would check nothing of them).
  outcomes.push({
    name: 'conditional writes sent',
    ok: conditionals.sent > 0,
    detail: `${conditionals.sent} declarations and withdrawals sent with If-Match: ${conditionals.won} succeeded, ${conditionals.stale} refused 412`,
    problems: [],
    cases: conditionals.sent,
  });
  outcomes.push({
    name: 'no-5xx',
    ok: serverErrorCount === 0,
    detail: `${serverErrorCount} answers with status 5xx`,
    problems: serverErrors.map((e) => `${e.op} ${e.method} ${e.path} -> ${e.status} ${e.body}`),
    cases: answersCounted(),
  });
}
