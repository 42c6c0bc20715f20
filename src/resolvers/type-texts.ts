// A type's texts for people: its description and display name, set over REST (PATCH /entities/types/{guid}), GraphQL
// (describeEntityType) and a model document, with the rules of a definition's (resolvers/declaration.ts).

import type { RequestContext } from '../context.js';
import type { VersionCondition } from '../contract/type-version.js';
import { describeType, findTypeByGuid, type StoredType } from '../db/entity-types.js';
import type { Run } from '../db/run.js';
import { bodyObject, refuse } from '../errors.js';
import { MAX_DESCRIPTION_LENGTH, MAX_DISPLAY_NAME_LENGTH } from '../model/limits.js';
import { changeBy } from './change-author.js';
import { optionalText } from './declaration.js';
import { lockTypeAt } from './type-version.js';

export interface TypeTexts {
  description: string | null;
  display_name: string | null;
}

/** Whether a body says anything of a type's texts (a PATCH may rename, describe, or both). */
export const saysTexts = (body: Record<string, unknown>) =>
  body.description !== undefined || body.display_name !== undefined;

/**
 * The texts `sent` asks for, merged onto the type's: a field sent replaces the stored one (null or empty removes it),
 * a field left out is kept; each checked as a definition's (invalid_field).
 */
export function textsOf(current: Pick<StoredType, 'description' | 'display_name'>, sent: unknown): TypeTexts {
  const body = bodyObject(sent);
  const kept = (field: 'description' | 'display_name') =>
    body[field] === undefined ? { [field]: current[field] ?? null } : body;
  return {
    description: optionalText(kept('description'), 'description', MAX_DESCRIPTION_LENGTH, true),
    display_name: optionalText(kept('display_name'), 'display_name', MAX_DISPLAY_NAME_LENGTH, false),
  };
}

/**
 * Sets a type's description and display name (`sent`: `{description?, display_name?}`). Any type may carry them (a
 * system type holding your definitions too: an export lists it). Changing nothing writes nothing.
 */
export async function describeEntityType(
  ctx: RequestContext,
  guid: string,
  sent: unknown,
  options: { ifVersion?: VersionCondition } = {},
): Promise<StoredType> {
  const tenant = ctx.viewer.tenant;
  const work = async (run: Run) => {
    await lockTypeAt(run, tenant, guid, options.ifVersion);
    const current = await findTypeByGuid(run, tenant, guid);
    if (!current) throw refuse('unknown_entity_type', 'No entity type has this guid.');
    const texts = textsOf(current, sent);
    const was = { description: current.description ?? null, display_name: current.display_name ?? null };
    const changed = (['description', 'display_name'] as const).filter((f) => texts[f] !== was[f]);
    if (changed.length === 0) return current;
    const side = (from: TypeTexts) => ({
      name: current.name,
      ...Object.fromEntries(changed.map((f) => [f, from[f]])),
    });
    const change = changeBy(ctx, { kind: 'type_described', before: side(was), after: side(texts) });
    const described = await describeType(run, tenant, guid, texts, change);
    if (!described) throw refuse('unknown_entity_type', 'No entity type has this guid.');
    return described;
  };
  return ctx.db.write(work);
}
