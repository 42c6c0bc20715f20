// The /healthz probe of the storm, in a process of its own (so the bench's event loop does not colour its timing):
//   node --import tsx bench/health-probe.ts <port> [everyMs=50] [timeoutMs=2000] [path=/healthz]
// (PROBE_AUTHORIZATION in its environment: sent as the Authorization header, for a tenant's own requests: the
// door storm's victim). A probe is due every `everyMs`; one is sent at a time over one keep-alive connection. A
// probe due while the one before is unanswered is not sent (sending it would only add load, and a backlog sent later
// would never drain under a slow service): it is recorded when that one ends, with its latency from when it was due
// to then, as a latency recorder corrects for coordinated omission. A stall so counts in every probe it delays. One
// line per probe: `P <due at, epoch ms> <latency ms> <status | timeout | error:code> <late 0|1>`, late for a probe
// that was due while another was unanswered.
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
/** Due times of the probes that came due while one was unanswered (recorded, not sent, when it ends). */
const missed: number[] = [];

function send(dueAt: number) {
  inFlight = true;
  let finished = false;
  const finish = (outcome: string) => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    inFlight = false;
    const at = now();
    let lines = `P ${dueAt.toFixed(1)} ${(at - dueAt).toFixed(2)} ${outcome} 0\n`;
    for (const due of missed.splice(0))
      lines += `P ${due.toFixed(1)} ${(at - due).toFixed(2)} ${outcome} 1\n`;
    process.stdout.write(lines);
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
  if (inFlight) missed.push(now());
  else send(now());
}, everyMs);
process.stdout.write('READY\n');
process.on('SIGTERM', () => process.exit(0));
