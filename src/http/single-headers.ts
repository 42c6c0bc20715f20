// Headers the service honours that carry one value (Authorization, Content-Type, Idempotency-Key, X-Change-Reason,
// Neo4j-Bookmark): sent twice, the request is refused by the reader of each, never read as one of them. Node joins
// most repeated headers into one ("a, b", which would be stored so as a change's reason) and keeps only the first of
// others (Authorization, Content-Type), so what the client sent is read from every line of it.
import type { IncomingMessage } from 'node:http';

/** The header as sent: undefined when absent, its one value, or every value when sent more than once. */
export function sentHeader(raw: IncomingMessage, name: string): string | string[] | undefined {
  // (rawHeaders alternates names and values, as sent; a request has at most Node's header count of them)
  const lines = raw.rawHeaders;
  let first: string | undefined;
  let all: string[] | undefined;
  for (let i = 0; i + 1 < lines.length; i += 2) {
    if ((lines[i] as string).toLowerCase() !== name) continue;
    const value = lines[i + 1] as string;
    if (first === undefined) first = value;
    else if (all === undefined) all = [first, value];
    else all.push(value);
  }
  return all ?? first;
}
