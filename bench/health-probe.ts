// The /healthz probe of the storm, in a process of its own (so the bench's event loop does not colour its timing):
//   node --import tsx bench/health-probe.ts <port> [everyMs=50] [timeoutMs=2000] [path=/healthz]
// (PROBE_AUTHORIZATION in its environment: sent as the Authorization header, for a tenant's own requests: the
// door storm's victim). A probe is due every `everyMs` and is sent when it is due, whatever the ones before it do
// (open loop, over keep-alive connections: another one opens while one is busy): a stall counts in every probe it
// delays, not in one, and no backlog builds up behind a slow answer. Its latency runs from when it was due. One line
// per probe: `P <due at, epoch ms> <latency ms> <status | timeout | error:code> <late 0|1>`, late when another probe
// was still unanswered as it was sent.
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

const agent = new http.Agent({ keepAlive: true });
const seen = new WeakSet<object>();
const now = () => performance.timeOrigin + performance.now();
/** Probes sent and not answered yet. */
let inFlight = 0;

function send(dueAt: number, late: boolean) {
  inFlight += 1;
  let finished = false;
  const finish = (outcome: string) => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    inFlight -= 1;
    process.stdout.write(`P ${dueAt.toFixed(1)} ${(now() - dueAt).toFixed(2)} ${outcome} ${late ? 1 : 0}\n`);
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

setInterval(() => send(now(), inFlight > 0), everyMs);
process.stdout.write('READY\n');
process.on('SIGTERM', () => process.exit(0));
