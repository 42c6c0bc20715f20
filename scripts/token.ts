// Prints a dev bearer token: npm run token -- --tenant T [--role admin] [--role platform] [--cross-tenant] [--sub S]
// The same implementation as `metamodel token` (src/auth/dev-token.ts).
import { parseArgs } from 'node:util';
import { mintDevToken, TOKEN_ARGUMENTS, TOKEN_OPTIONS, TokenArgumentError } from '../src/auth/dev-token.js';

try {
  const { values } = parseArgs({ options: TOKEN_OPTIONS });
  console.log(await mintDevToken(values, process.env, (source) => console.error(`Signed with ${source}.`)));
} catch (err) {
  const usage =
    err instanceof TokenArgumentError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
  if (!usage) throw err;
  console.error(`error: ${(err as Error).message}\nusage: npm run token -- ${TOKEN_ARGUMENTS}`);
  process.exit(2);
}
