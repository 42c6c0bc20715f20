// The dashboards feature: writes dashboard catalog rows and sets up the managed `dashboard` type on the first.
import type { RequestContext } from '../context.js';
import { recordChangeAlone } from '../db/changes.js';
import { mergeManagedEntity } from '../db/entities.js';
import { findNonSystemTypeForName, mergeManagedType } from '../db/entity-types.js';
import { refuse } from '../errors.js';
import { cleanName, nameKey, typeGuid } from '../model/names.js';
import { DASHBOARD_TYPE } from '../model/system-types.js';
import { changeBy } from './change-author.js';

export function assertPlatform(ctx: RequestContext) {
  if (!ctx.viewer.roles.has('platform'))
    throw refuse.notAuthorized('Only the platform may write dashboard rows.');
}

export async function writeDashboardRow(ctx: RequestContext, rawName: string) {
  assertPlatform(ctx);
  const tenant = ctx.viewer.tenant;
  const name = cleanName(rawName);
  const typeKey = nameKey(DASHBOARD_TYPE.name);
  const guid = typeGuid(tenant, typeKey);
  return ctx.db.write(async (run) => {
    // A caller's own `dashboard` type from before the managed-type release blocks the feature while it exists.
    const legacy = await findNonSystemTypeForName(run, tenant, typeKey, guid);
    if (legacy) {
      throw refuse(
        'managed_type_blocked',
        'A user-defined "dashboard" type exists in this tenant; the platform adds no dashboards while it does.',
      );
    }
    const type = await mergeManagedType(run, tenant, { key: typeKey, guid, props: DASHBOARD_TYPE });
    const key = nameKey(name);
    const row = await mergeManagedEntity(run, tenant, type.type.guid, `dashboard:${key}`, name, key);
    // Setting the type up (or bringing it in step) changes what metamodel reads return; a row alone does not.
    if (type.changed) {
      const change = changeBy(ctx, { kind: 'managed_type_set_up', before: type.before, after: type.after });
      await recordChangeAlone(run, tenant, type.type.guid, change);
    }
    return { entity: row.entity, created: row.created, type: type.type, typeSetUp: type.created };
  });
}
