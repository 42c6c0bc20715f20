// What a person at a terminal reads: the log format chosen for stdout, the banner once ready, and the level each line
// of the local Neo4j's own output is logged at.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { startupBanner } from '../../src/app/banner.js';
import { ConfigError, parseConfig } from '../../src/config.js';
import { eachLine } from '../../src/db/local-neo4j.js';
import { neo4jOutputLevel } from '../../src/db/local-neo4j-service.js';
import { chooseLogFormat } from '../../src/telemetry/logging.js';

describe('the log format of stdout', () => {
  it('is pretty at a terminal outside production, JSON lines everywhere else (pipes, CI, containers, production)', () => {
    expect(chooseLogFormat({ NODE_ENV: 'development' }, true)).toBe('pretty');
    expect(chooseLogFormat({ NODE_ENV: 'test' }, true)).toBe('pretty');
    expect(chooseLogFormat({ NODE_ENV: 'development' }, false)).toBe('json');
    expect(chooseLogFormat({ NODE_ENV: 'production' }, true)).toBe('json');
    expect(chooseLogFormat({ NODE_ENV: 'production' }, false)).toBe('json');
  });

  it('is what LOG_FORMAT says when it is set, whatever stdout is', () => {
    expect(chooseLogFormat({ NODE_ENV: 'development', LOG_FORMAT: 'json' }, true)).toBe('json');
    expect(chooseLogFormat({ NODE_ENV: 'production', LOG_FORMAT: 'pretty' }, false)).toBe('pretty');
  });

  it('LOG_FORMAT is json, pretty or unset (empty is unset); anything else is refused', () => {
    expect(parseConfig({ LOG_FORMAT: 'pretty' }).LOG_FORMAT).toBe('pretty');
    expect(parseConfig({ LOG_FORMAT: 'json' }).LOG_FORMAT).toBe('json');
    expect(parseConfig({ LOG_FORMAT: '' }).LOG_FORMAT).toBeUndefined();
    expect(parseConfig({}).LOG_FORMAT).toBeUndefined();
    expect(() => parseConfig({ LOG_FORMAT: 'yaml' })).toThrow(ConfigError);
  });
});

describe('the start-up banner', () => {
  it('names the address, /docs, /graphql, /healthz and the command that mints a development token', () => {
    const banner = startupBanner({ NODE_ENV: 'development', HOST: '127.0.0.1' }, 4000);
    for (const part of [
      'http://127.0.0.1:4000/docs',
      'http://127.0.0.1:4000/graphql',
      'http://127.0.0.1:4000/healthz',
      'npm run token -- --tenant <name>',
    ]) {
      expect(banner).toContain(part);
    }
  });

  it('points a browser at loopback for a wildcard listener, and brackets an IPv6 host', () => {
    expect(startupBanner({ NODE_ENV: 'development', HOST: '0.0.0.0' }, 80)).toContain(
      'http://127.0.0.1:80/docs',
    );
    expect(startupBanner({ NODE_ENV: 'test', HOST: '::1' }, 4000)).toContain('http://[::1]:4000/graphql');
  });

  it('is not shown in production', () => {
    expect(startupBanner({ NODE_ENV: 'production', HOST: '0.0.0.0' }, 4000)).toBeUndefined();
  });
});

describe("the local Neo4j's output, as log lines", () => {
  it('logs its errors as errors, its warnings and other stderr lines as warnings, its ordinary output as debug', () => {
    expect(neo4jOutputLevel('NEO4J_READY bolt://127.0.0.1:7687', 'stdout')).toBe('debug');
    expect(neo4jOutputLevel('Exception in thread "main" java.lang.RuntimeException: boom', 'stderr')).toBe(
      'error',
    );
    expect(neo4jOutputLevel('Caused by: java.net.BindException: Address already in use', 'stderr')).toBe(
      'error',
    );
    expect(neo4jOutputLevel('2026-12-08 01:00:00.000+0000 ERROR Failed to start', 'stdout')).toBe('error');
    expect(neo4jOutputLevel('2026-12-08 01:00:00.000+0000 WARN  Low memory', 'stdout')).toBe('warn');
    expect(neo4jOutputLevel('OpenJDK 64-Bit Server VM warning: Sharing is only supported', 'stderr')).toBe(
      'warn',
    );
    expect(neo4jOutputLevel('\tat org.neo4j.Foo.bar(Foo.java:1)', 'stderr')).toBe('warn');
  });
});

describe("the local Neo4j's output, cut into lines", () => {
  it('gives one line per line, whatever the chunks (a stack trace in one chunk, a line across two, the last unended)', async () => {
    const stream = new PassThrough();
    const lines: string[] = [];
    eachLine(stream, (line) => lines.push(line));
    stream.write('Exception in thread "main" java.net.BindException\n\tat a.B.c(B.java:1)\n\tat d.');
    stream.write('E.f(E.java:2)\r\nCaused by: x');
    stream.end();
    await new Promise((resolve) => stream.once('end', resolve));
    expect(lines).toEqual([
      'Exception in thread "main" java.net.BindException',
      '\tat a.B.c(B.java:1)',
      '\tat d.E.f(E.java:2)',
      'Caused by: x',
    ]);
  });
});
