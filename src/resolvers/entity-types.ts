// Entity types: create-or-get, list, look up, rename, delete. Every rule for types (docs/api.md#entity-types)
// lives here once.

import { approximateBytesServed } from '../cache/model-cache.js';
import type { RequestContext } from '../context.js';
import { meets, type VersionCondition } from '../contract/type-version.js';
import { EntityTypeRow } from '../contract/wire.js';
import { withdrawAllOfType } from '../db/attributes.js';
import {
  createUserType,
  deleteType,
  findReferencingAttributes,
  findTypeByGuid,
  findTypeByName,
  listTypes,
  renameType,
  type StoredType,
} from '../db/entity-types.js';
import { ConstraintViolation } from '../db/executor.js';
import type { Run } from '../db/run.js';
import { refuse } from '../errors.js';
import { cleanName, nameKey, typeGuid } from '../model/names.js';
import { pageSize } from '../model/pages.js';
import { MANAGED_TYPES } from '../model/system-types.js';
import { changeBy } from './change-author.js';
import { formerNamesAfter, nameTaken } from './type-names.js';
import { preconditionFailed, requireTypeVersion } from './type-version.js';

/** The fields of a type's row, as the row declares them (contract/wire.ts). */
const ROW_FIELDS = Object.keys(EntityTypeRow.shape) as (keyof EntityTypeRow)[];

/** A stored type as its REST row: every field of the row it has (an absent one is left out, never null). */
export function toEntityTypeRow(t: StoredType): EntityTypeRow {
  const row: Record<string, unknown> = {};
  for (const field of ROW_FIELDS) {
    const value = t[field];
    if (value !== null && value !== undefined) row[field] = value;
  }
  return row as EntityTypeRow;
}

export const unknownType = () => refuse('unknown_entity_type', 'No entity type has this guid.');

export async function createOrGetEntityType(ctx: RequestContext, rawName: string) {
  const tenant = ctx.viewer.tenant;
  const name = cleanName(rawName);
  const key = nameKey(name);
  const guid = typeGuid(tenant, key);
  // The first look goes through the model cache, but reads the model version only for a name the cache holds
  // something for (readWhenHeld): a create-or-get of an existing name asked again is a read from memory, and a
  // new name costs one lookup, as it would without a cache. After a refused create the database is asked
  // directly (the winner of the race is not cached at this request's version).
  const lookup = (run: Run) => findTypeByName(run, tenant, key, guid);
  let first = true;
  const resolve = async () => {
    if (first) {
      first = false;
      return ctx.services.model.readWhenHeld(ctx.modelScope, 'type_name', key, lookup);
    }
    return ctx.db.readOne(lookup);
  };

  for (let attempt = 0; attempt < 3; attempt++) {
    const existing = await resolve();
    if (existing) return { type: existing, created: false };
    if (MANAGED_TYPES.has(key)) {
      throw refuse(
        'type_instances_managed',
        `Instances of "${name}" are managed by the platform; the type is set up when the platform writes its first one.`,
      );
    }
    try {
      const change = changeBy(ctx, {
        kind: 'type_created',
        before: null,
        after: { name, origin: 'user_defined', catalog_level: true },
      });
      const created = await ctx.db.write((run) => createUserType(run, tenant, guid, name, key, change));
      return { type: created, created: true };
    } catch (e) {
      // A concurrent create of the same name won the race: resolve it again and return the winner.
      if (!(e instanceof ConstraintViolation)) throw e;
    }
  }
  throw refuse('type_name_taken', 'The name is being changed concurrently; try again.');
}

/**
 * One page of the tenant's types in name order. Paging is forward only (a cursor marks the last row seen); each
 * row comes with the cursor that continues after it.
 */
export async function listEntityTypes(
  ctx: RequestContext,
  args: { cursor?: string | undefined; pageSize?: number | undefined; backward?: boolean },
) {
  if (args.backward) throw refuse('invalid_field', 'Only forward pagination (first/after) is supported.');
  const tenant = ctx.viewer.tenant;
  const size = pageSize(args.pageSize, 'page_size');
  const after = args.cursor === undefined ? '' : ctx.services.cursors.decode(tenant, args.cursor);
  const cached = await ctx.services.model.read(
    ctx.modelScope,
    'type_page',
    `${size}\u0000${after}`,
    async (run) => {
      const rows = await listTypes(run, tenant, after, size + 1);
      const page: CachedTypePage = { types: rows.slice(0, size), more: rows.length > size };
      return page;
    },
    approximateBytesServed,
  );
  const cursors = ctx.services.cursors;
  const cursorOf = (type: StoredType) => cursors.encode(tenant, type.name_key);
  const last = cached.types[cached.types.length - 1];
  // Rows and cursors are made only when asked for: a REST page served from its serialised form needs neither, and a
  // row's cursor is signed only for GraphQL edges that select it.
  let rows: { type: StoredType; readonly cursor: string }[] | undefined;
  return {
    types: cached.types,
    cached,
    more: cached.more,
    get nextCursor() {
      return cached.more && last ? cursorOf(last) : null;
    },
    get rows() {
      rows ??= cached.types.map((type) => {
        ctx.loaders.typesSeen.set(type.guid, type);
        return {
          type,
          get cursor() {
            return cursorOf(type);
          },
        };
      });
      return rows;
    },
  };
}

/** A page of types as the model cache keeps it; `restBody` is its REST answer, serialised on first use. */
export interface CachedTypePage {
  types: StoredType[];
  more: boolean;
  restBody?: Buffer;
}

/** The type a normalised name resolves to, through the model cache. */
function typeByName(ctx: RequestContext, key: string): Promise<StoredType | null> {
  const tenant = ctx.viewer.tenant;
  return ctx.services.model.read(ctx.modelScope, 'type_name', key, (run) =>
    findTypeByName(run, tenant, key, typeGuid(tenant, key)),
  );
}

/** Resolves a guid in the caller's tenant; a guid of another tenant behaves exactly like an unknown one. */
export async function getEntityType(ctx: RequestContext, guid: string): Promise<StoredType> {
  const found = await ctx.services.model.read(ctx.modelScope, 'type', guid, (run) =>
    findTypeByGuid(run, ctx.viewer.tenant, guid),
  );
  if (!found) throw unknownType();
  return found;
}

export async function findEntityTypeByName(ctx: RequestContext, rawName: string): Promise<StoredType | null> {
  return typeByName(ctx, nameKey(cleanName(rawName)));
}

export const assertUserDefined = (t: StoredType, verb: string) => {
  if (t.origin !== 'user_defined') {
    throw refuse(
      'type_not_user_defined',
      `Only user-defined types can be ${verb}; "${t.name}" is ${t.origin}.`,
    );
  }
};

/**
 * Renames a user-defined type. Its guid does not change (references keep pointing at it), and the name it was
 * created under keeps resolving to it, because its guid was derived from that name.
 */
export async function renameEntityType(
  ctx: RequestContext,
  guid: string,
  rawName: string,
  options: { ifVersion?: VersionCondition } = {},
) {
  const tenant = ctx.viewer.tenant;
  const name = cleanName(rawName);
  const key = nameKey(name);
  // A rename to the name the type has, spelt the same, changes nothing and writes nothing (no change record, no new
  // model version, no key stored): the type is the answer (if it is at the version the caller holds).
  const now = await ctx.db.readOne((run) => findTypeByGuid(run, tenant, guid));
  if (now && now.origin === 'user_defined' && now.name === name) {
    if (options.ifVersion !== undefined && !meets(options.ifVersion, now.version)) {
      throw preconditionFailed(now.version);
    }
    return now;
  }
  try {
    const renamed = await ctx.db.write(async (run) => {
      await requireTypeVersion(run, tenant, guid, options.ifVersion, true);
      const current = await findTypeByGuid(run, tenant, guid);
      if (!current) throw unknownType();
      assertUserDefined(current, 'renamed');
      const holder = await findTypeByName(run, tenant, key, typeGuid(tenant, key));
      if (holder && holder.guid !== guid) throw nameTaken(name, key, holder);
      if (!holder && MANAGED_TYPES.has(key)) {
        throw refuse('type_instances_managed', `The name "${name}" belongs to a managed type.`);
      }
      const change = changeBy(ctx, {
        kind: 'type_renamed',
        before: { name: current.name },
        after: { name },
      });
      return renameType(run, tenant, guid, name, key, formerNamesAfter(current, key), change);
    });
    if (!renamed) throw unknownType();
    return renamed;
  } catch (e) {
    if (e instanceof ConstraintViolation) {
      // Another writer took the name meanwhile: say which type holds it now.
      const holder = await ctx.db
        .readOne((run) => findTypeByName(run, tenant, key, typeGuid(tenant, key)))
        .catch(() => null);
      throw nameTaken(name, key, holder && holder.guid !== guid ? holder : null);
    }
    throw e;
  }
}

/**
 * Deletes a user-defined type. Its live attribute definitions are withdrawn (their values are purged); entities
 * of the type keep their type guid, so recreating the name (same guid) makes them point at it again. A type that
 * live references of other types target is kept.
 */
export async function deleteEntityType(
  ctx: RequestContext,
  guid: string,
  options: { ifVersion?: VersionCondition } = {},
) {
  const tenant = ctx.viewer.tenant;
  await ctx.db.write(async (run) => {
    await requireTypeVersion(run, tenant, guid, options.ifVersion, true);
    const current = await findTypeByGuid(run, tenant, guid);
    if (!current) throw unknownType();
    assertUserDefined(current, 'deleted');
    const referencing = await findReferencingAttributes(run, tenant, guid);
    if (referencing.length > 0) {
      throw refuse(
        'type_referenced',
        `Live attribute definitions reference this type (${referencing.map((r) => r.name).join(', ')}); withdraw them first.`,
      );
    }
    const withdrawn = await withdrawAllOfType(run, tenant, guid);
    const { guid: _guid, ...row } = toEntityTypeRow(current);
    const change = changeBy(ctx, {
      kind: 'type_deleted',
      before: { ...row, withdrawn_attributes: withdrawn },
      after: null,
    });
    await deleteType(run, tenant, guid, typeGuid(tenant, current.name_key), change);
  });
  ctx.db.afterCommit(() => {
    ctx.services.engineCache.invalidate(tenant, guid);
    ctx.services.purger.kick();
  });
  return { guid, deleted: true };
}
