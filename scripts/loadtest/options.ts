// The load test's options (npm run loadtest -- …) and the traffic's fixed sizes.

import { parseArgs } from 'node:util';
import { neo4jSettings } from '../../bench/lib.js';

const { values: argv } = parseArgs({
  options: {
    seconds: { type: 'string' },
    connections: { type: 'string' },
    tenants: { type: 'string' },
    // Definitions declared before the traffic on the first hot type of the first few tenants, so that the
    // traffic reaches the 200 limit there and keeps racing at it (withdrawals free slots, declarations fill them).
    seed: { type: 'string', default: '195' },
    // Service processes on the one Neo4j; 1 runs the service in this process, as before.
    instances: { type: 'string', default: '1' },
    // --fault neo4j-restart: Neo4j killed and started again under load (scripts/loadtest/fault.ts).
    fault: { type: 'string' },
    // With --fault: how many times (each on a fresh Neo4j), and whether clients that ignore Retry-After storm the
    // service while it recovers (16 loops sending as fast as the 503s come back): `with`, `without` or `both`.
    runs: { type: 'string', default: '1' },
    'retry-storm': { type: 'string', default: 'without' },
  },
});

const FAULTS = ['neo4j-restart'] as const;
if (argv.fault !== undefined && !(FAULTS as readonly string[]).includes(argv.fault)) {
  console.error(`--fault takes ${FAULTS.join(', ')} (got ${argv.fault})`);
  process.exit(2);
}
export const FAULT = argv.fault !== undefined;

function intOption(name: string, raw: string | undefined, min: number, max: number): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    console.error(`--${name} must be an integer in ${min}..${max} (got ${raw})`);
    process.exit(2);
  }
  return value;
}

// With --fault: the traffic's length before the fault and after recovery, each; 16 clients over 4 tenants.
export const SECONDS = intOption('seconds', argv.seconds ?? (FAULT ? '15' : '30'), 1, 3600);
export const CONNECTIONS = intOption('connections', argv.connections ?? (FAULT ? '16' : '50'), 1, 1000);
export const TENANTS = intOption('tenants', argv.tenants ?? (FAULT ? '4' : '20'), 1, 1000);
export const SEED = intOption('seed', argv.seed, 0, 200);
export const INSTANCES = intOption('instances', argv.instances, 1, 8);
export const FAULT_RUNS = intOption('runs', argv.runs, 1, 20);
const STORM_CHOICES = { without: [false], with: [true], both: [false, true] } as const;
if (!Object.hasOwn(STORM_CHOICES, argv['retry-storm'] as string)) {
  console.error(`--retry-storm takes without, with or both (got ${argv['retry-storm']})`);
  process.exit(2);
}
/** With --fault: each run's retry storm, in order (both: a run without, then one with, FAULT_RUNS times). */
export const RETRY_STORMS: readonly boolean[] =
  STORM_CHOICES[argv['retry-storm'] as keyof typeof STORM_CHOICES];

export const LIMIT = 200;
export const HOT_TYPES = 5;
export const SEEDED_TENANTS = Math.min(TENANTS, 4);
export const SEED_CONCURRENCY = 4;
export const PERSONS = 4;
export const POOL_TYPE_NAMES = Array.from({ length: 8 }, (_, i) => `Pool-${i}`);
export const ATTRIBUTE_NAMES = Array.from({ length: 260 }, (_, i) => `attr_${String(i).padStart(3, '0')}`);
export const REQUEST_TIMEOUT_SECONDS = 10;
export const CHECK_BATCH = 2_000;
/** With --instances N: the daily purge fires this often (node-cron, seconds field); must divide a minute. */
export const PURGE_PERIOD_SECONDS = 5;

// Last resort: whatever hangs, the process ends by itself.
setTimeout(
  () => {
    console.error('loadtest: watchdog expired, exiting');
    process.exit(2);
  },
  (SECONDS + 1800 + (FAULT ? FAULT_RUNS * RETRY_STORMS.length * (4 * SECONDS + 120) : 0)) * 1000,
).unref();
/** The database the invariants are read from (NEO4J_DATABASE, else the server's default). */
export const DATABASE = neo4jSettings().NEO4J_DATABASE;
