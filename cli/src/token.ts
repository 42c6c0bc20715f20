// `metamodel token`: a development token, minted by the service's own code (src/auth/dev-token.ts, also behind
// `npm run token`) with its development secret, so this one command works only inside a checkout of the service.
import {
  mintDevToken,
  TOKEN_ARGUMENTS,
  TOKEN_OPTIONS,
  TokenArgumentError,
} from '../../src/auth/dev-token.js';
import { UsageError } from './client.js';
import type { Command } from './command.js';
import { json } from './output.js';

export const tokenCommand: Command = {
  path: ['token'],
  args: [],
  options: {
    tenant: { ...TOKEN_OPTIONS.tenant, value: 'T', help: 'tenant claim (required)' },
    role: { ...TOKEN_OPTIONS.role, value: 'R', help: 'a role: admin or platform (repeat for several)' },
    'cross-tenant': { ...TOKEN_OPTIONS['cross-tenant'], help: 'a privileged cross-tenant account' },
    sub: { ...TOKEN_OPTIONS.sub, value: 'S', help: 'subject (default dev-<tenant>)' },
    expires: { ...TOKEN_OPTIONS.expires, value: 'AGE', help: 'lifetime, e.g. 30m, 12h, 7d (default 12h)' },
  },
  service: false,
  synopsis: TOKEN_ARGUMENTS,
  summary: 'Mint a development token (the same as npm run token)',
  description:
    "Prints a bearer token signed with $AUTH_JWT_SECRET or, when that is unset and this runs in the service's\n" +
    'checkout, with its development secret in .data/dev-secret (made on first use, as `npm start` does); says on\n' +
    'stderr which. Anywhere else without AUTH_JWT_SECRET it refuses (a token signed with another secret would be\n' +
    'refused by the service). Roles: admin, platform. For development only.',
  examples: [
    'export METAMODEL_TOKEN=$(metamodel token --tenant acme)',
    'METAMODEL_TOKEN=$(metamodel token --tenant default --role admin) metamodel purge',
  ],
  async run(ctx, _args, values) {
    const token = await mintDevToken(values as Parameters<typeof mintDevToken>[0], ctx.io.env, (source) =>
      ctx.io.err(`Signed with ${source}.\n`),
    ).catch((err) => {
      throw err instanceof TokenArgumentError ? new UsageError(err.message) : err;
    });
    ctx.io.out(ctx.json ? json({ token }) : `${token}\n`);
  },
};
