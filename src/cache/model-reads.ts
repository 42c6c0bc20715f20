// Metamodel reads through the model cache: the request's model version first (a shared read, see
// version-reader.ts), then the cached value of that version, else one load from Neo4j kept for the next requests.
//
// Why a load may be tagged with the version the request read before it: the load's statement starts after that
// read returned, so it sees every change the version stands for (and perhaps a later one, which is harmless: a
// later change has a new version, and requests holding it will not take this entry). Requests holding the same
// version share a load in flight for the same key.

import type { QueryStats } from '../db/executor.js';
import { readModelVersion } from '../db/model-version.js';
import type { Run } from '../db/run.js';
import { approximateBytes, type ModelCache, type ModelCacheKind } from './model-cache.js';
import type { SharedRead, VersionReader } from './version-reader.js';

/** What a request needs to read through the cache. */
export interface ModelReadScope {
  tenant: string;
  stats: QueryStats;
  /** The request's reads (counted in `stats`, within its deadline). */
  readOne<T>(work: (run: Run) => Promise<T>): Promise<T>;
  /** The same on the cluster's leader, with the bookmarks of what it saw. */
  readLatest<T>(work: (run: Run) => Promise<T>): Promise<{ value: T; bookmarks: string[] }>;
  /** Whether the client sent a bookmark (then in stats.bookmarks) that the request's reads must wait for. */
  clientBookmarks: boolean;
  /** The request's model version, once read (all its cached reads use the same one). */
  version?: Promise<string>;
}

export class ModelReads {
  private readonly loads = new Map<string, Promise<unknown>>();

  constructor(
    readonly cache: ModelCache,
    readonly versions: VersionReader,
  ) {}

  /** The model version for this request: read once per request, by a read that started after it arrived. */
  versionOf(scope: ModelReadScope): Promise<string> {
    scope.version ??= (scope.clientBookmarks ? this.ownRead(scope) : this.versions.read(scope.tenant)).then(
      (r) => {
        // The request is counted for its share of the statement (the benchmark's round trips per request).
        scope.stats.queries += r.share;
        // Its later reads (loads on a miss) wait until their server has what the version stands for.
        scope.stats.bookmarks = [...(scope.stats.bookmarks ?? []), ...r.bookmarks];
        return r.version;
      },
    );
    return scope.version;
  }

  /**
   * A request carrying a client's bookmark reads the version in a session of its own that waits for it (a shared
   * read does not carry one client's bookmarks), on the leader like the shared one.
   */
  private async ownRead(scope: ModelReadScope): Promise<SharedRead> {
    const { value, bookmarks } = await scope.readLatest((run) => readModelVersion(run, scope.tenant));
    return { version: value, share: 1, bookmarks };
  }

  /** One value: from the cache at the request's version, else loaded (once for all requests waiting for it). */
  async read<T>(
    scope: ModelReadScope,
    kind: ModelCacheKind,
    id: string,
    load: (run: Run) => Promise<T>,
    bytes: (value: T) => number = approximateBytes,
  ): Promise<T> {
    const version = await this.versionOf(scope);
    const hit = this.cache.get<T>(scope.tenant, kind, id, version);
    if (hit !== undefined) return hit;
    const key = `${scope.tenant}\u0000${kind}\u0000${id}\u0000${version}`;
    const pending = this.loads.get(key) as Promise<T> | undefined;
    if (pending) {
      try {
        return await pending;
      } catch {
        // The load another request started failed (perhaps on that request's deadline): this one tries itself.
        return scope.readOne(load);
      }
    }
    const loading = scope.readOne(load).then((value) => {
      this.cache.set(scope.tenant, kind, id, version, value, bytes(value));
      return value;
    });
    this.loads.set(key, loading);
    try {
      return await loading;
    } finally {
      this.loads.delete(key);
    }
  }

  /**
   * The value last read for the key, at any model version, without reading the version; `read` when none is held.
   * Only for a caller whose own statement checks, in the same read, every fact of the value it relies on (and falls
   * back to `read` when one no longer holds): the version read is then a round trip that protects nothing.
   */
  async readLastKnown<T>(
    scope: ModelReadScope,
    kind: ModelCacheKind,
    id: string,
    load: (run: Run) => Promise<T>,
    bytes: (value: T) => number = approximateBytes,
  ): Promise<{ value: T; exact: boolean }> {
    const held = this.cache.latest<T>(scope.tenant, kind, id);
    if (held !== undefined) return { value: held, exact: false };
    return { value: await this.read(scope, kind, id, load, bytes), exact: true };
  }

  /**
   * Like `read`, for a key most requests ask once (a create-or-get's name is usually a new type's): when the cache
   * holds nothing for it at any version, the value is loaded straight away, without the request's version read,
   * and not kept; only a placeholder is, when a value was found, so that the next request for the key reads the
   * version and keeps the value. A key asked once costs one statement, as without a cache; a key asked
   * again is served from memory from its third request on.
   */
  async readWhenHeld<T>(
    scope: ModelReadScope,
    kind: ModelCacheKind,
    id: string,
    load: (run: Run) => Promise<T | null>,
  ): Promise<T | null> {
    if (this.cache.holds(scope.tenant, kind, id)) return this.read(scope, kind, id, load);
    const value = await scope.readOne(load);
    if (value !== null) this.cache.mark(scope.tenant, kind, id);
    return value;
  }

  /**
   * Many values of one kind (a DataLoader batch): the cached ones, and the rest loaded in one statement. `load`
   * returns a value for every id it was given (`missing` where there is none, cached too).
   */
  async readMany<T>(
    scope: ModelReadScope,
    kind: ModelCacheKind,
    ids: readonly string[],
    load: (run: Run, ids: string[]) => Promise<Map<string, T>>,
    missing: T,
    bytes: (value: T) => number = approximateBytes,
  ): Promise<T[]> {
    const version = await this.versionOf(scope);
    const found = new Map<string, T>();
    const absent: string[] = [];
    for (const id of ids) {
      const hit = this.cache.get<T>(scope.tenant, kind, id, version);
      if (hit === undefined) absent.push(id);
      else found.set(id, hit);
    }
    if (absent.length > 0) {
      const loaded = await scope.readOne((run) => load(run, absent));
      for (const id of absent) {
        const value = loaded.get(id) ?? missing;
        found.set(id, value);
        this.cache.set(scope.tenant, kind, id, version, value, bytes(value));
      }
    }
    return ids.map((id) => found.get(id) as T);
  }
}
