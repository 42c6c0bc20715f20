// Engine cache: the definitions of a type, read on every curation write, kept per (tenant, type) and tagged with
// the type's definitions version. Declare and withdraw change that version in the database, so an entry is used
// only while the version read in the writing transaction matches: correct with several instances on one database.
// Memory is bounded by entries and by bytes (the definitions' names and JSON texts), least recently used first out;
// an entry larger than a quarter of the byte budget is not kept at all.
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
  bytes: number;
  maxBytes: number;
  hits: number;
  misses: number;
  evictions: number;
  invalidations: number;
}

/**
 * Approximate memory an entry holds: its strings (two bytes a character), a fixed cost per definition, and for an
 * enumeration also its parsed form and lookup set, which entity writes make once and keep with the definition
 * (resolvers/entities.ts, shapeOf): counted as twice its JSON text again.
 */
export function definitionsBytes(d: TypeDefinitions): number {
  let bytes = 200;
  for (const a of d.attributes) {
    bytes +=
      400 +
      2 *
        (a.name.length +
          a.name_key.length +
          3 * (a.allowed_values_json?.length ?? 0) +
          (a.default_value_json?.length ?? 0));
  }
  return bytes;
}

export const ENGINE_CACHE_MAX_BYTES = 64 * 1024 * 1024;

export class EngineCache {
  private readonly entries = new Map<string, { definitions: TypeDefinitions; bytes: number }>();
  private bytes = 0;
  private hits = 0;
  private misses = 0;
  private evictions = 0;
  private invalidations = 0;

  constructor(
    readonly maxEntries = 10_000,
    readonly maxBytes = ENGINE_CACHE_MAX_BYTES,
  ) {}

  private static key(tenant: string, typeGuid: string) {
    return `${tenant}\u0000${typeGuid}`;
  }

  /** The cached definitions if they are of this version; counts a hit or a miss. */
  get(tenant: string, typeGuid: string, version: string): TypeDefinitions | undefined {
    const key = EngineCache.key(tenant, typeGuid);
    const entry = this.entries.get(key);
    if (entry && entry.definitions.version === version) {
      this.entries.delete(key); // refresh recency
      this.entries.set(key, entry);
      this.hits += 1;
      return entry.definitions;
    }
    this.misses += 1;
    return undefined;
  }

  set(tenant: string, typeGuid: string, definitions: TypeDefinitions) {
    const key = EngineCache.key(tenant, typeGuid);
    this.remove(key);
    const bytes = definitionsBytes(definitions);
    if (bytes > this.maxBytes / 4) return;
    this.entries.set(key, { definitions, bytes });
    this.bytes += bytes;
    while (this.entries.size > this.maxEntries || this.bytes > this.maxBytes) {
      this.remove(this.entries.keys().next().value as string);
      this.evictions += 1;
    }
  }

  private remove(key: string): boolean {
    const entry = this.entries.get(key);
    if (!entry) return false;
    this.entries.delete(key);
    this.bytes -= entry.bytes;
    return true;
  }

  invalidate(tenant: string, typeGuid: string) {
    if (this.remove(EngineCache.key(tenant, typeGuid))) this.invalidations += 1;
  }

  stats(): EngineCacheStats {
    return {
      entries: this.entries.size,
      maxEntries: this.maxEntries,
      bytes: this.bytes,
      maxBytes: this.maxBytes,
      hits: this.hits,
      misses: this.misses,
      evictions: this.evictions,
      invalidations: this.invalidations,
    };
  }

  /** What is cached, without tenant ids in clear (for the admin diagnostic). */
  describe(limit = 100) {
    return [...this.entries.entries()].slice(-limit).map(([key, e]) => ({
      type_guid: key.split('\u0000')[1],
      version: e.definitions.version,
      attributes: e.definitions.attributes.length,
      bytes: e.bytes,
    }));
  }
}
