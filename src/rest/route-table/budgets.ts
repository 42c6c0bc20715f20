// What one request through each REST route may cost at most (model/doors.ts): every route of the table has its
// budget here, or the route table does not compile. The bounds are the limits that hold them (page sizes, the
// 200-definition and 4 MB type budgets, the model's bounds...); the suite holds every REST answer it sees to its
// route's statements and answer size (test/conformance.ts), the hostile storm does the same under attack.

import { MAX_SUBJECT_LENGTH } from '../../auth/tokens.js';
import { REQUEST_ID_MAX } from '../../contract/request-id.js';
import { BODY_LIMIT_BYTES, type DoorBudget, FIXED_DOOR, KB, MB } from '../../model/doors.js';
import { GRAPHQL_LIMITS, GRAPHQL_OPERATION_MEMORY } from '../../model/graphql-limits.js';
import {
  MAX_FORMER_NAMES_JSON_BYTES,
  MAX_TYPE_DEFAULTS_JSON_BYTES,
  MAX_TYPE_DEFINITIONS_JSON_BYTES,
} from '../../model/limits.js';
import { PAGES } from '../../model/pages.js';
import {
  MODEL_MAX_DEFINITION_BYTES,
  MODEL_MAX_DEFINITIONS,
  MODEL_MAX_DOCUMENT_BYTES,
  MODEL_MAX_ROW_BYTES,
  MODEL_MAX_TYPES,
  PLAN_MAX_STEP_BYTES,
  PLAN_MEMORY_PER_DOCUMENT_BYTE,
} from '../../model/plans.js';
import { CHANGE_REASON_MAX } from '../../resolvers/change-author.js';
import { CHANGE_PAGE_MAX_BYTES, FEED_FILTER_WINDOW } from '../../resolvers/changes.js';
import { LOOKUP_BODY_BYTES, MAX_LOOKUP_IDENTIFIERS } from '../../resolvers/entities.js';
import { FILTER_SCAN_WINDOW, MAX_FILTER_CONDITIONS } from '../../resolvers/entity-list.js';
import { APPLY_MAX_STEPS } from '../../resolvers/model-apply.js';
import { SUGGESTION_TYPES_MAX } from '../../resolvers/type-suggestions.js';
import type { ATTRIBUTE_ROUTES } from './attribute-routes.js';
import type { ENTITY_ROUTES } from './entity-routes.js';
import type { MODEL_ROUTES } from './model-routes.js';
import type { OPERATION_ROUTES } from './operation-routes.js';
import type { TYPE_ROUTES } from './type-routes.js';

export type RouteKey =
  | keyof typeof TYPE_ROUTES
  | keyof typeof MODEL_ROUTES
  | keyof typeof ATTRIBUTE_ROUTES
  | keyof typeof ENTITY_ROUTES
  | keyof typeof OPERATION_ROUTES;

/** What a request under an Idempotency-Key adds: the key's lookup, its claim and its stored answer. */
const KEYED = 3;
/**
 * A type row at its largest: a 256-character name of 4-byte characters, its label, icon and hint, its former names,
 * and its description and display name (1,000 and 256 characters of at most 4 bytes, or 6 for an escaped line break).
 */
const TYPE_ROW = 2 * KB + MAX_FORMER_NAMES_JSON_BYTES + 6 * KB + 1.5 * KB;
/** An answer of one type row: the row, the envelope (and create-or-get's flag). */
const TYPE_ANSWER = TYPE_ROW + 1 * KB;
/** An entity summary at its largest (guid, 256-character name, type guid). */
const ENTITY_ROW = 1.5 * KB;
/**
 * A change record's row around its before/after text, at its largest as JSON: its fixed fields (keys, id, time, kind,
 * two guids: under 512 bytes), its request id (ASCII), its actor (a token's subject: a character at most 6 bytes, a
 * control character escaped) and its reason (a character at most 4 bytes: it holds no control character).
 */
const CHANGE_ROW = 512 + REQUEST_ID_MAX + 6 * MAX_SUBJECT_LENGTH + 4 * CHANGE_REASON_MAX;
/** The texts of one change record at their largest: a declaration's enumeration and default. */
const CHANGE_TEXTS = MAX_TYPE_DEFINITIONS_JSON_BYTES + MAX_TYPE_DEFAULTS_JSON_BYTES;
/**
 * A page of change records: texts within the page's byte bound on at most PAGES.max rows, or one record whose texts
 * pass that bound on its own row.
 */
const CHANGE_PAGE = Math.max(CHANGE_PAGE_MAX_BYTES + PAGES.max * CHANGE_ROW, CHANGE_TEXTS + CHANGE_ROW);
/** An attribute row around its enumeration and default: its name of up to a kilobyte (256 four-byte characters). */
const ATTRIBUTE_ROW = 1.5 * KB;
/** A type's attribute listing at its largest: 205 rows and the 4 MB of enumerations and defaults. */
const LISTING = MAX_TYPE_DEFINITIONS_JSON_BYTES + 205 * ATTRIBUTE_ROW;
/** An entity answer at its largest: the values sent (a body) and the type's defaults. */
const ENTITY = BODY_LIMIT_BYTES + MAX_TYPE_DEFAULTS_JSON_BYTES;
/** A GraphQL answer at its largest (schema/limits.ts), and what an operation reads. */
const GRAPHQL_ANSWER = GRAPHQL_LIMITS.maxAnswerBytes;
const GRAPHQL_READS = `what the operation selects, bounded before it runs by its static cost (${GRAPHQL_LIMITS.maxCost.toLocaleString('en-US')}), then by ${GRAPHQL_LIMITS.maxObjects.toLocaleString('en-US')} objects, ${GRAPHQL_LIMITS.maxAnswerBytes / MB} MiB of values and its time budget; ${'`'}GRAPHQL_CONCURRENCY${'`'} at once`;
/** The model as one document at its largest: its texts and its rows (names included), each counted before it is read. */
const MODEL = MODEL_MAX_DOCUMENT_BYTES;
/** A plan's answer (or an apply's) at its largest: its steps, measured before they are sent, and the envelope. */
const PLAN_ANSWER = PLAN_MAX_STEP_BYTES + 64 * KB;

export const ROUTE_BUDGETS = {
  // ——— entity types ———
  createEntityType: {
    statements: 4 + KEYED,
    reads: 'the type holding the name and its tombstone: index seeks',
    answerBytes: TYPE_ANSWER,
    memoryBytes: 256 * KB,
    admission: 'light',
  },
  listEntityTypes: {
    statements: 2,
    reads: `one page of at most ${PAGES.max} types (an index range), from memory at the tenant's model version`,
    answerBytes: PAGES.max * TYPE_ROW,
    memoryBytes: 2 * PAGES.max * TYPE_ROW,
    admission: 'light',
  },
  getEntityType: {
    statements: 2,
    reads: 'one type by guid (an index seek), from memory at the model version',
    answerBytes: TYPE_ANSWER,
    memoryBytes: 64 * KB,
    admission: 'light',
  },
  getEntityTypeByName: {
    statements: 3,
    reads: `one type by its name or derived guid (index seeks), from memory at the model version; for a name that resolves nothing, the first page of at most ${SUGGESTION_TYPES_MAX} types (an index range, from memory too) for the names it suggests`,
    answerBytes: TYPE_ANSWER,
    memoryBytes: SUGGESTION_TYPES_MAX * TYPE_ROW,
    admission: 'light',
  },
  renameEntityType: {
    // (a rename, then a change of its texts: both may come in one body)
    statements: 9 + KEYED,
    reads: 'the type, the type holding the new name: index seeks',
    answerBytes: TYPE_ANSWER,
    memoryBytes: 256 * KB,
    admission: 'light',
  },
  releaseFormerName: {
    statements: 6 + KEYED,
    reads: 'the type, the type the name resolves to: index seeks',
    answerBytes: TYPE_ANSWER,
    memoryBytes: 256 * KB,
    admission: 'light',
  },
  deleteEntityType: {
    statements: 6 + KEYED,
    reads: 'the type, the live definitions referring to it, its own (at most 200): index seeks',
    // (its refusal type_referenced names the definitions referring to it: a message of at most 1,000 characters)
    answerBytes: 4 * KB,
    memoryBytes: 1 * MB,
    admission: 'light',
  },
  // ——— history and the feed ———
  typeHistory: {
    statements: 4,
    reads: `at most ${PAGES.max} change records' heads (an index range), then their texts up to ${CHANGE_PAGE_MAX_BYTES / MB} MiB (or one larger record)`,
    answerBytes: CHANGE_PAGE,
    memoryBytes: 3 * CHANGE_PAGE,
    admission: 'heavy',
  },
  listChanges: {
    statements: 12,
    reads: `at most ${PAGES.max} change records' heads per version shard (filtered: ${FEED_FILTER_WINDOW}, of which the page keeps the matching ones), then their texts up to ${CHANGE_PAGE_MAX_BYTES / MB} MiB (or one larger record); read again at most 5 times when a change committed meanwhile`,
    answerBytes: CHANGE_PAGE,
    memoryBytes: 3 * CHANGE_PAGE,
    admission: 'heavy',
  },
  // ——— the model as code ———
  exportModel: {
    statements: 5,
    reads: `its size first (counted, no text read); past ${MODEL_MAX_TYPES} types, ${MODEL_MAX_DEFINITIONS.toLocaleString('en-US')} definitions, ${MODEL_MAX_DEFINITION_BYTES / MB} MiB of texts or ${MODEL_MAX_ROW_BYTES / MB} MiB of rows (names included) refused before reading; else those (with former_names, each type's last rename: an index seek per type)`,
    answerBytes: MODEL,
    memoryBytes: 3 * MODEL,
    admission: 'heavy',
  },
  planModel: {
    statements: 32,
    reads: `the named types and their definitions' size first (counted); past ${MODEL_MAX_DEFINITIONS.toLocaleString('en-US')} definitions, ${MODEL_MAX_DEFINITION_BYTES / MB} MiB of texts or ${MODEL_MAX_ROW_BYTES / MB} MiB of rows refused before reading; else those, and at most 25 impact counts of ${(50_000).toLocaleString('en-US')} instances`,
    answerBytes: PLAN_ANSWER,
    memoryBytes: 3 * MODEL,
    memoryPerBodyByte: PLAN_MEMORY_PER_DOCUMENT_BYTE,
    admission: 'heavy',
  },
  applyModel: {
    statements: 32 + APPLY_MAX_STEPS * 12,
    reads: `a plan (as planModel), then at most ${APPLY_MAX_STEPS} steps through the ordinary rules, each a transaction locking the tenant's model version first`,
    answerBytes: PLAN_ANSWER,
    memoryBytes: 3 * MODEL,
    memoryPerBodyByte: PLAN_MEMORY_PER_DOCUMENT_BYTE,
    admission: 'heavy',
  },
  metamodelSchema: { ...FIXED_DOOR, reads: 'nothing (made once)', answerBytes: 256 * KB },
  // ——— attributes ———
  declareAttribute: {
    // (two of them for the names a refusal suggests: the model version and the page of types)
    statements: 8 + KEYED,
    reads:
      'the type, its live definitions counted and sized (at most 200), the referenced type and default: index seeks; for an allowed_ref_type that is no guid and resolves nothing, the first page of types for the names it suggests',
    answerBytes: MAX_TYPE_DEFINITIONS_JSON_BYTES + 8 * KB,
    memoryBytes: 2 * MAX_TYPE_DEFINITIONS_JSON_BYTES,
    admission: 'light',
  },
  evolveAttribute: {
    statements: 7 + KEYED,
    reads:
      'the type and the definition (index seeks), then its live definitions sized (at most 200), the referenced type and default',
    // (its changes show at most ten values added and ten removed, each at most 1,024 characters)
    answerBytes: MAX_TYPE_DEFINITIONS_JSON_BYTES + 256 * KB,
    memoryBytes: 3 * MAX_TYPE_DEFINITIONS_JSON_BYTES,
    admission: 'light',
  },
  listAttributes: {
    statements: 3,
    reads:
      'the type and its live definitions (at most 200, at most 4 MB of text), from memory at the model version',
    answerBytes: LISTING,
    memoryBytes: 2 * LISTING,
    admission: 'heavy',
    fromMemory: { kind: 'attributes', param: 'guid' },
  },
  withdrawAttribute: {
    statements: 6 + KEYED,
    reads: `the type and the definition (index seeks); a dry run counts at most ${(50_000).toLocaleString('en-US')} instances`,
    answerBytes: MAX_TYPE_DEFINITIONS_JSON_BYTES + 8 * KB,
    memoryBytes: 2 * MAX_TYPE_DEFINITIONS_JSON_BYTES,
    // (heavy for the database: a dry run walks the type's instances, and many at once keep Neo4j busy while other
    // tenants' statements wait)
    admission: 'heavy',
  },
  // ——— entities ———
  createEntity: {
    statements: 16 + KEYED,
    reads:
      "the type's live definitions (at most 200, 4 MB), the referents of its references (index seeks); read and written again, at most three times in all, when the definitions change meanwhile (concurrent_change)",
    answerBytes: ENTITY,
    memoryBytes: 3 * ENTITY,
    admission: 'light',
  },
  getEntity: {
    statements: 3,
    reads: 'one entity with its values and references (an index seek)',
    answerBytes: ENTITY,
    memoryBytes: 3 * ENTITY,
    admission: 'heavy',
  },
  listEntities: {
    statements: 6,
    reads: `one page of at most ${PAGES.max} entities; with several conditions at most ${FILTER_SCAN_WINDOW.toLocaleString('en-US')} matches examined (index seeks, ${MAX_FILTER_CONDITIONS} conditions at most)`,
    answerBytes: PAGES.max * ENTITY_ROW,
    memoryBytes: 4 * MB,
    admission: 'heavy',
  },
  queryEntities: {
    statements: 6,
    reads: `as GET /entities: one page of at most ${PAGES.max} entities, at most ${FILTER_SCAN_WINDOW.toLocaleString('en-US')} matches examined`,
    answerBytes: PAGES.max * ENTITY_ROW,
    memoryBytes: 4 * MB,
    admission: 'heavy',
  },
  lookup: {
    statements: 2,
    reads: `at most ${MAX_LOOKUP_IDENTIFIERS.toLocaleString('en-US')} entities by guid (index seeks)`,
    bodyBytes: LOOKUP_BODY_BYTES,
    answerBytes: MAX_LOOKUP_IDENTIFIERS * (ENTITY_ROW + 1 * KB),
    memoryBytes: 256 * KB,
    admission: 'heavy',
  },
  writeDashboard: {
    statements: 8 + KEYED,
    reads: 'the managed type and the row by its managed key (index seeks)',
    answerBytes: 8 * KB,
    memoryBytes: 256 * KB,
    admission: 'light',
  },
  // ——— operators and the public documents ———
  purge: {
    statements: 1_000_000,
    reads:
      'every withdrawn definition of the tenant (or all) and their instances, in batches of PURGE_BATCH_SIZE; one run at a time (purge_already_running); operators only',
    answerBytes: 8 * MB,
    memoryBytes: 16 * MB,
    admission: 'heavy',
  },
  logs: {
    statements: 0,
    reads: 'the in-memory ring of the last 2,000 lines',
    answerBytes: 16 * MB,
    memoryBytes: 32 * MB,
    admission: 'heavy',
  },
  engineCache: {
    ...FIXED_DOOR,
    reads: "the caches' counters and their 20 newest entries",
    answerBytes: 64 * KB,
  },
  metrics: { ...FIXED_DOOR, reads: "the process's counters", answerBytes: 256 * KB },
  healthz: FIXED_DOOR,
  readyz: { ...FIXED_DOOR, reads: 'nothing: the readiness state the probe keeps' },
  openapi: { ...FIXED_DOOR, reads: 'nothing (made once)', answerBytes: 1 * MB },
  graphqlGet: {
    statements: 64,
    reads: GRAPHQL_READS,
    answerBytes: GRAPHQL_ANSWER,
    memoryBytes: GRAPHQL_OPERATION_MEMORY,
    admission: 'heavy',
  },
  graphqlPost: {
    statements: 64,
    reads: GRAPHQL_READS,
    answerBytes: GRAPHQL_ANSWER,
    memoryBytes: GRAPHQL_OPERATION_MEMORY,
    admission: 'heavy',
  },
} as const satisfies Record<RouteKey, DoorBudget>;
