// The only reader of process.env: parses it once with zod into a frozen, typed configuration.
import { z } from 'zod';

const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v));

const schema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(4000),
  HOST: z.string().min(1).default('127.0.0.1'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  NEO4J_URI: optionalString.pipe(
    z
      .string()
      .regex(/^(bolt|neo4j)(\+s|\+ssc)?:\/\//, 'a bolt:// or neo4j:// URI')
      .optional(),
  ),
  NEO4J_USER: optionalString,
  NEO4J_PASSWORD: optionalString,
  NEO4J_DATABASE: optionalString,
  NEO4J_LOCAL_PORT: z.coerce.number().int().min(1).max(65535).default(7687),
  NEO4J_DATA_DIR: z.string().min(1).default('.data/neo4j'),
  AUTH_JWT_SECRET: optionalString.pipe(z.string().min(32, 'at least 32 characters').optional()),
  AUTH_JWKS_URL: optionalString.pipe(z.url().optional()),
  AUTH_ISSUER: optionalString,
  AUTH_AUDIENCE: optionalString,
  CURSOR_SECRET: optionalString.pipe(z.string().min(32, 'at least 32 characters').optional()),
  DEFAULT_TENANT: z.string().min(1).default('default'),
  PURGE_CRON: z.string().min(1).default('0 3 * * *'),
  PURGE_GRACE_SECONDS: z.coerce.number().int().min(0).max(86_400).default(120),
  PURGE_BATCH_SIZE: z.coerce.number().int().min(1).max(100_000).default(5_000),
  /** Lets a scraper read GET /metrics with `Authorization: Bearer <METRICS_TOKEN>` (operators' tokens work too). */
  METRICS_TOKEN: optionalString.pipe(z.string().min(32, 'at least 32 characters').optional()),
});

export type Config = Readonly<z.infer<typeof schema>>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.join('\n')}`);
  }
}

/** Parses an environment; throws ConfigError with one line per bad variable. */
export function parseConfig(env: NodeJS.ProcessEnv): Config {
  const result = schema.safeParse(env);
  if (!result.success) {
    throw new ConfigError(result.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`));
  }
  return Object.freeze(result.data);
}

export function loadConfig(): Config {
  return parseConfig(process.env);
}
