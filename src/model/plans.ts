// The metamodel as a document: its format, the limits of a document and of a plan, and what a plan's steps do. Read
// by the rules (resolvers/model.ts), the contract's schemas of the document (contract/model-document.ts) and the
// GraphQL enum of the actions.

import { BODY_LIMIT_BYTES } from './doors.js';
import { GRAPHQL_OPERATION_MEMORY } from './graphql-limits.js';
import { MAX_NAME_LENGTH } from './names.js';

/** The format (and version) a model document states, and the only one the service reads. */
export const MODEL_FORMAT = 'entity-metamodel/v1';
/** Most types a model document lists (an export refuses a larger model, a plan a longer document). */
export const MODEL_MAX_TYPES = 1000;
/** Most enumeration and default text an export carries: the document stays within a request body (8 MB). */
export const MODEL_MAX_DEFINITION_BYTES = 6 * 1024 * 1024;
/** Most live definitions an export reads (its rows are held in memory at once). */
export const MODEL_MAX_DEFINITIONS = 50_000;
/** A definition's row (an export's) or step (a plan's), or a type's, beside its names and texts. */
export const MODEL_ROW_BYTES = 512;
/** Most UTF-8 bytes of a name: MAX_NAME_LENGTH characters of four bytes. */
export const MAX_NAME_BYTES = 4 * MAX_NAME_LENGTH;
/**
 * Most a model document's rows may take beside its texts (MODEL_MAX_DEFINITION_BYTES): an export's types and
 * definitions, a plan's steps (50,000 definitions fit with names of up to about 150 bytes between them). A row
 * repeats names of up to a kilobyte (a plan's step its type's name, a withdrawal the referenced type's), so a small
 * document can make a plan many times its size. Counted before the model is read (each
 * definition at MODEL_ROW_BYTES and its names' bytes, the referenced type's name at MAX_NAME_BYTES): past it,
 * model_too_large.
 */
export const MODEL_MAX_ROW_BYTES = 32 * 1024 * 1024;
/** A model document at its largest as JSON (an export's answer): its texts and its rows. */
export const MODEL_MAX_DOCUMENT_BYTES = MODEL_MAX_DEFINITION_BYTES + MODEL_MAX_ROW_BYTES;
/**
 * Most a plan's steps take as JSON: the document's texts (a body) and a model document's. The stored side is counted
 * before it is read; the steps repeat names the document gives (each declaration its type's name, so a plan can be
 * many times its document), so they are measured before they are sent.
 */
export const PLAN_MAX_STEP_BYTES = BODY_LIMIT_BYTES + MODEL_MAX_DOCUMENT_BYTES;
/**
 * Withdrawals whose impact a plan counts: each walks at most IMPACT_SCAN_MAX instances of its type (a withdrawal's
 * dry run), so a plan does at most this many such walks; later withdrawals carry `impact: null`.
 */
export const PLAN_MAX_IMPACTS = 25;
/**
 * Entities a plan resolves to check the reference defaults of the definitions it declares (their referents must
 * exist and be of the referenced type, as a declaration's must): one statement for all, so a document naming more is
 * refused (model_too_large) before it is read.
 */
export const PLAN_MAX_REFERENTS = 10_000;
/**
 * What planning a document holds per byte of it: each of its definitions (about 33 bytes at the least) becomes a step
 * that names its type again (up to a kilobyte), in objects, in the answer's text and in its bytes. Set from a
 * measurement, with a margin (bench/MEASUREMENTS-IN-CODE.md).
 */
export const PLAN_MEMORY_PER_DOCUMENT_BYTE = 32;
/**
 * The largest document GraphQL's modelPlan plans (model_too_large past it, counted as JSON text before it is read):
 * what an operation reserves (GRAPHQL_OPERATION_MEMORY) covers at PLAN_MEMORY_PER_DOCUMENT_BYTE. REST's plan reserves
 * for its own body, so larger documents are planned there. (Larger documents planned at once over GraphQL, each
 * admitted at an operation's fixed reservation, would take the process past its room.)
 */
export const GRAPHQL_PLAN_MAX_DOCUMENT_BYTES = Math.floor(
  GRAPHQL_OPERATION_MEMORY / PLAN_MEMORY_PER_DOCUMENT_BYTE,
);

/** What each kind of plan step does, in the order a plan lists them. */
export const PLAN_ACTION_DESCRIPTIONS = {
  create_type: 'Create a user-defined type (POST /entities/types).',
  rename_type: 'Rename a type to the name the document gives it.',
  describe_type: "Set a type's description and display name as the document states them.",
  withdraw_attribute: 'Withdraw a live definition the document does not list.',
  redeclare_attribute:
    'A live definition the document states differently in a way a stored value might not survive (value type, cardinality, referenced type, values removed from the enumeration, required added): apply withdraws it and carries its values to the new one, which the service declares once the purge grace has passed.',
  evolve_attribute:
    'A live definition the document states differently in a way every stored value survives (values added to the enumeration, required dropped, filterable turned on or off, another default): apply changes it in place, at once (same guid, values untouched, never out of the listing).',
  declare_attribute: 'Declare a definition the document lists.',
} as const;
export type PlanAction = keyof typeof PLAN_ACTION_DESCRIPTIONS;
export const PLAN_ACTIONS = Object.keys(PLAN_ACTION_DESCRIPTIONS) as [PlanAction, ...PlanAction[]];
