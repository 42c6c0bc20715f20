// How the door storm runs the service: as a replica runs (the Kubernetes manifest's heap flag and memory limit, the
// ConfigMap's settings, the image's allocator setting), with the storm's own settings beside them. The storm
// (bench/door-storm.ts) starts its service with them, and the doors' integration test
// (test/integration/door-storm.test.ts) configures its app with the same settings.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { STORM_KEY_CAP } from './door-shapes.js';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

/** The container's memory limit in the manifest (`limits: memory: …Mi`), in MB: what kills a replica. */
export function memoryLimitMb(): number {
  const mi = /limits:\s+memory:\s*(\d+)Mi\b/.exec(read('deploy/kubernetes/deployment.yaml'))?.[1];
  if (mi === undefined) throw new Error('deploy/kubernetes/deployment.yaml states no memory limit in Mi');
  return (Number(mi) * 1024 * 1024) / 1e6;
}

/**
 * The storm's own configuration beside the manifest's: a low key cap, so that one shape reaches it; its proxy trusted,
 * so that each of its connections is a client of its own (X-Forwarded-For); a shorter time to
 * take an answer (4 s + 0.2 s a MiB, 10.6 s for the 33 MB plan, against 10 s + 1 s a MiB), so that the slow readers'
 * shape reaches it within the run.
 */
export const STORM_ENV = {
  IDEMPOTENCY_TENANT_MAX_KEYS: String(STORM_KEY_CAP),
  // The storm's clients all come from this machine, each connection naming its own address, as behind an ingress.
  TRUSTED_PROXIES: '127.0.0.1',
  HTTP_ANSWER_TIMEOUT_MS: '4000',
  HTTP_ANSWER_MS_PER_MIB: '200',
};

/** The manifest's heap flag, the configuration and the image's allocator setting: what a replica runs with. */
export function productionSettings() {
  const deployment = read('deploy/kubernetes/deployment.yaml');
  const flags = /name: NODE_OPTIONS\s+value: (.+)/.exec(deployment)?.[1]?.trim().split(/\s+/) ?? [];
  if (!flags.some((f) => f.startsWith('--max-old-space-size'))) {
    throw new Error('deploy/kubernetes/deployment.yaml sets no --max-old-space-size in NODE_OPTIONS');
  }
  const configMap = read('deploy/kubernetes/configmap.yaml');
  const env: Record<string, string> = {};
  for (const name of ['MODEL_CACHE_MAX_MB', 'GRAPHQL_CONCURRENCY', 'REQUEST_MEMORY_MB']) {
    const m = new RegExp(`^\\s+${name}: "?([^"\\n]+)"?`, 'm').exec(configMap);
    if (m?.[1]) env[name] = m[1];
  }
  // The image's allocator settings (the Dockerfile's ENV): the process's memory as a replica's.
  for (const m of read('Dockerfile').matchAll(/\b(MALLOC_[A-Z_]+)=(\d+)/g)) {
    env[m[1] as string] = m[2] as string;
  }
  return { flags, env };
}
