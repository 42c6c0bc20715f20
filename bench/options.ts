// The bench's options (npm run bench -- …) and what follows from them: run lengths, connection counts, the
// catalog's size, the storm's budget; the previous run's figures the write targets compare with.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { neo4jSettings } from './lib.js';
import { DEFAULT_CATALOG } from './load-catalog.js';
import { type PreviousRun, previousRun } from './report.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const RESULTS = path.join(ROOT, 'bench', 'results');
export const HOST = '127.0.0.1';

// ---- options ----

// The bench's own command line; another entry (the door storm) importing the service helpers parses its own.
const { values: argv } = parseArgs({
  args: path.basename(process.argv[1] ?? '') === 'run.ts' ? process.argv.slice(2) : [],
  options: {
    quick: { type: 'boolean', default: false },
    seconds: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string' },
    'log-level': { type: 'string', default: 'info' },
    only: { type: 'string' },
    'big-types': { type: 'string' },
    'cpu-prof': { type: 'boolean', default: false },
    'storm-only': { type: 'boolean', default: false },
    'node-flags': { type: 'string' },
  },
});

function numberOption(name: string, raw: string | undefined, fallback: number, min: number, max: number) {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || value > max) {
    console.error(`--${name} must be a number in ${min}..${max} (got ${raw})`);
    process.exit(2);
  }
  return value;
}

export const QUICK = argv.quick === true;
/** --only: the ids of the scenarios to run (all of them without it). */
export const ONLY = argv.only ? new Set(argv.only.split(',')) : null;
export const SECONDS = numberOption('seconds', argv.seconds, QUICK ? 2 : 5, 0.5, 600);
export const WARMUP = numberOption('warmup', argv.warmup, QUICK ? 0.5 : 1, 0, 60);
export const LEVELS = (argv.connections ?? (QUICK ? '16' : '1,16,64')).split(',').map((c) => {
  const n = Number(c);
  if (!Number.isInteger(n) || n < 1 || n > 1000) {
    console.error(`--connections takes integers in 1..1000 separated by commas (got ${argv.connections})`);
    process.exit(2);
  }
  return n;
});
export const LOG_LEVEL = argv['log-level'] ?? 'info';
export const BIG_TYPES = numberOption(
  'big-types',
  argv['big-types'],
  DEFAULT_CATALOG.bigTypes,
  1_000,
  1_000_000,
);
/** The deep page starts here; at least 100 plain types follow it, so it is as full and alike as the first page. */
export const DEEP_ROW = Math.min(100_000, Math.floor((BIG_TYPES - 100) / 500) * 500);
/**
 * GraphQL requests cost hundreds of ms each, so at many connections one lasts longer than a timed run: those runs
 * send a fixed number of requests instead (GRAPHQL_PER_CONNECTION per connection, at least GRAPHQL_MIN) and time
 * how long all of them take, stopping after GRAPHQL_MAX_SECONDS at most.
 */
export const GRAPHQL_PER_CONNECTION = QUICK ? 2 : 4;
export const GRAPHQL_MIN = QUICK ? 16 : 20;
export const GRAPHQL_MAX_SECONDS = QUICK ? 40 : 90;
export const CPU_PROF = argv['cpu-prof'] === true;
/** Only the hostile-request storm: no catalog, no baselines, no scenarios (a couple of minutes). */
export const STORM_ONLY = argv['storm-only'] === true;
/** Extra flags for the service's node process (e.g. `--trace-gc`, to see where its memory goes), space-separated. */
export const NODE_FLAGS = (argv['node-flags'] ?? '').split(' ').filter((f) => f !== '');
/** The tenant the storm's requests are for (its own types only: the storm needs no catalog). */
export const STORM_TENANT = `bench-storm-${Math.random().toString(36).slice(2, 10)}`;
export const STORM_BUDGET_MS = 900_000;
/** Targets of issue #11, checked in the report: the service's RSS during and after each storm phase. */
export const STORM_AFTER_MS = 10_000;
/** The connection count the targets are stated at (the middle level when 16 is not run). */
export const TARGET_LEVEL = LEVELS.includes(16) ? 16 : LEVELS[Math.floor(LEVELS.length / 2)]!;

/** The previous run's latest.json, as the write targets need it; null when there is none or it cannot be read. */
function readPrevious(): PreviousRun | null {
  let text: string;
  try {
    text = readFileSync(path.join(RESULTS, 'latest.json'), 'utf8');
  } catch {
    return null;
  }
  try {
    return previousRun(JSON.parse(text), TARGET_LEVEL);
  } catch (e) {
    console.log(`(bench/results/latest.json is not JSON, so no previous run: ${(e as Error).message})`);
    return null;
  }
}
/**
 * Issue 12: writes no slower than before. Their ratios to baseline (b) in the previous run, read now, before this
 * run overwrites latest.json. A --storm-only run measures no write (and leaves latest.json as it is).
 */
export const PREVIOUS: PreviousRun | null = STORM_ONLY ? null : readPrevious();

export const env = neo4jSettings({ LOG_LEVEL });
export const DATABASE = env.NEO4J_DATABASE;

export const log = (line: string) => console.log(line);
export const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '-');
