import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/config.js';

describe('configuration', () => {
  it('has the CONTRACT.md defaults', () => {
    const c = parseConfig({});
    expect(c).toMatchObject({
      PORT: 4000,
      HOST: '127.0.0.1',
      DEFAULT_TENANT: 'default',
      PURGE_CRON: '0 3 * * *',
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
});
