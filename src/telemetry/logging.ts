// Structured logs (pino): secrets redacted by path, anything shaped like a bearer token scrubbed from every line,
// URLs logged without their query string, and the most recent entries kept in a ring for GET /admin/logs.
import pino, { type Logger } from 'pino';
import pinoPretty from 'pino-pretty';
import { cutText } from '../errors.js';

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
// with a newline…). The header decides, so dotted names (file.name.ts) are left alone. A token may come
// percent-encoded (a path segment `Bearer%20…`, dots as `%2E`, every character escaped, escaped again and again:
// `%2525252E`): escapes of the characters a token is made of are read as those characters first (only those: an
// escaped quote stays escaped, so a JSON line stays JSON), then the token is found. A token may be one part of a
// longer dotted run (`notes.<token>`, `v1.2.3-release.<token>`): its header is looked for at each segment that has
// two more after it. A token glued to text before it (`x<token>`) is found from where its header starts: a JSON
// object's base64url begins `ey` or `ew`.
const BEARER = /Bearer(?:\s|\+)+[A-Za-z0-9._~+/=-]+/gi;
// A whole dotted run, starting only where a run of base64url characters starts, so a long run costs one pass, not
// one per position.
const COMPACT = /(?<![A-Za-z0-9_-])[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]*){2,}/g;
// Any depth of escaping in one pass: `%25` repeated before the escape of a token's character (`%2525252E` is `.`).
const ESCAPED_TOKEN_CHARACTER = /%(?:25)*(2[bBdDeEfF]|3[0-9dD]|[46][1-9a-fA-F]|[57][0-9aA]|5[fF]|7[eE]|20)/g;

/** Whether a base64url segment starts a JSON object: its first 16 characters (12 bytes) decide, so any run is cheap. */
const isJoseHeader = (segment: string) => {
  try {
    return /^\s*\{/.test(Buffer.from(segment.slice(0, 16), 'base64url').toString('utf8'));
  } catch {
    return false;
  }
};

/** Where a JWS/JWE's header starts in `segment`: at its start, or glued to text before it; -1: nowhere. */
function headerStart(segment: string): number {
  if (segment.length >= 8 && isJoseHeader(segment)) return 0;
  // A glued token: where its header starts (looked for at the first 64 places a header could start).
  const starts = /e[yw]/g;
  for (let tries = 0; tries < 64; tries += 1) {
    const found = starts.exec(segment);
    if (!found) break;
    if (found.index > 0 && segment.length - found.index >= 8 && isJoseHeader(segment.slice(found.index))) {
      return found.index;
    }
  }
  return -1;
}

/**
 * Where a JWS/JWE starts in a dotted run: at the first segment (with two more after it) whose header starts it, or
 * starts inside it; -1: none. Each segment is looked at once, and only its first characters and 64 places: linear.
 */
function tokenStart(run: string): number {
  const segments = run.split('.');
  let at = 0;
  for (let i = 0; i + 2 < segments.length; i += 1) {
    const segment = segments[i] as string;
    const start = headerStart(segment);
    if (start >= 0) return at + start;
    at += segment.length + 1;
  }
  return -1;
}

/** Percent-escapes of the characters tokens are made of, read as those characters (at any depth: `%252E`). */
const unescapeTokenCharacters = (line: string) =>
  line.includes('%')
    ? line.replace(ESCAPED_TOKEN_CHARACTER, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
    : line;

export const scrubTokens = (line: string) =>
  unescapeTokenCharacters(line)
    .replace(BEARER, '[redacted]')
    .replace(COMPACT, (match) => {
      const at = tokenStart(match);
      return at < 0 ? match : `${match.slice(0, at)}[redacted]`;
    });

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

/**
 * The longest line the logs keep, in characters: a longer one (a message quoting megabytes a request sent) is
 * replaced by a line of its level, time, length and first characters. Logged whole, a large GraphQL variable,
 * escaped again, would make a line of megabytes, and a few such lines kept in the ring of recent lines would run the
 * heap out of memory. The ring's 2,000 lines so hold at most 32 MB (one-byte text), and an error line
 * (a message and a stack of MAX_LOG_MESSAGE_CHARS each, and its request) fits whole.
 */
export const MAX_LOG_LINE_CHARS = 16 * 1024;
/** Characters of a cut line kept in its place. */
const CUT_LINE_HEAD_CHARS = 2_000;
/** The longest message string logged as it is (pino's first string argument), before the line is made. */
export const MAX_LOG_MESSAGE_CHARS = 4_096;

/** `line` when short enough; else a line saying it was cut, with its level, time and first characters. */
export function boundLogLine(line: string): string {
  if (line.length <= MAX_LOG_LINE_CHARS) return line;
  const prefix = line.slice(0, 200);
  const level = /"level":(\d+)/.exec(prefix)?.[1] ?? '30';
  const time = /"time":(\d+)/.exec(prefix)?.[1] ?? String(Date.now());
  return `${JSON.stringify({
    level: Number(level),
    time: Number(time),
    msg: `a log line of ${line.length} characters was cut to its first ${CUT_LINE_HEAD_CHARS}`,
    head: line.slice(0, CUT_LINE_HEAD_CHARS),
  })}\n`;
}

const boundString = (text: string) => cutText(text, MAX_LOG_MESSAGE_CHARS);

export type LogFormat = 'json' | 'pretty';

/**
 * How stdout's lines are written: LOG_FORMAT when set; else pretty for a person at a terminal outside production, and
 * JSON lines everywhere else (CI, containers, pipes), where a program reads them.
 */
export function chooseLogFormat(
  config: { LOG_FORMAT?: LogFormat | undefined; NODE_ENV: string },
  stdoutIsTTY: boolean,
): LogFormat {
  if (config.LOG_FORMAT) return config.LOG_FORMAT;
  return stdoutIsTTY && config.NODE_ENV !== 'production' ? 'pretty' : 'json';
}

/** stdout as pino-pretty writes it: one coloured line per entry, its fields included, written at once (a crash loses no line). */
const prettyStdout = () =>
  pinoPretty({
    destination: 1,
    sync: true,
    colorize: process.stdout.isTTY === true,
    ignore: 'pid,hostname',
    singleLine: true,
    translateTime: 'SYS:HH:MM:ss.l',
  });

export function createLogger(options: {
  level: string;
  ring?: LogRing;
  stdout?: boolean;
  /** How stdout's lines are written (the ring always keeps JSON); JSON by default. */
  format?: LogFormat;
}): Logger {
  const streams: pino.StreamEntry[] = [];
  if (options.stdout !== false) {
    const stdout = options.format === 'pretty' ? prettyStdout() : process.stdout;
    streams.push({ stream: stdout, level: options.level as pino.Level });
  }
  if (options.ring) streams.push({ stream: options.ring, level: options.level as pino.Level });
  return pino(
    {
      level: options.level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      hooks: {
        // Message strings bounded before the line is made; the line bounded before it is scrubbed and kept.
        logMethod(args, method) {
          const bounded = args.map((arg) => (typeof arg === 'string' ? boundString(arg) : arg));
          return method.apply(this, bounded as Parameters<typeof method>);
        },
        streamWrite: (line) => scrubTokens(boundLogLine(line)),
      },
      serializers: {
        req: (req: { method?: string; url?: string; id?: string }) => ({
          method: req.method,
          url: req.url?.split('?')[0],
        }),
        err: (error: Error) => {
          const serialized = pino.stdSerializers.err(error);
          if (typeof serialized.message === 'string') serialized.message = boundString(serialized.message);
          if (typeof serialized.stack === 'string') serialized.stack = boundString(serialized.stack);
          return serialized;
        },
      },
    },
    pino.multistream(streams),
  );
}
