// Which methods a path is served with, so that a request naming a known path with another method is answered
// 405 method_not_allowed with an Allow header (RFC 9110 §15.5.6), and an unknown path 404, before its body is read.
import FindMyWay from 'find-my-way';

export interface RouteMethods {
  /** Methods the path is served with; empty when no route matches it. */
  allowed(path: string): string[];
}

/** A router mirroring the app's routes (method + pattern), used only to ask which methods match a path. */
export function routeMethods(routes: readonly { method: string; url: string }[], maxParamLength: number) {
  const router = FindMyWay({ maxParamLength, ignoreTrailingSlash: false });
  const methods = new Set<string>();
  for (const { method, url } of routes) {
    if (!router.hasRoute(method as FindMyWay.HTTPMethod, url)) {
      router.on(method as FindMyWay.HTTPMethod, url, () => {});
    }
    methods.add(method);
  }
  return {
    allowed(path: string) {
      return [...methods].filter((m) => router.find(m as FindMyWay.HTTPMethod, path) !== null).sort();
    },
  } satisfies RouteMethods;
}
