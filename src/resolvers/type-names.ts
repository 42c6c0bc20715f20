// A type's names as the rules speak of them: the former names a rename leaves, and the type a held name resolves to,
// as refusals name it (rename's type_name_taken, a release's name_not_held).

import type { StoredType } from '../db/entity-types.js';
import { refuse } from '../errors.js';
import { keptFormerNames } from '../model/limits.js';
import { nameKey } from '../model/names.js';

/**
 * A type's former names after a rename to `key`: the name it leaves first (unless only its spelling changes), then
 * those it had before, without the one it takes back; most recent first, as many as a type keeps (keptFormerNames).
 */
export function formerNamesAfter(current: StoredType, key: string, at = new Date().toISOString()) {
  const before = current.former_names ?? [];
  const left = current.name_key === key ? [] : [{ name: current.name, left_at: at }];
  return keptFormerNames([
    ...left,
    ...before.filter((f) => nameKey(f.name) !== key && nameKey(f.name) !== current.name_key),
  ]);
}

/**
 * type_name_taken, naming the type that holds the name (DATA.holder; GraphQL: extensions.holder): its guid, its
 * current name, and whether the name is that type's current name or a former one (the name it was created under,
 * which keeps resolving to it after a rename).
 */
export function nameTaken(name: string, key: string, holder: StoredType | null) {
  if (!holder) return refuse('type_name_taken', `The name "${name}" already resolves to another type.`);
  const held = holderOf(holder, key);
  return refuse(
    'type_name_taken',
    held.held_as === 'current_name'
      ? `The name "${name}" is the name of another type (${holder.guid}).`
      : `The name "${name}" is a former name of the type "${holder.name}" (${holder.guid}): it was created under it, and the name still resolves to it.`,
  ).with({ holder: held });
}

/**
 * The type a name `key` resolves to, as a refusal names it (DATA.holder; GraphQL: extensions.holder): its guid, its
 * current name, and whether the name is that name or a former one.
 */
export function holderOf(holder: StoredType, key: string) {
  return {
    guid: holder.guid,
    name: holder.name,
    held_as: holder.name_key === key ? ('current_name' as const) : ('former_name' as const),
  };
}
