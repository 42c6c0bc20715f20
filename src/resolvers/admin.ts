// Operator operations: allowed to administrators of the default tenant and to cross-tenant accounts.

import type { RequestContext } from '../context.js';
import { refuse } from '../errors.js';
import type { PurgeProgress } from '../jobs/purge.js';
import { LEVELS } from '../telemetry/logging.js';
import { authorOf } from './change-author.js';

export function assertOperator(ctx: RequestContext) {
  const { viewer, services } = ctx;
  const defaultTenantAdmin = viewer.roles.has('admin') && viewer.tenant === services.config.DEFAULT_TENANT;
  if (!defaultTenantAdmin && !viewer.crossTenant) {
    throw refuse.notAuthorized('Only administrators of the default tenant may do this.');
  }
}

/**
 * Runs the daily purge now, over every tenant or only `tenant`. Refusals (not an operator, a bad tenant, another
 * run holding the lease) come before `onProgress` is first called; after that only a failure of the job itself
 * (storage, unexpected errors) can.
 */
export async function runPurgeNow(
  ctx: RequestContext,
  tenant?: unknown,
  onProgress?: (p: PurgeProgress) => void,
) {
  assertOperator(ctx);
  if (tenant !== undefined && tenant !== null && (typeof tenant !== 'string' || tenant === '')) {
    throw refuse('invalid_field', '"tenant" must be a tenant id.');
  }
  // The operator who runs it by hand is the author of the removals it records.
  const author = authorOf(ctx);
  const report = await ctx.services.purger.runDailyJob(
    typeof tenant === 'string' ? { tenant, author } : { author },
    onProgress,
  );
  if (report.skipped) throw refuse('purge_already_running', 'Another instance is running the purge now.');
  return report;
}

export function engineCacheDiagnostic(ctx: RequestContext) {
  assertOperator(ctx);
  const cache = ctx.services.engineCache;
  const model = ctx.services.model;
  return {
    ...cache.stats(),
    cached: cache.describe(),
    model_cache: { ...model.cache.stats(), tenants_by_size: model.cache.describe() },
    model_versions: model.versions.stats(),
  };
}

/** Recent structured log entries, filtered by minimum level and time. */
export function recentLogs(
  ctx: RequestContext,
  filter: { level?: string; since?: string; until?: string; limit?: string },
) {
  assertOperator(ctx);
  const ring = ctx.services.logRing;
  const minLevel = filter.level === undefined ? undefined : (LEVELS[filter.level] ?? Number(filter.level));
  if (minLevel !== undefined && !Number.isFinite(minLevel)) {
    throw refuse('invalid_field', 'level must be trace, debug, info, warn, error or fatal.');
  }
  const time = (value: string | undefined, field: string) => {
    if (value === undefined) return undefined;
    const ms = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
    if (!Number.isFinite(ms))
      throw refuse('invalid_field', `${field} must be an ISO time or epoch milliseconds.`);
    return ms;
  };
  const limit = filter.limit === undefined ? 100 : Number(filter.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
    throw refuse('invalid_field', 'limit must be an integer from 1 to 1000.');
  }
  return ring.query({
    minLevel,
    since: time(filter.since, 'since'),
    until: time(filter.until, 'until'),
    limit,
  });
}
