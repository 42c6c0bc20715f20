// Prints a dev bearer token: npm run token -- --tenant T [--role admin] [--role platform] [--cross-tenant] [--sub S]
// The same implementation as `metamodel token` (src/cli/token.ts).
import { parseArgs } from 'node:util';
import { UsageError } from '../src/cli/client.js';
import { mintDevToken, TOKEN_ARGUMENTS, TOKEN_OPTIONS } from '../src/cli/token.js';

try {
  const { values } = parseArgs({ options: TOKEN_OPTIONS });
  console.log(await mintDevToken(values));
} catch (err) {
  const usage = err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
  if (!usage) throw err;
  console.error(`error: ${(err as Error).message}\nusage: npm run token -- ${TOKEN_ARGUMENTS}`);
  process.exit(2);
}
