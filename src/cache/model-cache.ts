// The in-process copy of tenants' metamodels: what metamodel reads return (type pages, types by guid and by name,
// attribute listings, the GraphQL catalog's rows, whole GraphQL answers), kept per tenant and tagged with the tenant's model version (see
// src/db/model-version.ts). An entry answers a request only when the version read FOR THAT REQUEST (after it
// arrived) is the entry's: a write acknowledged by any instance changed the version, so the next read on every
// instance misses and loads afresh. No TTL, no staleness window.
//
// Memory is bounded by a byte budget (estimated: strings at two bytes a character plus a fixed cost per row), least
// recently used out first, across tenants. One tenant may hold at most a share of the budget (a quarter by
// default): past it, its own least recently used entries go, so a tenant with 100,000 types paging through all of
// them cannot evict everyone else. An entry over a sixteenth of the budget is not kept.
import { createHash, randomBytes } from 'node:crypto';

export const MODEL_CACHE_KINDS = [
  'type_page',
  'type',
  'type_name',
  'attributes',
  'own_attributes',
  'platform_attributes',
  'attribute_json',
  'graphql_answer',
] as const;
export type ModelCacheKind = (typeof MODEL_CACHE_KINDS)[number];

/** The version of a placeholder (mark): never a model version, which is UUIDs joined by dots, or empty. */
const PLACEHOLDER_VERSION = 'placeholder';

interface Entry {
  tenant: string;
  id: string;
  kind: ModelCacheKind;
  version: string;
  value: unknown;
  bytes: number;
}

interface TenantEntries {
  /** The tenant's entries, least recently used first. */
  entries: Map<string, Entry>;
  bytes: number;
}

interface KindCounts {
  hits: number;
  misses: number;
  entries: number;
  bytes: number;
}

export interface ModelCacheStats {
  entries: number;
  bytes: number;
  maxBytes: number;
  maxTenantBytes: number;
  tenants: number;
  hits: number;
  misses: number;
  evictions: number;
  /** Entries replaced by one of another model version (the tenant's model changed). */
  invalidations: number;
  byKind: Record<ModelCacheKind, { hits: number; misses: number; entries: number; bytes: number }>;
}

/**
 * Approximate memory of a value held in the cache: its JSON text at two bytes a character (the strings, and the
 * objects holding them), plus a fixed cost; `serialised` adds one more copy for a REST answer serialised once and
 * kept with the value.
 */
export function approximateBytes(value: unknown, serialised = false): number {
  return 128 + (serialised ? 3 : 2) * jsonLength(value);
}

/**
 * About the length of `value`'s JSON text (exact for text without characters JSON escapes), counted by walking it: a
 * string counts its length, so the cost is one step per value, not per character: sizing a 4 MB enumeration, only
 * to find it too large to keep, costs no serialisation.
 */
export function jsonLength(value: unknown): number {
  switch (typeof value) {
    case 'string':
      return value.length + 2;
    case 'number':
    case 'bigint':
      return String(value).length;
    case 'boolean':
      return value ? 4 : 5;
    case 'object': {
      if (value === null) return 4;
      const toJSON = (value as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === 'function') return jsonLength(toJSON.call(value));
      let n = 1;
      if (Array.isArray(value)) {
        for (const item of value) {
          n += (item === undefined || typeof item === 'function' ? 4 : jsonLength(item)) + 1;
        }
        return value.length === 0 ? 2 : n;
      }
      for (const key of Object.keys(value)) {
        const item = (value as Record<string, unknown>)[key];
        if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
        n += key.length + 4 + jsonLength(item);
      }
      return n === 1 ? 2 : n;
    }
    default:
      return 0;
  }
}

/** The same, for a value that keeps its serialised REST answer. */
export const approximateBytesServed = (value: unknown) => approximateBytes(value, true);

export class ModelCache {
  /** Every entry, least recently used first (a Map keeps insertion order; a hit moves the entry to the end). */
  private readonly entries = new Map<string, Entry>();
  private readonly tenants = new Map<string, TenantEntries>();
  private bytes = 0;
  private evictions = 0;
  private invalidations = 0;
  /** Kept up to date as entries come and go, so that reading the stats walks no entry. */
  private readonly counts = new Map<ModelCacheKind, KindCounts>(
    MODEL_CACHE_KINDS.map((k) => [k, { hits: 0, misses: 0, entries: 0, bytes: 0 }]),
  );
  /** Tenant ids appear in the diagnostic as a keyed hash, never in clear. */
  private readonly salt = randomBytes(16);
  readonly maxTenantBytes: number;
  readonly maxEntryBytes: number;

  constructor(
    readonly maxBytes: number,
    tenantShare = 0.25,
  ) {
    this.maxTenantBytes = Math.floor(maxBytes * tenantShare);
    this.maxEntryBytes = Math.floor(maxBytes / 16);
  }

  private static key(tenant: string, kind: ModelCacheKind, id: string) {
    return `${tenant}\u0000${kind}\u0000${id}`;
  }

  /**
   * The value cached under this key at exactly this model version; counts a hit or a miss unless `count` is false
   * (the caller counts with `count()` once it knows where its answer came from).
   */
  get<T>(tenant: string, kind: ModelCacheKind, id: string, version: string, count = true): T | undefined {
    const key = ModelCache.key(tenant, kind, id);
    const entry = this.entries.get(key);
    const counts = this.counts.get(kind) as KindCounts;
    if (entry?.version === version) {
      this.entries.delete(key);
      this.entries.set(key, entry);
      const own = this.tenants.get(tenant) as TenantEntries;
      own.entries.delete(key);
      own.entries.set(key, entry);
      if (count) counts.hits += 1;
      return entry.value as T;
    }
    if (count) counts.misses += 1;
    return undefined;
  }

  /**
   * The value the key holds at whatever model version it was read (perhaps an older one than the tenant's), for a
   * caller that checks what it relies on in its own statement (ModelReads.readLastKnown). Counts a hit when there is
   * one; a miss is left to the read that follows.
   */
  latest<T>(tenant: string, kind: ModelCacheKind, id: string): T | undefined {
    const entry = this.entries.get(ModelCache.key(tenant, kind, id));
    if (entry === undefined || entry.version === PLACEHOLDER_VERSION) return undefined;
    this.count(kind, true);
    return entry.value as T;
  }

  /**
   * The bytes counted for `tenant`'s entry, at whatever version it was loaded (undefined: none held): admission's
   * guess of what a request for it costs. Counts no hit and moves nothing.
   */
  bytesOf(tenant: string, kind: ModelCacheKind, id: string): number | undefined {
    return this.entries.get(ModelCache.key(tenant, kind, id))?.bytes;
  }

  /** Counts a read of `kind` answered from memory (hit) or not (miss). */
  count(kind: ModelCacheKind, hit: boolean) {
    const counts = this.counts.get(kind) as KindCounts;
    if (hit) counts.hits += 1;
    else counts.misses += 1;
  }

  /**
   * Whether the key holds an entry of any version: worth reading the version for. When it holds none, a miss is
   * counted (the caller loads without asking `get`).
   */
  holds(tenant: string, kind: ModelCacheKind, id: string): boolean {
    if (this.entries.has(ModelCache.key(tenant, kind, id))) return true;
    this.count(kind, false);
    return false;
  }

  /**
   * Keeps a placeholder under the key: it then `holds` an entry, of no model version (so `get` misses), until a
   * value replaces it. For a key worth the version read only once it is asked again (ModelReads.readWhenHeld). A
   * key that holds an entry meanwhile (another request kept a value) keeps it. Costs the fixed cost of an entry and
   * the id's characters, within the tenant's share like any entry.
   */
  mark(tenant: string, kind: ModelCacheKind, id: string) {
    if (this.entries.has(ModelCache.key(tenant, kind, id))) return;
    this.set(tenant, kind, id, PLACEHOLDER_VERSION, undefined, 128 + 2 * id.length);
  }

  /**
   * Keeps `value` as read at model `version`, in place of what the key held. A write makes all of a tenant's entries
   * stale at once, but they are not walked then (a tenant holding 100,000 small entries would make every write cost
   * that walk): no request asks for the old version any more, so stale entries are not hit, and being the least
   * recently used they are the first to go when room is needed, within the tenant's share first.
   */
  set(tenant: string, kind: ModelCacheKind, id: string, version: string, value: unknown, bytes: number) {
    const key = ModelCache.key(tenant, kind, id);
    const replaced = this.entries.get(key);
    if (replaced && replaced.version !== version && replaced.version !== PLACEHOLDER_VERSION)
      this.invalidations += 1;
    this.remove(key);
    if (bytes > this.maxEntryBytes || bytes > this.maxTenantBytes) return;
    let own = this.tenants.get(tenant);
    if (!own) {
      own = { entries: new Map(), bytes: 0 };
      this.tenants.set(tenant, own);
    }
    const entry: Entry = { tenant, id, kind, version, value, bytes };
    this.entries.set(key, entry);
    own.entries.set(key, entry);
    own.bytes += bytes;
    this.bytes += bytes;
    const counts = this.counts.get(kind) as KindCounts;
    counts.entries += 1;
    counts.bytes += bytes;
    // The tenant's own least recently used entries first, while it holds more than its share ...
    while (own.bytes > this.maxTenantBytes) {
      this.remove(own.entries.keys().next().value as string);
      this.evictions += 1;
    }
    // ... then anyone's, while the cache holds more than its budget.
    while (this.bytes > this.maxBytes) {
      this.remove(this.entries.keys().next().value as string);
      this.evictions += 1;
    }
  }

  private remove(key: string) {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.bytes -= entry.bytes;
    const own = this.tenants.get(entry.tenant) as TenantEntries;
    own.entries.delete(key);
    own.bytes -= entry.bytes;
    if (own.entries.size === 0) this.tenants.delete(entry.tenant);
    const counts = this.counts.get(entry.kind) as KindCounts;
    counts.entries -= 1;
    counts.bytes -= entry.bytes;
  }

  stats(): ModelCacheStats {
    const byKind = Object.fromEntries(
      MODEL_CACHE_KINDS.map((k) => [k, { ...(this.counts.get(k) as KindCounts) }]),
    ) as ModelCacheStats['byKind'];
    let hits = 0;
    let misses = 0;
    for (const c of this.counts.values()) {
      hits += c.hits;
      misses += c.misses;
    }
    return {
      entries: this.entries.size,
      bytes: this.bytes,
      maxBytes: this.maxBytes,
      maxTenantBytes: this.maxTenantBytes,
      tenants: this.tenants.size,
      hits,
      misses,
      evictions: this.evictions,
      invalidations: this.invalidations,
      byKind,
    };
  }

  /** The tenants holding most memory, each named by a keyed hash (never in clear), for the admin diagnostic. */
  describe(limit = 20) {
    return [...this.tenants.entries()]
      .sort((a, b) => b[1].bytes - a[1].bytes)
      .slice(0, limit)
      .map(([tenant, own]) => ({
        tenant_hash: createHash('sha256').update(this.salt).update(tenant).digest('hex').slice(0, 16),
        entries: own.entries.size,
        bytes: own.bytes,
      }));
  }
}
