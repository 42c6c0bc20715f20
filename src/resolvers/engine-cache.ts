// Engine cache: the definitions of a type, read on every curation write, kept per (tenant, type) and tagged with
// the type's definitions version. Declare and withdraw change that version in the database, so an entry is used
// only while the version read in the writing transaction matches: correct with several instances on one database.
import type { StoredAttribute } from '../db/attributes.js';

export interface TypeDefinitions {
  version: string;
  creatable: boolean | null;
  nameKey: string;
  /** Live definitions applying to the type: its own and the platform's. */
  attributes: StoredAttribute[];
}

export interface EngineCacheStats {
  entries: number;
  maxEntries: number;
  hits: number;
  misses: number;
  evictions: number;
  invalidations: number;
}

export class EngineCache {
  private readonly entries = new Map<string, TypeDefinitions>();
  private hits = 0;
  private misses = 0;
  private evictions = 0;
  private invalidations = 0;

  constructor(readonly maxEntries = 10_000) {}

  private static key(tenant: string, typeGuid: string) {
    return `${tenant}\u0000${typeGuid}`;
  }

  /** The cached definitions if they are of this version; counts a hit or a miss. */
  get(tenant: string, typeGuid: string, version: string): TypeDefinitions | undefined {
    const key = EngineCache.key(tenant, typeGuid);
    const entry = this.entries.get(key);
    if (entry && entry.version === version) {
      this.entries.delete(key); // refresh recency
      this.entries.set(key, entry);
      this.hits += 1;
      return entry;
    }
    this.misses += 1;
    return undefined;
  }

  set(tenant: string, typeGuid: string, definitions: TypeDefinitions) {
    const key = EngineCache.key(tenant, typeGuid);
    this.entries.delete(key);
    this.entries.set(key, definitions);
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
      this.evictions += 1;
    }
  }

  invalidate(tenant: string, typeGuid: string) {
    if (this.entries.delete(EngineCache.key(tenant, typeGuid))) this.invalidations += 1;
  }

  stats(): EngineCacheStats {
    return {
      entries: this.entries.size,
      maxEntries: this.maxEntries,
      hits: this.hits,
      misses: this.misses,
      evictions: this.evictions,
      invalidations: this.invalidations,
    };
  }

  /** What is cached, without tenant ids in clear (for the admin diagnostic). */
  describe(limit = 100) {
    return [...this.entries.entries()].slice(-limit).map(([key, d]) => ({
      type_guid: key.split('\u0000')[1],
      version: d.version,
      attributes: d.attributes.length,
    }));
  }
}
