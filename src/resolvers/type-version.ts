// Conditional writes of a type (If-Match, GraphQL ifVersion): a write given a version runs only while the type is
// at one of them, checked first in its transaction, under the type's lock, so that of two writers holding the same
// version exactly one wins.
import { etagOf, meets, type VersionCondition } from '../contract/type-version.js';
import { readTypeVersion } from '../db/entity-types.js';
import type { Run } from '../db/run.js';
import { refuse } from '../errors.js';

/** The refusal of a write given a version the type no longer has: the current one in DATA (and the ETag header). */
export const preconditionFailed = (version: string) =>
  refuse(
    'precondition_failed',
    `The type has changed since the version sent: it is at ${version} now. Read it again and decide with what it holds.`,
  ).with({ version, etag: etagOf(version) });

/**
 * Refuses (precondition_failed) unless the type is at a version the condition names; nothing to check without a
 * condition. `lock`: in a write transaction, lock the type first, so that nothing changes it before this one ends.
 * A type that does not exist is left to the write's own refusal (unknown_entity_type).
 */
export async function requireTypeVersion(
  run: Run,
  tenant: string,
  guid: string,
  condition: VersionCondition | undefined,
  lock: boolean,
): Promise<void> {
  if (condition === undefined) return;
  await checkVersion(run, tenant, guid, condition, lock);
}

/**
 * Locks the type (in a write transaction) whatever the condition, in the statement that reads its version, then
 * refuses unless the type is at a version the condition names (none: any). For a write that must not run twice at
 * once even when unconditional.
 */
export function lockTypeAt(run: Run, tenant: string, guid: string, condition: VersionCondition | undefined) {
  return checkVersion(run, tenant, guid, condition, true);
}

async function checkVersion(
  run: Run,
  tenant: string,
  guid: string,
  condition: VersionCondition | undefined,
  lock: boolean,
) {
  const version = await readTypeVersion(run, tenant, guid, lock);
  if (condition !== undefined && version !== null && !meets(condition, version))
    throw preconditionFailed(version);
}
