// Per-request context: who is asking (viewer), a query-counting executor and fresh DataLoaders.

import DataLoader from 'dataloader';
import type { Logger } from 'pino';
import type { Viewer } from './auth/tokens.js';
import type { EngineCache } from './cache/engine-cache.js';
import type { ModelReadScope, ModelReads } from './cache/model-reads.js';
import type { Config } from './config.js';
import {
  findAttributeJson,
  findAttributesOfTypes,
  findPlatformAttributes,
  type StoredAttribute,
} from './db/attributes.js';
import { findTypesByGuids, type StoredType } from './db/entity-types.js';
import type { Executor, QueryStats, WriteGuard } from './db/executor.js';
import type { IdempotencyScope, KeyOwner } from './db/idempotency-records.js';
import type { Admission } from './fairness/admission.js';
import type { OperationBudget } from './fairness/operation-budget.js';
import type { Purger } from './jobs/purge.js';
import type { StoredJson } from './json/raw.js';
import { MAX_ATTRIBUTE_DEFS } from './model/limits.js';
import { WITHDRAWN_LISTED } from './model/pages.js';
import { ROOT_KEY } from './model/system-types.js';
import type { BookmarkCodec } from './services/bookmarks.js';
import type { CursorCodec } from './services/cursor.js';
import type { KeyedRequests, StoredAnswer } from './services/keyed-requests.js';
import type { TenantDirectory } from './services/tenants.js';
import type { LogRing } from './telemetry/logging.js';
import type { Metrics } from './telemetry/metrics.js';

export type { Viewer };

/** Long-lived collaborators shared by all requests of one app. */
export interface Services {
  config: Config;
  db: Executor;
  cursors: CursorCodec;
  /** Signs the Neo4j-Bookmark header values (see services/bookmarks.ts). */
  bookmarks: BookmarkCodec;
  tenants: TenantDirectory;
  logger: Logger;
  engineCache: EngineCache;
  /** Metamodel reads from memory, validated by the tenant's model version. */
  model: ModelReads;
  purger: Purger;
  logRing: LogRing;
  metrics: Metrics;
  /** Requests under an Idempotency-Key: their turns and stored answers (services/keyed-requests.ts). */
  keyed: KeyedRequests;
  /** The request memory heavy doors reserve before they run, shared fairly between tenants (fairness/admission.ts). */
  admission: Admission;
}

/** Definitions a GraphQL list loads per type: every live one, and the first withdrawn ones (by name). */
export const LOADED_PER_TYPE = { live: MAX_ATTRIBUTE_DEFS, withdrawn: WITHDRAWN_LISTED.max } as const;

export interface Loaders {
  entityTypeByGuid: DataLoader<string, StoredType | null>;
  /** Live definitions declared on a type (platform attributes excluded), as light rows (no JSON texts). */
  ownAttributesByType: DataLoader<string, StoredAttribute[]>;
  /** Withdrawn definitions of a type, light rows, the first LOADED_PER_TYPE.withdrawn by name. */
  withdrawnAttributesByType: DataLoader<string, StoredAttribute[]>;
  /** The enumeration and default JSON texts of a definition (light rows leave them out), by its guid. */
  attributeJson: DataLoader<
    string,
    { allowed_values_json: string | null; default_value_json: string | null } | null
  >;
  /**
   * The enumeration and default texts an operation loaded, by guid and field (an enumeration's items cut out of its
   * text once, when asked for): an operation that selects a definition several times (aliases) is charged for its
   * megabytes once and cuts them once.
   */
  storedJson: Map<string, Promise<StoredJson | null>>;
  /** The tenant's five platform attributes (one query per request, on first use). */
  platformAttributes: () => Promise<StoredAttribute[]>;
  /**
   * Types this request has already read, by guid (pages, lookups): nested fields answer from here without a
   * promise per field. Only ever filled with rows of the viewer's tenant.
   */
  typesSeen: Map<string, StoredType>;
}

/** A type by guid: from what this request already read when it can, else batched through the loader. */
export function typeByGuid(ctx: RequestContext, guid: string): StoredType | Promise<StoredType | null> {
  return ctx.loaders.typesSeen.get(guid) ?? ctx.loaders.entityTypeByGuid.load(guid);
}

export interface RequestContext {
  requestId: string;
  viewer: Viewer;
  services: Services;
  /** Counts the queries this request sends. */
  db: Executor;
  stats: QueryStats;
  loaders: Loaders;
  /** The GraphQL operation being executed for this request: its budget (none for REST). */
  operation: {
    budget: OperationBudget | null;
    /** The key of the operation's answer, when it is small enough to be kept (src/schema/graphql-answers.ts). */
    answerKey?: string;
    /** Set when the operation's answer may be kept whole. */
    answerCacheable?: boolean;
    /** The answer's size as measured before it is serialised (schema/guard.ts, measureAnswer). */
    answerBytes?: number;
  };
  /** This request's reads through the model cache (its model version is read once, on first use). */
  modelScope: ModelReadScope;
  /** What every write transaction of the request runs first and last (a precondition: a model apply's). */
  writes: { guard?: WriteGuard };
  /** Why the caller makes its changes, when it said (X-Change-Reason, GraphQL `reason`): in their change records. */
  changeReason?: string;
  /**
   * The request's Idempotency-Key (services/keyed-requests.ts): `pending` once sent and well-formed, until the door
   * takes the key's turn; then `scope` (its write is committed with the answer) and `end` (the turn's end), or
   * `replay` (the stored answer this request gets).
   */
  keyed: {
    pending?: { owner: KeyOwner; fingerprint: string };
    scope?: IdempotencyScope;
    end?: (stored?: StoredAnswer) => void;
    replay?: StoredAnswer;
    /** GraphQL: takes the key's turn (set by the route, called once the operation's cost is checked). */
    take?: () => Promise<StoredAnswer | undefined>;
  };
}

/** Charges the running GraphQL operation for what a resolver is about to materialise (no-op outside GraphQL). */
export function charge(ctx: RequestContext, objects: number, bytes = 0) {
  ctx.operation.budget?.charge(objects, bytes);
}

/** A value made on first call, then the same one. */
function lazy<T>(make: () => T): () => T {
  let value: T | undefined;
  return () => {
    value ??= make();
    return value;
  };
}

/** Where a context's work comes from. */
export interface ContextOrigin {
  /** The request's id (x-request-id), or the background job's run. */
  requestId: string;
  /** The route template (`POST /entities/types`) or the background job (`warm-up`, `carry`). */
  operation: string;
  /** Bookmarks the client sent back (Neo4j-Bookmark): every read of the request waits for them. */
  clientBookmarks?: string[];
}

export function createContext(
  services: Services,
  viewer: Viewer,
  { requestId, operation: origin, clientBookmarks = [] }: ContextOrigin,
): RequestContext {
  const stats: QueryStats = {
    queries: 0,
    ...(clientBookmarks.length > 0 ? { bookmarks: clientBookmarks } : {}),
  };
  const operation: RequestContext['operation'] = { budget: null };
  const writes: RequestContext['writes'] = {};
  // A GraphQL query's reads get the time its budget has left.
  const keyed: RequestContext['keyed'] = {};
  const db = services.db.forRequest({
    stats,
    deadline: {
      remainingMs: () => operation.budget?.remainingMs(),
      expire: () => (operation.budget as OperationBudget).expire(),
    },
    idempotency: () => keyed.scope,
    guard: () => writes.guard,
    metadata: () => ({ request_id: requestId, operation: origin }),
    tenant: viewer.tenant,
  });
  const tenant = viewer.tenant;
  const modelScope: ModelReadScope = {
    tenant,
    stats,
    readOne: (work) => db.readOne(work),
    readLatest: (work) => db.readLatest(work),
    clientBookmarks: clientBookmarks.length > 0,
  };
  return {
    requestId,
    viewer,
    services,
    db,
    stats,
    operation,
    modelScope,
    keyed,
    writes,
    loaders: requestLoaders(services.model, modelScope, db, tenant),
  };
}

/** A request's loaders, each made on first use: a REST request served from memory needs none of them. */
function requestLoaders(
  model: Services['model'],
  modelScope: ModelReadScope,
  db: RequestContext['db'],
  tenant: string,
): RequestContext['loaders'] {
  let platform: Promise<StoredAttribute[]> | undefined;
  const typesSeen = new Map<string, StoredType>();
  const entityTypeByGuid = lazy(
    () =>
      new DataLoader<string, StoredType | null>(async (guids) => {
        const found = await model.readMany<StoredType | null>(
          modelScope,
          'type',
          guids,
          async (run, missing) =>
            new Map((await findTypesByGuids(run, tenant, missing)).map((t) => [t.guid, t])),
          null,
        );
        for (const t of found) if (t) typesSeen.set(t.guid, t);
        return found;
      }),
  );
  const ownAttributesByType = lazy(
    () =>
      new DataLoader<string, StoredAttribute[]>((guids) =>
        model.readMany<StoredAttribute[]>(
          modelScope,
          'own_attributes',
          guids,
          (run, missing) => findAttributesOfTypes(run, tenant, missing, 'live', LOADED_PER_TYPE.live),
          [],
        ),
      ),
  );
  const withdrawnAttributesByType = lazy(
    () =>
      new DataLoader<string, StoredAttribute[]>(async (guids) => {
        const found = await db.readOne((run) =>
          findAttributesOfTypes(run, tenant, guids, 'withdrawn', LOADED_PER_TYPE.withdrawn),
        );
        return guids.map((g) => found.get(g) ?? []);
      }),
  );
  const attributeJson = lazy(
    () =>
      new DataLoader<
        string,
        { allowed_values_json: string | null; default_value_json: string | null } | null
      >((guids) =>
        model.readMany(
          modelScope,
          'attribute_json',
          guids,
          (run, missing) => findAttributeJson(run, tenant, missing),
          null,
        ),
      ),
  );
  return {
    get entityTypeByGuid() {
      return entityTypeByGuid();
    },
    get ownAttributesByType() {
      return ownAttributesByType();
    },
    get withdrawnAttributesByType() {
      return withdrawnAttributesByType();
    },
    get attributeJson() {
      return attributeJson();
    },
    storedJson: new Map(),
    platformAttributes: () => {
      platform ??= model
        .read(modelScope, 'platform_attributes', '', (run) => findPlatformAttributes(run, tenant, ROOT_KEY))
        .then(({ attributes, referencedTypes }) => {
          // Every type's attribute list shows them: their referenced types are wanted next.
          for (const t of referencedTypes) typesSeen.set(t.guid, t);
          return attributes;
        });
      return platform;
    },
    typesSeen,
  };
}
