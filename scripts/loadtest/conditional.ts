// The load test's conditional writes: a third of the declarations and withdrawals send If-Match with the type's ETag
// as the last answer about it said, and the answers are checked: at most one write wins per version sent, and a 412
// names the current version.

import {
  answerCheck,
  bump,
  conditionals,
  conditionalWins,
  type HotType,
  type Pending,
  tenantKey,
} from './state.js';

/**
 * A third of the declarations and withdrawals are conditional: they send the type's ETag as the last answer about it
 * said, as two editors of one type would. Of the writes sent with one version, at most one may succeed.
 */
export function conditional(hot: HotType): { ifMatch?: string } {
  if (hot.etag === undefined || Math.random() >= 1 / 3) return {};
  return { ifMatch: hot.etag };
}

/** What a write about a type says of its version: the ETag to send next, and the conditional writes' checks. */
export function conditionalAnswer(
  p: Pending,
  status: number,
  data: Record<string, unknown>,
  headers: Record<string, string | string[]>,
) {
  const hot = p.hot!;
  const etag = typeof headers.etag === 'string' ? headers.etag : undefined;
  if (etag !== undefined) hot.etag = etag;
  if (p.ifMatch === undefined) return;
  if (status >= 200 && status < 300) {
    conditionals.won += 1;
    const key = tenantKey(hot.guid, p.ifMatch);
    bump(conditionalWins, key);
    answerCheck(
      'one conditional write wins per version',
      conditionalWins.get(key) === 1,
      () => `${p.tenant.id}: a second ${p.op} succeeded on ${hot.guid} at ${p.ifMatch}`,
    );
  } else if (status === 412) {
    conditionals.stale += 1;
    answerCheck(
      '412 names the current version',
      data.reason === 'precondition_failed' && etag !== undefined && etag !== p.ifMatch && data.etag === etag,
      () => `${p.tenant.id}: 412 for ${p.ifMatch} on ${hot.guid} said ${String(data.etag)} (ETag ${etag})`,
    );
  }
}
