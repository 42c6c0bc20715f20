// Who makes a change: what every metamodel write records with it (db/changes.ts), taken from the request.
import type { RequestContext } from '../context.js';
import { type ChangeAuthor, type ChangeFacts, type ChangeRecord, changeParams } from '../db/changes.js';

export const authorOf = (ctx: RequestContext): ChangeAuthor => ({
  actor: ctx.viewer.subject,
  requestId: ctx.requestId,
});

/** The parameters that make a statement record `facts` as a change by this request's caller. */
export const changeBy = (ctx: RequestContext, facts: ChangeFacts): ChangeRecord =>
  changeParams(authorOf(ctx), facts);
