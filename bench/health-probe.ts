// The /healthz probe of the storm, in a process of its own (so the bench's event loop does not colour its timing):
//   node --import tsx bench/health-probe.ts <port> [everyMs=50] [timeoutMs=2000] [path=/healthz]
// (PROBE_AUTHORIZATION in its environment: sent as the Authorization header, for a tenant's own requests: the
// door storm's victim). A probe is due every `everyMs`; each is sent over one keep-alive connection (a new one only
// if the service closed it), one at a time. A probe due while the previous one is unanswered waits and is sent as
// soon as that one ends, and its latency runs from when it was due: a stall counts in every probe it delayed, not in
// one. One line per probe: `P <due at, epoch ms> <latency ms> <status | timeout | error:code> <late 0|1>`.
// `CONN <epoch ms>` marks each connection opened.
import http from 'node:http';
import { performance } from 'node:perf_hooks';

const port = Number(process.argv[2]);
const everyMs = Number(process.argv[3] ?? 50);
const timeoutMs = Number(process.argv[4] ?? 2_000);
const probePath = process.argv[5] ?? '/healthz';
const authorization = process.env.PROBE_AUTHORIZATION;
if (!Number.isInteger(port) || port <= 0) {
  console.error('usage: health-probe.ts <port> [everyMs] [timeoutMs]');
  process.exit(2);
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const seen = new WeakSet<object>();
const now = () => performance.timeOrigin + performance.now();
let inFlight = false;
/** Due times of the probes waiting for the one in flight (each is sent, late, in turn). */
const waiting: number[] = [];

function send(dueAt: number, late: boolean) {
  inFlight = true;
  let finished = false;
  const finish = (outcome: string) => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    process.stdout.write(`P ${dueAt.toFixed(1)} ${(now() - dueAt).toFixed(2)} ${outcome} ${late ? 1 : 0}\n`);
    inFlight = false;
    const next = waiting.shift();
    if (next !== undefined) send(next, true);
  };
  const headers = authorization ? { authorization } : {};
  const req = http.get({ host: '127.0.0.1', port, path: probePath, agent, headers }, (res) => {
    res.resume();
    res.on('end', () => finish(String(res.statusCode)));
    res.on('error', () => finish('error:response'));
  });
  const timer = setTimeout(() => {
    finish('timeout');
    req.destroy();
  }, timeoutMs);
  req.on('socket', (socket) => {
    if (seen.has(socket)) return;
    seen.add(socket);
    process.stdout.write(`CONN ${now().toFixed(1)}\n`);
  });
  req.on('error', (e: NodeJS.ErrnoException) => finish(`error:${e.code ?? 'unknown'}`));
}

setInterval(() => {
  if (inFlight) waiting.push(now());
  else send(now(), false);
}, everyMs);
process.stdout.write('READY\n');
process.on('SIGTERM', () => process.exit(0));
