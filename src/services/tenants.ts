// Makes sure a tenant's system types exist before its first request is served (once per tenant per process).
import { readTenantVersion, upsertSystemTypes } from '../db/entity-types.js';
import type { Executor } from '../db/executor.js';
import { nameKey, platformAttributeGuid, typeGuid } from '../model/names.js';
import {
  PARENT_LINKS,
  PLATFORM_ATTRIBUTES,
  ROOT_KEY,
  SYSTEM_TYPES,
  SYSTEM_TYPES_VERSION,
} from '../model/system-types.js';

export interface TenantDirectory {
  ensure(tenant: string): Promise<void>;
  /** Whether the tenant is set up in this process already (its next ensure costs nothing). */
  known(tenant: string): boolean;
}

const MAX_REMEMBERED = 100_000;

export function createTenantDirectory(db: Executor): TenantDirectory {
  const ready = new Map<string, Promise<void>>();
  const settled = new Set<string>();

  async function bootstrap(tenant: string) {
    const version = await db.readOne((run) => readTenantVersion(run, tenant));
    if (version !== null && version >= SYSTEM_TYPES_VERSION) return;
    const types = SYSTEM_TYPES.map((props) => {
      const key = nameKey(props.name);
      return { key, guid: typeGuid(tenant, key), props };
    });
    const attributes = PLATFORM_ATTRIBUTES.map((a) => ({
      guid: platformAttributeGuid(tenant, a.name),
      name: a.name,
      cardinality: a.cardinality,
      value_type: a.value_type,
      required: a.required,
      filterable: a.filterable,
      refKey: nameKey(a.refType),
    }));
    await db.write((run) =>
      upsertSystemTypes(run, tenant, types, PARENT_LINKS, ROOT_KEY, attributes, SYSTEM_TYPES_VERSION),
    );
  }

  return {
    ensure(tenant) {
      let pending = ready.get(tenant);
      if (!pending) {
        if (ready.size >= MAX_REMEMBERED) {
          ready.clear();
          settled.clear();
        }
        pending = bootstrap(tenant);
        ready.set(tenant, pending);
        pending.then(
          () => settled.add(tenant),
          () => ready.delete(tenant),
        );
      }
      return pending;
    },
    known: (tenant) => settled.has(tenant),
  };
}
