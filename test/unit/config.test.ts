import { describe, expect, it } from 'vitest';
import { ConfigError, CURATION_TX_TIMEOUT_MS, cursorKeyOf, parseConfig } from '../../src/config.js';

describe('configuration', () => {
  it('has the documented defaults (docs/operations.md)', () => {
    const c = parseConfig({});
    expect(c).toMatchObject({
      PORT: 4000,
      HOST: '127.0.0.1',
      DEFAULT_TENANT: 'default',
      PURGE_CRON: '0 3 * * *',
      TENANT_CONCURRENCY: 8,
      REQUEST_CONCURRENCY: 0,
    });
    expect(c.NEO4J_URI).toBeUndefined();
    expect(Object.isFrozen(c)).toBe(true);
  });
  it('reports one line per bad variable', () => {
    try {
      parseConfig({ PORT: 'eighty', NEO4J_URI: 'http://x', AUTH_JWT_SECRET: 'short' });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      const problems = (e as ConfigError).problems;
      expect(problems).toHaveLength(3);
      expect(problems.join('\n')).toMatch(/PORT/);
      expect(problems.join('\n')).toMatch(/NEO4J_URI/);
      expect(problems.join('\n')).toMatch(/AUTH_JWT_SECRET/);
    }
  });
  it('treats empty variables as unset', () => {
    expect(parseConfig({ NEO4J_URI: '', AUTH_JWT_SECRET: ' ' }).NEO4J_URI).toBeUndefined();
  });
  it('NEO4J_CONNECT_TIMEOUT_MS: 2000 by default, 100 to 60000 accepted, refused just outside', () => {
    expect(parseConfig({}).NEO4J_CONNECT_TIMEOUT_MS).toBe(2_000);
    for (const ms of [100, 101, 59_999, 60_000]) {
      expect(parseConfig({ NEO4J_CONNECT_TIMEOUT_MS: String(ms) }).NEO4J_CONNECT_TIMEOUT_MS).toBe(ms);
    }
    for (const ms of ['99', '60001', '1.5', 'soon']) {
      expect(() => parseConfig({ NEO4J_CONNECT_TIMEOUT_MS: ms })).toThrow(ConfigError);
    }
  });

  describe('rules across variables, in production', () => {
    const secret = 's'.repeat(32);
    const problemsOf = (env: NodeJS.ProcessEnv) => {
      try {
        parseConfig(env);
        return [];
      } catch (e) {
        return (e as ConfigError).problems;
      }
    };
    it('a production start needs a way to verify tokens', () => {
      expect(problemsOf({ NODE_ENV: 'production' }).join('\n')).toMatch(/AUTH_JWT_SECRET or AUTH_JWKS_URL/);
      expect(problemsOf({ NODE_ENV: 'production', AUTH_JWT_SECRET: secret })).toEqual([]);
    });
    it('and, with JWKS only, a CURSOR_SECRET: cursors must verify on every instance and after restarts', () => {
      const jwks = { NODE_ENV: 'production', AUTH_JWKS_URL: 'https://idp.example/jwks.json' };
      expect(problemsOf(jwks)).toEqual([
        '  CURSOR_SECRET: must be set in production when AUTH_JWT_SECRET is not',
      ]);
      expect(problemsOf({ ...jwks, CURSOR_SECRET: secret })).toEqual([]);
    });
    it('PURGE_GRACE_SECONDS no shorter than the curation transaction timeout (shorter allowed outside production)', () => {
      const prod = { NODE_ENV: 'production', AUTH_JWT_SECRET: secret };
      const floor = String(CURATION_TX_TIMEOUT_MS / 1000);
      expect(problemsOf({ ...prod, PURGE_GRACE_SECONDS: floor })).toEqual([]);
      expect(problemsOf({ ...prod, PURGE_GRACE_SECONDS: String(Number(floor) - 1) })).toEqual([
        `  PURGE_GRACE_SECONDS: at least ${floor} (the curation transaction timeout) in production`,
      ]);
      expect(parseConfig({ NODE_ENV: 'test', PURGE_GRACE_SECONDS: '0' }).PURGE_GRACE_SECONDS).toBe(0);
    });
  });
  it('signs cursors with CURSOR_SECRET, else with a key derived from the token secret (the same on every instance)', () => {
    const secret = 's'.repeat(32);
    const other = 't'.repeat(32);
    expect(cursorKeyOf(parseConfig({ CURSOR_SECRET: other, AUTH_JWT_SECRET: secret }))).toBe(other);
    const derived = cursorKeyOf(parseConfig({ AUTH_JWT_SECRET: secret }));
    expect(derived).toBe(cursorKeyOf(parseConfig({ AUTH_JWT_SECRET: secret })));
    expect(derived).not.toBe(secret);
    expect(cursorKeyOf(parseConfig({}))).not.toBe(cursorKeyOf(parseConfig({})));
  });
});
