// Query plans of the hot paths: a test fails if a lookup stops using the index it was written for.

import neo4j from 'neo4j-driver';
import { describe, expect } from 'vitest';
import {
  countAttributeData,
  findAttributeJson,
  findAttributesApplyingTo,
  findAttributesOfTypes,
  findPlatformAttributes,
  readDeclareFacts,
  withdrawAllOfType,
} from '../../src/db/attributes.js';
import { readCarryBatch } from '../../src/db/carry.js';
import { readChanges, readFeedCandidates, readFormerNames, readHistoryHeads } from '../../src/db/changes.js';
import { readEntityPage } from '../../src/db/entities.js';
import { LIST_TYPES_CYPHER } from '../../src/db/entity-types.js';
import { measureModel, resolveModelTypes } from '../../src/db/model.js';
import { callerChangesSince } from '../../src/db/model-version.js';
import { findCarrying, purgeBatch } from '../../src/db/purge.js';
import type { Row, Run } from '../../src/db/run.js';
import { it } from '../fixtures.js';
import type { TestWorld } from '../helpers.js';

interface PlanNode {
  operatorType: string;
  arguments: Record<string, unknown>;
  children: PlanNode[];
}

const operators = (plan: PlanNode): { op: string; details: string }[] => [
  { op: plan.operatorType.split('@')[0]!, details: String(plan.arguments.Details ?? '') },
  ...plan.children.flatMap(operators),
];

/** Runs a db function with every statement EXPLAINed instead of executed; returns the plans' operators. */
async function explain(world: TestWorld, work: (run: Run) => Promise<unknown>) {
  const plans: { op: string; details: string }[][] = [];
  const run: Run = async (cypher, params = {}) => {
    const res = await world.driver.executeQuery(`EXPLAIN ${cypher}`, params);
    plans.push(operators(res.summary.plan as unknown as PlanNode));
    return [] as Row[];
  };
  await work(run).catch(() => undefined); // the functions find no rows in an EXPLAIN; only the plans matter
  return plans;
}

const usesOwnerIndex = (ops: { op: string; details: string }[]) =>
  ops.some((o) => /IndexSeek/.test(o.op) && o.details.includes('AttributeDefinition(tenant, owner_guid)'));
const scansDefinitions = (ops: { op: string; details: string }[]) =>
  ops.some(
    (o) =>
      (/LabelScan|AllNodesScan/.test(o.op) && o.details.includes('AttributeDefinition')) ||
      (/IndexSeek|IndexScan/.test(o.op) && o.details.includes('AttributeDefinition(state)')),
  );

describe('query plans', () => {
  it('enumerations and defaults loaded for GraphQL are found by the definition guid index', async ({
    world,
  }) => {
    const plans = (await explain(world, (run) => findAttributeJson(run, 'plan-tenant', ['a', 'b']))).flat();
    expect(plans.some((o) => /IndexSeek/.test(o.op) && o.details.includes('AttributeDefinition(guid)'))).toBe(
      true,
    );
    expect(scansDefinitions(plans)).toBe(false);
  });

  it("a type's definitions are found through the (tenant, owner_guid) index, never by scanning all definitions", async ({
    world,
  }) => {
    const t = 'plan-tenant';
    const cases: [string, (run: Run) => Promise<unknown>][] = [
      [
        'readDeclareFacts',
        (run) =>
          readDeclareFacts(run, { tenant: t, typeGuid: 'g', nameKey: 'k', refType: null, referents: [] }),
      ],
      ['findAttributesApplyingTo', (run) => findAttributesApplyingTo(run, t, 'g', 'entity')],
      ['findAttributesOfTypes live', (run) => findAttributesOfTypes(run, t, ['g', 'h'], 'live', 205)],
      ['findAttributesOfTypes withdrawn', (run) => findAttributesOfTypes(run, t, ['g'], 'withdrawn', 500)],
      ['findPlatformAttributes', (run) => findPlatformAttributes(run, t, 'entity')],
      ['withdrawAllOfType', (run) => withdrawAllOfType(run, t, 'g')],
    ];
    for (const [name, work] of cases) {
      const plans = await explain(world, work);
      expect(plans.length, name).toBeGreaterThan(0);
      const all = plans.flat();
      expect(usesOwnerIndex(all), name).toBe(true);
      expect(scansDefinitions(all), name).toBe(false);
    }
  });

  it('counting a withdrawal’s data walks the instances of the type through the (tenant, type_guid, guid) index', async ({
    world,
  }) => {
    for (const reference of [false, true]) {
      const plans = await explain(world, (run) =>
        countAttributeData(run, { tenant: 't', typeGuid: 'g', nameKey: 'k', multi: false, reference }),
      );
      const all = plans.flat();
      expect(
        all.some((o) => /IndexSeek/.test(o.op) && o.details.includes('Entity(tenant, type_guid, guid)')),
      ).toBe(true);
      expect(all.some((o) => /LabelScan|AllNodesScan/.test(o.op))).toBe(false);
    }
  });

  it('a purge batch seeks the next instances after its cursor in index order, without sorting the type', async ({
    world,
  }) => {
    const def = {
      guid: 'a',
      tenant: 't',
      owner_guid: 'g',
      name: 'n',
      name_key: 'n',
      multi: false,
      reference: false,
      cursor: '',
      passIsFinal: false,
      passCompleted: false,
      carrying: false,
      graceOver: false,
      graceLeftMs: 0,
    };
    const all = (await explain(world, (run) => purgeBatch(run, def, 'some-guid', 100))).flat();
    expect(
      all.some((o) => /IndexSeek/.test(o.op) && o.details.includes('Entity(tenant, type_guid, guid)')),
    ).toBe(true);
    expect(all.some((o) => /LabelScan|AllNodesScan/.test(o.op))).toBe(false);
    expect(all.some((o) => /^(Sort|Top)$/.test(o.op))).toBe(false);
  });

  it("a carry's batch seeks the next instances after its cursor in index order; its references by relationship, never a scan", async ({
    world,
  }) => {
    const all = (
      await explain(world, (run) =>
        readCarryBatch(run, { tenant: 't', typeGuid: 'g', nameKey: 'n', cursor: 'c', batch: 100 }),
      )
    ).flat();
    expect(
      all.some((o) => /IndexSeek/.test(o.op) && o.details.includes('Entity(tenant, type_guid, guid)')),
    ).toBe(true);
    expect(all.some((o) => /LabelScan|AllNodesScan|AllRelationshipsScan/.test(o.op))).toBe(false);
    // the batch comes in index order; only its 100 rows are sorted again, after the references are collected
    expect(all.filter((o) => /^(Sort|Top)$/.test(o.op)).length).toBeLessThanOrEqual(1);
    // carries are found by their own index, not among every withdrawn definition (the property is true or absent:
    // a scan of its index reads only the carries)
    const due = (await explain(world, (run) => findCarrying(run, 0))).flat();
    expect(
      due.some((o) => /Index(Seek|Scan)/.test(o.op) && o.details.includes('AttributeDefinition(carrying)')),
    ).toBe(true);
    expect(due.some((o) => /LabelScan|AllNodesScan/.test(o.op))).toBe(false);
  });

  it("an export's former names and an apply's check for other callers' changes are index seeks on the change records", async ({
    world,
  }) => {
    const seeks = (all: { op: string; details: string }[], index: string) =>
      all.some((o) => /IndexSeek/.test(o.op) && o.details.includes(index));
    const former = (await explain(world, (run) => readFormerNames(run, 't', ['a', 'b'], 32))).flat();
    expect(seeks(former, 'ModelChange(tenant, type_guid, kind, key)')).toBe(true);
    expect(former.filter((o) => /^(Sort|Top)$/.test(o.op))).toEqual([]);
    const since = (
      await explain(world, (run) =>
        callerChangesSince(run, 't', { version: 'v', seqs: [0, 0, 0, 0, 0, 0, 0, 0] }),
      )
    ).flat();
    expect(seeks(since, 'ModelChange(tenant, shard, seq)')).toBe(true);
    for (const all of [former, since]) {
      expect(all.some((o) => /LabelScan|AllNodesScan/.test(o.op))).toBe(false);
    }
  });

  it('the type page is an index seek in index order with a limit: no sort, so deep pages cost the same', async ({
    world,
  }) => {
    const res = await world.driver.executeQuery(`EXPLAIN ${LIST_TYPES_CYPHER}`, {
      tenant: 'x',
      after: '',
      limit: neo4j.int(101),
    });
    const ops = operators(res.summary.plan as unknown as PlanNode).map((o) => o.op);
    expect(ops).toContain('NodeUniqueIndexSeek');
    expect(ops).toContain('Limit');
    expect(ops.filter((o) => /Sort|Top/.test(o))).toEqual([]);
  });

  it("a type's history and the change feed are index seeks on the change records, in index order, never a scan", async ({
    world,
  }) => {
    const seeks = (all: { op: string; details: string }[], index: string) =>
      all.some((o) => /IndexSeek/.test(o.op) && o.details.includes(index));
    const history = (
      await explain(world, (run) => readHistoryHeads(run, 't', [{ typeGuid: 'g', before: '~' }], 101))
    ).flat();
    expect(seeks(history, 'ModelChange(tenant, type_guid, key)')).toBe(true);
    expect(history.filter((o) => /^(Sort|Top|PartialSort|PartialTop)$/.test(o.op))).toEqual([]);
    const feed = (
      await explain(world, (run) => readFeedCandidates(run, 't', [0, 0, 0, 0, 0, 0, 0, 0], 100))
    ).flat();
    expect(seeks(feed, 'ModelChange(tenant, shard, seq)')).toBe(true);
    expect(seeks(feed, 'ModelVersion(tenant, shard)')).toBe(true);
    expect(feed.filter((o) => /^(Sort|Top)$/.test(o.op))).toEqual([]);
    const bodies = (
      await explain(world, (run) => readChanges(run, 't', [{ shard: 1, seq: 2, key: 'k', bytes: 0 }]))
    ).flat();
    expect(seeks(bodies, 'ModelChange(tenant, shard, seq)')).toBe(true);
    for (const all of [history, feed, bodies]) {
      expect(all.some((o) => /LabelScan|AllNodesScan/.test(o.op))).toBe(false);
    }
  });

  it("an entity page is an ordered index seek: the type's entities, or the references to each filter guid, never a scan", async ({
    world,
  }) => {
    const page = (drive: boolean, others: number) =>
      explain(world, (run) =>
        readEntityPage(run, {
          tenant: 't',
          typeGuid: 'g',
          after: '',
          drive: drive ? { attr: 'tags', guids: ['a', 'b'] } : null,
          others: Array.from({ length: others }, (_, i) => ({ attr: `x${i}`, guids: ['c'] })),
          definitions: ['d'],
          window: 101,
          limit: 101,
        }),
      ).then((plans) => plans.flat());
    const seeks = (all: { op: string; details: string }[], index: string) =>
      all.some((o) => /IndexSeek/.test(o.op) && o.details.includes(index));
    const all = await page(false, 0);
    expect(seeks(all, 'Entity(tenant, type_guid, list_key)')).toBe(true);
    // In index order: the page needs no sort, whatever the depth of its cursor.
    expect(all.filter((o) => /^(Sort|Top|PartialSort|PartialTop)$/.test(o.op))).toEqual([]);
    for (const filtered of [await page(true, 0), await page(true, 2)]) {
      expect(seeks(filtered, 'REFERS_TO(tgt, attr, src_type, src_key)')).toBe(true);
      // Each guid's matches come in index order, stopped at the window: the only sort merges those bounded runs.
      const sorts = filtered.filter((o) => /^(Sort|Top|PartialSort|PartialTop)$/.test(o.op));
      expect(sorts.length).toBeLessThanOrEqual(1);
      expect(
        filtered.some((o) => /LabelScan|AllNodesScan|AllRelationshipsScan|RelationshipTypeScan/.test(o.op)),
      ).toBe(false);
      expect(filtered.some((o) => /AttributeDefinition\(guid\)/.test(o.details))).toBe(true);
    }
  });

  it("statements that only size a definition's enumeration and default never read the texts (their stored lengths)", async ({
    world,
  }) => {
    // Neo4j reads ahead (CacheProperties, `cache[a.x]`) every property an expression names unless it sits in a CASE
    // branch: a coalesce with the stored length first read megabytes of enumerations per statement.
    const readsTexts = (all: { op: string; details: string }[]) =>
      all.filter((o) => /cache\[a\.(allowed_values_json|default_value_json)\]/.test(o.details));
    const cases: [string, (run: Run) => Promise<unknown>][] = [
      ['measureModel', (run) => measureModel(run, 't', 10)],
      ['resolveModelTypes', (run) => resolveModelTypes(run, 't', [{ key: 'k', derivedGuid: 'g' }])],
      [
        'readDeclareFacts',
        (run) =>
          readDeclareFacts(run, { tenant: 't', typeGuid: 'g', nameKey: 'k', refType: null, referents: [] }),
      ],
      ['findAttributesOfTypes (light rows)', (run) => findAttributesOfTypes(run, 't', ['g'], 'live', 205)],
    ];
    for (const [name, work] of cases) {
      const all = (await explain(world, work)).flat();
      expect(all.length, name).toBeGreaterThan(0);
      expect(readsTexts(all), name).toEqual([]);
    }
    // (the check sees a read-ahead when there is one: the form it replaced)
    const before = (
      await explain(world, (run) =>
        run(
          "MATCH (a:AttributeDefinition {tenant: 't'}) RETURN sum(coalesce(a.json_utf8, size(coalesce(a.allowed_values_json, '')))) AS n",
        ),
      )
    ).flat();
    expect(readsTexts(before).length).toBeGreaterThan(0);
  });
});
