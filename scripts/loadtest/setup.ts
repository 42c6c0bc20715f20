// The tenants set up over HTTP before the traffic: persons, pools, hot types and their definitions.
import { mintToken } from '../../src/auth/tokens.js';
import { cluster } from './cluster.js';
import { acknowledgedGuid } from './http.js';
import { ATTRIBUTE_NAMES, HOT_TYPES, PERSONS, SEED, SEED_CONCURRENCY } from './options.js';
import { readBackSetupWrite } from './read-backs.js';
import {
  ackEntities,
  ackedBy,
  nameOf,
  parseEnvelope,
  recordDeclaration,
  recordType,
  type Tenant,
  type ValueType,
} from './state.js';

/** Where setup requests go: the service's base URL, and which instance that is (0 with one). */
export interface Target {
  base: string;
  index: number;
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

export async function setUpTenant(
  target: Target,
  secret: string,
  id: string,
  seeded: boolean,
): Promise<Tenant> {
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
