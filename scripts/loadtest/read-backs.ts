// --instances N: every acknowledged write read back through another instance, cursors paged on elsewhere,
// withdrawals refused elsewhere, and the client loop that sends them.
// Over 300 lines: every kind of read-back and the client loop that sends them, sharing the cluster's state.

import { performance } from 'node:perf_hooks';
import {
  afterKill,
  type Client,
  checkOn,
  cluster,
  crossCursor,
  dataOf,
  exchange,
  getElsewhere,
  judge,
  readYourWrite,
  withdrawalRefusal,
} from './cluster.js';
import { type Answer, acknowledgedGuid } from './http.js';
import type { ServiceInstance } from './instances.js';
import { sameValue } from './invariants.js';
import {
  ackEntities,
  ackedBy,
  bump,
  declarationByName,
  declarations,
  type HotType,
  type LiveAttribute,
  nameOf,
  type Pending,
  randInt,
  randomCase,
  recordSent,
  type Tenant,
  tenantKey,
  type Written,
} from './state.js';
import { nextOperation, onResponse, valueFor } from './traffic.js';

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
export async function readBackSetupWrite(
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

export async function clientLoop(client: Client, deadline: number) {
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
    recordSent(p);
    const answer = await exchange(instance, 'traffic', p.op, {
      method: p.method,
      path: p.path,
      authorization: p.tenant.authorization,
      body: p.body,
      ifMatch: p.ifMatch,
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
