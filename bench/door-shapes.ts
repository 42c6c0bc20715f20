// The door storm's shapes: for every door of the service (each REST route, each page, each GraphQL field that reads
// or lists), the worst requests a caller with a valid token can send it, each named with the doors it attacks.
// test/integration/doors.test.ts fails for a door no shape attacks; bench/door-storm.ts runs them against a service
// on the production heap while another tenant's requests are timed.
// Over 300 lines: a list, one shape of a few lines per door; split, it would scatter what a reader holds against the router.

import { randomUUID } from 'node:crypto';

/** What the storm set up before its shapes run (bench/door-storm.ts). */
export interface DoorSetup {
  /** Authorization headers: the attacking tenant, the operator, the platform role and the same subject without it. */
  auth: { attacker: string; operator: string; platform: string; platformWithoutRole: string; wide: string };
  /** A token that is not the caller's own, planted where text goes (it must never reach a log). */
  stray: string;
  /** Types holding 4 MB of enumerations each (history records of about 1 MB, 4 MB attribute listings). */
  bigTypes: string[];
  bigTypeNames: string[];
  /** A type whose 64 defaults fill the defaults budget. */
  defaultsType: string;
  /** A type with tagged entities, its tags, and one of its entities. */
  taggedType: string;
  tags: string[];
  /** A type with many entities carrying a value, and the attribute. */
  countedType: string;
  /** An entity holding megabytes of values. */
  bigEntity: string;
  /** A type with withdrawn definitions. */
  withdrawnType: string;
  /** A user type the storm may rename and whose history is small. */
  plainType: string;
  plainTypeName: string;
  /** An asset path of the pages. */
  asset: string;
  /**
   * The `wide` tenant's types (written straight in the database): 400 named with 256 characters, each with 50
   * reference definitions named as long and 32 former names of 256 four-byte characters stored on its row.
   */
  wideTypeNames: string[];
  /** Authorization headers of tenants of their own (the combinations' "four tenants", "two tenants"). */
  others: string[];
  /** Authorization headers of tenants never seen before, one a request (a flood of new tenants). */
  fresh: string[];
}

export interface DoorRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  auth?: keyof DoorSetup['auth'] | 'none';
  headers?: Record<string, string>;
  /** A JSON body (serialised once per shape) or raw text. */
  body?: unknown;
  /** The client goes away this many ms after sending (its connection destroyed, the answer, if any, unread). */
  abandonAfterMs?: number;
  /** The client reads the answer at this pace (bytes a second) instead of at once. */
  readBytesPerSecond?: number;
  /**
   * Only this many bytes of the body are sent (its Content-Length still states it whole); with `trickleMs`, these at
   * once, and the rest after them.
   */
  sendBytes?: number;
  /** The body is sent chunked (no Content-Length), a byte every this many ms (after `sendBytes` at once). */
  trickleMs?: number;
}

export interface DoorShape {
  name: string;
  /** What the shape is, in a few words (the report). */
  label: string;
  /** The doors it attacks: REST route keys (rest/schemas.ts), `page <url>`, GraphQL `Type.field`. */
  doors: string[];
  /** Answers every request may get ("status reason", or the status alone for a success). */
  expected: string[];
  /**
   * What must get through, which every shape states: the least share of its requests answered by the door itself
   * (one of `expected` other than a busy service's SHED answers), and always at least one request
   * (bench/door-verdict.ts). A light door under attack answers every request (EVERY); a heavy one may shed most of a
   * storm, never all of it (A_SHARE): a service that refused everything would fail every shape.
   */
  through: number;
  /**
   * Requests sent, unless the shape runs past the storm's time cap first (door-storm.ts SHAPE_MAX_MS: on a slow
   * machine, a few rounds at full concurrency are the attack; more only lengthen the run) or `whole` says otherwise.
   */
  requests: number;
  /** Every one of the requests is sent, however long they take (a shape that must pass a count, such as a cap). */
  whole?: boolean;
  concurrency: number;
  /** The i-th request. */
  request: (setup: DoorSetup, i: number) => DoorRequest;
}

/**
 * Answers a heavy door may give when its tenant is over its share, or the process over its request memory: the
 * request was shed, not answered by its door (they never count towards a shape's `through`).
 */
export const SHED: readonly string[] = ['429 tenant_busy', '503 server_busy', '429 rate_limited'];
const ADMITTED = SHED;
/** Every request is answered by its door: nothing may be shed. */
const EVERY = 1;
/** A heavy door may shed most of a storm's requests to it, but answers at least this share of them itself. */
const A_SHARE = 0.1;
/**
 * The answer of a GraphQL query past its time budget (GRAPHQL_QUERY_TIMEOUT_MS, 2 s): the bound held. A query that
 * reads the database may meet it when Neo4j plans one of its statements anew, which the storm's set-up provokes (it
 * grows the database by 120,000 entities just before the shapes, and Neo4j replans what its statistics moved): on a
 * slow machine such a plan took 1.5 to 2.1 s.
 */
const TIMED = '200 query_timeout';
/**
 * The tenant's key cap the storm runs the service with (IDEMPOTENCY_TENANT_MAX_KEYS): low, so that one shape passes
 * it within its run; its last shape sends 60% more keyed requests than that.
 */
export const STORM_KEY_CAP = 200;
const guids = (n: number) => Array.from({ length: n }, () => randomUUID());
const gql = (query: string, variables?: Record<string, unknown>) => ({
  method: 'POST' as const,
  path: '/graphql',
  body: { query, ...(variables ? { variables } : {}) },
});
const aliased = (n: number, field: string) =>
  Array.from({ length: n }, (_, i) => `a${i}: ${field}`).join(' ');

/**
 * A model document at the definition bound: 1,000 types named with 4 digits and 126 four-byte characters (256
 * UTF-16 units, 508 bytes of UTF-8, repeated in every step of the plan) and 50 definitions each, 3.4 MB; made once.
 */
let widestModel: Record<string, unknown> | undefined;
const widestModelDocument = () =>
  (widestModel ??= {
    format: 'entity-metamodel/v1',
    types: Array.from({ length: 1000 }, (_, t) => ({
      name: `${String(t).padStart(4, '0')}${'\u{1F600}'.repeat(126)}`,
      attributes: Array.from({ length: 50 }, (_, a) => ({
        name: `a${a}`,
        value_type: 'json',
        cardinality: 'single',
      })),
    })),
  });

/** Declarations on 250 types named with 256 four-byte characters, 200 each: their steps repeat the names; made once. */
let longTypeNames: Record<string, unknown> | undefined;
const longTypeNamesDocument = () =>
  (longTypeNames ??= {
    format: 'entity-metamodel/v1',
    types: Array.from({ length: 250 }, (_, t) => ({
      name: `${String.fromCodePoint(0x20000 + t)}${'\u{1F600}'.repeat(255)}`,
      attributes: Array.from({ length: 200 }, (_, a) => ({
        name: `a${a}`,
        value_type: 'string',
        cardinality: 'single',
      })),
    })),
  });

/** The lookup of long identifiers, made once (8 MB of strings made for every request was the client's own load). */
let longIdentifiers: { identifiers: string[] } | undefined;
const longIdentifierLookup = () =>
  (longIdentifiers ??= { identifiers: Array.from({ length: 1000 }, (_, i) => `${i}`.padEnd(8000, 'x')) });

/** The members of the many-keys shape's object, made once. */
let manyKeys: string | undefined;

/** 64 type creations, 32 at once, each body a name (one of four) and `padding` around it. */
function paddedCreate(name: string, label: string, prefix: string, padding: string): DoorShape {
  return {
    name,
    label,
    doors: ['createEntityType'],
    expected: ['200', '201', ...ADMITTED],
    through: A_SHARE,
    requests: 64,
    concurrency: 32,
    request: (_s, i) => ({
      method: 'POST',
      path: '/entities/types',
      body: { name: `${prefix} ${i % 4}`, padding },
    }),
  };
}

export const DOOR_SHAPES: DoorShape[] = [
  // ——— the model as code ———
  {
    name: 'plan-50-types',
    label: 'POST /entities/model/plan: a 2 KB document naming 50 types, 8 of them with 4 MB of enumerations',
    doors: ['planModel'],
    expected: ['400 model_too_large', ...ADMITTED],
    through: A_SHARE,
    requests: 128,
    concurrency: 32,
    request: (s) => ({
      method: 'POST',
      path: '/entities/model/plan',
      body: {
        format: 'entity-metamodel/v1',
        types: [...s.bigTypeNames, ...Array.from({ length: 42 }, (_, i) => `Absent ${i}`)].map((name) => ({
          name,
          attributes: [],
        })),
      },
    }),
  },
  {
    name: 'plan-50000-definitions',
    label:
      'POST /entities/model/plan: 50,000 definitions of 1,000 types named with 126 four-byte characters (3.4 MB; a 33 MB plan)',
    doors: ['planModel'],
    expected: ['200', ...ADMITTED],
    through: A_SHARE,
    requests: 64,
    concurrency: 32,
    request: () => ({ method: 'POST', path: '/entities/model/plan', body: widestModelDocument() }),
  },
  {
    name: 'plan-slow-reader',
    label:
      'POST /entities/model/plan: the 33 MB plan, its answer read 64 KB a second (reset at its send deadline, its memory given back)',
    doors: ['planModel'],
    expected: ['reset', ...ADMITTED],
    through: A_SHARE,
    requests: 8,
    concurrency: 8,
    request: () => ({
      method: 'POST',
      path: '/entities/model/plan',
      body: widestModelDocument(),
      readBytesPerSecond: 64 * 1024,
    }),
  },
  {
    name: 'apply-50-types',
    label:
      'POST /entities/model/apply: the 50-type document, withdrawals allowed (refused at its plan, before a write)',
    doors: ['applyModel'],
    expected: ['400 model_too_large', ...ADMITTED],
    through: A_SHARE,
    requests: 64,
    concurrency: 32,
    request: (s) => ({
      method: 'POST',
      path: '/entities/model/apply',
      body: {
        allow_withdraw: true,
        document: {
          format: 'entity-metamodel/v1',
          types: [...s.bigTypeNames, ...Array.from({ length: 42 }, (_, i) => `Absent ${i}`)].map((name) => ({
            name,
            attributes: [],
          })),
        },
      },
    }),
  },
  {
    name: 'apply-510-steps',
    label:
      "POST /entities/model/apply: 3 new types of 170 definitions (510 steps, past one request's 500), with the longest reason",
    doors: ['applyModel'],
    expected: ['200', '409 model_changed', ...ADMITTED],
    through: A_SHARE,
    requests: 8,
    concurrency: 8,
    request: () => ({
      method: 'POST',
      path: '/entities/model/apply',
      headers: { 'x-change-reason': 'r'.repeat(500) },
      body: {
        document: {
          format: 'entity-metamodel/v1',
          types: ['Storm Apply A', 'Storm Apply B', 'Storm Apply C'].map((name) => ({
            name,
            attributes: Array.from({ length: 170 }, (_, i) => ({
              name: `field_${i}`,
              value_type: 'string',
              cardinality: 'single',
            })),
          })),
        },
      },
    }),
  },
  {
    name: 'reason-too-long',
    label: 'A declaration with an 8 KB X-Change-Reason (refused before a statement)',
    doors: ['declareAttribute'],
    expected: ['400 invalid_change_reason', ...ADMITTED],
    through: A_SHARE,
    requests: 256,
    concurrency: 32,
    request: (s) => ({
      method: 'POST',
      path: `/entities/types/${s.plainType}/attributes`,
      headers: { 'x-change-reason': 'r'.repeat(8 * 1024) },
      body: { name: 'never_declared', value_type: 'string', cardinality: 'single' },
    }),
  },
  {
    name: 'plan-wide-names',
    label:
      'POST /entities/model/plan and GET /entities/model: 400 types of 50 definitions, every name 256 characters (41 MB of rows counted)',
    doors: ['planModel', 'exportModel'],
    expected: ['400 model_too_large', ...ADMITTED],
    through: A_SHARE,
    requests: 64,
    concurrency: 16,
    request: (s, i) =>
      i % 2 === 0
        ? {
            method: 'POST',
            path: '/entities/model/plan',
            auth: 'wide',
            body: {
              format: 'entity-metamodel/v1',
              types: s.wideTypeNames.map((name) => ({ name, attributes: [] })),
            },
          }
        : { method: 'GET', path: '/entities/model', auth: 'wide' },
  },
  {
    name: 'plan-long-type-names',
    label:
      'POST /entities/model/plan: 250 types of 256 four-byte characters, 200 definitions each (3.5 MB; 58 MB of steps measured)',
    doors: ['planModel'],
    expected: ['400 model_too_large', ...ADMITTED],
    through: A_SHARE,
    requests: 32,
    concurrency: 16,
    request: () => ({ method: 'POST', path: '/entities/model/plan', body: longTypeNamesDocument() }),
  },
  {
    name: 'export',
    label: 'GET /entities/model of a tenant holding more than the model bounds',
    doors: ['exportModel'],
    expected: ['400 model_too_large', ...ADMITTED],
    through: A_SHARE,
    requests: 128,
    concurrency: 32,
    request: (_s, i) => ({ method: 'GET', path: `/entities/model${i % 2 ? '?former_names=true' : ''}` }),
  },
  {
    name: 'graphql-model-aliases',
    label: 'GraphQL: 15 aliases of model, and 15 of modelPlan naming the heavy types',
    doors: ['graphqlPost', 'Query.model', 'Query.modelPlan'],
    expected: ['200 query_too_costly', ...ADMITTED],
    through: A_SHARE,
    requests: 256,
    concurrency: 32,
    request: (s, i) =>
      i % 2 === 0
        ? gql(`{ ${aliased(15, 'model')} }`)
        : gql(`query($d: JSON!) { ${aliased(15, 'modelPlan(document: $d) { unchanged { types } }')} }`, {
            d: { format: 'entity-metamodel/v1', types: s.bigTypeNames.map((name) => ({ name })) },
          }),
  },
  {
    name: 'graphql-one-plan',
    label: 'GraphQL: one modelPlan naming the heavy types (refused before it reads), and one model',
    doors: ['Query.modelPlan', 'Query.model'],
    expected: ['200 model_too_large', ...ADMITTED],
    through: A_SHARE,
    requests: 128,
    concurrency: 32,
    request: (s, i) =>
      i % 2 === 0
        ? gql('{ model }')
        : gql('query($d: JSON!) { modelPlan(document: $d) { steps { action current changes } } }', {
            d: { format: 'entity-metamodel/v1', types: s.bigTypeNames.map((name) => ({ name })) },
          }),
  },
  // ——— Idempotency-Keys ———
  {
    name: 'keyed-history-aliases',
    label:
      'GraphQL: a keyed no-op rename selecting 11 history(first: 500) aliases of a type with 4 MB of records',
    doors: ['graphqlPost', 'Mutation.renameEntityType', 'EntityType.history'],
    expected: ['200 result_too_large', '200 data', ...ADMITTED],
    through: A_SHARE,
    requests: 64,
    concurrency: 16,
    request: (s, i) => ({
      ...gql(
        `mutation { renameEntityType(guid: "${s.bigTypes[0]}", name: "${s.bigTypeNames[0]}") { name ${aliased(11, 'history(first: 500) { edges { node { after } } }')} } }`,
      ),
      headers: { 'idempotency-key': `keyed-history-${i % 4}` },
    }),
  },
  {
    name: 'keyed-one-key-300',
    label: 'POST /entities: 300 requests with one Idempotency-Key and body, at once',
    doors: ['createEntity'],
    expected: ['201'],
    through: EVERY,
    requests: 300,
    concurrency: 300,
    request: (s) => ({
      method: 'POST',
      path: '/entities',
      headers: { 'idempotency-key': 'one-key-for-300' },
      body: { type_guid: s.plainType, name: 'waited on' },
    }),
  },
  {
    name: 'keyed-replay-forbidden',
    label:
      'POST /platform/dashboards: a key the platform role used, sent again by the same subject without the role',
    doors: ['writeDashboard'],
    expected: ['403 not_authorized'],
    through: EVERY,
    requests: 128,
    concurrency: 32,
    request: () => ({
      method: 'POST',
      path: '/platform/dashboards',
      auth: 'platformWithoutRole',
      headers: { 'idempotency-key': 'dashboard-key' },
      body: { name: 'Storm board' },
    }),
  },
  {
    name: 'dashboards',
    label: 'POST /platform/dashboards with the role: rows written and replayed',
    doors: ['writeDashboard'],
    expected: ['201', '200'],
    through: EVERY,
    requests: 128,
    concurrency: 16,
    request: (_s, i) => ({
      method: 'POST',
      path: '/platform/dashboards',
      auth: 'platform',
      headers: { 'idempotency-key': `board-${i % 8}` },
      body: { name: `Board ${i % 8}` },
    }),
  },
  // ——— defaults, entities ———
  {
    name: 'defaults-entity',
    label: 'POST /entities: a 79-byte body on a type whose 64 defaults fill the 256 KiB defaults budget',
    doors: ['createEntity'],
    expected: ['201'],
    through: EVERY,
    requests: 200,
    concurrency: 32,
    request: (s, i) => ({
      method: 'POST',
      path: '/entities',
      body: { type_guid: s.defaultsType, name: `d${i}` },
    }),
  },
  {
    name: 'declare-default-over',
    label:
      'POST …/attributes: a 65,000-character default on the full type (defaults_too_large), and enumerations past the type budget',
    doors: ['declareAttribute'],
    expected: ['400 defaults_too_large', '400 attribute_defs_too_large'],
    through: EVERY,
    requests: 64,
    concurrency: 16,
    request: (s, i) =>
      i % 2 === 0
        ? {
            method: 'POST',
            path: `/entities/types/${s.defaultsType}/attributes`,
            body: {
              name: `over${i}`,
              value_type: 'string',
              cardinality: 'single',
              default_value: 'x'.repeat(65_000),
            },
          }
        : {
            method: 'POST',
            path: `/entities/types/${s.bigTypes[1]}/attributes`,
            body: {
              name: `over${i}`,
              value_type: 'string',
              cardinality: 'single',
              allowed_values: Array.from({ length: 1000 }, (_, k) => `${k}-${'w'.repeat(1000)}`),
            },
          },
  },
  {
    name: 'entity-read-big',
    label: 'GET /entities/{guid} of an entity holding 4 MB of values',
    doors: ['getEntity'],
    expected: ['200', ...ADMITTED],
    through: A_SHARE,
    requests: 64,
    concurrency: 32,
    request: (s) => ({ method: 'GET', path: `/entities/${s.bigEntity}` }),
  },
  {
    name: 'filters-4x100',
    label: 'GET /entities: 4 conditions of 100 guids each',
    doors: ['listEntities'],
    expected: ['200', ...ADMITTED],
    through: A_SHARE,
    requests: 256,
    concurrency: 32,
    request: (s) => ({
      method: 'GET',
      path: `/entities?type_guid=${s.taggedType}${Array.from({ length: 4 }, () => `&where=tags:${[...guids(99), s.tags[0]].join(',')}`).join('')}&page_size=500`,
    }),
  },
  {
    name: 'query-10x100',
    label: 'POST /entities/query: the largest filter, 10 conditions of 100 guids',
    doors: ['queryEntities'],
    expected: ['200', ...ADMITTED],
    through: A_SHARE,
    requests: 256,
    concurrency: 32,
    request: (s) => ({
      method: 'POST',
      path: '/entities/query',
      body: {
        type_guid: s.taggedType,
        where: Array.from({ length: 10 }, (_, k) => ({
          attribute: 'tags',
          any_of: [...guids(99), s.tags[k % 3]],
        })),
        page_size: 500,
      },
    }),
  },
  {
    name: 'lookup-long-identifiers',
    label: 'POST /entities/lookup: 1,000 identifiers of 8,000 characters, 8 MB (answered back, before)',
    doors: ['lookup'],
    expected: ['413 request_too_large', ...ADMITTED],
    through: A_SHARE,
    requests: 64,
    concurrency: 16,
    request: () => ({
      method: 'POST',
      path: '/entities/lookup',
      body: longIdentifierLookup(),
    }),
  },
  {
    name: 'lookup-1000',
    label: 'POST /entities/lookup: 1,000 identifiers',
    doors: ['lookup'],
    expected: ['200', ...ADMITTED],
    through: A_SHARE,
    requests: 256,
    concurrency: 32,
    request: (s) => ({
      method: 'POST',
      path: '/entities/lookup',
      body: { identifiers: [...guids(999), s.bigEntity] },
    }),
  },
  // ——— history and the feed ———
  {
    name: 'history-4mb',
    label: 'GET /entities/types/{guid}/history?page_size=500 of a type with 4 MB of records',
    doors: ['typeHistory'],
    expected: ['200', ...ADMITTED],
    through: A_SHARE,
    requests: 96,
    concurrency: 32,
    request: (s, i) => ({
      method: 'GET',
      path: `/entities/types/${s.bigTypes[i % s.bigTypes.length]}/history?page_size=500`,
    }),
  },
  {
    name: 'feed-pages',
    label: 'GET /entities/changes?page_size=500 from the start of a tenant with megabytes of records',
    doors: ['listChanges'],
    expected: ['200', ...ADMITTED],
    through: A_SHARE,
    requests: 96,
    concurrency: 32,
    request: () => ({ method: 'GET', path: '/entities/changes?page_size=500' }),
  },
  {
    name: 'feed-filter-miss',
    label:
      'GET /entities/changes filtered on a kind and an attribute no record has (each page its bounded window)',
    doors: ['listChanges'],
    expected: ['200', ...ADMITTED],
    through: A_SHARE,
    requests: 192,
    concurrency: 32,
    request: (_s, i) => ({
      method: 'GET',
      path: `/entities/changes?page_size=500&kind=attribute_removed,type_deleted&attribute=never_${i % 8}`,
    }),
  },
  // ——— types and attributes ———
  {
    name: 'type-pages',
    label: 'GET /entities/types?page_size=500, and types by guid and by name',
    doors: ['listEntityTypes', 'getEntityType', 'getEntityTypeByName'],
    // (health and readiness never; the pages past the bucket of requests without a verified token: rate_limited)
    expected: ['200', '429 rate_limited'],
    through: A_SHARE,
    requests: 640,
    concurrency: 64,
    request: (s, i) =>
      i % 3 === 0
        ? { method: 'GET', path: '/entities/types?page_size=500' }
        : i % 3 === 1
          ? { method: 'GET', path: `/entities/types/${s.bigTypes[0]}` }
          : { method: 'GET', path: `/entities/types/by-name/${encodeURIComponent(s.plainTypeName)}` },
  },
  {
    name: 'by-name-misses',
    label:
      "GET /entities/types/by-name/{name} of 64-character names no type has (each refusal reads a page of the tenant's types and measures every name against it)",
    doors: ['getEntityTypeByName'],
    expected: ['404 unknown_entity_type'],
    through: A_SHARE,
    requests: 640,
    concurrency: 64,
    request: (s, i) => {
      // 64 code points (SUGGESTED_NAME_MAX), the longest a refusal suggests names for: its distance work at its widest
      const name = `${s.plainTypeName}${'x'.repeat(64)}`.slice(0, 63) + String.fromCharCode(97 + (i % 26));
      return { method: 'GET', path: `/entities/types/by-name/${encodeURIComponent(name)}` };
    },
  },
  {
    name: 'type-pages-former-names',
    label:
      'GET /entities/types?page_size=500 of types whose rows store 32 former names of 256 four-byte characters',
    doors: ['listEntityTypes'],
    expected: ['200'],
    through: EVERY,
    requests: 96,
    concurrency: 24,
    request: () => ({ method: 'GET', path: '/entities/types?page_size=500', auth: 'wide' }),
  },
  {
    name: 'tokens-in-paths',
    label: 'another token in a path: by-name/Bearer%20<JWT>, dots as %2E, glued, in a cursor (never logged)',
    doors: ['getEntityTypeByName', 'listEntityTypes'],
    expected: ['404 unknown_entity_type', '400 name_too_long', '404 not_found', '400 invalid_cursor'],
    through: EVERY,
    requests: 128,
    concurrency: 32,
    request: (s, i) => {
      const [h, p, sig] = s.stray.split('.');
      const paths = [
        `/entities/types/by-name/Bearer%20${s.stray}`,
        `/entities/types/by-name/${h}%2E${p}%2E${sig}`,
        `/${h}%2E${p}%2E${sig}`,
        `/entities/types?cursor=x${s.stray}`,
        // the token as the last part of a longer dotted run, and its dots escaped four times over
        `/nonexistent/abcdefgh.${s.stray}`,
        `/entities/types/by-name/v1.2.3-release.${s.stray}`,
        `/${h}%2525252E${p}%2525252E${sig}`,
      ];
      return { method: 'GET', path: paths[i % paths.length] as string };
    },
  },
  {
    name: 'attributes-4mb',
    label: 'GET /entities/types/{guid}/attributes of a type with 4 MB of enumerations',
    doors: ['listAttributes'],
    expected: ['200', ...ADMITTED],
    through: A_SHARE,
    requests: 96,
    concurrency: 32,
    request: (s, i) => ({
      method: 'GET',
      path: `/entities/types/${s.bigTypes[i % s.bigTypes.length]}/attributes`,
    }),
  },
  {
    name: 'withdraw-dry-run',
    label: 'DELETE …/attributes/{name}?dry_run=true on a type with 60,000 instances carrying the value',
    doors: ['withdrawAttribute'],
    expected: ['200'],
    through: EVERY,
    requests: 64,
    concurrency: 16,
    request: (s) => ({ method: 'DELETE', path: `/entities/attributes/${s.countedType}/n?dry_run=true` }),
  },
  {
    name: 'evolve-in-place',
    label:
      'PATCH …/attributes/{name} (and GraphQL evolveAttribute) on a type with 60,000 instances: a change that changes nothing, one not in place, an unknown name (nothing written)',
    doors: ['evolveAttribute', 'Mutation.evolveAttribute'],
    expected: [
      '200',
      '409 attribute_change_not_in_place',
      '404 attribute_def_not_found',
      '200 data',
      ...ADMITTED,
    ],
    through: A_SHARE,
    requests: 128,
    concurrency: 16,
    request: (s, i) => {
      const path = `/entities/types/${s.countedType}/attributes/${i % 4 === 2 ? 'never_declared' : 'n'}`;
      if (i % 4 === 3) {
        return gql(
          `mutation { evolveAttribute(typeGuid: "${s.countedType}", name: "n", input: {required: false}) { changed } }`,
        );
      }
      return { method: 'PATCH', path, body: i % 4 === 1 ? { value_type: 'string' } : { required: false } };
    },
  },
  {
    name: 'describe-type',
    label:
      "A type's description and display name set to what it holds (writes nothing after the first), over REST and GraphQL",
    doors: ['renameEntityType', 'Mutation.describeEntityType'],
    expected: ['200', '200 data', ...ADMITTED],
    through: A_SHARE,
    requests: 64,
    concurrency: 16,
    request: (s, i) =>
      i % 2
        ? gql(
            `mutation { describeEntityType(guid: "${s.plainType}", description: "${'d'.repeat(1000)}") { version } }`,
          )
        : {
            method: 'PATCH',
            path: `/entities/types/${s.plainType}`,
            body: { description: 'd'.repeat(1000) },
          },
  },
  {
    name: 'rename-delete',
    label:
      'PATCH to the name it has (writes nothing), DELETE of an unknown type, a release of a 256-character name the type never had (writes nothing) and of its current name (refused)',
    doors: ['renameEntityType', 'deleteEntityType', 'releaseFormerName'],
    expected: ['200', '409 name_not_held', '404 unknown_entity_type'],
    through: EVERY,
    requests: 256,
    concurrency: 32,
    request: (s, i) => {
      const release = `/entities/types/${s.plainType}/former-names/release`;
      switch (i % 4) {
        case 0:
          return { method: 'PATCH', path: `/entities/types/${s.plainType}`, body: { name: s.plainTypeName } };
        case 1:
          return { method: 'DELETE', path: `/entities/types/${randomUUID()}` };
        case 2:
          return { method: 'POST', path: release, body: { name: `never ${String(i).padStart(250, 'n')}` } };
        default:
          return { method: 'POST', path: release, body: { name: s.plainTypeName } };
      }
    },
  },
  {
    name: 'conditional-headers',
    label:
      'the headers a request may carry at their bounds: If-None-Match and If-Match of 16 tags of 64 characters (a stale If-Match: 412), 17 tags (refused), a 128-character x-request-id and a traceparent',
    doors: ['getEntityType', 'listAttributes', 'renameEntityType'],
    expected: ['200', '304', '412 precondition_failed', '400 invalid_precondition'],
    through: EVERY,
    requests: 512,
    concurrency: 32,
    request: (s, i) => {
      const tags = (n: number) =>
        Array.from({ length: n }, (_, k) => `W/"${String(k).padStart(64, 'v')}"`).join(', ');
      const identity = {
        'x-request-id': `gw-${String(i).padStart(125, '0')}`,
        traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      };
      switch (i % 4) {
        case 0:
          return {
            method: 'GET',
            path: `/entities/types/${s.plainType}`,
            headers: { ...identity, 'if-none-match': tags(16) },
          };
        case 1:
          return {
            method: 'GET',
            path: `/entities/types/${s.plainType}/attributes`,
            headers: { ...identity, 'if-none-match': '*' },
          };
        case 2:
          return {
            method: 'PATCH',
            path: `/entities/types/${s.plainType}`,
            headers: { ...identity, 'if-match': tags(16) },
            body: { name: `${s.plainTypeName} (stale)` },
          };
        default:
          return {
            method: 'GET',
            path: `/entities/types/${s.plainType}`,
            headers: { ...identity, 'if-none-match': tags(17) },
          };
      }
    },
  },
  paddedCreate(
    'create-type-big-body',
    'POST /entities/types with a 6 MB body of padding around the name',
    'Padded',
    'p'.repeat(6 * 1024 * 1024),
  ),
  // JSON.stringify writes each newline as \n and each é as its two UTF-8 bytes: 4 bytes a pair.
  paddedCreate(
    'create-type-escaped-body',
    'POST /entities/types with a 6 MB padding of é and escaped newlines (\\n), a backslash every 4 bytes',
    'Escaped',
    'é\n'.repeat(1.5 * 1024 * 1024),
  ),
  {
    name: 'many-keys-body',
    label: 'a 3.6 MB object of 240,000 integer-like keys: a type creation, and GraphQL variables',
    doors: ['createEntityType', 'Query.entityTypes'],
    expected: ['400 json_too_large', ...ADMITTED],
    through: A_SHARE,
    requests: 64,
    concurrency: 16,
    request: (_s, i) => {
      manyKeys ??= Array.from({ length: 240_000 }, (_, k) => `"${4_000_000_000 - k * 7}":1`).join(',');
      const keys = manyKeys;
      return i % 2 === 0
        ? { method: 'POST', path: '/entities/types', body: `{"name":"Keys",${keys}}` }
        : {
            method: 'POST',
            path: '/graphql',
            body: `{"query":"{ entityTypes { totalCount } }","variables":{${keys}}}`,
          };
    },
  },
  {
    name: 'graphql-variable-echo',
    label:
      'GraphQL: a variable of the wrong type holding 4 Mi quotes (refused at the door: longer than any field takes)',
    doors: ['Query.entityTypes'],
    expected: ['400 invalid_field', ...ADMITTED],
    through: A_SHARE,
    requests: 16,
    concurrency: 8,
    request: () =>
      gql('query($n: Int) { entityTypes(first: $n) { edges { cursor } } }', {
        // (a quote is two bytes in the body: the body just under its 8 MB bound)
        n: '"'.repeat(4 * 1024 * 1024 - 1_000),
      }),
  },
  {
    name: 'graphql-introspection',
    label:
      'GraphQL: 15 aliases of a full __schema with its descriptions (refused: one an operation), and one',
    doors: ['graphqlPost'],
    expected: ['200 data', '200 query_too_costly', ...ADMITTED],
    through: A_SHARE,
    requests: 64,
    concurrency: 16,
    request: (_s, i) =>
      gql(
        `{ ${aliased(i % 8 === 0 ? 1 : 15, '__schema { types { name description fields { name description args { name description } } } }')} }`,
      ),
  },
  {
    name: 'graphql-plan-over-size',
    label:
      'GraphQL: modelPlan of a document of 50,000 definitions, 3.6 MB (past what an operation plans: refused before it is read)',
    doors: ['graphqlPost', 'Query.modelPlan'],
    expected: ['200 model_too_large', ...ADMITTED],
    through: A_SHARE,
    requests: 32,
    concurrency: 8,
    request: () =>
      gql('query($d: JSON!) { modelPlan(document: $d) { basedOn } }', {
        d: {
          format: 'entity-metamodel/v1',
          types: Array.from({ length: 1000 }, (_, t) => ({
            name: `storm plan ${t}`,
            attributes: Array.from({ length: 50 }, (_, a) => ({
              name: `d${a}`,
              value_type: 'string',
              cardinality: 'single',
            })),
          })),
        },
      }),
  },
  {
    name: 'plan-referents-over',
    label:
      'POST /entities/model/plan: reference defaults naming 10,001 entities (refused before any is read), and 10,000 (one read)',
    doors: ['planModel'],
    expected: ['200', '400 model_too_large', ...ADMITTED],
    through: A_SHARE,
    requests: 32,
    concurrency: 8,
    request: (_s, i) => {
      const entities = i % 2 === 0 ? 10_001 : 10_000;
      const guid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
      return {
        method: 'POST',
        path: '/entities/model/plan',
        body: {
          format: 'entity-metamodel/v1',
          types: [
            { name: 'Storm person' },
            {
              name: 'Storm deal',
              attributes: Array.from({ length: Math.ceil(entities / 1000) }, (_, d) => ({
                name: `r${d}`,
                value_type: 'entity_ref',
                cardinality: 'multi',
                allowed_ref_type: 'Storm person',
                default_value: Array.from({ length: Math.min(1000, entities - d * 1000) }, (_, k) =>
                  guid(d * 1000 + k),
                ),
              })),
            },
          ],
        },
      };
    },
  },
  {
    name: 'graphql-null-default',
    label:
      "GraphQL: an explicit null through a defaulted variable (a non-null argument, @skip) beside 7 aliases of a 4 MB type's nested enumerations (refused whole, never run unmeasured)",
    doors: ['graphqlPost', 'Query.entityType', 'EntityType.attributes'],
    expected: ['200 graphql_error', ...ADMITTED],
    through: A_SHARE,
    requests: 32,
    concurrency: 8,
    request: (s, i) => {
      const heavy = aliased(
        7,
        `entityType(guid: "${s.bigTypes[0]}") { attributes { ownerType { attributes { ownerType { attributes { allowedValues } } } } } }`,
      );
      return i % 2 === 0
        ? gql(`query($g: ID = "x") { p: entityType(guid: $g) { name } ${heavy} }`, { g: null })
        : gql(
            `query($v: Boolean = true) { p: entityType(guid: "${s.bigTypes[0]}") @skip(if: $v) { name } ${heavy} }`,
            {
              v: null,
            },
          );
    },
  },
  // ——— operators and public documents ———
  {
    name: 'operators',
    label: 'operators: a purge run, 1,000 log lines, the engine cache, metrics',
    doors: ['purge', 'logs', 'engineCache', 'metrics'],
    expected: ['200', '409 purge_already_running', ...ADMITTED],
    through: A_SHARE,
    requests: 128,
    concurrency: 16,
    request: (_s, i) => {
      const shapes: DoorRequest[] = [
        { method: 'POST', path: '/admin/jobs/purge', auth: 'operator', body: {} },
        { method: 'GET', path: '/admin/logs?limit=1000', auth: 'operator' },
        { method: 'GET', path: '/admin/engine-cache', auth: 'operator' },
        { method: 'GET', path: '/metrics', auth: 'operator' },
      ];
      return shapes[i % shapes.length] as DoorRequest;
    },
  },
  {
    name: 'abandoned-waits',
    label:
      'clients going away while their requests wait for a turn: no token (the public pages) and the tenant, 64 at once, each connection closed 1 to 8 ms after its request',
    doors: ['openapi', 'listEntityTypes'],
    // A request answered before its client leaves counts as its answer; the rest as abandoned. The shapes after
    // this one (the public pages next) fail if a turn was left taken.
    // (the public pages count in the bucket of requests without a verified token: past it, rate_limited)
    expected: ['abandoned', '200', '429 rate_limited'],
    through: A_SHARE,
    requests: 1024,
    concurrency: 64,
    request: (_s, i) => ({
      method: 'GET',
      path: i % 2 === 0 ? '/openapi.json' : '/entities/types?page_size=500',
      auth: i % 2 === 0 ? 'none' : 'attacker',
      abandonAfterMs: 1 + (i % 8),
    }),
  },
  {
    name: 'public',
    label:
      'no token: health, readiness, the OpenAPI document, the model schema, the pages and an asset, GraphiQL',
    doors: [
      'healthz',
      'readyz',
      'openapi',
      'metamodelSchema',
      'page /docs',
      'page /docs/',
      'page /assets/:name',
    ],
    // (health and readiness never; the pages past the bucket of requests without a verified token: rate_limited)
    expected: ['200', '429 rate_limited'],
    through: A_SHARE,
    requests: 640,
    concurrency: 64,
    request: (s, i) => {
      const shapes: DoorRequest[] = [
        { method: 'GET', path: '/healthz', auth: 'none' },
        { method: 'GET', path: '/readyz', auth: 'none' },
        { method: 'GET', path: '/openapi.json', auth: 'none' },
        { method: 'GET', path: '/schemas/metamodel.json', auth: 'none' },
        { method: 'GET', path: '/docs', auth: 'none' },
        { method: 'GET', path: '/docs/', auth: 'none' },
        { method: 'GET', path: s.asset, auth: 'none' },
        { method: 'GET', path: '/graphql', auth: 'none', headers: { accept: 'text/html' } },
      ];
      return shapes[i % shapes.length] as DoorRequest;
    },
  },
  // ——— GraphQL ———
  {
    name: 'graphql-get-pages',
    label: 'GraphQL over GET: entityTypes(first: 500) with their attributes',
    doors: ['graphqlGet', 'Query.entityTypes', 'EntityType.attributes'],
    expected: ['200 data', '200 query_too_costly', TIMED, ...ADMITTED],
    through: A_SHARE,
    requests: 256,
    concurrency: 32,
    request: () => ({
      method: 'GET',
      path: `/graphql?query=${encodeURIComponent('{ entityTypes(first: 500) { edges { node { name attributes { name } } } } }')}`,
    }),
  },
  {
    name: 'graphql-definitions',
    label: 'GraphQL: a type with 4 MB of enumerations, every field of its definitions, aliased',
    doors: [
      'Query.entityType',
      'EntityType.attributes',
      'EntityType.attributeUsage',
      'EntityType.parentType',
      'AttributeDefinition.allowedValues',
      'AttributeDefinition.defaultValue',
      'AttributeDefinition.allowedRefType',
      'AttributeDefinition.ownerType',
    ],
    expected: ['200 data', '200 result_too_large', '200 query_too_costly', TIMED, ...ADMITTED],
    through: A_SHARE,
    requests: 64,
    concurrency: 32,
    request: (s, i) =>
      gql(
        `{ ${aliased(
          1 + (i % 3),
          `entityType(guid: "${s.bigTypes[i % s.bigTypes.length]}") { attributeUsage { used } parentType { name } attributes { allowedValues defaultValue allowedRefType { name } ownerType { name } } }`,
        )} }`,
      ),
  },
  {
    name: 'graphql-withdrawn',
    label: 'GraphQL: withdrawnAttributes(first: 500) { valuesRemaining } of a type with 60,000 instances',
    doors: ['EntityType.withdrawnAttributes', 'WithdrawnAttribute.valuesRemaining'],
    expected: ['200 data', TIMED, '200 query_too_costly', ...ADMITTED],
    through: A_SHARE,
    requests: 64,
    concurrency: 16,
    request: (s, i) =>
      gql(
        `{ entityType(guid: "${s.withdrawnType}") { withdrawnAttributes(first: ${i % 2 ? 500 : 10}) { valuesRemaining definition { name } } } }`,
      ),
  },
  {
    name: 'graphql-history-feed',
    label: 'GraphQL: histories of the heavy types, and the feed, 500 at a time',
    doors: ['EntityType.history', 'Query.modelChanges', 'Query.entityTypeByName'],
    expected: ['200 data', '200 result_too_large', '200 query_too_costly', TIMED, ...ADMITTED],
    through: A_SHARE,
    requests: 64,
    concurrency: 32,
    request: (s, i) =>
      i % 2 === 0
        ? gql(
            `{ ${s.bigTypeNames
              .slice(0, 4)
              .map(
                (n, k) =>
                  `t${k}: entityTypeByName(name: ${JSON.stringify(n)}) { history(first: 500) { edges { node { after } } } }`,
              )
              .join(' ')} }`,
          )
        : gql('{ modelChanges(first: 500) { changes { after } nextCursor } }'),
  },
  {
    name: 'graphql-entities',
    label: 'GraphQL: entities(where: 10 conditions of 100 guids, first: 500)',
    doors: ['Query.entities'],
    expected: ['200 data', TIMED, ...ADMITTED],
    through: A_SHARE,
    requests: 128,
    concurrency: 32,
    request: (s) =>
      gql(
        'query($t: ID!, $w: [EntityReferenceFilter!]) { entities(typeGuid: $t, where: $w, first: 500) { entities { name } } }',
        {
          t: s.taggedType,
          w: Array.from({ length: 10 }, (_, k) => ({
            attribute: 'tags',
            anyOf: [...guids(99), s.tags[k % 3]],
          })),
        },
      ),
  },
  {
    name: 'graphql-mutations',
    label:
      'GraphQL mutations: create-or-get, declare over the budgets, a withdrawal dry run, a delete refused, a rename and releases writing nothing',
    doors: [
      'Mutation.createEntityType',
      'Mutation.declareAttribute',
      'Mutation.withdrawAttribute',
      'Mutation.deleteEntityType',
      'Mutation.renameEntityType',
      'Mutation.releaseFormerName',
    ],
    expected: [
      '200 data',
      '200 defaults_too_large',
      '200 type_referenced',
      '200 unknown_entity_type',
      '200 name_not_held',
      ...ADMITTED,
    ],
    through: A_SHARE,
    requests: 160,
    concurrency: 32,
    request: (s, i) => {
      const shapes = [
        gql('mutation { createEntityType(name: "Storm GraphQL") { created } }'),
        gql(
          `mutation($i: DeclareAttributeInput!) { declareAttribute(typeGuid: "${s.defaultsType}", input: $i) { attribute { name } } }`,
          {
            i: {
              name: 'graphql over',
              valueType: 'string',
              cardinality: 'single',
              defaultValue: 'y'.repeat(65_000),
            },
          },
        ),
        gql(
          `mutation { withdrawAttribute(typeGuid: "${s.countedType}", name: "n", dryRun: true) { impact { instances complete } } }`,
        ),
        gql(`mutation { deleteEntityType(guid: "${randomUUID()}") { deleted } }`),
        gql(`mutation { renameEntityType(guid: "${s.plainType}", name: "${s.plainTypeName}") { name } }`),
        gql(
          `mutation { releaseFormerName(guid: "${s.plainType}", name: "${'m'.repeat(256)}") { released entityType { formerNames { name } } } }`,
        ),
        gql(
          `mutation { releaseFormerName(guid: "${s.plainType}", name: "${s.plainTypeName}") { released } }`,
        ),
      ];
      return shapes[i % shapes.length] as DoorRequest;
    },
  },
  // Last: once past the tenant's key cap, its keyed requests are refused.
  {
    name: 'keyed-many-keys',
    label: `POST /entities/types: a new Idempotency-Key each, past the tenant cap (the storm runs with ${STORM_KEY_CAP})`,
    doors: ['createEntityType'],
    expected: ['201', '429 idempotency_keys_exhausted'],
    through: EVERY,
    requests: Math.round(STORM_KEY_CAP * 1.6),
    whole: true,
    concurrency: 32,
    request: (_s, i) => ({
      method: 'POST',
      path: '/entities/types',
      headers: { 'idempotency-key': `many-${i}` },
      body: { name: `Keyed ${i}` },
    }),
  },
  // ——— bodies sent slowly or left, tenants and clients by the thousand (the storm's combinations run them at once) ———
  {
    name: 'bodies-abandoned-6mb',
    label:
      'POST /entities/types declaring 6 MB bodies from four tenants, 320 KB sent, then the client goes (what was read is given back)',
    doors: ['createEntityType'],
    expected: ['abandoned', '408 request_timeout', ...ADMITTED],
    through: A_SHARE,
    requests: 256,
    concurrency: 32,
    request: (s, i) => ({
      method: 'POST',
      path: '/entities/types',
      auth: 'none',
      headers: { authorization: s.others[i % 4] as string },
      body: `{"name":"${'p'.repeat(6_000_000)}"}`,
      sendBytes: 320 * 1024,
      abandonAfterMs: 300,
    }),
  },
  {
    name: 'plan-50000-two-tenants',
    label: 'POST /entities/model/plan: the 3.4 MB document of 50,000 definitions from two tenants at once',
    doors: ['planModel'],
    expected: ['200', ...ADMITTED],
    through: A_SHARE,
    requests: 16,
    concurrency: 4,
    request: (s, i) => ({
      method: 'POST',
      path: '/entities/model/plan',
      auth: 'none',
      headers: { authorization: s.others[4 + (i % 2)] as string },
      body: widestModelDocument(),
    }),
  },
  {
    name: 'uploads-trickled',
    label:
      'GraphQL bodies from six tenants, chunked: 70 KB at once, then a byte every 3 s (cut at the least rate, holding what it sent)',
    doors: ['graphqlPost'],
    expected: ['408 request_timeout', 'reset', ...ADMITTED],
    through: EVERY,
    requests: 6,
    concurrency: 6,
    whole: true,
    request: (s, i) => ({
      method: 'POST',
      path: '/graphql',
      auth: 'none',
      headers: { authorization: s.others[i % 6] as string },
      body: `{"query":"${'x'.repeat(71 * 1024)}"}`,
      sendBytes: 70 * 1024,
      trickleMs: 3_000,
    }),
  },
  {
    name: 'tenants-new-flood',
    label:
      'GET /entities/types, each request a tenant never seen before (its set-up inside its turn; new tokens counted)',
    doors: ['listEntityTypes'],
    expected: ['200', ...ADMITTED],
    through: A_SHARE,
    requests: 2_000,
    concurrency: 32,
    request: (s, i) => ({
      method: 'GET',
      path: '/entities/types?page_size=1',
      auth: 'none',
      headers: { authorization: s.fresh[i % s.fresh.length] as string },
    }),
  },
  {
    name: 'unverified-flood',
    label:
      'bad signatures, garbage tokens and unknown paths from one client address (its bucket, then rate_limited)',
    doors: ['listEntityTypes'],
    expected: ['401 unauthenticated', '404 not_found', '429 rate_limited'],
    // (its one address passes 50 a second: most of a flood is shed by design, a little answered by the door)
    through: 0.005,
    requests: 4_000,
    concurrency: 32,
    request: (s, i) => ({
      method: 'GET',
      path: i % 3 === 0 ? `/nowhere/${i}` : '/entities/types',
      auth: 'none',
      headers: {
        authorization: i % 3 === 1 ? `${s.auth.attacker.slice(0, -4)}AAAA` : `Bearer garbage.${i}.token`,
        'x-forwarded-for': '10.250.0.1',
      },
    }),
  },
];
