// The in-memory log ring behind GET /admin/logs: keeps the newest lines in order, skips what is not JSON, filters.
import { describe, expect, it } from 'vitest';
import {
  boundLogLine,
  createLogger,
  LogRing,
  MAX_LOG_LINE_CHARS,
  MAX_LOG_MESSAGE_CHARS,
  scrubTokens,
} from '../../src/telemetry/logging.js';

const line = (level: number, time: number, msg: string) => JSON.stringify({ level, time, msg });

describe('LogRing', () => {
  it('keeps the newest `capacity` lines, oldest first, and skips lines that are not JSON', () => {
    const ring = new LogRing(3);
    expect(ring.query({}).entries).toEqual([]);
    for (let i = 1; i <= 5; i += 1) ring.write(line(30, i, `m${i}`));
    expect(ring.query({}).entries.map((e) => e.msg)).toEqual(['m3', 'm4', 'm5']);
    ring.write('not json');
    expect(ring.query({}).entries.map((e) => e.msg)).toEqual(['m4', 'm5']);
  });

  it('filters by level and time and returns at most `limit`, the newest', () => {
    const ring = new LogRing(10);
    ring.write(line(30, 1, 'info'));
    ring.write(line(40, 2, 'warn'));
    ring.write(line(50, 3, 'error'));
    expect(ring.query({ minLevel: 40 }).entries.map((e) => e.msg)).toEqual(['warn', 'error']);
    expect(ring.query({ since: 2, until: 2 }).entries.map((e) => e.msg)).toEqual(['warn']);
    const limited = ring.query({ limit: 1 });
    expect(limited).toEqual({ total: 3, entries: [expect.objectContaining({ msg: 'error' })] });
  });
});

describe('scrubTokens', () => {
  const b64 = (s: string) => Buffer.from(s).toString('base64url');

  it('removes JWT-shaped strings and bearer credentials from a line', () => {
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl';
    expect(scrubTokens(`{"a":"${jwt}","b":"Bearer abc.def"}`)).toBe('{"a":"[redacted]","b":"[redacted]"}');
  });

  it('recognises any compact JWS or JWE, whatever its header looks like', () => {
    for (const header of [
      '{ "alg": "HS256" }',
      '\n{"typ":"JWT","alg":"RS256"}',
      '{"kid":"k1","alg":"ES256"}',
    ]) {
      const jws = `${b64(header)}.${b64('{"sub":"x"}')}.${b64('signature')}`;
      expect(scrubTokens(`token=${jws};`)).toBe('token=[redacted];');
      const unsecured = `${b64(header)}.${b64('{"sub":"x"}')}.`;
      expect(scrubTokens(`"${unsecured}"`)).toBe('"[redacted]"');
      const jwe = [header, 'key', 'iv', 'ciphertext', 'tag'].map(b64).join('.');
      expect(scrubTokens(jwe)).toBe('[redacted]');
    }
  });

  it('scrubs a long line in linear time (no backtracking blow-up on long base64 runs)', () => {
    const long = `${'A'.repeat(200_000)} ${'b.'.repeat(50_000)}`;
    const started = performance.now();
    expect(scrubTokens(long)).toBe(long);
    expect(performance.now() - started).toBeLessThan(500);
  });

  it('finds a token however a URL spells it: percent-encoded, after Bearer%20, dots as %2E, glued to text', () => {
    const jwt = `${b64('{"alg":"HS256","typ":"JWT"}')}.${b64('{"sub":"x","tenant":"t"}')}.${b64('signature-bytes')}`;
    const [h, p, sig] = jwt.split('.') as [string, string, string];
    const everyCharacter = [...jwt].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');
    for (const shape of [
      `/entities/types/by-name/Bearer%20${jwt}`,
      `/entities/types/by-name/bearer+${jwt}`,
      `/x/${h}%2E${p}%2e${sig}`,
      `/x/${h}%252E${p}%252E${sig}`,
      `/x/${everyCharacter}`,
      `/x/abc${jwt}`,
      `/x/0${jwt}`,
      // a token as the last part of a longer dotted run, whatever comes before it
      `/nonexistent/abcdefgh.${jwt}`,
      `/entities/types/by-name/release-notes.${jwt}`,
      `/x/notes_2024.${jwt}`,
      `/x/v1.2.3-release.${jwt}`,
      `/x/a1234567.b.c.d.e.f.${jwt}`,
      `/x/abcdefgh.xyz${jwt}`,
      // escaped four and nine times over
      `/x/${h}%2525252E${p}%2525252E${sig}`,
      `/x/${h}%${'25'.repeat(8)}2E${p}%${'25'.repeat(8)}2E${sig}`,
    ]) {
      const scrubbed = scrubTokens(JSON.stringify({ url: shape }));
      expect(scrubbed, shape).not.toContain(sig);
      expect(scrubbed, shape).not.toContain(p);
      expect(JSON.parse(scrubbed).url, shape).toContain('[redacted]');
    }
    // an escaped quote stays escaped: the line stays JSON
    const quoted = JSON.stringify({ url: '/x/%22%5C' });
    expect(JSON.parse(scrubTokens(quoted))).toEqual({ url: '/x/%22%5C' });
  });

  it('looks for a glued header in bounded time, whatever the run', () => {
    const run = `${'A1'.repeat(100_000)}eyJhbGciOi.${'ew'.repeat(100_000)}.x`;
    const started = performance.now();
    expect(scrubTokens(run)).toBe(`${'A1'.repeat(100_000)}[redacted]`);
    const plain = `${'Ab'.repeat(100_000)}.${'cd'.repeat(100_000)}.x`;
    expect(scrubTokens(plain)).toBe(plain);
    expect(performance.now() - started).toBeLessThan(500);
  });

  it('leaves dotted names that are not tokens alone', () => {
    const text = 'at /work/main/node_modules/fastify/lib/route.js and entity-types.graphql.test.ts';
    expect(scrubTokens(text)).toBe(text);
  });
});

describe('bounded log lines', () => {
  it('a line over MAX_LOG_LINE_CHARS becomes a short line with its level, time, length and first characters', () => {
    const line = `${JSON.stringify({ level: 50, time: 1234, msg: 'x'.repeat(MAX_LOG_LINE_CHARS) })}\n`;
    const cut = JSON.parse(boundLogLine(line));
    expect(cut).toMatchObject({
      level: 50,
      time: 1234,
      msg: expect.stringContaining(`${line.length} characters`),
    });
    expect(cut.head.length).toBeLessThanOrEqual(2_000);
    const short = `${JSON.stringify({ level: 30, time: 1, msg: 'ok' })}\n`;
    expect(boundLogLine(short)).toBe(short);
  });

  it('a logger keeps message strings under MAX_LOG_MESSAGE_CHARS and lines under MAX_LOG_LINE_CHARS, in its ring too', () => {
    const ring = new LogRing();
    const logger = createLogger({ level: 'info', ring, stdout: false });
    logger.error('"'.repeat(4 * 1024 * 1024));
    logger.error({ details: ['y'.repeat(1024 * 1024)] }, 'a message beside a megabyte');
    logger.error({ err: new Error('z'.repeat(1024 * 1024)) }, 'an error of a megabyte');
    const { entries } = ring.query({});
    expect(entries).toHaveLength(3);
    expect(String(entries[0]?.msg).length).toBeLessThanOrEqual(MAX_LOG_MESSAGE_CHARS);
    for (const entry of entries) expect(JSON.stringify(entry).length).toBeLessThan(MAX_LOG_LINE_CHARS);
    expect(String((entries[2]?.err as { message?: string } | undefined)?.message).length).toBeLessThanOrEqual(
      MAX_LOG_MESSAGE_CHARS,
    );
  });
});
