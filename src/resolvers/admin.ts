// Operator operations: allowed to administrators of the default tenant and to cross-tenant accounts.
import type { RequestContext } from '../context.js';
import { refuse } from '../errors.js';

export function assertOperator(ctx: RequestContext) {
  const { viewer, services } = ctx;
  const defaultTenantAdmin = viewer.roles.has('admin') && viewer.tenant === services.config.DEFAULT_TENANT;
  if (!defaultTenantAdmin && !viewer.crossTenant) {
    throw refuse.notAuthorized('Only administrators of the default tenant may do this.');
  }
}

/** Runs the daily purge now, over every tenant or only `tenant`. */
export async function runPurgeNow(ctx: RequestContext, tenant?: unknown) {
  assertOperator(ctx);
  if (tenant !== undefined && tenant !== null && (typeof tenant !== 'string' || tenant === '')) {
    throw refuse.badRequest('invalid_field', '"tenant" must be a tenant id.');
  }
  const report = await ctx.services.purger.runDailyJob(typeof tenant === 'string' ? { tenant } : {});
  if (report.skipped)
    throw refuse.conflict('purge_already_running', 'Another instance is running the purge now.');
  return report;
}

export function engineCacheDiagnostic(ctx: RequestContext) {
  assertOperator(ctx);
  const cache = ctx.services.engineCache;
  return { ...cache.stats(), cached: cache.describe() };
}
