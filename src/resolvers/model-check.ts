// A model document's shape and every declaration's rules (the declare endpoint's own checks, with their reasons),
// checked before a plan reads anything. Every problem of the document is reported in one answer, like a compiler:
// each with where it is (a path into the document, which the CLI turns into the file's line and column), the type
// and the attribute it concerns, and its reason; the refusal carries the first one's reason and message.
// Over 300 lines: the document's rules are read top-down as one grammar (document, type, former names, definition).

import type { ModelAttributeSpec } from '../contract/model-document.js';
import { type AppError, isAppError, type Reason, refuse } from '../errors.js';
import { TurnClock } from '../fairness/turn-clock.js';
import {
  MAX_ATTRIBUTE_DEFS,
  MAX_DESCRIPTION_LENGTH,
  MAX_DISPLAY_NAME_LENGTH,
  MAX_FORMER_NAMES,
} from '../model/limits.js';
import { cleanName, nameKey } from '../model/names.js';
import { MODEL_FORMAT, MODEL_MAX_DEFINITIONS, MODEL_MAX_TYPES } from '../model/plans.js';
import {
  type CheckedDeclaration,
  checkDeclaration,
  DECLARATION_FIELDS,
  optionalText,
} from './declaration.js';
import { specOf } from './model-summaries.js';

export const invalidModel = (where: string, what: string) => refuse('invalid_model', `${where}: ${what}`);

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Problems one answer lists at most (a document of 50,000 broken definitions is not answered 50,000 times). */
export const MAX_PROBLEMS = 100;

/** One problem of a document: where, about which type and attribute, why. */
export interface DocumentProblem {
  /** The place as text (`types[1].attributes[3].value_type`), and as a path into the document. */
  at: string;
  path: (string | number)[];
  /** The type's and the attribute's names as the document gives them (null: not known there). */
  type: string | null;
  attribute: string | null;
  reason: Reason;
  message: string;
}

/** The field of a definition a declaration's refusal is about, from its reason (null: the definition as a whole). */
function fieldOf(e: AppError): string | null {
  const byReason: Partial<Record<Reason, string>> = {
    unknown_value_type: 'value_type',
    invalid_cardinality: 'cardinality',
    allowed_values_not_supported: 'allowed_values',
    too_many_allowed_values: 'allowed_values',
    invalid_allowed_value: 'allowed_values',
    duplicate_allowed_value: 'allowed_values',
    allowed_ref_type_not_supported: 'allowed_ref_type',
    allowed_ref_type_required: 'value_type',
    filterable_not_supported: 'filterable',
    invalid_default_value: 'default_value',
    default_value_not_allowed: 'default_value',
    empty_value: 'name',
    name_too_long: 'name',
  };
  const named = /^"(\w+)"|Unknown field "([^"]+)"/.exec(e.message);
  const field = named?.[1] ?? named?.[2];
  if (field !== undefined && (Object.hasOwn(DECLARATION_FIELDS, field) || e.reason === 'unknown_field')) {
    return field;
  }
  return byReason[e.reason] ?? null;
}

/** The problems of one document, as they are found. */
class Problems {
  readonly list: DocumentProblem[] = [];
  count = 0;

  add(
    e: unknown,
    place: { at: string; path: (string | number)[]; type: string | null; attribute?: string | null },
  ) {
    if (!isAppError(e)) throw e;
    this.count += 1;
    if (this.list.length >= MAX_PROBLEMS) return;
    this.list.push({
      at: place.at,
      path: place.path,
      type: place.type,
      attribute: place.attribute ?? null,
      reason: e.reason,
      message: e.message,
    });
  }

  /** `check()`, or null when it is refused (the refusal recorded at `place`, its message prefixed with it). */
  attempt<T>(place: Parameters<Problems['add']>[1], check: () => T): T | null {
    try {
      return check();
    } catch (e) {
      this.add(located(e, place.at), place);
      return null;
    }
  }

  /** The refusal of the whole document: the first problem's reason and message, and every problem in DATA. */
  refusal() {
    const first = this.list[0] as DocumentProblem;
    const more = this.count > 1 ? ` (and ${this.count - 1} more problem(s): see DATA.problems)` : '';
    return refuse(first.reason, `${first.message}${more}`).with({
      problems: this.list,
      problem_count: this.count,
    });
  }
}

/** A refusal of a part of the document, its message prefixed with where the part is (any other error as it is). */
export function located(e: unknown, where: string): unknown {
  if (isAppError(e) && !e.message.startsWith(`${where}:`) && !e.message.startsWith(`${where}.`)) {
    const refusal = e as AppError;
    refusal.message = `${where}: ${refusal.message}`;
  }
  return e;
}

export interface CheckedType {
  name: string;
  key: string;
  /** Former names, most recent first (empty: none). */
  renamedFrom: { name: string; key: string }[];
  /** Whether the document lists the type's definitions (`attributes` present): if not, they are left alone. */
  managed: boolean;
  /** Its description and display name as the document states them (null: none). */
  texts: { description: string | null; display_name: string | null };
  attributes: {
    spec: ModelAttributeSpec;
    key: string;
    refKey: string | null;
    /** The declaration as its rules read it (allowed_ref_type still the document's name). */
    declaration: CheckedDeclaration;
  }[];
}

/**
 * The document's shape and every declaration's rules. A document that is no document at all (not an object, another
 * format, no list of types, past the bounds) is refused at once; otherwise every problem of every type and
 * definition is found, and the refusal lists them all (at most MAX_PROBLEMS; `problem_count` counts them).
 */
export async function checkModelDocument(
  document: unknown,
  /** Called at each turn given (a GraphQL operation checks its time budget there). */
  tick: () => void = () => {},
): Promise<CheckedType[]> {
  if (!isObject(document)) throw invalidModel('document', 'must be an object');
  for (const field of Object.keys(document)) {
    // (`$schema` names the JSON Schema an editor validates the file with: the CLI's export writes it)
    if (field !== 'format' && field !== 'types' && field !== '$schema') {
      throw invalidModel('document', `unknown field "${field}"`);
    }
  }
  if (document.$schema !== undefined && typeof document.$schema !== 'string') {
    throw invalidModel('$schema', 'must be a string (the JSON Schema the document names)');
  }
  if (document.format !== MODEL_FORMAT) throw invalidModel('format', `must be "${MODEL_FORMAT}"`);
  const types = document.types;
  if (!Array.isArray(types)) throw invalidModel('types', 'must be a list');
  if (types.length > MODEL_MAX_TYPES) throw invalidModel('types', `more than ${MODEL_MAX_TYPES} types`);
  // As many definitions as an export holds at most, counted before any is checked: a plan's answer grows with them.
  let definitions = 0;
  for (const t of types) if (isObject(t) && Array.isArray(t.attributes)) definitions += t.attributes.length;
  if (definitions > MODEL_MAX_DEFINITIONS) {
    throw refuse(
      'model_too_large',
      `The model is too large to handle as one document: the document holds ${definitions.toLocaleString('en-US')} definitions (at most ${MODEL_MAX_DEFINITIONS.toLocaleString('en-US')}).`,
    );
  }
  const seen = new Set<string>();
  const checked: CheckedType[] = [];
  const problems = new Problems();
  // Checked in one piece, a document's definitions would hold the one thread: a type at a time, a turn given
  // whenever the work has held the thread TURN_MS.
  const clock = new TurnClock();
  for (const [i, t] of types.entries()) {
    if (clock.due()) {
      tick();
      await clock.turn();
    }
    const type = checkModelType(t, i, seen, problems);
    if (type) checked.push(type);
  }
  if (problems.count > 0) throw problems.refusal();
  return checked;
}

/** The former names a type lists (`renamed_from`: one name, or a list), checked; problems recorded. */
function formerNamesOf(t: Record<string, unknown>, i: number, name: string | null, problems: Problems) {
  const renamedFrom: CheckedType['renamedFrom'] = [];
  if (t.renamed_from === undefined) return renamedFrom;
  const place = { at: `types[${i}].renamed_from`, path: ['types', i, 'renamed_from'], type: name };
  const names = typeof t.renamed_from === 'string' ? [t.renamed_from] : t.renamed_from;
  if (!Array.isArray(names) || names.length === 0 || names.length > MAX_FORMER_NAMES) {
    problems.add(invalidModel(place.at, `must be a name or a list of 1 to ${MAX_FORMER_NAMES} names`), place);
    return renamedFrom;
  }
  for (const [k, n] of names.entries()) {
    const one =
      typeof t.renamed_from === 'string'
        ? place
        : { ...place, at: `${place.at}[${k}]`, path: [...place.path, k] };
    const from = problems.attempt(one, () => {
      if (typeof n !== 'string') throw invalidModel(one.at, 'must hold names (strings)');
      return cleanName(n);
    });
    if (from !== null) renamedFrom.push({ name: from, key: nameKey(from) });
  }
  return renamedFrom;
}

/** One type of the document (its place `i`), its name's key added to `seen`; null when it has a problem. */
function checkModelType(t: unknown, i: number, seen: Set<string>, problems: Problems): CheckedType | null {
  const where = `types[${i}]`;
  const place = { at: where, path: ['types', i] as (string | number)[], type: null as string | null };
  if (!isObject(t)) {
    problems.add(invalidModel(where, 'must be an object'), place);
    return null;
  }
  const before = problems.count;
  place.type = typeof t.name === 'string' ? t.name.trim() : null;
  for (const field of Object.keys(t)) {
    if (!['name', 'renamed_from', 'attributes', 'description', 'display_name'].includes(field)) {
      problems.add(invalidModel(where, `unknown field "${field}"`), {
        ...place,
        path: [...place.path, field],
      });
    }
  }
  const namePlace = { ...place, at: `${where}.name`, path: [...place.path, 'name'] };
  const name = problems.attempt(namePlace, () => {
    if (typeof t.name !== 'string') throw invalidModel(namePlace.at, 'must be a string');
    const cleaned = cleanName(t.name);
    if (seen.has(nameKey(cleaned))) throw invalidModel(namePlace.at, `"${cleaned}" is listed twice`);
    seen.add(nameKey(cleaned));
    return cleaned;
  });
  const renamedFrom = formerNamesOf(t, i, place.type, problems);
  const texts = { description: null as string | null, display_name: null as string | null };
  for (const [field, max, lines] of [
    ['description', MAX_DESCRIPTION_LENGTH, true],
    ['display_name', MAX_DISPLAY_NAME_LENGTH, false],
  ] as const) {
    const textPlace = { ...place, at: `${where}.${field}`, path: [...place.path, field] };
    texts[field] = problems.attempt(textPlace, () => optionalText(t, field, max, lines));
  }
  // A type listed without `attributes` leaves its definitions alone (they are managed elsewhere); `attributes:`
  // written with nothing after it (null) is refused: the document means either, and one of them withdraws.
  const managed = t.attributes !== undefined;
  const listPlace = { ...place, at: `${where}.attributes`, path: [...place.path, 'attributes'] };
  const attributes = problems.attempt(listPlace, () => {
    if (t.attributes === null) {
      throw invalidModel(
        listPlace.at,
        'is empty: write `attributes: []` to withdraw every definition, or leave the key out to leave them alone',
      );
    }
    const list = t.attributes ?? [];
    if (!Array.isArray(list)) throw invalidModel(listPlace.at, 'must be a list');
    if (list.length > MAX_ATTRIBUTE_DEFS) {
      throw refuse(
        'too_many_attribute_defs',
        `more than ${MAX_ATTRIBUTE_DEFS} definitions, the limit of one type`,
      );
    }
    return list;
  });
  const names = new Set<string>();
  const checked = (attributes ?? []).map((a, j) => checkModelAttribute(a, listPlace, j, names, problems));
  if (problems.count > before || name === null) return null;
  return {
    name,
    key: nameKey(name),
    renamedFrom,
    managed,
    texts,
    attributes: checked.filter((a) => a !== null),
  };
}

/**
 * One definition of a type of the document (its place `j` in the list at `list`), its name's key added to `names`;
 * null when it has a problem (recorded, the first of the definition). Where it is is written out only for a
 * problem: a location string and two closures made for every definition, with the specification's spreads, would
 * add up to megabytes for a document at its bound.
 */
function checkModelAttribute(
  a: unknown,
  list: { at: string; path: (string | number)[]; type: string | null },
  j: number,
  names: Set<string>,
  problems: Problems,
): CheckedType['attributes'][number] | null {
  const fail = (e: unknown) => {
    const at = `${list.at}[${j}]`;
    const attribute = isObject(a) && typeof a.name === 'string' ? a.name.trim() : null;
    const field = isAppError(e) ? fieldOf(e) : null;
    problems.add(located(e, at), {
      at: field ? `${at}.${field}` : at,
      path: [...list.path, j, ...(field ? [field] : [])],
      type: list.type,
      attribute,
    });
    return null;
  };
  if (!isObject(a)) return fail(invalidModel(`${list.at}[${j}]`, 'must be an object'));
  let d: CheckedDeclaration;
  try {
    d = checkDeclaration(a);
  } catch (e) {
    return fail(e);
  }
  if (names.has(d.key)) return fail(invalidModel(`${list.at}[${j}]`, `"${d.name}" is listed twice`));
  names.add(d.key);
  let refKey: string | null = null;
  if (d.allowedRefType !== null) {
    try {
      refKey = nameKey(cleanName(d.allowedRefType));
    } catch (e) {
      return fail(located(e, `${list.at}[${j}].allowed_ref_type`));
    }
  }
  return { spec: specOf(d), key: d.key, refKey, declaration: d };
}
