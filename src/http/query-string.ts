// Query strings read strictly: every percent-escape must decode to UTF-8 text (model/text.ts). The router's default
// parser keeps an escape it cannot decode as its raw text, so `?cursor=%ED%A0%80` (a lone surrogate's bytes) would be
// read as the nine characters "%ED%A0%80" instead of being refused.

/** Marks the query of a request whose query string does not decode: refused with invalid_url (app/auth.ts). */
export const ILL_FORMED_QUERY = Symbol('illFormedQuery');

const decode = (part: string) => decodeURIComponent(part.includes('+') ? part.replaceAll('+', ' ') : part);

/** `a=1&b=x+y&a=2` to `{ a: ['1', '2'], b: 'x y' }` (no prototype), or the ILL_FORMED_QUERY mark. */
export function parseQueryString(text: string): Record<string | symbol, unknown> {
  const query: Record<string, string | string[]> = Object.create(null);
  if (text.length === 0) return query;
  try {
    for (const pair of text.split('&')) {
      if (pair === '') continue;
      const at = pair.indexOf('=');
      const key = decode(at < 0 ? pair : pair.slice(0, at));
      const value = at < 0 ? '' : decode(pair.slice(at + 1));
      const seen = query[key];
      if (seen === undefined) query[key] = value;
      else if (Array.isArray(seen)) seen.push(value);
      else query[key] = [seen, value];
    }
  } catch {
    // (decodeURIComponent throws for an escape that is not UTF-8, a surrogate's included, and for a stray %)
    return { [ILL_FORMED_QUERY]: true };
  }
  return query;
}

/** Whether a request's parsed query carries the ILL_FORMED_QUERY mark. */
export const isIllFormedQuery = (query: unknown) =>
  typeof query === 'object' && query !== null && ILL_FORMED_QUERY in query;
