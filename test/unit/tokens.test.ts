// Token verification with its cache of verified tokens: a token is checked once, then remembered by its hash until it
// expires; the cache never makes a token valid that verification would refuse.
import { SignJWT } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  createTokenVerifier,
  MAX_SUBJECT_LENGTH,
  mintToken,
  VERIFIED_CACHE_SIZE,
} from '../../src/auth/tokens.js';

const SECRET = 'unit-secret-that-is-long-enough-0123456789';
const verify = () => createTokenVerifier({ jwtSecret: SECRET });

afterEach(() => {
  vi.useRealTimers();
});

describe('createTokenVerifier', () => {
  it('answers the same viewer for the same token, checked once', async () => {
    const verifier = verify();
    const token = await mintToken(SECRET, { tenant: 'acme', roles: ['admin'] });
    const first = await verifier(`Bearer ${token}`);
    const second = await verifier(`bearer ${token}`);
    expect(second).toBe(first); // remembered, not verified again
    expect(first).toMatchObject({ tenant: 'acme', subject: 'dev-acme' });
    expect([...first.roles]).toEqual(['admin']);
  });

  it(`takes a subject of ${MAX_SUBJECT_LENGTH} characters and refuses a longer one or one not well-formed (every change records it)`, async () => {
    expect(MAX_SUBJECT_LENGTH).toBe(256);
    const verifier = verify();
    const at = await mintToken(SECRET, { tenant: 'acme', sub: '字'.repeat(MAX_SUBJECT_LENGTH) });
    expect((await verifier(`Bearer ${at}`)).subject).toHaveLength(MAX_SUBJECT_LENGTH);
    const astral = await mintToken(SECRET, { tenant: 'acme', sub: '😀'.repeat(MAX_SUBJECT_LENGTH) });
    expect([...(await verifier(`Bearer ${astral}`)).subject]).toHaveLength(MAX_SUBJECT_LENGTH);
    for (const sub of ['a'.repeat(MAX_SUBJECT_LENGTH + 1), '😀'.repeat(MAX_SUBJECT_LENGTH + 1), 'x\ud800']) {
      const over = await mintToken(SECRET, { tenant: 'acme', sub });
      await expect(verifier(`Bearer ${over}`)).rejects.toMatchObject({ reason: 'unauthenticated' });
    }
  });

  it('refuses a remembered token once it has expired', async () => {
    const verifier = verify();
    const token = await mintToken(SECRET, { tenant: 'acme', expiresIn: '60s' });
    await verifier(`Bearer ${token}`);
    vi.useFakeTimers({ now: Date.now() + 61_000, toFake: ['Date'] });
    await expect(verifier(`Bearer ${token}`)).rejects.toMatchObject({ reason: 'unauthenticated' });
  });

  it('keeps refusing a forged token, whatever was verified before (the cache is keyed by the whole token)', async () => {
    const verifier = verify();
    const token = await mintToken(SECRET, { tenant: 'acme' });
    await verifier(`Bearer ${token}`);
    const [header, , signature] = token.split('.');
    const otherPayload = Buffer.from(JSON.stringify({ sub: 'x', tenant: 'other', exp: 4e9 })).toString(
      'base64url',
    );
    await expect(verifier(`Bearer ${header}.${otherPayload}.${signature}`)).rejects.toMatchObject({
      reason: 'unauthenticated',
    });
    const wrongKey = await new SignJWT({ tenant: 'acme' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('x')
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode('another-secret-that-is-long-enough-012345'));
    await expect(verifier(`Bearer ${wrongKey}`)).rejects.toMatchObject({ reason: 'unauthenticated' });
  });

  it(`remembers at most ${VERIFIED_CACHE_SIZE.toLocaleString('en-US')} tokens, the oldest out first`, async () => {
    expect(VERIFIED_CACHE_SIZE).toBe(10_000);
    const verifier = createTokenVerifier({ jwtSecret: SECRET, verifiedCacheSize: 3 });
    const header = async (i: number) => `Bearer ${await mintToken(SECRET, { tenant: `t${i}` })}`;
    const first = await header(0);
    const remembered = await verifier(first);
    for (const i of [1, 2]) await verifier(await header(i)); // 3 in all: the first is still there
    expect(await verifier(first)).toBe(remembered);
    await verifier(await header(3)); // one more: the oldest goes
    const again = await verifier(first);
    expect(again).not.toBe(remembered);
    expect(again).toEqual(remembered);
  });

  it('does not remember a refusal: a valid token after a refused one is accepted', async () => {
    const verifier = verify();
    await expect(verifier('Bearer not.a.token')).rejects.toMatchObject({ reason: 'unauthenticated' });
    const token = await mintToken(SECRET, { tenant: 'acme' });
    await expect(verifier(`Bearer ${token}`)).resolves.toMatchObject({ tenant: 'acme' });
  });
});
