// Who makes a change: what every metamodel write records with it (db/changes.ts), taken from the request.
import type { RequestContext } from '../context.js';
import { type ChangeAuthor, type ChangeFacts, type ChangeRecord, changeParams } from '../db/changes.js';
import { refuse } from '../errors.js';
import { displayProblem } from '../model/text.js';

export const authorOf = (ctx: RequestContext): ChangeAuthor => ({
  actor: ctx.viewer.subject,
  requestId: ctx.requestId,
  reason: ctx.changeReason ?? null,
});

/** The parameters that make a statement record `facts` as a change by this request's caller. */
export const changeBy = (ctx: RequestContext, facts: ChangeFacts): ChangeRecord =>
  changeParams(authorOf(ctx), facts);

/** Most characters a change's reason holds. */
export const CHANGE_REASON_MAX = 500;

/**
 * Records why the caller makes this request's changes (the X-Change-Reason header, a GraphQL mutation's `reason`):
 * 1 to CHANGE_REASON_MAX characters once trimmed, well-formed, no control or invisible characters (model/text.ts; a
 * header's: visible ASCII and spaces, as headers carry text). Refused with invalid_change_reason otherwise; nothing (undefined, null) says nothing.
 */
export function sayWhy(ctx: RequestContext, raw: unknown, header = false) {
  if (raw === undefined || raw === null) return;
  const invalid = () =>
    refuse(
      'invalid_change_reason',
      `A change's reason is 1 to ${CHANGE_REASON_MAX} characters once trimmed, without control or invisible characters${header ? ' (in a header: visible ASCII and spaces)' : ''}.`,
    );
  if (typeof raw !== 'string') throw invalid();
  const text = raw.trim();
  // (Past twice the limit in UTF-16 units, a text holds more than the limit in characters: not counted one by one.)
  const tooLong = text.length > 2 * CHANGE_REASON_MAX || [...text].length > CHANGE_REASON_MAX;
  if (text.length === 0 || tooLong || displayProblem(text) !== undefined) throw invalid();
  if (header && !/^[\x20-\x7e]+$/.test(text)) throw invalid();
  ctx.changeReason = text;
}
