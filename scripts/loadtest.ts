// Load test (npm run loadtest): mixed REST traffic from many clients across many tenants (autocannon), then a
// check of the invariants in Neo4j. Traffic goes to 127.0.0.1 only; every phase is bounded in time.
//   npm run loadtest -- [--seconds 30] [--connections 50] [--tenants 20] [--seed 195] [--instances 1]
//   npm run loadtest -- --fault neo4j-restart [--seconds 15] [--connections 16] [--tenants 4]
// With --instances N (2 or more) the service runs as N processes of its own on the one Neo4j, the clients spread
// over them, and the run also checks what only several instances can break (see the section "--instances N").
import { randomBytes, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { Driver } from 'neo4j-driver';
import { autocannon, type CannonRequest, type CannonResult, percentile, withTimeout } from '../bench/lib.js';
import { mintToken } from '../src/auth/tokens.js';
import type { Envelope } from '../src/contract/wire.js';
import { cleanName, nameKey } from '../src/model/names.js';
import { runNeo4jRestartFault } from './loadtest/fault.js';
import { type Answer, HttpTarget } from './loadtest/http.js';
import { killInstance, type ServiceInstance, startInstances, stopInstances } from './loadtest/instances.js';
import { analysePurgeFirings } from './loadtest/purge-firings.js';
import {
  HOST,
  neo4jSettings,
  startThrowawayNeo4j,
  startThrowawayService,
  type ThrowawayNeo4j,
  type ThrowawayService,
} from './throwaway-service.js';

/** What a client's requests carry from setup to answer. */
interface CannonContext {
  pending?: Pending | undefined;
}

// ---- options ----

const { values: argv } = parseArgs({
  options: {
    seconds: { type: 'string' },
    connections: { type: 'string' },
    tenants: { type: 'string' },
    // Definitions declared before the traffic on the first hot type of the first few tenants, so that the
    // traffic reaches the 200 limit there and keeps racing at it (withdrawals free slots, declarations fill them).
    seed: { type: 'string', default: '195' },
    // Service processes on the one Neo4j; 1 runs the service in this process, as before.
    instances: { type: 'string', default: '1' },
    // --fault neo4j-restart: Neo4j killed and started again under load (scripts/loadtest/fault.ts).
    fault: { type: 'string' },
  },
});

const FAULTS = ['neo4j-restart'] as const;
if (argv.fault !== undefined && !(FAULTS as readonly string[]).includes(argv.fault)) {
  console.error(`--fault takes ${FAULTS.join(', ')} (got ${argv.fault})`);
  process.exit(2);
}
const FAULT = argv.fault !== undefined;

function intOption(name: string, raw: string | undefined, min: number, max: number): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    console.error(`--${name} must be an integer in ${min}..${max} (got ${raw})`);
    process.exit(2);
  }
  return value;
}

// With --fault: the traffic's length before the fault and after recovery, each; 16 clients over 4 tenants.
const SECONDS = intOption('seconds', argv.seconds ?? (FAULT ? '15' : '30'), 1, 3600);
const CONNECTIONS = intOption('connections', argv.connections ?? (FAULT ? '16' : '50'), 1, 1000);
const TENANTS = intOption('tenants', argv.tenants ?? (FAULT ? '4' : '20'), 1, 1000);
const SEED = intOption('seed', argv.seed, 0, 200);
const INSTANCES = intOption('instances', argv.instances, 1, 8);

const LIMIT = 200;
const HOT_TYPES = 5;
const SEEDED_TENANTS = Math.min(TENANTS, 4);
const SEED_CONCURRENCY = 4;
const PERSONS = 4;
const POOL_TYPE_NAMES = Array.from({ length: 8 }, (_, i) => `Pool-${i}`);
const ATTRIBUTE_NAMES = Array.from({ length: 260 }, (_, i) => `attr_${String(i).padStart(3, '0')}`);
const REQUEST_TIMEOUT_SECONDS = 10;
const CHECK_BATCH = 2_000;
/** With --instances N: the daily purge fires this often (node-cron, seconds field); must divide a minute. */
const PURGE_PERIOD_SECONDS = 5;

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
  scalars?: Written<unknown>[];
  refs?: Written<string[]>[];
}
/** A value written for an attribute: its name key, the definition it was written under, and the value. */
interface Written<T> {
  key: string;
  def: string;
  value: T;
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
  scalars: Written<unknown>[];
  refs: Written<string[]>[];
}

const tenants: Tenant[] = [];
/** Acknowledged types by guid. */
const ackTypes = new Map<string, { tenant: string; key: string }>();
/** Per tenant and name key: the guids create-or-get answered with, and how many answers said created. */
const typeAnswers = new Map<string, { guids: Set<string>; created: number }>();
/** Acknowledged declarations by definition guid. */
const declarations = new Map<string, Declaration>();
/**
 * Definition guid by (tenant, type, name key): a name goes live at most once in a run, unless the daily purge runs
 * (--instances N) and removes a withdrawn definition, which frees its name for a new declaration.
 */
const declarationByName = new Map<string, string>();
/** Withdrawn definitions whose name was declared again (the purge must have removed them first). */
const redeclared = new Set<string>();
/** Guids of the types, definitions and entities each instance acknowledged (--instances N), by instance index. */
const ackedBy: Set<string>[] = Array.from({ length: INSTANCES }, () => new Set<string>());
const ackEntities = new Map<string, AckEntity>();

const sent = new Map<Op, number>(OPS.map((op) => [op, 0]));
const statuses = new Map<Op, Map<number, number>>(OPS.map((op) => [op, new Map()]));
const reasons = new Map<Op, Map<string, number>>(OPS.map((op) => [op, new Map()]));
const latencies = new Map<Op, number[]>(OPS.map((op) => [op, []]));
/** Database queries per answer (x-db-queries), summed per operation. */
const dbQueries = new Map<Op, number>(OPS.map((op) => [op, 0]));
const serverErrors: { op: string; method: string; path: string; status: number; body: string }[] = [];
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
/** The key the service compares a name by (its own functions, not a copy of the rule). */
const nameOf = (raw: string) => nameKey(cleanName(raw));
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

/** An answer's envelope, as far as the body holds one (a 5xx or a reset may not). */
function parseEnvelope(body: string): Partial<Envelope> | null {
  try {
    return JSON.parse(body) as Partial<Envelope>;
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
  // Declared again after an acknowledged withdrawal: only once the daily purge has removed the earlier definition
  // (checked in the database), and the purge runs only with --instances N.
  const freed = INSTANCES > 1 && earlier !== undefined && declarations.get(earlier)?.withdrawal === 'done';
  if (freed) redeclared.add(earlier);
  answerCheck(
    'name declared once',
    earlier === undefined || freed,
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

/** Where setup requests go: the service's base URL, and which instance that is (0 with one). */
interface Target {
  base: string;
  index: number;
}

/** The guid of what a write answer acknowledges (type, definition or entity), if any. */
function acknowledgedGuid(data: Record<string, unknown>): string | undefined {
  const row = (data.entity_type ?? data.attribute ?? data.entity) as { guid?: unknown } | undefined;
  return typeof row?.guid === 'string' ? row.guid : undefined;
}

async function call(target: Target, tenant: Tenant, method: string, urlPath: string, body?: unknown) {
  let res: Response;
  let text: string;
  try {
    res = await fetch(`${target.base}${urlPath}`, {
      method,
      headers: {
        authorization: tenant.authorization,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(30_000),
    });
    text = await res.text();
  } catch (e) {
    const cause = e instanceof Error && e.cause instanceof Error ? `: ${e.cause.message}` : '';
    throw new Error(
      `setup ${method} ${urlPath} for ${tenant.id} on ${target.base}: ${e instanceof Error ? e.message : e}${cause}`,
    );
  }
  const envelope = parseEnvelope(text);
  if (res.status >= 300 || !envelope?.DATA) {
    throw new Error(`setup ${method} ${urlPath} for ${tenant.id}: ${res.status} ${text.slice(0, 300)}`);
  }
  const guid = method === 'POST' ? acknowledgedGuid(envelope.DATA) : undefined;
  if (cluster) cluster.counts[target.index]!.setup += 1;
  if (guid) {
    ackedBy[target.index]?.add(guid);
    // --instances N: setup writes are read back through another instance too, like the traffic's.
    if (cluster)
      await readBackSetupWrite(cluster.instances[target.index]!, tenant, urlPath, body, envelope.DATA);
  }
  return { status: res.status, data: envelope.DATA };
}

async function setUpTenant(target: Target, secret: string, id: string, seeded: boolean): Promise<Tenant> {
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
    const { status, data } = await call(target, tenant, 'POST', '/entities/types', { name });
    const guid = (data.entity_type as { guid: string }).guid;
    recordType(id, nameOf(name), guid, status === 201);
    return guid;
  };
  for (let i = 0; i < HOT_TYPES; i++)
    tenant.hot.push({ guid: await createType(`Hot-${i}`), live: new Map() });
  tenant.personType = await createType('Person');
  for (let i = 0; i < PERSONS; i++) {
    const { data } = await call(target, tenant, 'POST', '/entities', {
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
        const { data } = await call(target, tenant, 'POST', `/entities/types/${type.guid}/attributes`, {
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
  const scalars: Written<unknown>[] = [];
  const refs: Written<string[]>[] = [];
  for (const attr of chosen.values()) {
    const value = valueFor(tenant, attr);
    values[Math.random() < 0.5 ? attr.name : randomCase(attr.name)] = value;
    if (attr.valueType === 'entity_ref') {
      const targets = Array.isArray(value) ? (value as string[]) : [value as string];
      refs.push({ key: attr.key, def: attr.defGuid, value: targets });
    } else {
      scalars.push({ key: attr.key, def: attr.defGuid, value });
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
  /** With an instance killed: how many of the items checked it had acknowledged. */
  const byKilled = (items: { guid: string }[]) => {
    const victim = cluster?.victim;
    if (!victim) return '';
    const acked = ackedBy[victim.index]!;
    return `; ${items.filter((i) => acked.has(i.guid)).length} of them acknowledged by the killed instance ${victim.name}`;
  };

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
    detail: `${typeList.length} acknowledged types checked, ${typesFound} found${byKilled(typeList)}`,
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
  });

  // Acknowledged entities, and their values for definitions that no withdrawal touched.
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

/** A percentile of an ascending list (bench/lib's nearest rank), 0 for none. */
const pct = (sorted: number[], p: number) => (sorted.length === 0 ? 0 : percentile(sorted, p));
const pad = (s: string | number, n: number) => String(s).padStart(n);

/** What the report needs of a run's traffic (autocannon's result has it; so has the --instances N runner's). */
interface TrafficSummary {
  duration: number;
  errors: number;
  timeouts: number;
  '2xx': number;
  '4xx': number;
  '5xx': number;
  latency: { p50: number; p99: number; max: number };
  requests: { total: number; average: number };
}

function printTraffic(result: TrafficSummary, cpuNote: string) {
  console.log('\n== traffic ==');
  console.log(
    `${result.requests.total} answers in ${result.duration.toFixed(1)} s: ${result.requests.average.toFixed(0)} req/s; ` +
      `latency p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, max ${result.latency.max} ms`,
  );
  console.log(
    `2xx ${result['2xx']}, 4xx ${result['4xx']}, 5xx ${result['5xx']}, ` +
      `connection errors ${result.errors} (timeouts ${result.timeouts}); ${cpuNote}`,
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
        `${pad(pct(sorted, 50).toFixed(0), 8)}${pad(pct(sorted, 99).toFixed(0), 8)}` +
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

// ---- --instances N: the traffic spread over service processes, and the checks across them ----
//
// Each virtual client sends one request at a time to the instance it is assigned to (client i to instance i mod
// N). After every acknowledged write it reads the write back at once through another instance; after every
// listing with a next cursor it pages on with that cursor through another instance; after every acknowledged
// withdrawal it sends a curation write with a value for the withdrawn attribute to every other instance, which
// must refuse it (unknown_attribute). Halfway through the traffic the last instance is killed (SIGKILL); its
// clients move to the survivors, which must go on answering without errors.

interface InstanceCounts {
  /** Requests before the traffic: setup writes and their read-backs. */
  setup: number;
  /** Then the traffic's operations, and the checks that follow them; the rest counts the traffic's answers. */
  traffic: number;
  checks: number;
  byClass: Map<number, number>;
  connectionErrors: number;
}
interface Client {
  index: number;
  instance: ServiceInstance;
  moved: boolean;
}
interface Tally {
  checked: number;
  /** Of those checked, how many through the instance that wrote (no other one alive). */
  same: number;
  failed: number;
  samples: string[];
  notes: Map<string, number>;
}
const tally = (): Tally => ({ checked: 0, same: 0, failed: 0, samples: [], notes: new Map() });
function judge(t: Tally, same: boolean, ok: boolean, detail: () => string) {
  t.checked += 1;
  if (same) t.same += 1;
  if (!ok) {
    t.failed += 1;
    if (t.samples.length < 5) t.samples.push(detail());
  }
}

let cluster:
  | {
      instances: ServiceInstance[];
      targets: HttpTarget[];
      counts: InstanceCounts[];
      victim?: ServiceInstance;
      /** Seconds into the traffic when the victim was killed. */
      killedAfter?: number;
    }
  | undefined;

const readYourWrite = tally();
const crossCursor = tally();
const withdrawalRefusal = tally();
const afterKill = {
  /** Requests to the survivors sent after the kill, and those answered 5xx or not at all. */
  survivorRequests: 0,
  survivorErrors: 0,
  /** Requests to the survivors that got no answer, whenever sent. */
  survivorConnectionErrors: 0,
  /** Requests in flight to the victim when it was killed (cut), and any sent to it afterwards (none should be). */
  cut: 0,
  misrouted: 0,
  /** Clients assigned to the victim when it was killed; how many moved, and what they sent afterwards. */
  clientsOnVictim: 0,
  movedClients: 0,
  movedRequests: 0,
  samples: [] as string[],
};
const clusterTotals = { answered: 0, errors: 0, timeouts: 0, byClass: new Map<number, number>() };
const clusterLatencies: number[] = [];
/** Set when the traffic starts: the summary and the per-instance answers count from there. */
let trafficStarted = false;
let nextOther = 0;
/** Holders of the leases held before the instances started (not theirs). */
let leaseHoldersBefore: string[] = [];

/** An alive instance other than `than`, in turn; `than` itself when it is the only one alive. */
function another(than: ServiceInstance): { instance: ServiceInstance; same: boolean } {
  const others = cluster!.instances.filter((i) => i.alive && i !== than);
  if (others.length === 0) return { instance: than, same: true };
  return { instance: others[nextOther++ % others.length]!, same: false };
}

async function exchange(
  instance: ServiceInstance,
  kind: 'traffic' | 'check',
  label: string,
  request: { method: string; path: string; authorization: string; body?: string | undefined },
): Promise<Answer> {
  const { counts, targets, victim } = cluster!;
  const sentAfterKill = victim !== undefined;
  const c = counts[instance.index]!;
  const inTraffic = trafficStarted;
  if (!inTraffic) c.setup += 1;
  else if (kind === 'traffic') c.traffic += 1;
  else c.checks += 1;
  if (sentAfterKill && instance === victim) afterKill.misrouted += 1;
  const started = performance.now();
  const answer = await targets[instance.index]!.send(
    request.method,
    request.path,
    {
      authorization: request.authorization,
      ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    request.body,
    REQUEST_TIMEOUT_SECONDS * 1000,
  );
  const survivor = instance !== cluster!.victim;
  const failed = answer.status === 0 || answer.status >= 500;
  if (answer.status === 0) {
    if (inTraffic) {
      c.connectionErrors += 1;
      clusterTotals.errors += 1;
      if (answer.timedOut) clusterTotals.timeouts += 1;
    }
    if (survivor) afterKill.survivorConnectionErrors += 1;
    else if (!sentAfterKill) afterKill.cut += 1;
  } else {
    if (inTraffic) {
      const cls = Math.floor(answer.status / 100);
      bump(c.byClass, cls);
      bump(clusterTotals.byClass, cls);
      clusterTotals.answered += 1;
      clusterLatencies.push(performance.now() - started);
    }
    if (answer.status >= 500) {
      serverErrorCount += 1;
      if (serverErrors.length < 5) {
        serverErrors.push({
          op: `${label} (${instance.name})`,
          method: request.method,
          path: request.path,
          status: answer.status,
          body: answer.body.slice(0, 500),
        });
      }
    }
  }
  if (survivor && sentAfterKill) {
    afterKill.survivorRequests += 1;
    if (failed) afterKill.survivorErrors += 1;
  }
  if (survivor && (failed || (sentAfterKill && answer.status === 0)) && afterKill.samples.length < 5) {
    afterKill.samples.push(
      `${instance.name} ${request.method} ${request.path.split('?')[0]} -> ${answer.status || answer.error}`,
    );
  }
  return answer;
}

const dataOf = (answer: Answer) => parseEnvelope(answer.body)?.DATA ?? {};
const checkOn = (
  instance: ServiceInstance,
  tenant: Tenant,
  label: string,
  method: string,
  urlPath: string,
  body?: unknown,
) =>
  exchange(instance, 'check', label, {
    method,
    path: urlPath,
    authorization: tenant.authorization,
    body: body === undefined ? undefined : JSON.stringify(body),
  });

/** Reads an acknowledged write back through another instance (and says when there was no other alive). */
/**
 * A GET through another instance than `writer`. A check the kill cut (in flight to the killed instance) is sent
 * again through another instance: the kill says nothing about what was written.
 */
async function getElsewhere(
  writer: ServiceInstance,
  tenant: Tenant,
  label: string,
  urlPath: string,
  t: Tally,
) {
  for (;;) {
    const { instance, same } = another(writer);
    const answer = await checkOn(instance, tenant, label, 'GET', urlPath);
    if (answer.status === 0 && instance === cluster!.victim) {
      bump(t.notes, 'checks cut by the kill and sent again');
      continue;
    }
    return { answer, data: dataOf(answer), reader: instance, same };
  }
}

/** Reads an acknowledged write back through another instance (and says when there was no other alive). */
async function readBack(writer: ServiceInstance, what: string, tenant: Tenant, urlPath: string) {
  bump(readYourWrite.notes, what);
  return getElsewhere(writer, tenant, `read back ${what}`, urlPath, readYourWrite);
}

async function readBackType(writer: ServiceInstance, tenant: Tenant, guid: string, key: string) {
  const { answer, data, reader, same } = await readBack(writer, 'type', tenant, `/entities/types/${guid}`);
  const row = data.entity_type as { guid?: string; name?: string } | undefined;
  judge(
    readYourWrite,
    same,
    answer.status === 200 && row?.guid === guid && nameOf(row.name ?? '') === key,
    () =>
      `type ${guid} (${key}) from ${writer.name} read on ${reader.name}: ${answer.status} ${answer.body.slice(0, 200)}`,
  );
}

const attributeGuids = (data: Record<string, unknown>) =>
  new Set(((data.attributes ?? []) as { guid: string }[]).map((a) => a.guid));

async function readBackDeclaration(
  writer: ServiceInstance,
  tenant: Tenant,
  typeGuid: string,
  defGuid: string,
) {
  const urlPath = `/entities/types/${typeGuid}/attributes`;
  const { answer, data, reader, same } = await readBack(writer, 'declaration', tenant, urlPath);
  const present = answer.status === 200 && attributeGuids(data).has(defGuid);
  // (A setup declaration is recorded once this read is done: no withdrawal can have touched it.)
  if (!present && answer.status === 200 && (declarations.get(defGuid)?.withdrawal ?? 'none') !== 'none') {
    bump(readYourWrite.notes, 'declarations withdrawn by another client before the read (not judged)');
    return;
  }
  judge(
    readYourWrite,
    same,
    present,
    () =>
      `declaration ${defGuid} on ${typeGuid} from ${writer.name} not listed on ${reader.name} (${answer.status})`,
  );
}

async function readBackWithdrawal(
  writer: ServiceInstance,
  tenant: Tenant,
  hot: HotType,
  attr: LiveAttribute,
) {
  const urlPath = `/entities/types/${hot.guid}/attributes`;
  const { answer, data, reader, same } = await readBack(writer, 'withdrawal', tenant, urlPath);
  judge(
    readYourWrite,
    same,
    answer.status === 200 && !attributeGuids(data).has(attr.defGuid),
    () =>
      `withdrawn ${attr.key} (${attr.defGuid}) on ${hot.guid} from ${writer.name} listed on ${reader.name} (${answer.status})`,
  );
}

async function readBackEntity(
  writer: ServiceInstance,
  tenant: Tenant,
  guid: string,
  written: {
    typeGuid: string;
    scalars?: Written<unknown>[] | undefined;
    refs?: Written<string[]>[] | undefined;
  },
) {
  const { answer, data, reader, same } = await readBack(writer, 'entity', tenant, `/entities/${guid}`);
  const entity = data.entity as
    | { guid?: string; type_guid?: string; values?: Record<string, unknown> }
    | undefined;
  const values = new Map(Object.entries(entity?.values ?? {}).map(([k, v]) => [nameOf(k), v]));
  const wrong: string[] = [];
  // Values of definitions still live as far as any answer says; one being withdrawn may be gone already.
  for (const s of written.scalars ?? []) {
    if (declarations.get(s.def)?.withdrawal !== 'none') continue;
    if (!sameValue(values.get(s.key), s.value)) wrong.push(`${s.key}: ${JSON.stringify(values.get(s.key))}`);
  }
  for (const r of written.refs ?? []) {
    if (declarations.get(r.def)?.withdrawal !== 'none') continue;
    const got = values.get(r.key);
    if (!sameValue(Array.isArray(got) ? got : got === undefined ? [] : [got], r.value)) {
      wrong.push(`${r.key}: ${JSON.stringify(got)}`);
    }
  }
  judge(
    readYourWrite,
    same,
    answer.status === 200 &&
      entity?.guid === guid &&
      entity.type_guid === written.typeGuid &&
      wrong.length === 0,
    () =>
      `entity ${guid} from ${writer.name} read on ${reader.name}: ${answer.status} ${wrong.join(', ') || answer.body.slice(0, 200)}`,
  );
}

/** A setup write (type, person entity, seeded declaration), read back like the traffic's. */
async function readBackSetupWrite(
  writer: ServiceInstance,
  tenant: Tenant,
  urlPath: string,
  body: unknown,
  data: Record<string, unknown>,
) {
  const sent = (body ?? {}) as { name?: string; type_guid?: string };
  const guid = acknowledgedGuid(data)!;
  if (urlPath === '/entities/types') await readBackType(writer, tenant, guid, nameOf(sent.name ?? ''));
  else if (urlPath === '/entities')
    await readBackEntity(writer, tenant, guid, { typeGuid: sent.type_guid ?? '' });
  else {
    const typeGuid = /^\/entities\/types\/([^/]+)\/attributes$/.exec(urlPath)?.[1];
    if (typeGuid) await readBackDeclaration(writer, tenant, typeGuid, guid);
  }
}

/** The next page of a listing, with the cursor one instance issued, through another. */
async function pageElsewhere(issuer: ServiceInstance, tenant: Tenant, cursor: string, afterKey: string) {
  const {
    answer,
    data,
    reader: instance,
    same,
  } = await getElsewhere(
    issuer,
    tenant,
    'next page',
    `/entities/types?page_size=${randInt(5, 50)}&cursor=${encodeURIComponent(cursor)}`,
    crossCursor,
  );
  const keys = ((data.entity_types ?? []) as { name: string }[]).map((r) => nameOf(r.name));
  let ordered = keys.length === 0 || keys[0]! > afterKey;
  for (let i = 1; i < keys.length; i++) if (!(keys[i]! > keys[i - 1]!)) ordered = false;
  judge(
    crossCursor,
    same,
    answer.status === 200 && ordered,
    () =>
      `${tenant.id}: cursor of ${issuer.name} after ${afterKey} on ${instance.name}: ${answer.status} ${keys.join(', ') || answer.body.slice(0, 200)}`,
  );
}

/** Every other instance refuses at once a curation write with a value for an attribute withdrawn on `writer`. */
async function refuseElsewhere(writer: ServiceInstance, tenant: Tenant, hot: HotType, attr: LiveAttribute) {
  const others = cluster!.instances.filter((i) => i.alive && i !== writer);
  bump(withdrawalRefusal.notes, 'withdrawal');
  for (const instance of others.length > 0 ? others : [writer]) {
    // Killed since the list was made: its clients and checks have moved on.
    if (!instance.alive) {
      bump(withdrawalRefusal.notes, 'writes not sent, the instance being killed meanwhile');
      continue;
    }
    const body = {
      type_guid: hot.guid,
      name: `w-${tenant.entities++}`,
      values: { [Math.random() < 0.5 ? attr.name : randomCase(attr.name)]: valueFor(tenant, attr) },
    };
    let answer = await checkOn(instance, tenant, 'write withdrawn', 'POST', '/entities', body);
    // The type's definitions changing under the write (other clients declare and withdraw on it) says nothing
    // either way: try again.
    for (let retry = 0; retry < 5 && answer.status === 409 && instance.alive; retry++) {
      answer = await checkOn(instance, tenant, 'write withdrawn', 'POST', '/entities', body);
    }
    if (answer.status === 0 && instance === cluster!.victim) {
      bump(withdrawalRefusal.notes, 'writes cut by the kill (not judged)');
      continue;
    }
    const data = dataOf(answer);
    if (answer.status === 201) {
      const guid = acknowledgedGuid(data);
      if (guid) ackEntities.set(guid, { tenant: tenant.id, typeGuid: hot.guid, scalars: [], refs: [] });
      // Declared afresh in between (the purge removed the withdrawn definition): not a refusal to expect.
      const now = declarationByName.get(tenantKey(tenant.id, hot.guid, attr.key));
      if (now !== attr.defGuid && now !== undefined && declarations.get(now)?.withdrawal === 'none') {
        bump(withdrawalRefusal.notes, 'names declared afresh in between (not judged)');
        continue;
      }
    }
    if (answer.status === 409) {
      bump(withdrawalRefusal.notes, 'still 409 concurrent_change after 5 tries (not judged)');
      continue;
    }
    judge(
      withdrawalRefusal,
      others.length === 0,
      answer.status === 400 && data.reason === 'unknown_attribute',
      () =>
        `${attr.key} withdrawn on ${writer.name}, written on ${instance.name}: ${answer.status} ${String(data.reason ?? answer.body.slice(0, 200))}`,
    );
  }
}

async function followUp(writer: ServiceInstance, p: Pending, answer: Answer) {
  const data = dataOf(answer);
  const { status } = answer;
  switch (p.op) {
    case 'create': {
      if (status === 200 || status === 201) {
        await readBackType(writer, p.tenant, (data.entity_type as { guid: string }).guid, p.key!);
      }
      return;
    }
    case 'list': {
      const rows = (data.entity_types ?? []) as { name: string }[];
      if (status === 200 && typeof data.next_cursor === 'string' && rows.length > 0) {
        await pageElsewhere(writer, p.tenant, data.next_cursor, nameOf(rows[rows.length - 1]!.name));
      }
      return;
    }
    case 'declare': {
      if (status === 201) {
        await readBackDeclaration(writer, p.tenant, p.hot!.guid, (data.attribute as { guid: string }).guid);
      }
      return;
    }
    case 'withdraw': {
      if (status === 200) {
        await readBackWithdrawal(writer, p.tenant, p.hot!, p.attr!);
        await refuseElsewhere(writer, p.tenant, p.hot!, p.attr!);
      }
      return;
    }
    case 'entity': {
      if (status === 201) {
        const guid = (data.entity as { guid: string }).guid;
        await readBackEntity(writer, p.tenant, guid, {
          typeGuid: p.hot!.guid,
          scalars: p.scalars,
          refs: p.refs,
        });
      }
      return;
    }
  }
}

async function clientLoop(client: Client, deadline: number) {
  while (performance.now() < deadline) {
    if (!client.instance.alive) {
      const alive = cluster!.instances.filter((i) => i.alive);
      if (alive.length === 0) return;
      client.instance = alive[client.index % alive.length]!;
      if (!client.moved) afterKill.movedClients += 1;
      client.moved = true;
    }
    const instance = client.instance;
    if (client.moved) afterKill.movedRequests += 1;
    const p = nextOperation();
    bump(sent, p.op);
    const answer = await exchange(instance, 'traffic', p.op, {
      method: p.method,
      path: p.path,
      authorization: p.tenant.authorization,
      body: p.body,
    });
    if (answer.status === 0) {
      // No answer: a withdrawal may or may not have happened.
      if (p.op === 'withdraw') {
        const declaration = declarations.get(p.attr!.defGuid);
        if (declaration?.withdrawal === 'pending') declaration.withdrawal = 'unknown';
      }
      continue;
    }
    onResponse(
      answer.status,
      answer.body,
      { pending: p },
      answer.headers as Record<string, string | string[]>,
    );
    if (answer.status < 300 && p.op !== 'list') {
      const guid = acknowledgedGuid(dataOf(answer));
      if (guid) ackedBy[instance.index]!.add(guid);
    }
    await followUp(instance, p, answer);
  }
}

async function runClusterTraffic(): Promise<TrafficSummary> {
  const { instances } = cluster!;
  const clients: Client[] = Array.from({ length: CONNECTIONS }, (_, index) => ({
    index,
    instance: instances[index % instances.length]!,
    moved: false,
  }));
  trafficStarted = true;
  const started = performance.now();
  const killTimer = setTimeout(() => {
    const victim = instances[instances.length - 1]!;
    cluster!.killedAfter = (performance.now() - started) / 1000;
    cluster!.victim = victim;
    afterKill.clientsOnVictim = clients.filter((c) => c.instance === victim).length;
    killInstance(victim);
    console.log(
      `  ${cluster!.killedAfter.toFixed(1)} s: killed ${victim.name} (SIGKILL, pid ${victim.child.pid})`,
    );
  }, SECONDS * 500);
  try {
    await Promise.all(clients.map((c) => clientLoop(c, started + SECONDS * 1000)));
  } finally {
    clearTimeout(killTimer);
  }
  const duration = (performance.now() - started) / 1000;
  const sorted = [...clusterLatencies].sort((a, b) => a - b);
  const byClass = (cls: number) => clusterTotals.byClass.get(cls) ?? 0;
  return {
    duration,
    errors: clusterTotals.errors,
    timeouts: clusterTotals.timeouts,
    '2xx': byClass(2),
    '4xx': byClass(4),
    '5xx': byClass(5),
    latency: {
      p50: Math.round(pct(sorted, 50)),
      p99: Math.round(pct(sorted, 99)),
      max: Math.round(sorted[sorted.length - 1] ?? 0),
    },
    requests: { total: clusterTotals.answered, average: clusterTotals.answered / duration },
  };
}

function printInstances(cpuDuringTraffic: (number | null)[]) {
  const { instances, counts, victim, killedAfter } = cluster!;
  console.log('\n== instances ==');
  console.log(
    'requests per instance: in the setup (writes and their read-backs); in the traffic, operations and the checks ' +
      'after them, and how they were answered; CPU during the traffic',
  );
  console.log(
    `\n${'instance'.padEnd(10)}${pad('pid', 8)}${pad('port', 7)}${pad('setup', 7)}${pad('traffic', 9)}${pad('ops', 7)}` +
      `${pad('checks', 8)}${pad('2xx', 7)}${pad('4xx', 7)}${pad('5xx', 5)}${pad('no answer', 11)}${pad('CPU s', 7)}  state`,
  );
  for (const instance of instances) {
    const c = counts[instance.index]!;
    const cpu = cpuDuringTraffic[instance.index];
    const state =
      instance === victim
        ? `killed after ${killedAfter?.toFixed(1)} s of traffic`
        : instance.unexpectedExit
          ? `exited by itself (${instance.unexpectedExit})`
          : 'ran to the end';
    console.log(
      `${instance.name.padEnd(10)}${pad(instance.child.pid ?? '-', 8)}${pad(instance.port, 7)}${pad(c.setup, 7)}` +
        `${pad(c.traffic + c.checks, 9)}${pad(c.traffic, 7)}${pad(c.checks, 8)}` +
        `${pad(c.byClass.get(2) ?? 0, 7)}${pad(c.byClass.get(4) ?? 0, 7)}${pad(c.byClass.get(5) ?? 0, 5)}` +
        `${pad(c.connectionErrors, 11)}${pad(cpu === null || cpu === undefined ? '-' : (cpu / 1000).toFixed(1), 7)}  ${state}`,
    );
  }
}

async function checkCluster(driver: Driver) {
  const { instances, victim, killedAfter } = cluster!;
  const noted = (t: Tally, what: string) => t.notes.get(what) ?? 0;
  /** How many checks went through another instance, and how many through the writer (none other alive). */
  const where = (t: Tally) =>
    `${t.checked - t.same} through another instance, ${t.same} through the same one (the kill left no other)`;
  /** The notes other than `except`, each "; n what". */
  const asides = (t: Tally, ...except: string[]) =>
    [...t.notes]
      .filter(([what]) => !except.includes(what))
      .map(([what, n]) => `; ${n} ${what}`)
      .join('');
  const kinds = ['type', 'declaration', 'withdrawal', 'entity'];
  outcomes.push({
    name: 'cross-instance-read-your-write',
    ok: readYourWrite.failed === 0 && readYourWrite.checked > 0,
    detail:
      `${readYourWrite.checked} acknowledged writes read back at once (${noted(readYourWrite, 'type')} type creates, ` +
      `${noted(readYourWrite, 'declaration')} declarations, ${noted(readYourWrite, 'withdrawal')} withdrawals, ` +
      `${noted(readYourWrite, 'entity')} entity creates; the load renames nothing): ${where(readYourWrite)}; ` +
      `${readYourWrite.failed} not found as written${asides(readYourWrite, ...kinds)}`,
    problems: readYourWrite.samples,
  });
  outcomes.push({
    name: 'cross-instance-cursor',
    ok: crossCursor.failed === 0 && crossCursor.checked > 0,
    detail:
      `${crossCursor.checked} next pages asked at once with the cursor another instance issued: ${where(crossCursor)}; ` +
      `${crossCursor.failed} refused or out of order${asides(crossCursor)}`,
    problems: crossCursor.samples,
  });
  outcomes.push({
    name: 'cross-instance-withdrawal-refuses-writes',
    ok:
      withdrawalRefusal.failed === 0 &&
      (noted(withdrawalRefusal, 'withdrawal') === 0 || withdrawalRefusal.checked > 0),
    detail:
      `${noted(withdrawalRefusal, 'withdrawal')} acknowledged withdrawals, each followed at once by a curation write ` +
      `with a value for it on every other instance: ${withdrawalRefusal.checked} writes, ${where(withdrawalRefusal)}; ` +
      `${withdrawalRefusal.checked - withdrawalRefusal.failed} refused with 400 unknown_attribute, ` +
      `${withdrawalRefusal.failed} not${asides(withdrawalRefusal, 'withdrawal')}`,
    problems: withdrawalRefusal.samples,
  });

  const firings = analysePurgeFirings(instances, PURGE_PERIOD_SECONDS * 1000, victim?.until);
  // Every instance has stopped: a lease still held was left behind, by the killed instance or by a run that a
  // shutdown cut, and keeps every other instance from that job until it expires (an hour for the daily job).
  // Reported, then released, so that a shared NEO4J_URI is not left blocked.
  const left = await rows(
    driver,
    `MATCH (l:JobLease) WHERE l.until > datetime() AND NOT l.holder IN $before
     RETURN l.name AS name, l.holder AS holder, toString(l.until) AS until, l.until.epochMillis AS untilMs
     ORDER BY name`,
    { before: leaseHoldersBefore },
  );
  let leaseNote = '';
  if (left.length > 0) {
    leaseNote = `; ${left.length} leases still held after every instance stopped`;
    const daily = left.find((l) => l.name === 'purge-daily');
    if (daily) {
      // Taken for an hour: the run that took it is the one that logged 'daily purge started' right after.
      const taken = Number(daily.untilMs) - 3_600_000;
      const [by] = instances
        .flatMap((i) => i.purgeRuns.map((run) => ({ i, run })))
        .filter(({ run }) => run.started >= taken && run.started < taken + PURGE_PERIOD_SECONDS * 1000)
        .sort((a, b) => a.run.started - b.run.started);
      const cut = !by
        ? ' by a run that logged nothing (cut before its first record)'
        : by.i === victim
          ? ` by ${by.i.name}'s run, which the kill cut`
          : by.run.finished === undefined || by.run.finished >= (by.i.until ?? Number.POSITIVE_INFINITY)
            ? ` by ${by.i.name}'s run, still going when ${by.i.name} was told to stop (SIGTERM)`
            : ` by ${by.i.name}'s run`;
      leaseNote += `, among them purge-daily, taken at ${new Date(taken).toISOString().slice(11, 19)}${cut}: no firing runs before ${daily.until}`;
    }
    leaseNote += ' (released now)';
  }
  await rows(
    driver,
    `UNWIND $left AS x MATCH (l:JobLease {name: x.name}) WHERE l.holder = x.holder
     SET l.holder = null, l.until = null`,
    { left: left.map(({ name, holder }) => ({ name, holder })) },
  );
  outcomes.push({
    name: 'one-purge-runner-per-firing',
    ok: firings.ok,
    detail: `${firings.detail}${leaseNote}`,
    problems: firings.problems,
  });

  if (victim) {
    const unexpected = instances.filter((i) => i.unexpectedExit);
    const ok =
      afterKill.survivorErrors === 0 &&
      afterKill.survivorConnectionErrors === 0 &&
      afterKill.misrouted === 0 &&
      afterKill.movedClients === afterKill.clientsOnVictim &&
      (afterKill.movedClients === 0 || afterKill.movedRequests > 0) &&
      unexpected.length === 0;
    outcomes.push({
      name: 'survivors-serve-after-kill',
      ok,
      detail:
        `${victim.name} killed after ${killedAfter?.toFixed(1)} s of traffic; ${afterKill.survivorRequests} requests ` +
        `to the survivors after the kill, ${afterKill.survivorErrors} answered 5xx or not at all ` +
        `(${afterKill.survivorConnectionErrors} survivor requests without answer in the whole run); ` +
        `${afterKill.cut} requests in flight to ${victim.name} cut, ${afterKill.misrouted} sent to it afterwards; ` +
        `${afterKill.movedClients} of its ${afterKill.clientsOnVictim} clients moved to the survivors and sent ` +
        `${afterKill.movedRequests} requests there` +
        (unexpected.length > 0 ? `; exited by themselves: ${unexpected.map((i) => i.name).join(', ')}` : ''),
      problems: afterKill.samples,
    });
  }
}

// ---- main ----

const DATABASE = neo4jSettings().NEO4J_DATABASE;

async function setUpTenants(targets: Target[], secret: string) {
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
          setUpTenant(targets[i % targets.length]!, secret, `load-${run}-${i}`, i < SEEDED_TENANTS),
        ),
      ),
      600_000,
    )),
  );
  console.log(`Setup done in ${((performance.now() - setupStarted) / 1000).toFixed(1)} s.`);
}

/** The invariants, the service's error log, the verdict. */
function finish(errorLog: string[]): number {
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
}

/** --instances 1: the service in this process, autocannon driving it. */
async function mainInProcess(): Promise<number> {
  let service: ThrowawayService | undefined;
  try {
    service = await startThrowawayService({
      label: 'loadtest',
      heapMb: 1024,
      maxErrors: 20,
      env: { PURGE_GRACE_SECONDS: '0' },
    });
    const { base, secret, driver, errorLog } = service;

    await setUpTenants([{ base, index: 0 }], secret);

    console.log(`Traffic: ${CONNECTIONS} connections for ${SECONDS} s to ${base} ...`);
    const cpuBefore = process.cpuUsage();
    const result = await withTimeout('traffic', runTraffic(base), (SECONDS + 120) * 1000);
    const cpu = process.cpuUsage(cpuBefore);
    for (const d of declarations.values()) if (d.withdrawal === 'pending') d.withdrawal = 'unknown';

    // Requests still in the service finish before the database is checked.
    await service.closeApp();

    const cpuSeconds = (cpu.user + cpu.system) / 1e6;
    printTraffic(result, `this process (service + load generator) used ${cpuSeconds.toFixed(1)} s of CPU`);
    await withTimeout('database checks', checkDatabase(driver), 600_000);
    return finish(errorLog);
  } catch (e) {
    console.error(`loadtest: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  } finally {
    await service?.close();
  }
}

/** --instances N: N service processes on one Neo4j, the clients spread over them, one killed halfway. */
async function mainInstances(): Promise<number> {
  let neo4jServer: ThrowawayNeo4j | undefined;
  let instances: ServiceInstance[] = [];
  // Once, whoever asks first (the end of the run, or a signal); every caller waits for the same.
  let cleaning: Promise<void> | undefined;
  const cleanUp = () => {
    cleaning ??= (async () => {
      await stopInstances(instances);
      for (const target of cluster?.targets ?? []) target.close();
      await neo4jServer?.close();
    })();
    return cleaning;
  };
  // Interrupted: the service processes and the throwaway Neo4j go too.
  const onSignal = (signal: NodeJS.Signals) => {
    console.error(`loadtest: ${signal}, stopping`);
    void cleanUp().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    neo4jServer = await startThrowawayNeo4j({ label: 'loadtest', heapMb: 1024 });
    leaseHoldersBefore = (
      await rows(
        neo4jServer.driver,
        'MATCH (l:JobLease) WHERE l.until > datetime() RETURN collect(DISTINCT l.holder) AS holders',
      )
    )[0]?.holders as string[];
    const secret = randomBytes(24).toString('hex');
    const settings: Record<string, string | undefined> = {
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      NEO4J_URI: neo4jServer.uri,
      NEO4J_USER: neo4jServer.user,
      NEO4J_PASSWORD: neo4jServer.password,
      NEO4J_DATABASE: neo4jServer.database,
      AUTH_JWT_SECRET: secret,
      CURSOR_SECRET: randomBytes(24).toString('hex'),
      PURGE_CRON: `*/${PURGE_PERIOD_SECONDS} * * * * *`,
      PURGE_GRACE_SECONDS: '0',
    };
    const env = Object.fromEntries(
      Object.entries(settings).filter((e): e is [string, string] => e[1] !== undefined),
    );
    console.log(
      `Starting ${INSTANCES} service processes (node --import tsx src/server.ts; daily purge every ` +
        `${PURGE_PERIOD_SECONDS} s) ...`,
    );
    const startedAt = performance.now();
    instances = await startInstances({ count: INSTANCES, env, maxErrors: 20 });
    console.log(
      `Ready in ${((performance.now() - startedAt) / 1000).toFixed(1)} s: ` +
        instances.map((i) => `${i.name} pid ${i.child.pid} ${i.base}`).join(', '),
    );
    cluster = {
      instances,
      targets: instances.map((i) => new HttpTarget(HOST, i.port, CONNECTIONS)),
      counts: instances.map(() => ({
        setup: 0,
        traffic: 0,
        checks: 0,
        byClass: new Map(),
        connectionErrors: 0,
      })),
    };

    await setUpTenants(
      instances.map((i) => ({ base: i.base, index: i.index })),
      secret,
    );

    console.log(
      `Traffic: ${CONNECTIONS} connections for ${SECONDS} s spread over ${INSTANCES} instances; ` +
        `${instances[instances.length - 1]!.name} is killed halfway ...`,
    );
    const cpuBefore = process.cpuUsage();
    const serviceCpuBefore = instances.map((i) => i.cpuMs());
    const result = await withTimeout('traffic', runClusterTraffic(), (SECONDS + 120) * 1000);
    const cpu = process.cpuUsage(cpuBefore);
    const serviceCpu = instances.map((i, n) => {
      const [before, after] = [serviceCpuBefore[n], i.cpuMs()];
      return before === null || before === undefined || after === null ? null : after - before;
    });
    for (const d of declarations.values()) if (d.withdrawal === 'pending') d.withdrawal = 'unknown';

    // Requests still in the services finish before the database is checked (every client has its answers).
    await stopInstances(instances);

    const cpuSeconds = (cpu.user + cpu.system) / 1e6;
    const servicesSeconds = serviceCpu.reduce<number>((sum, ms) => sum + (ms ?? 0), 0) / 1000;
    printTraffic(
      result,
      `this process (load generator) used ${cpuSeconds.toFixed(1)} s of CPU, the service processes ${servicesSeconds.toFixed(1)} s`,
    );
    printInstances(serviceCpu);
    await withTimeout('database checks', checkDatabase(neo4jServer.driver), 600_000);
    await withTimeout('checks across instances', checkCluster(neo4jServer.driver), 60_000);
    const errorLog = instances.flatMap((i) => i.errorLines.map((line) => `${i.name}: ${line}`));
    for (const i of instances) {
      if (i.unexpectedExit)
        errorLog.push(`${i.name} exited (${i.unexpectedExit}): ${i.otherLines.slice(-5).join(' | ')}`);
    }
    return finish(errorLog);
  } catch (e) {
    console.error(`loadtest: ${e instanceof Error ? e.message : String(e)}`);
    for (const i of instances) {
      if (i.unexpectedExit) console.error(`${i.name} exited by itself (${i.unexpectedExit})`);
      const said = [...i.otherLines.slice(-10), ...i.errorLines.slice(0, 5)];
      if (said.length > 0) console.error(`${i.name} said:\n  ${said.join('\n  ')}`);
    }
    return 1;
  } finally {
    await cleanUp();
  }
}

process.exit(
  await (FAULT
    ? runNeo4jRestartFault({ seconds: SECONDS, connections: CONNECTIONS, tenants: TENANTS })
    : INSTANCES === 1
      ? mainInProcess()
      : mainInstances()),
);
