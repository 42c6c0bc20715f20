// A request's connection may close at any point of its life: while a hook awaits (a token verified, a tenant set up),
// while it waits for a turn, while it runs. Whatever a request holds (an admission turn, a key's turn) is given back
// on close, so a listener must run even when the close came first: 'close' is emitted once, and a listener added
// later never hears it. (A pipelined request's answer, queued behind the ones before it, has no socket of its own
// yet: its request's is the connection.)
import type { ServerResponse } from 'node:http';

/** Whether the response's connection has closed (a client gone, or the answer sent and the response done). */
export const isClosed = (res: ServerResponse): boolean =>
  res.destroyed || (res.socket ?? res.req?.socket)?.destroyed === true;

/** Runs `fn` once the response closes, or now if it already has. */
export function whenClosed(res: ServerResponse, fn: () => void): void {
  if (isClosed(res)) fn();
  else res.once('close', fn);
}
