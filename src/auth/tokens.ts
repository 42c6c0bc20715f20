// Bearer token verification (jose) and dev token minting. Claims: sub, tenant, roles, cross_tenant.
import { createHash } from 'node:crypto';
import { createRemoteJWKSet, decodeProtectedHeader, type JWTPayload, jwtVerify, SignJWT } from 'jose';
import { refuse } from '../errors.js';
import { identifierProblem } from '../model/text.js';

/** Who is asking: the token's subject, its tenant and roles (docs/api.md#authentication-tenancy-and-the-envelope). */
export interface Viewer {
  subject: string;
  tenant: string;
  roles: ReadonlySet<string>;
  crossTenant: boolean;
}

export interface AuthSettings {
  jwtSecret?: string | undefined;
  /** Verified tokens remembered at most (VERIFIED_CACHE_SIZE; smaller in tests). */
  verifiedCacheSize?: number;
  jwksUrl?: string | undefined;
  issuer?: string | undefined;
  audience?: string | undefined;
}

export type TokenVerifier = ((authorization: string | undefined) => Promise<Viewer>) & {
  /** The viewer of a token verified already and still remembered (no signature checked), else undefined. */
  remembered(authorization: string | undefined): Viewer | undefined;
};

const MAX_TENANT_LENGTH = 128;
/**
 * Longest subject a token may carry (characters). Every change a caller makes records its subject, and a page of
 * the history carries it on each of up to 500 rows: unbounded, a 16 KB token's subject would make a page's rows
 * alone megabytes past the page's stated size.
 */
export const MAX_SUBJECT_LENGTH = 256;
const MAX_TOKEN_LENGTH = 16_384;

function toViewer(payload: JWTPayload): Viewer {
  const { sub, tenant, roles, cross_tenant: crossTenant } = payload as Record<string, unknown>;
  if (typeof sub !== 'string' || sub.length === 0) throw refuse.unauthenticated('The token has no subject.');
  // (At most MAX_SUBJECT_LENGTH UTF-16 units has at most as many characters: counted only when longer.)
  if (sub.length > MAX_SUBJECT_LENGTH && [...sub].length > MAX_SUBJECT_LENGTH) {
    throw refuse.unauthenticated(`The token's subject is longer than ${MAX_SUBJECT_LENGTH} characters.`);
  }
  if (typeof tenant !== 'string' || tenant.trim().length === 0 || tenant.length > MAX_TENANT_LENGTH) {
    throw refuse.unauthenticated('The token has no valid tenant claim.');
  }
  // Identifiers are compared exactly as stored: a lone surrogate (stored as U+FFFD) would make two tenants one.
  for (const [claim, value] of [
    ['subject', sub],
    ['tenant', tenant],
  ] as const) {
    const problem = identifierProblem(value);
    if (problem) throw refuse.unauthenticated(`The token's ${claim} ${problem}.`);
  }
  if (
    roles !== undefined &&
    !(Array.isArray(roles) && roles.every((r) => typeof r === 'string' && identifierProblem(r) === undefined))
  ) {
    throw refuse.unauthenticated('The roles claim must be an array of strings.');
  }
  if (crossTenant !== undefined && typeof crossTenant !== 'boolean') {
    throw refuse.unauthenticated('The cross_tenant claim must be a boolean.');
  }
  return {
    subject: sub,
    tenant,
    roles: new Set((roles as string[] | undefined) ?? []),
    crossTenant: crossTenant === true,
  };
}

/** Tokens whose verification is remembered, and the longest it is remembered (a key rotation takes effect then). */
export const VERIFIED_CACHE_SIZE = 10_000;
const VERIFIED_CACHE_MS = 5 * 60_000;

/**
 * Tokens already verified, by the SHA-256 of the token (the token itself is not kept), each until its expiry or for
 * VERIFIED_CACHE_MS, whichever is sooner; the oldest out first past VERIFIED_CACHE_SIZE. A client sends the same
 * token on every request: verifying it once spares the signature check (WebCrypto, a promise round and most of the
 * CPU authentication cost) on the others.
 */
class VerifiedTokens {
  private readonly entries = new Map<string, { viewer: Viewer; until: number }>();

  constructor(private readonly size: number) {}

  get(key: string): Viewer | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.until > Date.now()) return entry.viewer;
    this.entries.delete(key);
    return undefined;
  }

  set(key: string, viewer: Viewer, expiresAtSeconds: number | undefined) {
    const now = Date.now();
    const until = Math.min(
      now + VERIFIED_CACHE_MS,
      expiresAtSeconds === undefined ? Infinity : expiresAtSeconds * 1000,
    );
    if (until <= now) return;
    if (this.entries.size >= this.size) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(key, { viewer, until });
  }
}

export function createTokenVerifier(settings: AuthSettings): TokenVerifier {
  const secret = settings.jwtSecret ? new TextEncoder().encode(settings.jwtSecret) : undefined;
  const jwks = settings.jwksUrl ? createRemoteJWKSet(new URL(settings.jwksUrl)) : undefined;
  const claims = {
    ...(settings.issuer ? { issuer: settings.issuer } : {}),
    ...(settings.audience ? { audience: settings.audience } : {}),
  };

  const verified = new VerifiedTokens(settings.verifiedCacheSize ?? VERIFIED_CACHE_SIZE);
  const tokenOf = (authorization: string | undefined) => {
    const token = /^bearer +([A-Za-z0-9_\-.]+)$/i.exec(authorization?.trim() ?? '')?.[1];
    return token && token.length <= MAX_TOKEN_LENGTH ? token : undefined;
  };
  const keyOf = (token: string) => createHash('sha256').update(token).digest('base64');
  const verify = async (authorization: string | undefined) => {
    const token = tokenOf(authorization);
    if (!token) throw refuse.unauthenticated();
    const key = keyOf(token);
    const known = verified.get(key);
    if (known) return known;
    let payload: JWTPayload;
    try {
      const { alg } = decodeProtectedHeader(token);
      if (alg === 'HS256' && secret) {
        ({ payload } = await jwtVerify(token, secret, { algorithms: ['HS256'], ...claims }));
      } else if ((alg === 'RS256' || alg === 'ES256') && jwks) {
        ({ payload } = await jwtVerify(token, jwks, { algorithms: ['RS256', 'ES256'], ...claims }));
      } else {
        throw new Error('unsupported algorithm');
      }
    } catch (err) {
      throw unverified(err);
    }
    const viewer = toViewer(payload);
    verified.set(key, viewer, payload.exp);
    return viewer;
  };
  return Object.assign(verify, {
    remembered: (authorization: string | undefined) => {
      const token = tokenOf(authorization);
      return token ? verified.get(keyOf(token)) : undefined;
    },
  });
}

/** The refusal of a token whose verification failed: an expired one (its signature held) is told so. */
function unverified(err: unknown) {
  // jose checks the claims only once the signature holds: an expired token is one of ours, and may be told so.
  if ((err as { code?: unknown }).code === 'ERR_JWT_EXPIRED') {
    const exp = (err as { payload?: JWTPayload }).payload?.exp;
    const when = typeof exp === 'number' ? ` at ${new Date(exp * 1000).toISOString()}` : '';
    return refuse.unauthenticated(
      `The token expired${when}: get a new one from its issuer (in development: npm run -s metamodel -- token --tenant <tenant>, in the service's checkout).`,
    );
  }
  return refuse.unauthenticated('The token is malformed, expired or badly signed.');
}

export interface DevTokenClaims {
  tenant: string;
  sub?: string;
  roles?: string[];
  crossTenant?: boolean;
  expiresIn?: string | number;
}

export async function mintToken(secret: string, claims: DevTokenClaims): Promise<string> {
  const jwt = new SignJWT({
    tenant: claims.tenant,
    roles: claims.roles ?? [],
    ...(claims.crossTenant ? { cross_tenant: true } : {}),
  })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.sub ?? `dev-${claims.tenant}`)
    .setIssuedAt()
    .setExpirationTime(claims.expiresIn ?? '12h');
  return jwt.sign(new TextEncoder().encode(secret));
}
