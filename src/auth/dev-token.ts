// Development tokens: the one implementation behind `npm run token` (scripts/token.ts) and `metamodel token`
// (cli/src/main.ts). Signed with AUTH_JWT_SECRET, or else with the development secret in .data/dev-secret of the
// service's checkout (made on first use there, as `npm start` does); anywhere else, with no AUTH_JWT_SECRET, it
// refuses: a secret made up elsewhere would sign a token the service refuses.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { decodeJwt } from 'jose';
import { devSecretPath, loadOrCreateDevSecret } from './dev-secret.js';
import { mintToken } from './tokens.js';

/** The roles the service knows (auth/tokens.ts reads them): a token is for an operator, the platform, or neither. */
export const KNOWN_ROLES = ['admin', 'platform'] as const;

/** Whether `dir` is a checkout of the service (where `npm start` makes and reads .data/dev-secret). */
function isServiceCheckout(dir: string) {
  try {
    const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: unknown };
    return pkg.name === 'entity-metamodel-service';
  } catch {
    return false;
  }
}

/** The secret a development token is signed with, and where it comes from (said on stderr by the commands). */
export function devSigningSecret(env: Record<string, string | undefined>, cwd = process.cwd()) {
  const fromEnv = env.AUTH_JWT_SECRET?.trim();
  if (fromEnv) return { secret: fromEnv, source: 'AUTH_JWT_SECRET' };
  const file = devSecretPath(cwd);
  if (existsSync(file) || isServiceCheckout(cwd)) {
    return { secret: loadOrCreateDevSecret(cwd), source: `the development secret in ${file}` };
  }
  throw new TokenArgumentError(
    `No signing secret: set AUTH_JWT_SECRET to the secret the service uses, or run this in the service's checkout (its .data/dev-secret, made by npm start). No token was made: one signed with any other secret would be refused.`,
  );
}

/** The options of both commands, in node:util parseArgs form. */
export const TOKEN_OPTIONS = {
  tenant: { type: 'string' },
  role: { type: 'string', multiple: true },
  'cross-tenant': { type: 'boolean' },
  sub: { type: 'string' },
  expires: { type: 'string' },
} as const;

export const TOKEN_ARGUMENTS =
  '--tenant T [--role admin] [--role platform] [--cross-tenant] [--sub S] [--expires 12h]';

export interface TokenArgs {
  tenant?: string | undefined;
  role?: string[] | undefined;
  'cross-tenant'?: boolean | undefined;
  sub?: string | undefined;
  expires?: string | undefined;
}

/** The arguments cannot make a token (no tenant, an unreadable lifetime): the commands' usage errors. */
export class TokenArgumentError extends Error {
  override name = 'TokenArgumentError';
}

/**
 * Mints a token for the parsed options: claims tenant, roles, cross_tenant (when set), sub (default
 * `dev-<tenant>`), expiring after `expires` (default 12h). A missing tenant or an unreadable lifetime is a
 * TokenArgumentError.
 */
export async function mintDevToken(
  args: TokenArgs,
  env: Record<string, string | undefined> = process.env,
  /** Told where the signing secret comes from (the commands say it on stderr). */
  onSecret?: (source: string) => void,
): Promise<string> {
  if (!args.tenant) throw new TokenArgumentError('--tenant is required.');
  for (const role of args.role ?? []) {
    if (!(KNOWN_ROLES as readonly string[]).includes(role)) {
      throw new TokenArgumentError(`--role must be ${KNOWN_ROLES.join(' or ')}, not "${role}".`);
    }
  }
  if (args.expires !== undefined && /^\s*[+-]?0+(\.0*)?\s*[a-z]*\s*$/i.test(args.expires)) {
    throw new TokenArgumentError(
      `--expires must be a lifetime of at least one second, such as 30m, 12h or 7d, not "${args.expires}".`,
    );
  }
  if (args.expires !== undefined && /^\s*-|\bago\b/i.test(args.expires)) {
    throw new TokenArgumentError(`--expires must be a lifetime in the future, not "${args.expires}".`);
  }
  const { secret, source } = devSigningSecret(env);
  try {
    const token = await mintToken(secret, {
      tenant: args.tenant,
      roles: args.role ?? [],
      crossTenant: args['cross-tenant'] === true,
      ...(args.sub ? { sub: args.sub } : {}),
      ...(args.expires ? { expiresIn: args.expires } : {}),
    });
    // A lifetime that rounds to nothing (0.4s) makes a token already expired when it is printed (zero itself is
    // refused above: jose reads the clock twice, so a second may pass between its iat and exp).
    const { exp, iat } = decodeJwt(token);
    if (exp !== undefined && iat !== undefined && exp <= iat) {
      throw new TokenArgumentError(
        `--expires must be a lifetime of at least one second, such as 30m, 12h or 7d, not "${args.expires}".`,
      );
    }
    onSecret?.(source);
    return token;
  } catch (err) {
    // jose refuses a lifetime it cannot read ("Invalid time period format").
    if (args.expires && err instanceof TypeError) {
      throw new TokenArgumentError(
        `--expires must be a lifetime such as 30m, 12h or 7d, not "${args.expires}".`,
      );
    }
    throw err;
  }
}
