// The /healthz probe of the storm, in a process of its own (so the bench's event loop does not colour its timing):
//   node --import tsx bench/health-probe.ts <port> [everyMs=50] [timeoutMs=2000] [path=/healthz]
// (PROBE_AUTHORIZATION in its environment: sent as the Authorization header, for a tenant's own requests: the
// door storm's victim). Every `everyMs` it sends GET <path> over one keep-alive connection (a new one only if the service closed it)
// and prints one line per probe: `P <sent at, epoch ms> <latency ms> <status | timeout | error:code>`. A probe due
// while the previous one is unanswered is not sent (one connection, one request at a time); it prints
// `LATE <epoch ms>`, and the late answer shows as one long latency. `CONN <epoch ms>` marks each connection opened.
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

function probe() {
  if (inFlight) {
    process.stdout.write(`LATE ${now().toFixed(1)}\n`);
    return;
  }
  inFlight = true;
  const sentAt = now();
  const t = performance.now();
  let finished = false;
  const finish = (outcome: string) => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    inFlight = false;
    process.stdout.write(`P ${sentAt.toFixed(1)} ${(performance.now() - t).toFixed(2)} ${outcome}\n`);
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

setInterval(probe, everyMs);
process.stdout.write('READY\n');
process.on('SIGTERM', () => process.exit(0));
