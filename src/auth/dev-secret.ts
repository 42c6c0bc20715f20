// The development signing secret used when AUTH_JWT_SECRET is unset: made once, kept in .data/dev-secret.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export function devSecretPath(root = process.cwd()): string {
  return path.join(root, '.data', 'dev-secret');
}

export function loadOrCreateDevSecret(root = process.cwd()): string {
  const file = devSecretPath(root);
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(path.dirname(file), { recursive: true });
  const secret = randomBytes(32).toString('base64url');
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  return secret;
}
