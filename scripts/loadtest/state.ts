// What the load test keeps from acknowledged answers (types, declarations, entities per tenant), the traffic's
// counters, and the recording of each acknowledged write, setup and traffic alike.
import type { Envelope } from '../../src/contract/wire.js';
import { cleanName, nameKey } from '../../src/model/names.js';
import { INSTANCES, LIMIT } from './options.js';

/** What a client's requests carry from setup to answer. */
export interface CannonContext {
  pending?: Pending | undefined;
}

type Op = 'create' | 'list' | 'declare' | 'withdraw' | 'entity';
export const OPS: readonly Op[] = ['create', 'list', 'declare', 'withdraw', 'entity'];
export type ValueType = 'string' | 'number' | 'entity_ref';

export interface LiveAttribute {
  key: string;
  name: string;
  valueType: ValueType;
  multi: boolean;
  defGuid: string;
}
export interface HotType {
  guid: string;
  /** Definitions acknowledged on the type and not (being) withdrawn, by name key. */
  live: Map<string, LiveAttribute>;
  /** The type's ETag as the last answer about it said (declare, withdraw, a 412): what a conditional write sends. */
  etag?: string;
}
export interface Tenant {
  id: string;
  authorization: string;
  hot: HotType[];
  personType: string;
  persons: string[];
  cursor: { value: string; afterKey: string } | null;
  fresh: number;
  entities: number;
}
export interface Pending {
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
  /** The If-Match a conditional write sent. */
  ifMatch?: string;
}
/** A value written for an attribute: its name key, the definition it was written under, and the value. */
export interface Written<T> {
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

export const tenants: Tenant[] = [];
/** Acknowledged types by guid. */
export const ackTypes = new Map<string, { tenant: string; key: string }>();
/** Per tenant and name key: the guids create-or-get answered with, and how many answers said created. */
export const typeAnswers = new Map<string, { guids: Set<string>; created: number }>();
/** Acknowledged declarations by definition guid. */
export const declarations = new Map<string, Declaration>();
/**
 * Definition guid by (tenant, type, name key): a name goes live at most once in a run, unless the daily purge runs
 * (--instances N) and removes a withdrawn definition, which frees its name for a new declaration.
 */
export const declarationByName = new Map<string, string>();
/** Withdrawn definitions whose name was declared again (the purge must have removed them first). */
export const redeclared = new Set<string>();
/** Guids of the types, definitions and entities each instance acknowledged (--instances N), by instance index. */
export const ackedBy: Set<string>[] = Array.from({ length: INSTANCES }, () => new Set<string>());
export const ackEntities = new Map<string, AckEntity>();

export const sent = new Map<Op, number>(OPS.map((op) => [op, 0]));
export const statuses = new Map<Op, Map<number, number>>(OPS.map((op) => [op, new Map()]));
export const reasons = new Map<Op, Map<string, number>>(OPS.map((op) => [op, new Map()]));
/** Answers the traffic got, every operation together (what no-5xx is checked over). */
export const answersCounted = () =>
  [...statuses.values()].reduce(
    (sum, byStatus) => sum + [...byStatus.values()].reduce((a, n) => a + n, 0),
    0,
  );
export const latencies = new Map<Op, number[]>(OPS.map((op) => [op, []]));
/** Database queries per answer (x-db-queries), summed per operation. */
export const dbQueries = new Map<Op, number>(OPS.map((op) => [op, 0]));
export const serverErrors: { op: string; method: string; path: string; status: number; body: string }[] = [];
export let serverErrorCount = 0;
/** One more answer with a 5xx status (serverErrorCount lives here; ES modules let only its own module assign it). */
export function countServerError() {
  serverErrorCount += 1;
}
/** Conditional writes (If-Match) that succeeded, by type guid and the version sent: at most one each. */
export const conditionalWins = new Map<string, number>();
/** Conditional writes sent, and their outcome. */
export const conditionals = { sent: 0, won: 0, stale: 0 };
/** An operation sent: counted by kind, and as a conditional write when it carries If-Match. */
export function recordSent(pending: Pending) {
  bump(sent, pending.op);
  if (pending.ifMatch !== undefined) conditionals.sent += 1;
}

/** Checks made on the answers themselves while the traffic runs. */
export const answerChecks = {
  'create-or-get converges': { checked: 0, failed: 0, samples: [] as string[] },
  'paging order': { checked: 0, failed: 0, samples: [] as string[] },
  'listing isolation': { checked: 0, failed: 0, samples: [] as string[] },
  'declaration usage <= 200': { checked: 0, failed: 0, samples: [] as string[] },
  'name declared once': { checked: 0, failed: 0, samples: [] as string[] },
  'one conditional write wins per version': { checked: 0, failed: 0, samples: [] as string[] },
  '412 names the current version': { checked: 0, failed: 0, samples: [] as string[] },
};
type AnswerCheck = keyof typeof answerChecks;

export function answerCheck(name: AnswerCheck, ok: boolean, detail: () => string) {
  const c = answerChecks[name];
  c.checked += 1;
  if (!ok) {
    c.failed += 1;
    if (c.samples.length < 5) c.samples.push(detail());
  }
}

export const bump = <K>(map: Map<K, number>, key: K, by = 1) => map.set(key, (map.get(key) ?? 0) + by);
export const randInt = (min: number, max: number) => min + Math.floor(Math.random() * (max - min + 1));
export const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]!;
/** The key the service compares a name by (its own functions, not a copy of the rule). */
export const nameOf = (raw: string) => nameKey(cleanName(raw));
export const tenantKey = (...parts: string[]) => parts.join('\u0000');

export function randomCase(name: string): string {
  return [...name].map((c) => (Math.random() < 0.5 ? c.toUpperCase() : c.toLowerCase())).join('');
}

/** The same name as the server sees it, spelt differently: letter case and surrounding spaces. */
export function decorate(name: string): string {
  return `${' '.repeat(randInt(0, 2))}${randomCase(name)}${' '.repeat(randInt(0, 2))}`;
}

/** Half of the declarations and withdrawals go to the first hot type (seeded near the limit in a few tenants). */
export function pickHot(tenant: Tenant): HotType {
  return Math.random() < 0.5 ? tenant.hot[0]! : pick(tenant.hot);
}

/** An answer's envelope, as far as the body holds one (a 5xx or a reset may not). */
export function parseEnvelope(body: string): Partial<Envelope> | null {
  try {
    return JSON.parse(body) as Partial<Envelope>;
  } catch {
    return null;
  }
}

// ---- recording acknowledged writes (setup and traffic alike) ----

export function recordType(tenant: string, key: string, guid: string, created: boolean) {
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

export function recordDeclaration(tenant: Tenant, hot: HotType, key: string, data: Record<string, unknown>) {
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
