// The request's id: the x-request-id a caller (a gateway, a load balancer) sends is kept when well formed, so its id
// reaches the logs, the change records, the spans and Neo4j's transaction metadata; otherwise the service makes one.

export const REQUEST_ID_HEADER = 'x-request-id';
/** Characters of a kept request id at most (a UUID is 36, a trace id 32, AWS's X-Amzn-Trace-Id about 40). */
export const REQUEST_ID_MAX = 128;

/**
 * What a kept id may hold: letters, digits and `-._:=+/`, starting with a letter or digit. No space, quote or
 * control character (it is logged and stored as it is); a compact JWS or JWE (dot-separated base64url segments, the
 * first a JSON header) is refused as well, so that a token pasted into the header is not kept as an id.
 */
const WELL_FORMED = new RegExp(`^[A-Za-z0-9][A-Za-z0-9._:=+/-]{0,${REQUEST_ID_MAX - 1}}$`);
const SEGMENTS = /^([A-Za-z0-9_-]+)(\.[A-Za-z0-9_-]*){2,4}$/;

const looksLikeToken = (id: string) => {
  const first = SEGMENTS.exec(id)?.[1];
  return (
    first !== undefined && Buffer.from(first, 'base64url').toString('latin1').trimStart().startsWith('{')
  );
};

/** The id the request is known by: the caller's when it sent one well-formed x-request-id, else `make()`. */
export function requestIdOf(sent: string | string[] | undefined, make: () => string): string {
  if (typeof sent !== 'string' || !WELL_FORMED.test(sent) || looksLikeToken(sent)) return make();
  return sent;
}
