// Which methods a path is served with, so that a request naming a known path with another method is answered
// 405 method_not_allowed with an Allow header (RFC 9110 §15.5.6), and an unknown path 404, before its body is read.
import FindMyWay from 'find-my-way';

/** Longest path segment the router matches (names may be 256 characters, more once percent-encoded). */
export const MAX_PARAM_LENGTH = 4096;

export interface RouteMethods {
  /** Methods the path is served with; empty when no route matches it. */
  allowed(path: string): string[];
}

/** Static segments of a route pattern: `/entities/lookup` 2, `/entities/:guid` 1. */
const staticSegments = (url: string) => url.split('/').filter((s) => s !== '' && !/^[:*]/.test(s)).length;

/**
 * A router mirroring the app's routes (method + pattern), used only to ask which methods match a path. Where
 * several patterns match (`POST /entities/lookup`, `GET /entities/:guid`), the path is the resource of the most
 * specific one: Allow lists that pattern's methods, not those of a parameter that happens to match too.
 */
export function routeMethods(routes: readonly { method: string; url: string }[], maxParamLength: number) {
  const router = FindMyWay({ maxParamLength, ignoreTrailingSlash: false });
  const methods = new Set<string>();
  for (const { method, url } of routes) {
    if (!router.hasRoute(method as FindMyWay.HTTPMethod, url)) {
      router.on(method as FindMyWay.HTTPMethod, url, () => {}, { url });
    }
    methods.add(method);
  }
  return {
    allowed(path: string) {
      const matches: { method: string; specificity: number }[] = [];
      for (const method of methods) {
        const found = router.find(method as FindMyWay.HTTPMethod, path);
        if (found)
          matches.push({ method, specificity: staticSegments((found.store as { url: string }).url) });
      }
      const best = Math.max(...matches.map((m) => m.specificity));
      return matches
        .filter((m) => m.specificity === best)
        .map((m) => m.method)
        .sort();
    },
  } satisfies RouteMethods;
}
