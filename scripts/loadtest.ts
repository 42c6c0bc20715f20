// Load test (npm run loadtest): mixed REST traffic from many clients across many tenants (autocannon), then a
// check of the invariants in Neo4j. Traffic goes to 127.0.0.1 only; every phase is bounded in time.
//   npm run loadtest -- [--seconds 30] [--connections 50] [--tenants 20] [--seed 195]
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { Driver } from 'neo4j-driver';
import { withTimeout } from '../bench/lib.js';
import { mintToken } from '../src/auth/tokens.js';
import { nameKey } from '../src/resolvers/names.js';
import { neo4jSettings, startThrowawayService, type ThrowawayService } from './throwaway-service.js';

// ---- autocannon (no type declarations ship with it): the part of its API this script uses ----

interface CannonRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string | Buffer | undefined;
  [key: string]: unknown;
}
interface CannonContext {
  pending?: Pending | undefined;
}
interface CannonOptions {
  url: string;
  connections: number;
  duration: number;
  timeout: number;
  requests: {
    setupRequest: (req: CannonRequest, context: CannonContext) => CannonRequest;
    onResponse: (
      status: number,
      body: string,
      context: CannonContext,
      headers: Record<string, string | string[]>,
    ) => void;
  }[];
}
interface CannonHistogram {
  average: number;
  p50: number;
  p99: number;
  max: number;
  total: number;
  sent?: number;
}
interface CannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  '2xx': number;
  '4xx': number;
  '5xx': number;
  latency: CannonHistogram;
  requests: CannonHistogram;
}
type Autocannon = (
  options: CannonOptions,
  done: (error: Error | null, result: CannonResult) => void,
) => { stop(): void };
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

// ---- options ----

const { values: argv } = parseArgs({
  options: {
    seconds: { type: 'string', default: '30' },
    connections: { type: 'string', default: '50' },
    tenants: { type: 'string', default: '20' },
    // Definitions declared before the traffic on the first hot type of the first few tenants, so that the
    // traffic reaches the 200 limit there and keeps racing at it (withdrawals free slots, declarations fill them).
    seed: { type: 'string', default: '195' },
  },
});

function intOption(name: string, raw: string | undefined, min: number, max: number): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    console.error(`--${name} must be an integer in ${min}..${max} (got ${raw})`);
    process.exit(2);
  }
  return value;
}

const SECONDS = intOption('seconds', argv.seconds, 1, 3600);
const CONNECTIONS = intOption('connections', argv.connections, 1, 1000);
const TENANTS = intOption('tenants', argv.tenants, 1, 1000);
const SEED = intOption('seed', argv.seed, 0, 200);

const LIMIT = 200;
const HOT_TYPES = 5;
const SEEDED_TENANTS = Math.min(TENANTS, 4);
const SEED_CONCURRENCY = 4;
const PERSONS = 4;
const POOL_TYPE_NAMES = Array.from({ length: 8 }, (_, i) => `Pool-${i}`);
const ATTRIBUTE_NAMES = Array.from({ length: 260 }, (_, i) => `attr_${String(i).padStart(3, '0')}`);
const REQUEST_TIMEOUT_SECONDS = 10;
const CHECK_BATCH = 2_000;

// Last resort: whatever hangs, the process ends by itself.
setTimeout(
  () => {
    console.error('loadtest: watchdog expired, exiting');
    process.exit(2);
  },
  (SECONDS + 1800) * 1000,
).unref();

// ---- state kept from acknowledged answers ----

type Op = 'create' | 'list' | 'declare' | 'withdraw' | 'entity';
const OPS: readonly Op[] = ['create', 'list', 'declare', 'withdraw', 'entity'];
type ValueType = 'string' | 'number' | 'entity_ref';

interface LiveAttribute {
  key: string;
  name: string;
  valueType: ValueType;
  multi: boolean;
  defGuid: string;
}
interface HotType {
  guid: string;
  /** Definitions acknowledged on the type and not (being) withdrawn, by name key. */
  live: Map<string, LiveAttribute>;
}
interface Tenant {
  id: string;
  authorization: string;
  hot: HotType[];
  personType: string;
  persons: string[];
  cursor: { value: string; afterKey: string } | null;
  fresh: number;
  entities: number;
}
interface Pending {
  op: Op;
  tenant: Tenant;
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  body?: string;
  started: number;
  key?: string;
  hot?: HotType;
  attr?: LiveAttribute;
  valueType?: ValueType;
  multi?: boolean;
  afterKey?: string | null;
  scalars?: { key: string; value: unknown }[];
  refs?: { key: string; targets: string[] }[];
}

type Withdrawal = 'none' | 'pending' | 'done' | 'unknown';
interface Declaration {
  tenant: string;
  typeGuid: string;
  key: string;
  withdrawal: Withdrawal;
}
interface AckEntity {
  tenant: string;
  typeGuid: string;
  scalars: { key: string; value: unknown }[];
  refs: { key: string; targets: string[] }[];
}

const tenants: Tenant[] = [];
/** Acknowledged types by guid. */
const ackTypes = new Map<string, { tenant: string; key: string }>();
/** Per tenant and name key: the guids create-or-get answered with, and how many answers said created. */
const typeAnswers = new Map<string, { guids: Set<string>; created: number }>();
/** Acknowledged declarations by definition guid. */
const declarations = new Map<string, Declaration>();
/** Definition guid by (tenant, type, name key): a name goes live at most once in a run (no purge runs). */
const declarationByName = new Map<string, string>();
const ackEntities = new Map<string, AckEntity>();

const sent = new Map<Op, number>(OPS.map((op) => [op, 0]));
const statuses = new Map<Op, Map<number, number>>(OPS.map((op) => [op, new Map()]));
const reasons = new Map<Op, Map<string, number>>(OPS.map((op) => [op, new Map()]));
const latencies = new Map<Op, number[]>(OPS.map((op) => [op, []]));
/** Database queries per answer (x-db-queries), summed per operation. */
const dbQueries = new Map<Op, number>(OPS.map((op) => [op, 0]));
const serverErrors: { op: Op; method: string; path: string; status: number; body: string }[] = [];
let serverErrorCount = 0;
/** Checks made on the answers themselves while the traffic runs. */
const answerChecks = {
  'create-or-get converges': { checked: 0, failed: 0, samples: [] as string[] },
  'paging order': { checked: 0, failed: 0, samples: [] as string[] },
  'listing isolation': { checked: 0, failed: 0, samples: [] as string[] },
  'declaration usage <= 200': { checked: 0, failed: 0, samples: [] as string[] },
  'name declared once': { checked: 0, failed: 0, samples: [] as string[] },
};
type AnswerCheck = keyof typeof answerChecks;

function answerCheck(name: AnswerCheck, ok: boolean, detail: () => string) {
  const c = answerChecks[name];
  c.checked += 1;
  if (!ok) {
    c.failed += 1;
    if (c.samples.length < 5) c.samples.push(detail());
  }
}

const bump = <K>(map: Map<K, number>, key: K, by = 1) => map.set(key, (map.get(key) ?? 0) + by);
const randInt = (min: number, max: number) => min + Math.floor(Math.random() * (max - min + 1));
const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]!;
const nameOf = (raw: string) => nameKey(raw.normalize('NFC').trim());
const tenantKey = (...parts: string[]) => parts.join('\u0000');

function randomCase(name: string): string {
  return [...name].map((c) => (Math.random() < 0.5 ? c.toUpperCase() : c.toLowerCase())).join('');
}

/** The same name as the server sees it, spelt differently: letter case and surrounding spaces. */
function decorate(name: string): string {
  return `${' '.repeat(randInt(0, 2))}${randomCase(name)}${' '.repeat(randInt(0, 2))}`;
}

/** Half of the declarations and withdrawals go to the first hot type (seeded near the limit in a few tenants). */
function pickHot(tenant: Tenant): HotType {
  return Math.random() < 0.5 ? tenant.hot[0]! : pick(tenant.hot);
}

interface Envelope {
  STATUS?: string;
  DATA?: Record<string, unknown>;
}
function parseEnvelope(body: string): Envelope | null {
  try {
    return JSON.parse(body) as Envelope;
  } catch {
    return null;
  }
}

// ---- recording acknowledged writes (setup and traffic alike) ----

function recordType(tenant: string, key: string, guid: string, created: boolean) {
  const known = ackTypes.get(guid);
  answerCheck(
    'listing isolation',
    known === undefined || known.tenant === tenant,
    () => `type ${guid} answered to ${tenant} belongs to ${known?.tenant}`,
  );
  if (!known) ackTypes.set(guid, { tenant, key });
  const k = tenantKey(tenant, key);
  const answers = typeAnswers.get(k) ?? { guids: new Set<string>(), created: 0 };
  answers.guids.add(guid);
  if (created) answers.created += 1;
  typeAnswers.set(k, answers);
}

function recordDeclaration(tenant: Tenant, hot: HotType, key: string, data: Record<string, unknown>) {
  const attribute = data.attribute as {
    guid: string;
    name: string;
    value_type: ValueType;
    cardinality: string;
  };
  const usage = data.usage as { declared: number } | undefined;
  answerCheck(
    'declaration usage <= 200',
    (usage?.declared ?? 0) <= LIMIT,
    () => `${tenant.id} ${hot.guid}: usage ${usage?.declared}`,
  );
  const byName = tenantKey(tenant.id, hot.guid, key);
  const earlier = declarationByName.get(byName);
  answerCheck(
    'name declared once',
    earlier === undefined,
    () => `${tenant.id} ${hot.guid} ${key}: 201 twice (${earlier}, ${attribute.guid})`,
  );
  declarationByName.set(byName, attribute.guid);
  declarations.set(attribute.guid, { tenant: tenant.id, typeGuid: hot.guid, key, withdrawal: 'none' });
  hot.live.set(key, {
    key,
    name: attribute.name,
    valueType: attribute.value_type,
    multi: attribute.cardinality === 'multi',
    defGuid: attribute.guid,
  });
}

// ---- setup over HTTP ----

async function call(base: string, tenant: Tenant, method: string, urlPath: string, body?: unknown) {
  const res = await fetch(`${base}${urlPath}`, {
    method,
    headers: {
      authorization: tenant.authorization,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  const envelope = parseEnvelope(text);
  if (res.status >= 300 || !envelope?.DATA) {
    throw new Error(`setup ${method} ${urlPath} for ${tenant.id}: ${res.status} ${text.slice(0, 300)}`);
  }
  return { status: res.status, data: envelope.DATA };
}

async function setUpTenant(base: string, secret: string, id: string, seeded: boolean): Promise<Tenant> {
  const tenant: Tenant = {
    id,
    authorization: `Bearer ${await mintToken(secret, { tenant: id })}`,
    hot: [],
    personType: '',
    persons: [],
    cursor: null,
    fresh: 0,
    entities: 0,
  };
  const createType = async (name: string) => {
    const { status, data } = await call(base, tenant, 'POST', '/entities/types', { name });
    const guid = (data.entity_type as { guid: string }).guid;
    recordType(id, nameOf(name), guid, status === 201);
    return guid;
  };
  for (let i = 0; i < HOT_TYPES; i++)
    tenant.hot.push({ guid: await createType(`Hot-${i}`), live: new Map() });
  tenant.personType = await createType('Person');
  for (let i = 0; i < PERSONS; i++) {
    const { data } = await call(base, tenant, 'POST', '/entities', {
      type_guid: tenant.personType,
      name: `person-${i}`,
    });
    const guid = (data.entity as { guid: string }).guid;
    tenant.persons.push(guid);
    ackEntities.set(guid, { tenant: id, typeGuid: tenant.personType, scalars: [], refs: [] });
  }
  if (seeded) {
    // Declarations on one type take turns on its lock; a few in flight keep the lock busy.
    const type = tenant.hot[0]!;
    let next = 0;
    const worker = async () => {
      while (next < SEED) {
        const i = next++;
        const name = ATTRIBUTE_NAMES[i]!;
        const valueType: ValueType = i % 7 === 0 ? 'entity_ref' : i % 2 === 0 ? 'string' : 'number';
        const { data } = await call(base, tenant, 'POST', `/entities/types/${type.guid}/attributes`, {
          name,
          value_type: valueType,
          cardinality: i % 3 === 0 ? 'multi' : 'single',
          ...(valueType === 'entity_ref' ? { allowed_ref_type: tenant.personType } : {}),
        });
        recordDeclaration(tenant, type, nameOf(name), data);
      }
    };
    await Promise.all(Array.from({ length: SEED_CONCURRENCY }, worker));
  }
  return tenant;
}

// ---- traffic ----

function valueFor(tenant: Tenant, attr: LiveAttribute): unknown {
  const one = (): unknown =>
    attr.valueType === 'number' ? randInt(-1_000_000, 1_000_000) / 100 : `v-${randomUUID().slice(0, 8)}`;
  if (attr.valueType === 'entity_ref') {
    if (!attr.multi) return pick(tenant.persons);
    const shuffled = [...tenant.persons].sort(() => Math.random() - 0.5);
    return shuffled.slice(0, randInt(1, shuffled.length));
  }
  return attr.multi ? Array.from({ length: randInt(1, 3) }, one) : one();
}

function nextOperation(): Pending {
  const roll = Math.random() * 100;
  // Half of the declarations and withdrawals go to the tenants seeded near the limit, to race at it.
  const definitionOp = roll >= 45 && roll < 75;
  const tenant =
    definitionOp && Math.random() < 0.5 ? tenants[randInt(0, SEEDED_TENANTS - 1)]! : pick(tenants);
  const started = performance.now();

  if (roll < 25) {
    // Create-or-get: mostly names of a small pool, spelt differently, so concurrent creates of one name meet.
    const base = Math.random() < 0.8 ? pick(POOL_TYPE_NAMES) : `Fresh-${tenant.fresh++}`;
    const name = decorate(base);
    return {
      op: 'create',
      tenant,
      method: 'POST',
      path: '/entities/types',
      body: JSON.stringify({ name }),
      key: nameOf(base),
      started,
    };
  }
  if (roll < 45) {
    const cursor = tenant.cursor && Math.random() < 0.75 ? tenant.cursor : null;
    if (cursor) tenant.cursor = null;
    const query = `page_size=${randInt(5, 50)}${cursor ? `&cursor=${encodeURIComponent(cursor.value)}` : ''}`;
    return {
      op: 'list',
      tenant,
      method: 'GET',
      path: `/entities/types?${query}`,
      afterKey: cursor?.afterKey ?? null,
      started,
    };
  }
  if (roll >= 65 && roll < 75) {
    const hot = pickHot(tenant);
    const candidates = [...hot.live.values()];
    if (candidates.length > 0) {
      const attr = pick(candidates);
      hot.live.delete(attr.key);
      const declaration = declarations.get(attr.defGuid);
      if (declaration) declaration.withdrawal = 'pending';
      return {
        op: 'withdraw',
        tenant,
        method: 'DELETE',
        path: `/entities/attributes/${hot.guid}/${encodeURIComponent(randomCase(attr.name))}`,
        hot,
        attr,
        started,
      };
    }
    // Nothing known live on that type yet: declare instead.
  }
  if (roll < 75) {
    const hot = pickHot(tenant);
    // Mostly a name not yet declared on the type (to fill it up), sometimes any (to meet a taken name).
    const untaken = ATTRIBUTE_NAMES.filter((n) => !declarationByName.has(tenantKey(tenant.id, hot.guid, n)));
    const name = untaken.length > 0 && Math.random() < 0.75 ? pick(untaken) : pick(ATTRIBUTE_NAMES);
    const valueType: ValueType =
      Math.random() < 0.15 ? 'entity_ref' : Math.random() < 0.5 ? 'string' : 'number';
    const multi = Math.random() < 0.3;
    return {
      op: 'declare',
      tenant,
      method: 'POST',
      path: `/entities/types/${hot.guid}/attributes`,
      body: JSON.stringify({
        name: Math.random() < 0.5 ? name : randomCase(name),
        value_type: valueType,
        cardinality: multi ? 'multi' : 'single',
        ...(valueType === 'entity_ref' ? { allowed_ref_type: tenant.personType } : {}),
      }),
      hot,
      key: nameOf(name),
      valueType,
      multi,
      started,
    };
  }
  // Entity write with values for definitions seen acknowledged (a race with a withdrawal may refuse it).
  const hot = pick(tenant.hot);
  const candidates = [...hot.live.values()];
  const chosen = new Map<string, LiveAttribute>();
  const wanted = Math.min(candidates.length, randInt(0, 3));
  for (let i = 0; i < wanted * 3 && chosen.size < wanted; i++) {
    const attr = pick(candidates);
    chosen.set(attr.key, attr);
  }
  const values: Record<string, unknown> = {};
  const scalars: { key: string; value: unknown }[] = [];
  const refs: { key: string; targets: string[] }[] = [];
  for (const attr of chosen.values()) {
    const value = valueFor(tenant, attr);
    values[Math.random() < 0.5 ? attr.name : randomCase(attr.name)] = value;
    if (attr.valueType === 'entity_ref') {
      refs.push({ key: attr.key, targets: Array.isArray(value) ? (value as string[]) : [value as string] });
    } else {
      scalars.push({ key: attr.key, value });
    }
  }
  return {
    op: 'entity',
    tenant,
    method: 'POST',
    path: '/entities',
    body: JSON.stringify({ type_guid: hot.guid, name: `e-${tenant.entities++}`, values }),
    hot,
    scalars,
    refs,
    started,
  };
}

function setupRequest(req: CannonRequest, context: CannonContext): CannonRequest {
  const pending = nextOperation();
  context.pending = pending;
  bump(sent, pending.op);
  return {
    ...req,
    method: pending.method,
    path: pending.path,
    headers: {
      authorization: pending.tenant.authorization,
      ...(pending.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: pending.body,
  };
}

function onResponse(
  status: number,
  body: string,
  context: CannonContext,
  headers: Record<string, string | string[]>,
) {
  const p = context.pending;
  if (!p) return;
  context.pending = undefined;
  latencies.get(p.op)!.push(performance.now() - p.started);
  bump(dbQueries, p.op, Number(headers['x-db-queries'] ?? 0) || 0);
  bump(statuses.get(p.op)!, status);
  const envelope = parseEnvelope(body);
  const data = envelope?.DATA ?? {};
  if (status >= 300) bump(reasons.get(p.op)!, `${status} ${String(data.reason ?? 'no envelope')}`);
  if (status >= 500) {
    serverErrorCount += 1;
    if (serverErrors.length < 5) {
      serverErrors.push({ op: p.op, method: p.method, path: p.path, status, body: body.slice(0, 500) });
    }
  }

  switch (p.op) {
    case 'create': {
      if (status === 200 || status === 201) {
        const guid = (data.entity_type as { guid: string }).guid;
        recordType(p.tenant.id, p.key!, guid, data.created === true);
      }
      return;
    }
    case 'list': {
      if (status === 400 && data.reason === 'invalid_cursor') {
        answerCheck('paging order', false, () => `${p.tenant.id}: a cursor it was issued was refused`);
      }
      if (status !== 200) return;
      const rows = (data.entity_types ?? []) as { guid: string; name: string }[];
      const keys = rows.map((r) => nameOf(r.name));
      let ordered = p.afterKey == null || keys.length === 0 || keys[0]! > p.afterKey;
      for (let i = 1; i < keys.length; i++) if (!(keys[i]! > keys[i - 1]!)) ordered = false;
      answerCheck('paging order', ordered, () => `${p.tenant.id} after ${p.afterKey}: ${keys.join(', ')}`);
      for (const row of rows) {
        const owner = ackTypes.get(row.guid);
        answerCheck(
          'listing isolation',
          owner === undefined || owner.tenant === p.tenant.id,
          () => `${p.tenant.id} listed ${row.guid} of ${owner?.tenant}`,
        );
      }
      const next = data.next_cursor;
      if (typeof next === 'string' && keys.length > 0) {
        p.tenant.cursor = { value: next, afterKey: keys[keys.length - 1]! };
      }
      return;
    }
    case 'declare': {
      if (status === 201) recordDeclaration(p.tenant, p.hot!, p.key!, data);
      return;
    }
    case 'withdraw': {
      const attr = p.attr!;
      const declaration = declarations.get(attr.defGuid);
      if (!declaration) return;
      if (status === 200) {
        declaration.withdrawal = 'done';
      } else if (status >= 500) {
        declaration.withdrawal = 'unknown';
      } else {
        // Refused: the definition should still be live (the database check below says whether it is).
        declaration.withdrawal = 'none';
        p.hot!.live.set(attr.key, attr);
      }
      return;
    }
    case 'entity': {
      if (status !== 201) return;
      const guid = (data.entity as { guid: string }).guid;
      ackEntities.set(guid, {
        tenant: p.tenant.id,
        typeGuid: p.hot!.guid,
        scalars: p.scalars ?? [],
        refs: p.refs ?? [],
      });
      return;
    }
  }
}

function runTraffic(url: string): Promise<CannonResult> {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url,
        connections: CONNECTIONS,
        duration: SECONDS,
        timeout: REQUEST_TIMEOUT_SECONDS,
        requests: [{ setupRequest, onResponse }],
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
  });
}

// ---- invariants in the database ----

interface Outcome {
  name: string;
  ok: boolean;
  detail: string;
  problems: string[];
}
const outcomes: Outcome[] = [];

async function rows(driver: Driver, cypher: string, params: Record<string, unknown> = {}) {
  const { records } = await driver.executeQuery(cypher, params, { database: DATABASE });
  return records.map((r) => r.toObject() as Record<string, unknown>);
}

async function batched<T>(items: T[], work: (batch: T[]) => Promise<void>) {
  for (let i = 0; i < items.length; i += CHECK_BATCH) await work(items.slice(i, i + CHECK_BATCH));
}

const sameValue = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

async function checkDatabase(driver: Driver) {
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
  });

  // Acknowledged types.
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
    detail: `${typeList.length} acknowledged types checked, ${typesFound} found`,
    problems: typeProblems,
  });

  // Acknowledged declarations: live unless withdrawn since; an acknowledged withdrawal is not live again.
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
        }
      } else {
        counts.unknown += 1;
      }
    }
  });
  outcomes.push({
    name: 'acknowledged-declarations-kept',
    ok: declarationProblems.length === 0,
    detail: `${declarationList.length} acknowledged declarations checked: ${counts.live} live, ${counts.withdrawn} withdrawn (not live), ${counts.unknown} with an unanswered withdrawal (not checked)`,
    problems: declarationProblems,
  });

  // Acknowledged entities, and their values for definitions that no withdrawal touched.
  const entityProblems: string[] = [];
  const entityList = [...ackEntities].map(([guid, e]) => ({ guid, ...e }));
  const steady = (e: AckEntity, key: string) => {
    const def = declarationByName.get(tenantKey(e.tenant, e.typeGuid, key));
    return def !== undefined && declarations.get(def)?.withdrawal === 'none';
  };
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
        if (!steady(e, s.key)) return;
        valuesChecked += 1;
        if (!sameValue(stored[i], s.value)) {
          entityProblems.push(
            `entity ${e.guid} ${s.key}: stored ${JSON.stringify(stored[i])}, written ${JSON.stringify(s.value)}`,
          );
        }
      });
      const refs = f.refs as { attr: string; pos: number; target: string }[];
      for (const r of e.refs) {
        if (!steady(e, r.key)) continue;
        valuesChecked += 1;
        const targets = refs
          .filter((x) => x.attr === r.key)
          .sort((a, b) => Number(a.pos) - Number(b.pos))
          .map((x) => x.target);
        if (!sameValue(targets, r.targets)) {
          entityProblems.push(
            `entity ${e.guid} ${r.key}: refers to ${targets.join(',')}, written ${r.targets}`,
          );
        }
      }
    }
  });
  outcomes.push({
    name: 'acknowledged-entities-kept',
    ok: entityProblems.length === 0,
    detail: `${entityList.length} acknowledged entities checked, ${valuesChecked} values of never-withdrawn definitions compared`,
    problems: entityProblems,
  });

  // Create-or-get answers: one guid per name, at most one "created" per name.
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
    });
  }
  outcomes.push({
    name: 'no-5xx',
    ok: serverErrorCount === 0,
    detail: `${serverErrorCount} answers with status 5xx`,
    problems: serverErrors.map((e) => `${e.op} ${e.method} ${e.path} -> ${e.status} ${e.body}`),
  });
}

// ---- reporting ----

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const pad = (s: string | number, n: number) => String(s).padStart(n);

function printTraffic(result: CannonResult, cpuSeconds: number) {
  console.log('\n== traffic ==');
  console.log(
    `${result.requests.total} answers in ${result.duration.toFixed(1)} s: ${result.requests.average.toFixed(0)} req/s; ` +
      `latency p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, max ${result.latency.max} ms`,
  );
  console.log(
    `2xx ${result['2xx']}, 4xx ${result['4xx']}, 5xx ${result['5xx']}, ` +
      `connection errors ${result.errors} (timeouts ${result.timeouts}); ` +
      `this process (service + load generator) used ${cpuSeconds.toFixed(1)} s of CPU`,
  );
  console.log(
    `\n${'operation'.padEnd(10)}${pad('sent', 7)}${pad('2xx', 7)}${pad('4xx', 7)}${pad('5xx', 5)}` +
      `${pad('p50 ms', 8)}${pad('p99 ms', 8)}${pad('q/req', 7)}  refusals`,
  );
  for (const op of OPS) {
    const byStatus = [...statuses.get(op)!];
    const count = (lo: number) =>
      byStatus.filter(([s]) => s >= lo && s < lo + 100).reduce((sum, [, n]) => sum + n, 0);
    const sorted = [...latencies.get(op)!].sort((a, b) => a - b);
    const refusals = [...reasons.get(op)!]
      .sort((a, b) => b[1] - a[1])
      .map(([r, n]) => `${r}: ${n}`)
      .join(', ');
    const perAnswer = sorted.length === 0 ? 0 : dbQueries.get(op)! / sorted.length;
    console.log(
      `${op.padEnd(10)}${pad(sent.get(op)!, 7)}${pad(count(200), 7)}${pad(count(400), 7)}${pad(count(500), 5)}` +
        `${pad(percentile(sorted, 50).toFixed(0), 8)}${pad(percentile(sorted, 99).toFixed(0), 8)}` +
        `${pad(perAnswer.toFixed(1), 7)}  ${refusals || '-'}`,
    );
  }
}

function printOutcomes() {
  console.log('\n== invariants ==');
  for (const o of outcomes) {
    console.log(`invariant ${o.name}: ${o.ok ? 'OK' : 'FAILED'} (${o.detail})`);
    for (const p of o.problems.slice(0, 5)) console.log(`    ${p}`);
    if (o.problems.length > 5) console.log(`    ... ${o.problems.length - 5} more`);
  }
}

// ---- main ----

const DATABASE = neo4jSettings().NEO4J_DATABASE;

async function main(): Promise<number> {
  let service: ThrowawayService | undefined;
  try {
    service = await startThrowawayService({
      label: 'loadtest',
      heapMb: 1024,
      maxErrors: 20,
      env: { PURGE_GRACE_SECONDS: '0' },
    });
    const { base, secret, driver, errorLog } = service;

    const run = randomUUID().slice(0, 8);
    console.log(
      `Setting up ${TENANTS} tenants (load-${run}-*): ${HOT_TYPES} hot types, Person and ${PERSONS} persons, ` +
        `${SEED} definitions on the first hot type of ${SEEDED_TENANTS} of them ...`,
    );
    const setupStarted = performance.now();
    tenants.push(
      ...(await withTimeout(
        'setup',
        Promise.all(
          Array.from({ length: TENANTS }, (_, i) =>
            setUpTenant(base, secret, `load-${run}-${i}`, i < SEEDED_TENANTS),
          ),
        ),
        600_000,
      )),
    );
    console.log(`Setup done in ${((performance.now() - setupStarted) / 1000).toFixed(1)} s.`);

    console.log(`Traffic: ${CONNECTIONS} connections for ${SECONDS} s to ${base} ...`);
    const cpuBefore = process.cpuUsage();
    const result = await withTimeout('traffic', runTraffic(base), (SECONDS + 120) * 1000);
    const cpu = process.cpuUsage(cpuBefore);
    for (const d of declarations.values()) if (d.withdrawal === 'pending') d.withdrawal = 'unknown';

    // Requests still in the service finish before the database is checked.
    await service.closeApp();

    printTraffic(result, (cpu.user + cpu.system) / 1e6);
    await withTimeout('database checks', checkDatabase(driver), 600_000);
    printOutcomes();
    if (errorLog.length > 0) {
      console.log('\nservice error log (first entries):');
      for (const line of errorLog.slice(0, 5)) console.log(`  ${line.trim()}`);
    }
    const failed = outcomes.filter((o) => !o.ok);
    console.log(
      failed.length === 0
        ? `\nAll ${outcomes.length} invariants hold.`
        : `\nFAILED: ${failed.map((o) => o.name).join(', ')}`,
    );
    return failed.length === 0 ? 0 : 1;
  } catch (e) {
    console.error(`loadtest: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  } finally {
    await service?.close();
  }
}

process.exit(await main());
