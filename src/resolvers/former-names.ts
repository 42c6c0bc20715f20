// Releasing a former name: the name a type was created under stops resolving to it, on purpose.

import type { RequestContext } from '../context.js';
import type { VersionCondition } from '../contract/type-version.js';
import { findTypeByGuid, findTypeByName, releaseTypeName } from '../db/entity-types.js';
import { refuse } from '../errors.js';
import { cleanName, nameKey, releasedNameGuid, typeGuid } from '../model/names.js';
import { changeBy } from './change-author.js';
import { assertUserDefined, unknownType } from './entity-types.js';
import { holderOf } from './type-names.js';
import { lockTypeAt } from './type-version.js';

/**
 * Releases a former name of a type: the name it was created under, which resolves to it after its renames. After it,
 * create-or-get by that name no longer answers this type, and creating the name makes a new type, with a new guid
 * (the old one stays this type's): the one derived from the guid the name resolved to, so that concurrent creates on
 * any instance converge on one type. Allowed to whoever may rename the type. A name that resolves to no type is
 * already free: nothing is written (`released: false`). The type's current name, or a name that resolves to another
 * type, is refused with name_not_held.
 */
export async function releaseFormerName(
  ctx: RequestContext,
  guid: string,
  rawName: string,
  options: { ifVersion?: VersionCondition } = {},
) {
  const tenant = ctx.viewer.tenant;
  const name = cleanName(rawName);
  const key = nameKey(name);
  return ctx.db.write(async (run) => {
    // The type is locked first, condition or not: of two releases of one name at once, the second reads what the
    // first wrote (the name no longer resolves to the type) and writes nothing.
    await lockTypeAt(run, tenant, guid, options.ifVersion);
    const current = await findTypeByGuid(run, tenant, guid);
    if (!current) throw unknownType();
    assertUserDefined(current, 'renamed');
    if (current.name_key === key) {
      throw refuse(
        'name_not_held',
        `"${name}" is the type's current name, not a former one: rename the type first.`,
      ).with({ holder: holderOf(current, key) });
    }
    const holder = await findTypeByName(run, tenant, key, typeGuid(tenant, key));
    if (!holder) return { type: current, released: false };
    if (holder.guid !== guid) {
      throw refuse(
        'name_not_held',
        `The name "${name}" resolves to another type, "${holder.name}" (${holder.guid}), not to this one.`,
      ).with({ holder: holderOf(holder, key) });
    }
    const next = releasedNameGuid(tenant, key, guid);
    const at = new Date().toISOString();
    // The name as the type had it (its former names list it, when it was renamed since they are kept), else as sent.
    let spelt: string | undefined;
    const formerNames = (current.former_names ?? []).map((f) => {
      if (spelt !== undefined || nameKey(f.name) !== key) return f;
      spelt = f.name;
      return { ...f, released_at: at };
    });
    const change = changeBy(ctx, {
      kind: 'type_name_released',
      before: { name: spelt ?? name, guid },
      after: { guid: next },
    });
    const released = await releaseTypeName(run, tenant, guid, key, next, formerNames, change);
    if (!released) throw unknownType();
    return { type: released, released: true };
  });
}
