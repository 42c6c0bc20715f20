// Prints a dev bearer token: npm run token -- --tenant T [--role admin] [--role platform] [--cross-tenant] [--sub S]
import { parseArgs } from 'node:util';
import { loadOrCreateDevSecret } from '../src/auth/dev-secret.js';
import { mintToken } from '../src/auth/tokens.js';

const { values } = parseArgs({
  options: {
    tenant: { type: 'string' },
    role: { type: 'string', multiple: true },
    'cross-tenant': { type: 'boolean' },
    sub: { type: 'string' },
    expires: { type: 'string' },
  },
});

if (!values.tenant) {
  console.error(
    'usage: npm run token -- --tenant T [--role admin] [--role platform] [--cross-tenant] [--sub S] [--expires 12h]',
  );
  process.exit(2);
}
const secret = process.env.AUTH_JWT_SECRET?.trim() || loadOrCreateDevSecret();
const token = await mintToken(secret, {
  tenant: values.tenant,
  roles: values.role ?? [],
  crossTenant: values['cross-tenant'] === true,
  ...(values.sub ? { sub: values.sub } : {}),
  ...(values.expires ? { expiresIn: values.expires } : {}),
});
console.log(token);
