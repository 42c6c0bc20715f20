// The entities of a type, filtered by their filterable references (issue #14): "whose tags include any of these",
// "whose owner is one of these", several conditions combined with AND, keyset-paged in listing order (name, then
// guid) with signed cursors bound to the tenant. Both doors (REST GET /entities, GraphQL Query.entities) call
// listEntities with the same conditions; the REST query syntax is turned into them by parseWhere.

import type { RequestContext } from '../context.js';
import { findAttribute, findAttributesApplyingTo, type StoredAttribute } from '../db/attributes.js';
import { type RefCondition, readEntityPage, type StoredEntity } from '../db/entities.js';
import { refuse } from '../errors.js';
import { cleanName, nameKey } from '../model/names.js';
import { pageSize } from '../model/pages.js';
import { ROOT_KEY } from '../model/system-types.js';
import { lastKnownAttributes, listAttributes } from './attributes.js';

/** Conditions in one filter, and entity guids in one condition. */
export const MAX_FILTER_CONDITIONS = 10;
export const MAX_FILTER_GUIDS = 100;
/**
 * Rows one page may examine when a filter has several conditions: the first condition's matches are read in order
 * and the others checked on each. A page that finds fewer rows than asked within them still has a next cursor
 * (where the examined rows end), so a page's cost is bounded whatever the data, and the filter goes on from there.
 */
export const FILTER_SCAN_WINDOW = 1_000;

const CURSOR_KIND = 'entities';

/** A condition as a client states it: the attribute by name, the entities it may refer to by guid. */
export interface ReferenceFilter {
  attribute: string;
  anyOf: readonly string[];
}

export interface EntityPage {
  entities: StoredEntity[];
  /** Where the next page starts; null when the listing is complete. */
  nextCursor: string | null;
}

const invalidFilter = (message: string) => refuse('invalid_filter', message);

/**
 * REST's `where` values, each `<attribute>:<guid>[,<guid>...]`, as conditions. The attribute name is what comes
 * before the last colon (a name may hold colons; a guid never does).
 */
export function parseWhere(values: readonly string[]): ReferenceFilter[] {
  if (values.length > MAX_FILTER_CONDITIONS) throw tooManyConditions();
  return values.map((text) => {
    const colon = text.lastIndexOf(':');
    if (colon <= 0) throw invalidFilter(`"${text.slice(0, 80)}": expected <attribute>:<guid>[,<guid>...].`);
    const guids = text.slice(colon + 1).split(',');
    if (guids.length > MAX_FILTER_GUIDS) throw tooManyGuids(text.slice(0, colon));
    return { attribute: text.slice(0, colon), anyOf: guids };
  });
}

const tooManyConditions = () =>
  refuse('too_many_filters', `A filter has at most ${MAX_FILTER_CONDITIONS} conditions.`);
const tooManyGuids = (attribute: string) =>
  refuse(
    'too_many_filter_guids',
    `The condition on "${attribute.slice(0, 80)}" lists more than ${MAX_FILTER_GUIDS} guids.`,
  );

interface CheckedCondition {
  name: string;
  key: string;
  guids: string[];
}

/** The rules of a filter that need no database, in the order their reasons win. */
function checkFilter(where: readonly ReferenceFilter[]): CheckedCondition[] {
  if (where.length > MAX_FILTER_CONDITIONS) throw tooManyConditions();
  return where.map((condition) => {
    if (condition.anyOf.length > MAX_FILTER_GUIDS) throw tooManyGuids(condition.attribute);
    // (a condition naming no attribute, or no name at all, is a malformed condition: invalid_filter, as over GET)
    let name: string;
    try {
      name = cleanName(condition.attribute);
    } catch (error) {
      throw invalidFilter(`A condition's attribute is no attribute name: ${(error as Error).message}`);
    }
    if (condition.anyOf.length === 0) throw invalidFilter(`The condition on "${name}" lists no guid.`);
    if (condition.anyOf.some((g) => g.length === 0)) {
      throw invalidFilter(`The condition on "${name}" has an empty guid.`);
    }
    return { name, key: nameKey(name), guids: [...new Set(condition.anyOf)] };
  });
}

/**
 * Where the type's definitions are read from: as last read (no version read: the page's statement checks the type
 * and each definition it uses, and a refusal is only given from an exact listing), at the request's model version,
 * or straight from the database (after the page found the listing it used out of date).
 */
type Source = 'last-known' | 'exact' | 'fresh';

async function attributesFrom(ctx: RequestContext, typeGuid: string, source: Source) {
  if (source === 'fresh') {
    const found = await ctx.db.readOne((run) =>
      findAttributesApplyingTo(run, ctx.viewer.tenant, typeGuid, ROOT_KEY),
    );
    return { attributes: found ? [...found.platform, ...found.own] : null, exact: true };
  }
  // (a definition being redeclared is listed as it will be; entities do not use it until it is declared)
  const usable = (attributes: StoredAttribute[]) => attributes.filter((a) => !a.redeclaring);
  if (source === 'exact')
    return { attributes: usable((await listAttributes(ctx, typeGuid)).attributes), exact: true };
  const { value, exact } = await lastKnownAttributes(ctx, typeGuid);
  return { attributes: value ? usable(value.attributes) : null, exact };
}

/** Each condition's definition among the type's live ones; refuses a name that is not a filterable reference. */
async function definitionsOf(
  ctx: RequestContext,
  typeGuid: string,
  conditions: readonly CheckedCondition[],
  source: Source,
): Promise<StoredAttribute[]> {
  const { attributes, exact } = await attributesFrom(ctx, typeGuid, source);
  // A refusal is never given from a listing that may be out of date.
  const refuseWith = (error: Error) => {
    if (!exact) return definitionsOf(ctx, typeGuid, conditions, 'exact');
    throw error;
  };
  if (attributes === null) return refuseWith(refuse('unknown_entity_type', 'No entity type has this guid.'));
  const byKey = new Map(attributes.map((a) => [a.name_key, a]));
  const found: StoredAttribute[] = [];
  for (const condition of conditions) {
    const definition = byKey.get(condition.key);
    if (!definition) {
      if (!exact) return definitionsOf(ctx, typeGuid, conditions, 'exact');
      const stored = await ctx.db.readOne((run) =>
        findAttribute(run, ctx.viewer.tenant, typeGuid, condition.key),
      );
      if (stored?.state === 'withdrawn') {
        throw refuse(
          'attribute_def_withdrawn',
          `"${condition.name}" was withdrawn: its references no longer match.`,
        );
      }
      throw refuse('unknown_attribute', `The type has no attribute "${condition.name}".`);
    }
    if (definition.value_type !== 'entity_ref' || !definition.filterable) {
      return refuseWith(
        refuse('attribute_not_filterable', `"${definition.name}" is not a filterable reference attribute.`),
      );
    }
    found.push(definition);
  }
  return found;
}

/**
 * A page of the entities of a type (exactly that type) meeting every condition, in listing order. A type of
 * another tenant is an unknown type. A definition withdrawn before the page is read is refused; its references
 * stop matching at once, not when the purge removes them.
 */
export async function listEntities(
  ctx: RequestContext,
  args: {
    typeGuid: string;
    where?: readonly ReferenceFilter[] | undefined;
    cursor?: string | undefined;
    pageSize?: number | undefined;
  },
): Promise<EntityPage> {
  const tenant = ctx.viewer.tenant;
  const size = pageSize(args.pageSize, 'page_size');
  const after =
    args.cursor === undefined
      ? ''
      : ctx.services.cursors.decode(tenant, args.cursor, CURSOR_KIND, args.typeGuid);
  const conditions = checkFilter(args.where ?? []);
  // The condition with the fewest guids drives the read (fewest index seeks); the others are checked per row.
  const all: RefCondition[] = conditions.map((c) => ({ attr: c.key, guids: c.guids }));
  const driveAt = all.reduce((best, c, i) => (c.guids.length < (all[best]?.guids.length ?? 0) ? i : best), 0);
  const others = all.filter((_, i) => i !== driveAt);
  const window = others.length === 0 ? size + 1 : Math.max(size + 1, FILTER_SCAN_WINDOW);
  const readPage = (definitions: StoredAttribute[]) =>
    ctx.db.readOne((run) =>
      readEntityPage(run, {
        tenant,
        typeGuid: args.typeGuid,
        after,
        drive: all[driveAt] ?? null,
        others,
        definitions: definitions.map((d) => d.guid),
        window,
        limit: size + 1,
      }),
    );
  let read = await readPage(await definitionsOf(ctx, args.typeGuid, conditions, 'last-known'));
  // The type or a definition changed since the listing was read: read it from the database (a refusal now is
  // the current state's), then the page again.
  if (!read.current) read = await readPage(await definitionsOf(ctx, args.typeGuid, conditions, 'fresh'));
  if (!read.current) {
    throw refuse('concurrent_change', 'The type or its definitions kept changing; try again.');
  }
  const page = read.hits.slice(0, size);
  const last = page[page.length - 1];
  const resumeAt =
    read.hits.length > size && last
      ? last.key
      : read.scanned === window && read.lastScanned !== null
        ? read.lastScanned
        : null;
  return {
    entities: page.map((h) => h.entity),
    nextCursor:
      resumeAt === null ? null : ctx.services.cursors.encode(tenant, resumeAt, CURSOR_KIND, args.typeGuid),
  };
}
