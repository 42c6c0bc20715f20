// Structured logs (pino): secrets redacted by path, anything shaped like a bearer token scrubbed from every line,
// URLs logged without their query string, and the most recent entries kept in a ring for GET /admin/logs.
import pino, { type Logger } from 'pino';

const REDACT_PATHS = [
  'authorization',
  'password',
  'token',
  'secret',
  'headers.authorization',
  'req.headers.authorization',
  'req.headers.cookie',
  '*.authorization',
  '*.password',
  '*.token',
  '*.secret',
  '*.AUTH_JWT_SECRET',
  '*.NEO4J_PASSWORD',
  '*.CURSOR_SECRET',
];

// A bearer credential, or a compact JWS/JWE (JWT): base64url segments joined by dots (three, or five for JWE),
// the first of which decodes to a JSON object (the protected header), however it is spelt ({"alg"…, { "alg"…,
// with a newline…). The header decides, so dotted names (file.name.ts) are left alone.
const BEARER = /Bearer\s+[A-Za-z0-9._~+/=-]+/g;
// Starts only where a run of base64url characters starts, so a long run costs one pass, not one per position.
const COMPACT = /(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]*){2,4}/g;

const isJoseHeader = (segment: string) => {
  try {
    return /^\s*\{/.test(Buffer.from(segment, 'base64url').toString('utf8'));
  } catch {
    return false;
  }
};

export const scrubTokens = (line: string) =>
  line
    .replace(BEARER, '[redacted]')
    .replace(COMPACT, (match) => (isJoseHeader(match.slice(0, match.indexOf('.'))) ? '[redacted]' : match));

export interface LogEntry {
  time: number;
  level: number;
  msg?: string;
  [key: string]: unknown;
}

export const LEVELS: Record<string, number> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
};

/**
 * The most recent log lines, in memory: a circular buffer of the lines as written (already scrubbed), parsed only
 * when queried, so logging costs no JSON parse and no array shifting per line.
 */
export class LogRing {
  private readonly lines: (string | undefined)[];
  private next = 0;
  constructor(readonly capacity = 2000) {
    this.lines = new Array(capacity);
  }

  write(line: string) {
    this.lines[this.next] = line;
    this.next = (this.next + 1) % this.capacity;
  }

  /** Entries at or above `minLevel` between `since` and `until` (epoch ms), newest last, at most `limit`. */
  query(filter: { minLevel?: number; since?: number; until?: number; limit?: number }) {
    const matching: LogEntry[] = [];
    for (let i = 0; i < this.capacity; i += 1) {
      const line = this.lines[(this.next + i) % this.capacity];
      if (line === undefined) continue;
      let e: LogEntry;
      try {
        e = JSON.parse(line) as LogEntry;
      } catch {
        continue; // not a JSON line: nothing to show
      }
      if (
        e.level >= (filter.minLevel ?? 0) &&
        e.time >= (filter.since ?? Number.NEGATIVE_INFINITY) &&
        e.time <= (filter.until ?? Number.POSITIVE_INFINITY)
      ) {
        matching.push(e);
      }
    }
    return { total: matching.length, entries: matching.slice(-(filter.limit ?? 100)) };
  }
}

export function createLogger(options: { level: string; ring?: LogRing; stdout?: boolean }): Logger {
  const streams: pino.StreamEntry[] = [];
  if (options.stdout !== false) streams.push({ stream: process.stdout, level: options.level as pino.Level });
  if (options.ring) streams.push({ stream: options.ring, level: options.level as pino.Level });
  return pino(
    {
      level: options.level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      hooks: { streamWrite: scrubTokens },
      serializers: {
        req: (req: { method?: string; url?: string; id?: string }) => ({
          method: req.method,
          url: req.url?.split('?')[0],
        }),
        err: pino.stdSerializers.err,
      },
    },
    pino.multistream(streams),
  );
}
