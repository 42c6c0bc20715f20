// Development tokens: the one implementation behind `npm run token` (scripts/token.ts) and `metamodel token`
// (cli/src/main.ts). Signed with AUTH_JWT_SECRET, or else with the development secret in .data/dev-secret (made
// on first use), so it runs only inside a checkout of the service.
import { loadOrCreateDevSecret } from './dev-secret.js';
import { mintToken } from './tokens.js';

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
): Promise<string> {
  if (!args.tenant) throw new TokenArgumentError('--tenant is required.');
  const secret = env.AUTH_JWT_SECRET?.trim() || loadOrCreateDevSecret();
  try {
    return await mintToken(secret, {
      tenant: args.tenant,
      roles: args.role ?? [],
      crossTenant: args['cross-tenant'] === true,
      ...(args.sub ? { sub: args.sub } : {}),
      ...(args.expires ? { expiresIn: args.expires } : {}),
    });
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
