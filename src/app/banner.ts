// The line a person who ran `npm start` reads once the service is ready: where it listens, what to open, and how to
// get a token. Production has no such reader, so it gets no banner.
import type { Config } from '../config.js';

/** The address a browser can open for a listener on `host` (a wildcard address is reached through loopback). */
function browsableHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

/** The start-up banner for a service listening on `port`; undefined in production. */
export function startupBanner(config: Pick<Config, 'NODE_ENV' | 'HOST'>, port: number): string | undefined {
  if (config.NODE_ENV === 'production') return undefined;
  const base = `http://${browsableHost(config.HOST)}:${port}`;
  return (
    `Ready at ${base}: open ${base}/docs (REST reference), ${base}/graphql (GraphiQL), ${base}/healthz. ` +
    'Mint a development token with: npm run token -- --tenant <name> [--role admin]'
  );
}
