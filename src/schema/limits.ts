// What one GraphQL operation may cost, in two steps. Before it runs: a static cost computed once its variables are
// known from what each field states (field-budgets.ts): every list counted at its true bound (a type's attributes
// ≤ 205, allowed values ≤ 1,000, a page by its `first` whether literal, variable or default), every field that reads
// more than it shows at what it reads, so nesting that multiplies lists is refused before any work.
// While it runs: a budget of objects materialised, bytes of large values loaded (charged before they are read) and
// wall-clock time (queries), then the answer's size measured before it is serialised. Each bound is refused with
// its own reason, and the whole answer is replaced by that refusal: no partial multi-megabyte answer is sent.

import {
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLSchema,
  getOperationAST,
  Kind,
  type SelectionSetNode,
} from 'graphql';
import { getComplexity, simpleEstimator } from 'graphql-query-complexity';
import { refuse } from '../errors.js';
import { markRaw, RawJson } from '../json/raw.js';
import { GRAPHQL_LIMITS } from '../model/graphql-limits.js';
import { FIELD_BUDGETS } from './field-budgets.js';

export { GRAPHQL_LIMITS };

const SELECTIONS_EXCEEDED = 'Query exceeds the maximum allowed number of nodes.';

/**
 * The static cost of an operation with its variables. Throws the query_too_costly refusal when its selections,
 * fragments expanded, are more than the cost may visit (a few fragments spread many times multiply); throws a
 * GraphQLError when the variables are invalid.
 */
export function operationCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Record<string, unknown> | undefined,
  operationName: string | undefined,
): number {
  // Yoga hands the same parsed document for the same query text (its parser cache): the cost of a document with the
  // same variables is worked out once (a repeated catalog query would otherwise pay for it every time).
  // A refusal for too many selections is remembered too (as TOO_MANY_SELECTIONS): a hostile text sent again is
  // refused without expanding its fragments again, the costly part of its refusal.
  const key = costKey(operationName, variables);
  const hit = key === undefined ? undefined : costs.get(document)?.get(key);
  if (hit === TOO_MANY_SELECTIONS) throw refusal.tooManySelections();
  if (hit !== undefined) return hit;
  // Introspection is outside the cost (the cost walk sees no meta field): one full schema a request at most (a few of
  // them with their descriptions make megabytes and hold the one thread). Counted with the cost, so a remembered
  // cost (the same document and operation) was counted already.
  if (schemaIntrospections(document, operationName) > GRAPHQL_LIMITS.maxSchemaIntrospections) {
    throw refusal.tooManyIntrospections();
  }
  let cost: number;
  try {
    cost = complexity(schema, document, variables, operationName);
  } catch (error) {
    if (!(error instanceof Error && error.message === SELECTIONS_EXCEEDED)) throw error;
    remember(document, key, TOO_MANY_SELECTIONS);
    throw refusal.tooManySelections();
  }
  remember(document, key, cost);
  return cost;
}

function remember(document: DocumentNode, key: string | undefined, cost: number) {
  if (key === undefined) return;
  let known = costs.get(document);
  if (!known) {
    known = new Map();
    costs.set(document, known);
  }
  if (known.size >= COSTS_PER_DOCUMENT) known.delete(known.keys().next().value as string);
  known.set(key, cost);
}

/** Costs already worked out, per parsed document (gone with it) and per variables, the oldest out first. */
const costs = new WeakMap<DocumentNode, Map<string, number>>();
const COSTS_PER_DOCUMENT = 64;
/** Remembered in place of a cost: the operation has more selections than the cost may visit. */
const TOO_MANY_SELECTIONS = -1;
/** Costs are remembered only for variables this small: making the key must cost less than the work it saves. */
const MAX_KEYED_VARIABLES = 16;
const MAX_KEYED_STRING = 256;

/**
 * The key a cost is remembered under, or undefined when the variables are not a few short scalars: the key is made
 * without serialising whatever a body may hold (megabytes of variables would be read once more per request).
 */
function costKey(
  operationName: string | undefined,
  variables: Record<string, unknown> | undefined,
): string | undefined {
  let key = operationName ?? '';
  if (!variables) return key;
  let count = 0;
  for (const name in variables) {
    if (++count > MAX_KEYED_VARIABLES) return undefined;
    const value = variables[name];
    if (typeof value === 'string') {
      if (value.length > MAX_KEYED_STRING) return undefined;
    } else if (value !== null && typeof value !== 'number' && typeof value !== 'boolean') {
      return undefined;
    }
    key += `\u0000${JSON.stringify(name)}=${JSON.stringify(value)}`;
  }
  return key;
}

function complexity(
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Record<string, unknown> | undefined,
  operationName: string | undefined,
): number {
  return getComplexity({
    schema,
    query: document,
    variables: variables ?? {},
    ...(operationName ? { operationName } : {}),
    // The counter refuses once it reaches its limit: one more lets exactly maxSelections through.
    maxQueryNodes: GRAPHQL_LIMITS.maxSelections + 1,
    estimators: [
      ({ type, field, args, childComplexity }) => {
        const budget = FIELD_BUDGETS[`${type.name}.${field.name}`];
        if (budget?.kind === 'list') return budget.bound(args) * (1 + childComplexity);
        if (budget?.kind === 'read') return budget.cost + childComplexity;
        return undefined;
      },
      simpleEstimator({ defaultComplexity: 1 }),
    ],
  });
}

export const refusal = {
  tooCostly: (cost: number) =>
    refuse(
      'query_too_costly',
      `The operation costs ${cost.toLocaleString('en-US')}; at most ${GRAPHQL_LIMITS.maxCost.toLocaleString('en-US')} is allowed (every list counts at its largest possible size). Ask for fewer fields, lists or rows.`,
    ),
  tooManySelections: () =>
    refuse(
      'query_too_costly',
      `The operation selects more than ${GRAPHQL_LIMITS.maxSelections.toLocaleString('en-US')} fields once its fragments are expanded where they are spread. Ask for fewer fields, or spread fragments fewer times.`,
    ),
  tooManyIntrospections: () =>
    refuse(
      'query_too_costly',
      `The operation selects __schema more than ${GRAPHQL_LIMITS.maxSchemaIntrospections} time(s) once its fragments are expanded; introspect the schema once.`,
    ),
  tooLarge: (what: string) =>
    refuse('result_too_large', `The answer would hold ${what}; ask for fewer fields or rows.`),
  tooSlow: () =>
    refuse('query_timeout', 'The query ran out of its time budget; ask for fewer fields or rows.'),
};

/**
 * Bytes of the JSON text an answer serialises to, counted without serialising it (keys and values of every object,
 * walked without recursion), never fewer than it has; stops counting once past `limit`. Every string and key counts
 * its exact bytes as JSON text (jsonStringBytes: UTF-8, quotes and escapes); a number its digits; a stored JSON text
 * (RawJson) its exact UTF-8 length, and it is replaced where it stands by its marker, its text going to `texts`
 * (json/raw.ts: the answer is then serialised with stringifyMarked). (Counted one byte per UTF-16 unit, text of
 * three-byte characters would be measured at a third of what is sent.)
 */
export function measureAnswer(value: unknown, limit: number, texts: string[]): number {
  let bytes = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') bytes += jsonStringBytes(v);
    else if (typeof v === 'number') bytes += Number.isFinite(v) ? String(v).length : 4;
    else if (v === null || v === undefined || typeof v !== 'object') bytes += 5;
    else if (v instanceof RawJson) bytes += Buffer.byteLength(v.text);
    else if (Array.isArray(v)) {
      bytes += 2 + v.length;
      for (let i = 0; i < v.length; i++) {
        const item: unknown = v[i];
        if (item instanceof RawJson) {
          bytes += Buffer.byteLength(item.text);
          v[i] = markRaw(item, texts);
        } else stack.push(item);
      }
    } else {
      bytes += 2;
      const object = v as Record<string, unknown>;
      for (const key in object) {
        bytes += keyBytes(key) + 2;
        const item = object[key];
        if (item instanceof RawJson) {
          bytes += Buffer.byteLength(item.text);
          object[key] = markRaw(item, texts);
        } else stack.push(item);
      }
    }
    if (bytes > limit) return bytes;
  }
  return bytes;
}

/** A string's code units that JSON.stringify escapes (quotes, backslashes, controls) or that may be a surrogate. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are those JSON escapes
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** Bytes of `s` as JSON text: UTF-8, its quotes and escapes included (exactly what JSON.stringify writes). */
export function jsonStringBytes(s: string): number {
  const n = s.length;
  if (n <= 64) {
    // (most strings of an answer: names, guids, printable ASCII without a quote or backslash)
    let i = 0;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) break;
    }
    if (i === n) return n + 2;
  } else if (!NEEDS_ESCAPE.test(s)) return Buffer.byteLength(s) + 2;
  return Buffer.byteLength(JSON.stringify(s));
}

/** Keys repeat (an answer's field names): the sizes of short ones are kept, at most KEYS_KEPT of them. */
const keySizes = new Map<string, number>();
const KEYS_KEPT = 4096;
function keyBytes(key: string): number {
  let size = keySizes.get(key);
  if (size === undefined) {
    size = jsonStringBytes(key);
    if (key.length <= 64 && keySizes.size < KEYS_KEPT) keySizes.set(key, size);
  }
  return size;
}

/**
 * How many times the operation selects `__schema` at its root, fragments expanded where they are spread (each
 * fragment counted once, then multiplied: a fragment spread many times costs no more to count).
 */
function schemaIntrospections(document: DocumentNode, operationName: string | undefined): number {
  const operation = getOperationAST(document, operationName);
  if (!operation) return 0;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions)
    if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const counted = new Map<string, number>();
  const count = (set: SelectionSetNode, path: Set<string>): number => {
    let n = 0;
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        if (selection.name.value === '__schema') n += 1;
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        n += count(selection.selectionSet, path);
      } else {
        const name = selection.name.value;
        const fragment = fragments.get(name);
        // (a cycle is refused by validation; unknown fragments too)
        if (!fragment || path.has(name)) continue;
        let c = counted.get(name);
        if (c === undefined) {
          c = count(fragment.selectionSet, new Set([...path, name]));
          counted.set(name, c);
        }
        n += c;
      }
    }
    return n;
  };
  return count(operation.selectionSet, new Set());
}
