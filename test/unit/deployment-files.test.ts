// The files for users with Docker (not runnable on this machine, so checked as files): the compose file runs the
// service against a Neo4j 5 server with a configuration the service accepts, and the image gets every package the
// compiled service imports from its production install.
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseConfig } from '../../src/config.js';

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

  it('builds dist/ and starts it with node', () => {
    expect(dockerfile).toMatch(/RUN npm run build/);
    expect(dockerfile).toMatch(/COPY src \.\/src/);
    expect(dockerfile).toMatch(/CMD \["node", "--enable-source-maps", "dist\/server\.js"\]/);
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
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
