// Loads the bench catalog into Neo4j through src/db's bulk writers (insertUserTypes, insertAttributes,
// insertEntities: the node and relationship shapes the service's own writes make), in batches of one tenant in
// managed write transactions. Each tenant is first seen through the API (`touch`), so the service creates its
// system types and platform attributes the way it always does.
// Over 300 lines: one catalog's shape (types, definitions, entities, references) and the batched writers that load it.
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Driver } from 'neo4j-driver';
import type { NewAttribute } from '../src/db/attributes.js';
import { insertAttributes, valueProperty } from '../src/db/attributes.js';
import { insertEntities } from '../src/db/entities.js';
import { insertUserTypes } from '../src/db/entity-types.js';
import type { Row, Run } from '../src/db/run.js';
import { utf8Bytes } from '../src/model/limits.js';
import { nameKey, typeGuid } from '../src/model/names.js';

export interface CatalogOptions {
  tenants: number;
  /** Plain user types of the big tenant ("Asset 000000"..., first in name order), besides the named ones below. */
  bigTypes: number;
  /** User types of every other tenant. */
  smallTypes: number;
  /** Types of the big tenant with 200 attributes. */
  wideTypes: number;
  /**
   * Types of the GraphQL tenant (the second) that come first in its name order, each with `pageTypeAttributes`
   * attributes, every fifth a reference to another of its types: the GraphQL page covers them.
   */
  pageTypes: number;
  pageTypeAttributes: number;
  /** Fresh types of the big tenant that declarations rotate over (200 each at most). */
  declareTypes: number;
  /** Entities of the big tenant's Person type (targets of references). */
  persons: number;
  /** Entities with values on the wide type that entity writes go to. */
  wideEntities: number;
  /** Issue #14: entities of one type of the big tenant ("Tagged Asset"), each tagged with 3 of `tags` tags. */
  taggedEntities: number;
  tags: number;
  batchSize: number;
  database?: string | undefined;
  log?: (line: string) => void;
}

export const DEFAULT_CATALOG: Omit<CatalogOptions, 'database' | 'log'> = {
  tenants: 20,
  // The page at row 100,000 is plain types like the first page, so the two cost the same unless position matters.
  bigTypes: 100_100,
  smallTypes: 1_000,
  wideTypes: 4,
  pageTypes: 120,
  pageTypeAttributes: 20,
  declareTypes: 1_000,
  persons: 1_000,
  wideEntities: 2_000,
  // Each tag on 300 entities: 100,000 × 3 / 1,000.
  taggedEntities: 100_000,
  tags: 1_000,
  batchSize: 5_000,
};

export const WIDE_ATTRIBUTES = 200;
export const ENUM_ENTRIES = 1_000;

type ValueType = 'string' | 'number' | 'boolean' | 'date' | 'json' | 'entity_ref';

/** A definition as the bench declares it (the service's stored fields, before the ones the write adds). */
interface AttributeSpec {
  name: string;
  value_type: ValueType;
  cardinality: 'single' | 'multi';
  allowed_values: unknown[] | null;
  default_value: unknown;
  filterable: boolean;
  refType: string | null;
}

export interface LoadedCatalog {
  runId: string;
  tenants: string[];
  bigTenant: string;
  /** The tenant whose first types in name order have attributes with references (the GraphQL page). */
  graphTenant: string;
  /** Names of existing big-tenant types, for create-or-get of an existing name. */
  existingNames: string[];
  /** Guids of the 200-attribute types (attribute listing on the first, entity writes on the second). */
  wideGuids: string[];
  personGuids: string[];
  declareGuids: string[];
  /** The type of the tagged entities, and the tag entities in tag order (tag k is on 300 of them). */
  taggedType: string;
  tagGuids: string[];
  /** The REST `values` of an entity write to wideGuids[1]: one of every value type, references and the enum. */
  entityValues: (i: number) => Record<string, unknown>;
  counts: { types: number; attributes: number; entities: number; relationships: number };
  seconds: number;
}

const pad = (n: number, width: number) => String(n).padStart(width, '0');

interface TypeRow {
  tenant: string;
  guid: string;
  name: string;
  key: string;
}

function typeRow(tenant: string, name: string): TypeRow {
  const key = nameKey(name);
  return { tenant, guid: typeGuid(tenant, key), name, key };
}

/** The 200 definitions of a wide type: every value type, references to Person, a 1,000-entry enumeration. */
function wideAttributes(personType: string): AttributeSpec[] {
  const specs: AttributeSpec[] = [];
  for (let i = 0; i < WIDE_ATTRIBUTES; i++) {
    const base = {
      name: `field_${pad(i, 3)}`,
      cardinality: 'single' as const,
      allowed_values: null,
      default_value: null,
      filterable: false,
      refType: null,
    };
    if (i === 0) {
      // The 1,000-entry enumeration, with a default, so every entity write applies and checks it.
      specs.push({
        ...base,
        name: 'tier',
        value_type: 'string',
        allowed_values: Array.from({ length: ENUM_ENTRIES }, (_, k) => `tier-${pad(k, 4)}`),
        default_value: 'tier-0000',
      });
      continue;
    }
    switch (i % 10) {
      case 1:
        specs.push({
          ...base,
          value_type: 'entity_ref',
          cardinality: i % 20 === 1 ? 'multi' : 'single',
          filterable: true,
          refType: personType,
        });
        break;
      case 2:
        specs.push({ ...base, value_type: 'number' });
        break;
      case 3:
        specs.push({ ...base, value_type: 'boolean' });
        break;
      case 4:
        specs.push({ ...base, value_type: 'date' });
        break;
      case 5:
        specs.push({ ...base, value_type: 'json' });
        break;
      case 6:
        specs.push({ ...base, value_type: 'string', cardinality: 'multi' });
        break;
      case 7:
        specs.push({ ...base, value_type: 'string', allowed_values: ['low', 'medium', 'high'] });
        break;
      default:
        specs.push({ ...base, value_type: 'string' });
    }
  }
  return specs;
}

/** Definitions of a type the GraphQL page covers: mostly scalars, every fifth a reference to another type. */
function pageAttributes(count: number, refTypes: () => string): AttributeSpec[] {
  return Array.from({ length: count }, (_, j) => {
    const base = {
      name: `col_${pad(j, 2)}`,
      cardinality: 'single' as const,
      allowed_values: null,
      default_value: null,
      filterable: false,
      refType: null,
    };
    if (j % 5 === 0)
      return { ...base, value_type: 'entity_ref' as const, filterable: true, refType: refTypes() };
    if (j % 5 === 1) return { ...base, value_type: 'number' as const };
    if (j % 5 === 2) return { ...base, value_type: 'string' as const, allowed_values: ['a', 'b', 'c'] };
    return { ...base, value_type: 'string' as const };
  });
}

interface LoadedDefinition {
  tenant: string;
  typeGuid: string;
  refType: string | null;
  /** The properties the service's `createAttribute` takes, so the loaded definitions look like declared ones. */
  attr: NewAttribute;
}

function attributeRow(tenant: string, owner: string, spec: AttributeSpec): LoadedDefinition {
  const allowed = spec.allowed_values === null ? null : JSON.stringify(spec.allowed_values);
  const dflt = spec.default_value === null ? null : JSON.stringify(spec.default_value);
  return {
    tenant,
    typeGuid: owner,
    refType: spec.refType,
    attr: {
      guid: randomUUID(),
      name: spec.name,
      name_key: nameKey(spec.name),
      value_type: spec.value_type,
      cardinality: spec.cardinality,
      allowed_values_json: allowed,
      required: false,
      default_value_json: dflt,
      filterable: spec.filterable,
      json_utf8: utf8Bytes(allowed) + utf8Bytes(dflt),
      default_utf8: utf8Bytes(dflt),
    },
  };
}

interface EntityRow {
  tenant: string;
  guid: string;
  name: string;
  key: string;
  typeGuid: string;
  properties: Record<string, unknown>;
  refs: { attr: string; pos: number; target: string }[];
}

/** Stored form of REST values, as createEntityWithValues stores them (scalars as properties, refs as edges). */
function storedValues(specs: readonly AttributeSpec[], values: Record<string, unknown>) {
  const properties: Record<string, unknown> = {};
  const refs: EntityRow['refs'] = [];
  for (const spec of specs) {
    let value = values[spec.name];
    if (value === undefined && spec.default_value !== null) value = spec.default_value;
    if (value === undefined) continue;
    const key = nameKey(spec.name);
    const entries = spec.cardinality === 'multi' ? (value as unknown[]) : [value];
    if (spec.value_type === 'entity_ref') {
      entries.forEach((target, pos) => {
        refs.push({ attr: key, pos, target: target as string });
      });
      continue;
    }
    const stored = spec.value_type === 'json' ? entries.map((v) => JSON.stringify(v)) : entries;
    properties[valueProperty(key)] = spec.cardinality === 'multi' ? stored : stored[0];
  }
  return { properties, refs };
}

// ---- Writes: through src/db's bulk writers (insertUserTypes, insertAttributes, insertEntities), the node shapes
// the service's own writes make, in batches of one tenant in managed write transactions ----

/** `rows` grouped by tenant, in batches, each written by `write` in a managed write transaction of its own. */
async function writeByTenant<R extends { tenant: string }>(
  driver: Driver,
  database: string | undefined,
  rows: readonly R[],
  batchSize: number,
  write: (run: Run, tenant: string, batch: R[]) => Promise<void>,
) {
  const byTenant = new Map<string, R[]>();
  for (const row of rows) {
    const list = byTenant.get(row.tenant);
    if (list) list.push(row);
    else byTenant.set(row.tenant, [row]);
  }
  for (const [tenant, all] of byTenant) {
    for (let i = 0; i < all.length; i += batchSize) {
      const batch = all.slice(i, i + batchSize);
      const session = driver.session({ database });
      try {
        await session.executeWrite(
          (tx) =>
            write(
              async (cypher, params) =>
                (await tx.run(cypher, params)).records.map((x) => x.toObject() as Row),
              tenant,
              batch,
            ),
          { timeout: 300_000 },
        );
      } finally {
        await session.close();
      }
    }
  }
}

/** Entities in batches through src/db's insertEntities (one tenant per batch), the way the service writes them. */
const writeEntities = (
  driver: Driver,
  database: string | undefined,
  rows: readonly EntityRow[],
  batchSize: number,
) =>
  writeByTenant(driver, database, rows, batchSize, (run, tenant, batch) =>
    insertEntities(
      run,
      tenant,
      batch.map((r) => ({
        guid: r.guid,
        name: r.name,
        name_key: r.key,
        type_guid: r.typeGuid,
        properties: r.properties,
        refs: r.refs,
      })),
    ),
  );

export async function loadCatalog(
  driver: Driver,
  touch: (tenant: string) => Promise<void>,
  options: CatalogOptions,
): Promise<LoadedCatalog> {
  const log = options.log ?? (() => {});
  const started = performance.now();
  const runId = randomUUID().slice(0, 8);
  const tenants = Array.from({ length: options.tenants }, (_, i) => `bench-${runId}-${i}`);
  const bigTenant = tenants[0]!;
  const graphTenant = tenants[1] ?? bigTenant;
  const db = options.database;

  // 1. Every tenant seen once through the API: its system types and platform attributes, by the service.
  for (let i = 0; i < tenants.length; i += 4) await Promise.all(tenants.slice(i, i + 4).map(touch));

  // 2. Types.
  const types: TypeRow[] = [];
  const bigTypeNames = Array.from({ length: options.bigTypes }, (_, i) => `Asset ${pad(i, 6)}`);
  for (const name of bigTypeNames) types.push(typeRow(bigTenant, name));
  const person = typeRow(bigTenant, 'Person');
  const tagged = typeRow(bigTenant, 'Tagged Asset');
  const wide = Array.from({ length: options.wideTypes }, (_, i) => typeRow(bigTenant, `Wide ${i}`));
  const declare = Array.from({ length: options.declareTypes }, (_, i) =>
    typeRow(bigTenant, `Declare ${pad(i, 4)}`),
  );
  types.push(person, tagged, ...wide, ...declare);
  // The GraphQL tenant's first types in name order ("Asset 000" sorts before every system type).
  const pageTypes = Array.from({ length: options.pageTypes }, (_, i) =>
    typeRow(graphTenant, `Asset ${pad(i, 3)}`),
  );
  types.push(...pageTypes);
  const smallTypes = new Map<string, TypeRow[]>();
  for (const tenant of tenants.slice(1)) {
    const rows = Array.from({ length: options.smallTypes }, (_, i) =>
      typeRow(tenant, `Dataset ${pad(i, 4)}`),
    );
    smallTypes.set(tenant, rows);
    types.push(...rows);
  }
  let t0 = performance.now();
  await writeByTenant(driver, db, types, options.batchSize, (run, tenant, batch) =>
    insertUserTypes(
      run,
      tenant,
      batch.map((t) => ({ guid: t.guid, name: t.name, name_key: t.key })),
    ),
  );
  log(`  ${types.length} types in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  // 3. Attribute definitions.
  const attributes: LoadedDefinition[] = [];
  const wideSpecs = wideAttributes(person.guid);
  for (const w of wide) for (const spec of wideSpecs) attributes.push(attributeRow(bigTenant, w.guid, spec));
  // The GraphQL page: references spread over the tenant's other types, so most referenced types are not on the page.
  const graphTargets = smallTypes.get(graphTenant) ?? [];
  let ref = 0;
  const farType = () =>
    graphTargets.length > 0 ? graphTargets[(ref++ * 7) % graphTargets.length]!.guid : pageTypes[0]!.guid;
  for (const t of pageTypes) {
    for (const spec of pageAttributes(options.pageTypeAttributes, farType))
      attributes.push(attributeRow(graphTenant, t.guid, spec));
  }
  for (const [tenant, rows] of smallTypes) {
    const target = rows[rows.length - 1]!.guid;
    for (const t of rows.slice(0, 5)) {
      for (const spec of pageAttributes(20, () => target))
        attributes.push(attributeRow(tenant, t.guid, spec));
    }
  }
  t0 = performance.now();
  await writeByTenant(driver, db, attributes, options.batchSize, insertAttributes);
  log(`  ${attributes.length} attribute definitions in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  // 4. Entities: persons (reference targets), entities with values on the write-target wide type, a few elsewhere.
  const entities: EntityRow[] = [];
  const personGuids: string[] = [];
  for (let i = 0; i < options.persons; i++) {
    const guid = randomUUID();
    personGuids.push(guid);
    const name = `person-${pad(i, 5)}`;
    entities.push({
      tenant: bigTenant,
      guid,
      name,
      key: nameKey(name),
      typeGuid: person.guid,
      properties: {},
      refs: [],
    });
  }
  const entityValues = (i: number): Record<string, unknown> => ({
    tier: `tier-${pad((i * 37) % ENUM_ENTRIES, 4)}`,
    field_001: [personGuids[i % personGuids.length]!, personGuids[(i + 1) % personGuids.length]!],
    field_002: i * 1.5,
    field_003: i % 2 === 0,
    field_004: '2024-05-01',
    field_005: { source: 'bench', n: i },
    field_006: ['x', 'y', 'z'],
    field_007: ['low', 'medium', 'high'][i % 3],
    field_008: `text ${i}`,
    field_011: personGuids[(i + 2) % personGuids.length]!,
    field_012: i,
    field_018: `more text ${i}`,
  });
  const writeTarget = wide[1] ?? wide[0]!;
  for (let i = 0; i < options.wideEntities; i++) {
    const name = `record-${pad(i, 6)}`;
    entities.push({
      tenant: bigTenant,
      guid: randomUUID(),
      name,
      key: nameKey(name),
      typeGuid: writeTarget.guid,
      ...storedValues(wideSpecs, entityValues(i)),
    });
  }
  for (const [tenant, rows] of smallTypes) {
    for (let i = 0; i < 50; i++) {
      const name = `row-${i}`;
      entities.push({
        tenant,
        guid: randomUUID(),
        name,
        key: nameKey(name),
        typeGuid: rows[i % rows.length]!.guid,
        properties: {},
        refs: [],
      });
    }
  }
  // Tags (entities of the tenant's system type `tag`), and the tagged entities: entity i carries tags t, t + 1 + k
  // and t + 500 + k (mod tags), t = i mod tags, k = (i div tags) mod 499: three distinct tags, each tag on
  // taggedEntities × 3 / tags entities spread over the whole name order.
  const tagType = typeGuid(bigTenant, nameKey('tag'));
  const tagGuids: string[] = [];
  const tagRows: EntityRow[] = [];
  for (let i = 0; i < options.tags; i++) {
    const guid = randomUUID();
    tagGuids.push(guid);
    const name = `tag-${pad(i, 4)}`;
    tagRows.push({
      tenant: bigTenant,
      guid,
      name,
      key: nameKey(name),
      typeGuid: tagType,
      properties: {},
      refs: [],
    });
  }
  const taggedRows: EntityRow[] = [];
  for (let i = 0; i < (tagGuids.length > 0 ? options.taggedEntities : 0); i++) {
    const t = i % tagGuids.length;
    const k = Math.floor(i / tagGuids.length) % 499;
    const tags = [t, (t + 1 + k) % tagGuids.length, (t + 500 + k) % tagGuids.length];
    const name = `asset-${pad(i, 6)}`;
    taggedRows.push({
      tenant: bigTenant,
      guid: randomUUID(),
      name,
      key: nameKey(name),
      typeGuid: tagged.guid,
      properties: {},
      refs: tags.map((tag, pos) => ({ attr: 'tags', pos, target: tagGuids[tag]! })),
    });
  }
  entities.push(...tagRows, ...taggedRows);
  t0 = performance.now();
  // Persons and tags first: the other entities refer to them.
  await writeEntities(driver, db, entities.slice(0, options.persons), options.batchSize);
  await writeEntities(driver, db, tagRows, options.batchSize);
  await writeEntities(
    driver,
    db,
    entities.slice(options.persons).filter((e) => e.typeGuid !== tagType),
    1_000,
  );
  log(`  ${entities.length} entities in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  // Fresh statistics and plans for the loaded data.
  const session = driver.session({ database: db });
  try {
    await session.run('CALL db.awaitIndexes(300)');
    await session.run('CALL db.resampleOutdatedIndexes()');
    await session.run('CALL db.clearQueryCaches()');
  } finally {
    await session.close();
  }

  const relationships =
    attributes.length +
    attributes.filter((a) => a.refType !== null).length +
    entities.reduce((n, e) => n + e.refs.length, 0);
  return {
    runId,
    tenants,
    bigTenant,
    graphTenant,
    existingNames: Array.from({ length: 1_000 }, (_, i) => bigTypeNames[(i * 99_991) % bigTypeNames.length]!),
    wideGuids: wide.map((w) => w.guid),
    personGuids,
    taggedType: tagged.guid,
    tagGuids,
    declareGuids: declare.map((d) => d.guid),
    entityValues,
    counts: { types: types.length, attributes: attributes.length, entities: entities.length, relationships },
    seconds: (performance.now() - started) / 1000,
  };
}
