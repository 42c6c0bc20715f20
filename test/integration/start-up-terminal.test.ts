// What `npm start` shows a person at a terminal: readable lines (LOG_FORMAT=pretty, as a terminal outside production
// chooses), and once ready the banner that says where to open the service and how to mint a token.
import { type ChildProcess, spawn } from 'node:child_process';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { TEST_SECRET } from '../helpers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the service at a terminal', () => {
  let server: ChildProcess | undefined;
  afterAll(() => {
    server?.kill('SIGKILL');
  });

  it('writes pretty lines, not JSON, and once ready one banner line naming /docs, /graphql, /healthz and npm run token', async () => {
    server = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      env: {
        ...process.env,
        PORT: '0',
        NEO4J_URI: inject('neo4jUri'),
        AUTH_JWT_SECRET: TEST_SECRET,
        NODE_ENV: 'development',
        LOG_LEVEL: 'info',
        LOG_FORMAT: 'pretty',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    server.stdout?.on('data', (d) => {
      stdout += d;
    });
    for (let i = 0; i < 240 && !stdout.includes('Ready at'); i++) await sleep(250);
    const lines = stdout.split('\n').filter((line) => line.trim() !== '');
    const banners = lines.filter((line) => line.includes('Ready at'));
    expect(banners).toHaveLength(1);
    const banner = banners[0] as string;
    const base = /Ready at (http:\/\/127\.0\.0\.1:\d+)/.exec(banner)?.[1];
    expect(base).toBeDefined();
    for (const part of [
      `${base}/docs`,
      `${base}/graphql`,
      `${base}/healthz`,
      'npm run token -- --tenant <name>',
    ]) {
      expect(banner).toContain(part);
    }
    expect(banner).toMatch(/INFO/);
    expect(lines.some((line) => line.startsWith('{'))).toBe(false);
    // the banner comes once the service answers as ready
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    const exited = new Promise((resolve) => server?.once('exit', resolve));
    server.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 90_000);
});
