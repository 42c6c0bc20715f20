// The mixed traffic: the next operation of a client, its request, and what its answer records (autocannon).

import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { autocannon, type CannonRequest, type CannonResult } from '../../bench/lib.js';
import { conditional, conditionalAnswer } from './conditional.js';
import {
  ATTRIBUTE_NAMES,
  CONNECTIONS,
  POOL_TYPE_NAMES,
  REQUEST_TIMEOUT_SECONDS,
  SECONDS,
  SEEDED_TENANTS,
} from './options.js';
import {
  ackEntities,
  ackTypes,
  answerCheck,
  bump,
  type CannonContext,
  countServerError,
  dbQueries,
  declarationByName,
  declarations,
  decorate,
  type LiveAttribute,
  latencies,
  nameOf,
  type Pending,
  parseEnvelope,
  pick,
  pickHot,
  randInt,
  randomCase,
  reasons,
  recordDeclaration,
  recordSent,
  recordType,
  serverErrors,
  statuses,
  type Tenant,
  tenantKey,
  tenants,
  type ValueType,
  type Written,
} from './state.js';

export function valueFor(tenant: Tenant, attr: LiveAttribute): unknown {
  const one = (): unknown =>
    attr.valueType === 'number' ? randInt(-1_000_000, 1_000_000) / 100 : `v-${randomUUID().slice(0, 8)}`;
  if (attr.valueType === 'entity_ref') {
    if (!attr.multi) return pick(tenant.persons);
    const shuffled = [...tenant.persons].sort(() => Math.random() - 0.5);
    return shuffled.slice(0, randInt(1, shuffled.length));
  }
  return attr.multi ? Array.from({ length: randInt(1, 3) }, one) : one();
}

export function nextOperation(): Pending {
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
        ...conditional(hot),
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
      ...conditional(hot),
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
  recordSent(pending);
  return {
    ...req,
    method: pending.method,
    path: pending.path,
    headers: {
      authorization: pending.tenant.authorization,
      ...(pending.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(pending.ifMatch === undefined ? {} : { 'if-match': pending.ifMatch }),
    },
    body: pending.body,
  };
}

export function onResponse(
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
    countServerError();
    if (serverErrors.length < 5) {
      serverErrors.push({ op: p.op, method: p.method, path: p.path, status, body: body.slice(0, 500) });
    }
  }

  if (p.hot) conditionalAnswer(p, status, data, headers);

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

export function runTraffic(url: string): Promise<CannonResult> {
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
