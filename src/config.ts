// The only reader of process.env: parses it once with zod into a frozen, typed configuration.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';

const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v));

/**
 * Curation writes (entity creates) end within this time, fixed rather than configured: a purge pass begun at least
 * this long after a withdrawal sees every value written before it, so PURGE_GRACE_SECONDS may not be shorter.
 */
export const CURATION_TX_TIMEOUT_MS = 30_000;

const fields = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(4000),
  HOST: z.string().min(1).default('127.0.0.1'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** How stdout's lines are written; unset: pretty at a terminal outside production, else JSON (logging.ts). */
  LOG_FORMAT: optionalString.pipe(z.enum(['json', 'pretty']).optional()),
  NEO4J_URI: optionalString.pipe(
    z
      .string()
      .regex(/^(bolt|neo4j)(\+s|\+ssc)?:\/\//, 'a bolt:// or neo4j:// URI')
      .optional(),
  ),
  NEO4J_USER: optionalString,
  NEO4J_PASSWORD: optionalString,
  NEO4J_DATABASE: optionalString,
  /** How long opening a Neo4j connection may take: what a request waits at most for an unreachable database. */
  NEO4J_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(2_000),
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
  /** Most open client connections; further ones are closed at once (a last line against connection floods). */
  HTTP_MAX_CONNECTIONS: z.coerce.number().int().min(1).max(1_000_000).default(1024),
  /**
   * Requests that come without a token verified already (unknown paths, public pages, a new or a bad token), per
   * second, from one client address and from all: past either, 429 rate_limited before any work is spent on them.
   */
  UNVERIFIED_PER_ADDRESS_PER_SECOND: z.coerce.number().int().min(1).max(1_000_000).default(50),
  UNVERIFIED_PER_SECOND: z.coerce.number().int().min(1).max(10_000_000).default(1_000),
  /**
   * Proxies (addresses or CIDR ranges, comma-separated) whose X-Forwarded-For names the client's address; from any
   * other peer the header is ignored. Unset: none.
   */
  TRUSTED_PROXIES: optionalString.pipe(
    z
      .string()
      .transform((v) =>
        v
          .split(',')
          .map((a) => a.trim())
          .filter((a) => a !== ''),
      )
      .optional(),
  ),
  /** Time a client has to send the request line and headers. */
  HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  /** Time a client has to send a whole body, and the longest pause between two of its chunks. */
  HTTP_BODY_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  HTTP_BODY_IDLE_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  /**
   * The least rate a body must keep up (KiB a second, after a grace in ms): a body is cut (408) once it has taken
   * longer than the grace plus a second for each HTTP_BODY_MIN_KIB_PER_SECOND KiB of it that arrived.
   */
  HTTP_BODY_GRACE_MS: z.coerce.number().int().min(100).max(600_000).default(5_000),
  HTTP_BODY_MIN_KIB_PER_SECOND: z.coerce.number().int().min(0).max(1_048_576).default(32),
  /**
   * Time a client has to take an answer of more than a socket's buffer: the first, plus the second a MiB of it; then
   * the connection is closed (whatever its request holds is given back).
   */
  HTTP_ANSWER_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  HTTP_ANSWER_MS_PER_MIB: z.coerce.number().int().min(0).max(600_000).default(1_000),
  /** GraphQL operations executed at once per process (shared fairly between tenants), and the longest wait for one. */
  GRAPHQL_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(4),
  GRAPHQL_QUEUE_TIMEOUT_MS: z.coerce.number().int().min(1).max(600_000).default(10_000),
  /** Wall-clock time a GraphQL query may run once it executes (its database reads get what is left). */
  GRAPHQL_QUERY_TIMEOUT_MS: z.coerce.number().int().min(1).max(60_000).default(2_000),
  /**
   * Memory (MiB) the requests running at once may hold together: bodies as they arrive, heavy doors what they state
   * (a tenant at most half); the rest wait their turn (fairness/admission.ts). Unset: derived from the heap and the container's
   * memory limit (app/memory.ts).
   */
  REQUEST_MEMORY_MB: z.coerce.number().int().min(16).max(65_536).optional(),
  /**
   * Requests one tenant runs at once (its further requests wait their turn, before their body is read): one
   * tenant's flood then holds only this much of the event loop and the database, whatever route it floods.
   */
  TENANT_CONCURRENCY: z.coerce.number().int().min(1).max(10_000).default(8),
  /**
   * Requests running at once, all tenants together (0: no limit, the default: memory and the tenants' turns bound
   * them); past it they wait their turn, fairly between tenants. A tenant alone may take all of them:
   * TENANT_CONCURRENCY holds a tenant only while another tenant runs or waits.
   */
  REQUEST_CONCURRENCY: z.coerce.number().int().min(0).max(100_000).default(0),
  ADMISSION_QUEUE_TIMEOUT_MS: z.coerce.number().int().min(1).max(600_000).default(10_000),
  /** OTLP/HTTP collector for traces (its /v1/traces is posted to); tracing is off when unset (src/telemetry/tracing.ts). */
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalString.pipe(z.url().optional()),
  OTEL_SERVICE_NAME: z.string().min(1).default('entity-metamodel'),
  /** Origins (scheme://host[:port], comma-separated) whose browsers may call the API cross-origin; none by default. */
  CORS_ORIGINS: optionalString.pipe(
    z
      .string()
      .transform((v) =>
        v
          .split(',')
          .map((o) => o.trim())
          .filter((o) => o !== ''),
      )
      .pipe(z.array(z.url({ protocol: /^https?$/ }).regex(/^[^/]+\/\/[^/]+$/, 'an origin, without a path')))
      .optional(),
  ),
  /**
   * How long (ms) a replica serves a tenant's metamodel reads from memory after a version read began, without reading
   * the version again; a write that changes the model is acknowledged only once this (plus 5 ms) has passed since it
   * committed (cache/version-reader.ts). Every replica must use the same value. 0: every read reads the version.
   */
  MODEL_READ_LEASE_MS: z.coerce.number().int().min(0).max(1_000).default(25),
  /**
   * Memory for metamodel reads served from memory, in MiB: two thirds for the model cache (pages, types, listings),
   * one third for the engine cache (definitions read by entity writes). Estimated, least recently used out first.
   */
  MODEL_CACHE_MAX_MB: z.coerce.number().int().min(1).max(65_536).default(96),
  /**
   * What one tenant's Idempotency-Keys may hold at once (each is kept 24 h): keys, and MiB of stored answers. Past
   * either, a request with a new key is refused (idempotency_keys_exhausted, 429).
   */
  IDEMPOTENCY_TENANT_MAX_KEYS: z.coerce.number().int().min(1).max(10_000_000).default(10_000),
  IDEMPOTENCY_TENANT_MAX_MB: z.coerce.number().int().min(1).max(1_000_000).default(64),
  /** Lets a scraper read GET /metrics with `Authorization: Bearer <METRICS_TOKEN>` (operators' tokens work too). */
  METRICS_TOKEN: optionalString.pipe(z.string().min(32, 'at least 32 characters').optional()),
});

/**
 * Rules across variables. In production: tokens must be verifiable (a secret or a JWKS URL); cursors and bookmarks
 * must verify on every instance and after restarts, so their key is CURSOR_SECRET or the token secret, never made up
 * per process; and no purge pass may count as final while a curation write begun before the withdrawal can still
 * commit. Elsewhere (development, tests, the load test) a shorter grace is allowed, so a run sees names freed.
 */
const schema = fields.superRefine((c, ctx) => {
  if (c.NODE_ENV !== 'production') return;
  if (!c.AUTH_JWT_SECRET && !c.AUTH_JWKS_URL) {
    ctx.addIssue({
      code: 'custom',
      path: ['AUTH_JWT_SECRET'],
      message: 'AUTH_JWT_SECRET or AUTH_JWKS_URL must be set in production',
    });
  }
  if (!c.AUTH_JWT_SECRET && !c.CURSOR_SECRET) {
    ctx.addIssue({
      code: 'custom',
      path: ['CURSOR_SECRET'],
      message: 'must be set in production when AUTH_JWT_SECRET is not',
    });
  }
  if (c.PURGE_GRACE_SECONDS * 1000 < CURATION_TX_TIMEOUT_MS) {
    ctx.addIssue({
      code: 'custom',
      path: ['PURGE_GRACE_SECONDS'],
      message: `at least ${CURATION_TX_TIMEOUT_MS / 1000} (the curation transaction timeout) in production`,
    });
  }
});

export type Config = Readonly<z.infer<typeof schema>>;

/**
 * The key cursors and bookmarks are signed with: CURSOR_SECRET, else one derived from the token secret (the same on
 * every instance), else, outside production only (the schema refuses it there), a key made up for this process.
 */
export const cursorKeyOf = (config: Config, jwtSecret = config.AUTH_JWT_SECRET): string =>
  config.CURSOR_SECRET ?? `cursor:${jwtSecret ?? randomUUID()}`;

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
