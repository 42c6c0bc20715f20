// The hostile-request storm (issue #11): many concurrent requests shaped to make the service work or hold memory,
// each of which it must refuse with a 4xx and a reason, without its resident set or its other answers suffering.
//   declared      Content-Length 9 MB (over the 8 MB limit), only the first 64 KB sent          -> 413
//   streamed      chunked, no length, sent until the answer comes (over 8 MB)                     -> 413
//   tiny-objects  POST /entities/types {"name":[{},{},…]}: 2.8 million values in < 8 MB            -> 400 json_too_large
//   many-keys     a declaration with 840,000 unknown keys in < 8 MB                                 -> 400 json_too_large
//   deep          a declaration whose default_value nests 5,000 arrays                              -> 400 json_too_deep
//   slow          a 1,000-byte declaration sent one byte every 5 s                                  -> 408 request_timeout
//   graphql-*     GraphQL documents whose lists multiply (aliases x nesting, or aliases x pages)     -> query_too_costly
// Each body is built once and shared by every request that sends it (the bench's own memory stays small). Every
// request is a fresh connection (raw node:http, no agent); its answer is read (the first 64 KB at most) for the
// status and the reason: REST {"DATA":{"reason":…}}, GraphQL {"errors":[{"extensions":{"reason":…}}]}.
// Over 300 lines: the hostile storm's shapes, each a few lines, and the one driver that runs them.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { children, percentile, stopChild } from './lib.js';
import { type ProbeSample, type ProbeWindow, probeWindow } from './probe-verdict.js';

export type StormKind =
  | 'declared'
  | 'streamed'
  | 'tiny-objects'
  | 'many-keys'
  | 'deep'
  | 'slow'
  | 'graphql-nested'
  | 'graphql-pages'
  | 'graphql-fragments';

/** How a request's body goes out. */
export type StormBody =
  /** Content-Length `declaredBytes`, only the first `sendBytes` sent (then wait for the answer). */
  | { mode: 'declared'; declaredBytes: number; sendBytes: number }
  /** Chunked, no length: blanks sent until `limitBytes` or the answer, whichever comes first. */
  | { mode: 'streamed'; limitBytes: number }
  /** The whole buffer, with its Content-Length. */
  | { mode: 'whole'; data: Buffer }
  /** The buffer's Content-Length, its bytes sent one at a time every `everyMs`. */
  | { mode: 'trickle'; data: Buffer; everyMs: number };

export interface StormRequest {
  path: string;
  body: StormBody;
}

export interface StormShape {
  kind: StormKind;
  /** What the requests are, in a few words (the report's table). */
  label: string;
  /** The answer every request should get, as "status reason". */
  expected: string;
  requests: number;
  concurrency: number;
  /** Longest a request may take before the bench gives up on it ("timeout"). */
  timeoutMs: number;
  request: StormRequest;
}

export interface StormResult {
  kind: StormKind;
  label: string;
  expected: string;
  requests: number;
  concurrency: number;
  /** Answers by "status reason" ("reset" when the connection ended without one, "timeout" when none came). */
  statuses: Record<string, number>;
  bytesSent: number;
  /** Size of the body each request sends (declared size for `declared`, the limit for `streamed`). */
  bodyBytes: number;
  ms: number;
  /** Time from the start of a request to its answer (or its failure), in ms. */
  answerMs: { p50: number; p99: number; max: number };
}

const CHUNK = Buffer.alloc(64 * 1024, 0x20);
/** Enough of an answer to read its reason; the rest is counted and dropped. */
const ANSWER_KEEP_BYTES = 64 * 1024;

/** "status reason" of an answer: REST envelope DATA.reason, or the first GraphQL error's extensions.reason. */
export function answerKey(status: number, text: string): string {
  let reason: unknown;
  try {
    const json = JSON.parse(text) as {
      DATA?: { reason?: unknown };
      errors?: { extensions?: { reason?: unknown } }[];
      data?: unknown;
    };
    reason = json.DATA?.reason ?? json.errors?.[0]?.extensions?.reason;
    if (reason === undefined && json.errors?.[0]) reason = 'graphql_error';
    if (reason === undefined && json.data !== undefined && json.data !== null) reason = 'data';
  } catch {
    reason = text === '' ? undefined : 'not_json';
  }
  return typeof reason === 'string' ? `${status} ${reason}` : String(status);
}

function oneRequest(
  port: number,
  authorization: string,
  r: StormRequest,
  timeoutMs: number,
): Promise<{ key: string; sent: number; ms: number }> {
  const { body } = r;
  const started = performance.now();
  return new Promise((resolve) => {
    let sent = 0;
    let settled = false;
    let trickle: NodeJS.Timeout | undefined;
    const hardStop = setTimeout(() => done('timeout'), timeoutMs);
    const done = (key: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(hardStop);
      if (trickle) clearInterval(trickle);
      resolve({ key, sent, ms: performance.now() - started });
      req.destroy();
    };
    const length =
      body.mode === 'declared' ? body.declaredBytes : body.mode === 'streamed' ? null : body.data.length;
    const req = http.request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: r.path,
      agent: false,
      headers: {
        authorization,
        'content-type': 'application/json',
        ...(length === null ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(length) }),
      },
    });
    req.on('error', () => done('reset'));
    req.on('response', (res) => {
      const kept: Buffer[] = [];
      let keptBytes = 0;
      res.on('data', (chunk: Buffer) => {
        if (keptBytes >= ANSWER_KEEP_BYTES) return;
        kept.push(chunk);
        keptBytes += chunk.length;
      });
      const finish = () =>
        done(answerKey(res.statusCode ?? 0, Buffer.concat(kept).subarray(0, ANSWER_KEEP_BYTES).toString()));
      res.on('end', finish);
      res.on('error', finish);
      res.on('aborted', finish);
    });
    switch (body.mode) {
      case 'whole': {
        sent = body.data.length;
        req.end(body.data);
        break;
      }
      case 'trickle': {
        const next = () => {
          if (settled) return;
          if (sent >= body.data.length) {
            clearInterval(trickle);
            req.end();
            return;
          }
          req.write(body.data.subarray(sent, sent + 1));
          sent += 1;
        };
        next();
        trickle = setInterval(next, body.everyMs);
        break;
      }
      default: {
        // Declared: only the start of the body; streamed: until the limit is passed or the answer arrives.
        const limit = body.mode === 'declared' ? body.sendBytes : body.limitBytes;
        const pump = () => {
          while (!settled && sent < limit) {
            sent += CHUNK.length;
            if (!req.write(CHUNK)) {
              req.once('drain', pump);
              return;
            }
          }
          if (body.mode === 'streamed' && !settled && sent >= limit) req.end();
        };
        pump();
      }
    }
  });
}

/** Sends `shape.requests` requests, `shape.concurrency` at a time, and counts the answers. */
export async function runStorm(port: number, authorization: string, shape: StormShape): Promise<StormResult> {
  const started = performance.now();
  const statuses: Record<string, number> = {};
  const times: number[] = [];
  let bytesSent = 0;
  let next = 0;
  const worker = async () => {
    while (next < shape.requests) {
      next += 1;
      const { key, sent, ms } = await oneRequest(port, authorization, shape.request, shape.timeoutMs);
      statuses[key] = (statuses[key] ?? 0) + 1;
      bytesSent += sent;
      times.push(ms);
    }
  };
  await Promise.all(Array.from({ length: Math.min(shape.concurrency, shape.requests) }, worker));
  times.sort((a, b) => a - b);
  const { body } = shape.request;
  return {
    kind: shape.kind,
    label: shape.label,
    expected: shape.expected,
    requests: shape.requests,
    concurrency: shape.concurrency,
    statuses,
    bytesSent,
    bodyBytes:
      body.mode === 'declared'
        ? body.declaredBytes
        : body.mode === 'streamed'
          ? body.limitBytes
          : body.data.length,
    ms: performance.now() - started,
    answerMs: { p50: percentile(times, 50), p99: percentile(times, 99), max: times[times.length - 1] ?? 0 },
  };
}

// ---- the bodies, each built once ----

export const BODY_LIMIT = 8 * 1024 * 1024;

/** `{"name":[{},{},…]}` just under 8 MB: about 2.8 million empty objects. */
export function tinyObjectsBody(maxBytes = BODY_LIMIT - 1024): { data: Buffer; values: number } {
  const head = Buffer.from('{"name":[');
  const tail = Buffer.from('{}]}');
  const values = Math.floor((maxBytes - head.length - tail.length) / 3) + 1;
  const data = Buffer.alloc(head.length + (values - 1) * 3 + tail.length);
  head.copy(data, 0);
  data.fill('{},', head.length, data.length - tail.length);
  tail.copy(data, data.length - tail.length);
  return { data, values };
}

/** A declaration object just under 8 MB that also holds unknown keys "k0", "k1", … (about 840,000). */
export function manyKeysBody(maxBytes = BODY_LIMIT - 1024): { data: Buffer; keys: number } {
  const parts: string[] = ['{"name":"storm_many_keys","value_type":"string","cardinality":"single"'];
  let size = parts[0]!.length + 1;
  let keys = 0;
  for (;;) {
    const member = `,"k${keys.toString(36)}":1`;
    if (size + member.length > maxBytes) break;
    parts.push(member);
    size += member.length;
    keys += 1;
  }
  parts.push('}');
  return { data: Buffer.from(parts.join('')), keys };
}

/** A declaration whose default_value is `levels` nested arrays. */
export function deepBody(levels = 5_000): Buffer {
  return Buffer.from(
    `{"name":"storm_deep","value_type":"json","cardinality":"single","default_value":${'['.repeat(levels)}${']'.repeat(levels)}}`,
  );
}

/** A valid declaration padded with blanks to `bytes` (sent a byte at a time). */
export function slowBody(bytes = 1_000): Buffer {
  const text = '{"name":"storm_slow","value_type":"string","cardinality":"single"}';
  return Buffer.from(text.padEnd(bytes, ' '));
}

/**
 * `aliases` x entityType(guid) with `levels` of `attributes { name allowedRefType { … } }`: on a type whose
 * attributes all refer to itself, each level multiplies the answer by the number of attributes.
 */
export function graphqlNestedBody(guid: string, aliases = 5, levels = 4): Buffer {
  const nest = (k: number): string =>
    k === 0 ? 'name' : `attributes { name allowedRefType { ${nest(k - 1)} } }`;
  const fields = Array.from(
    { length: aliases },
    (_, i) => `t${i}: entityType(guid: "${guid}") { ${nest(levels)} }`,
  );
  return Buffer.from(JSON.stringify({ query: `query Nested { ${fields.join(' ')} }` }));
}

/** `aliases` x entityTypes(first: $n) with attributes and their referenced types' attributes, n = `first`. */
export function graphqlPagesBody(aliases = 15, first = 500): Buffer {
  const fields = Array.from(
    { length: aliases },
    (_, i) =>
      `a${i}: entityTypes(first: $n) { edges { node { attributes { allowedRefType { attributes { name } } } } } }`,
  );
  return Buffer.from(
    JSON.stringify({ query: `query Pages($n: Int) { ${fields.join(' ')} }`, variables: { n: first } }),
  );
}

/** entityType(guid) spreading F2 `spreads` times, F2 spreading F3 as often: spreads² expansions in a small text. */
export function graphqlFragmentsBody(guid: string, spreads = 60): Buffer {
  const times = (name: string) => Array.from({ length: spreads }, () => `...${name}`).join(' ');
  const query = `query Fragments { entityType(guid: "${guid}") { ${times('F2')} } }
    fragment F2 on EntityType { name ${times('F3')} }
    fragment F3 on EntityType { name guid attributes { name } }`;
  return Buffer.from(JSON.stringify({ query }));
}

// ---- /healthz, probed from a process of its own ----

/** A window of the probe's samples (bench/probe-verdict.ts): latency over the probes answered 200 only. */
export type HealthStats = ProbeWindow;

/** Wall-clock ms comparable between processes (both use the same epoch). */
export const epochNow = () => performance.timeOrigin + performance.now();

/**
 * The probes run before anything else on their core when the machine allows it (root: the real-time class, whose
 * task runs as soon as it is due): they use next to no processor, and what they time is then the service's delay, not
 * their wait for a core the load generator keeps busy.
 */
let probePriority: string[] | undefined;
/** The command the probes run through (checked once, when the first probe starts: not on import). */
const probePriorityCommand = () => {
  probePriority ??=
    process.getuid?.() === 0 && spawnSync('chrt', ['-f', '10', 'true']).status === 0
      ? ['chrt', '-f', '10']
      : [];
  return probePriority;
};

/**
 * Starts bench/health-probe.ts, which sends GET /healthz every `everyMs` over one keep-alive connection, and
 * collects what it reports. Running in its own process, its timing does not depend on the bench's event loop.
 */
export async function startHealthProbe(
  root: string,
  port: number,
  everyMs = 50,
  /** Another path to probe (a tenant's own request), with its Authorization header. */
  other?: { path: string; authorization: string; timeoutMs?: number },
) {
  const [priority, ...priorityArgs] = probePriorityCommand();
  const child: ChildProcess = spawn(
    priority ?? process.execPath,
    [
      ...priorityArgs,
      ...(priority ? [process.execPath] : []),
      '--import',
      'tsx',
      'bench/health-probe.ts',
      String(port),
      String(everyMs),
      ...(other ? [String(other.timeoutMs ?? 5_000), other.path] : []),
    ],
    {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...(other ? { PROBE_AUTHORIZATION: other.authorization } : {}) },
    },
  );
  children.add(child);
  const samples: ProbeSample[] = [];
  const connectedAt: number[] = [];
  let rest = '';
  let errorOutput = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    errorOutput = (errorOutput + chunk.toString()).slice(-2_000);
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the /healthz probe did not start within 30 s')), 30_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the /healthz probe exited (code ${code}): ${errorOutput}`));
    });
    child.stdout?.on('data', (chunk: Buffer) => {
      const lines = (rest + chunk.toString()).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) {
        const [tag, a, b, c, d] = line.split(' ');
        if (tag === 'READY') {
          clearTimeout(timer);
          resolve();
        } else if (tag === 'P') {
          samples.push({ at: Number(a), ms: Number(b), outcome: c ?? '?', late: d === '1' });
        } else if (tag === 'CONN') connectedAt.push(Number(a));
      }
    });
  });
  return {
    samples,
    /** The probes due in [from, to) (epoch ms). */
    stats: (from: number, to: number): HealthStats => probeWindow(samples, connectedAt, from, to),
    stop: () => stopChild(child, 5_000),
  };
}

export type HealthProbe = Awaited<ReturnType<typeof startHealthProbe>>;
