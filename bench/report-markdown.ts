// The bench's report as bench/results/latest.md: the tables, the targets met or missed, and how to read them.

import { fixed, type Report } from './report.js';
import { checkTargets } from './report-checks.js';
import {
  BASELINE_ALIGN,
  BASELINE_HEADER,
  baselineRows,
  CPU_ALIGN,
  CPU_HEADER,
  cpuRows,
  previousText,
  SERVICE_ALIGN,
  SERVICE_HEADER,
  STORM_ALIGN,
  STORM_HEADER,
  serviceRows,
  stormRows,
  yesNo,
} from './report-text.js';

// ---- Markdown ----

function mdTable(header: string[], rows: string[][], rightAlign: boolean[]): string {
  const esc = (s: string) => s.replace(/\|/g, '\\|');
  return [
    `| ${header.map(esc).join(' | ')} |`,
    `| ${rightAlign.map((r) => (r ? '---:' : '---')).join(' | ')} |`,
    ...rows.map((row) => `| ${row.map(esc).join(' | ')} |`),
  ].join('\n');
}

/** latest.md of a --storm-only run (storm.md): the storm's targets and table. */
/** Each target, whether it is met, and what was measured (markdown). */
function targetsTable(r: Report): string {
  return mdTable(
    ['target', 'met', 'measured'],
    checkTargets(r).map((t) => [t.name, yesNo(t.met), t.detail]),
    [false, false, false],
  );
}

function renderStormMarkdown(r: Report): string {
  const lines: string[] = [];
  lines.push('# Benchmark results: the storm alone (`--storm-only`)', '');
  lines.push(
    `${r.date} · ${r.machine.cpus} × ${r.machine.cpuModel}, ${r.machine.memoryGb} GB · Node ${r.machine.node} · Neo4j: ${r.machine.neo4j}`,
    '',
    `The service runs in its own process (\`${r.settings.serviceCommand ?? 'node dist/server.js'}\`, as \`npm start\` runs it, NODE_ENV=production, ` +
      `LOG_LEVEL=${r.settings.logLevel}) on an empty database: no catalog is loaded and no scenario runs; the storm ` +
      `creates what it needs in a tenant of its own (${fixed(r.memory.stormSetup.seconds, 1)} s). Everything, the ` +
      `storm's clients included, shares the same ${r.machine.cpus} cores.`,
    '',
  );
  lines.push('## Targets', '');
  lines.push(targetsTable(r), '');
  lines.push('## Storm', '');
  lines.push(...stormSection(r));
  const phases = Object.entries(r.memory.phases).map(([p, mb]) => `${p} ${fixed(mb, 0)}`);
  lines.push(`Max RSS by phase (MB): ${phases.join(', ')}.`, '');
  lines.push(
    `Run time ${fixed(r.totalSeconds, 0)} s: ${Object.entries(r.phases)
      .map(([p, sec]) => `${p} ${fixed(sec, 0)} s`)
      .join(', ')}.`,
    '',
  );
  return lines.join('\n');
}

export function renderMarkdown(r: Report): string {
  if (r.settings.stormOnly || !r.catalog || !r.pageWalk) return renderStormMarkdown(r);
  const labels = new Map(r.scenarios.map((s) => [s.id, s.label]));
  const lines: string[] = [];
  lines.push('# Benchmark results', '');
  lines.push(
    `${r.date} · ${r.machine.cpus} × ${r.machine.cpuModel}, ${r.machine.memoryGb} GB · Node ${r.machine.node} · Neo4j: ${r.machine.neo4j}`,
    '',
    `Runs of ${r.settings.seconds} s after ${r.settings.warmup} s of warm-up (GraphQL, whose requests take hundreds ` +
      `of ms: ${r.settings.graphqlRequests.perConnection} requests per connection, at least ${r.settings.graphqlRequests.min}, ` +
      `timed until all are answered, no warm-up) at ${r.settings.levels.join(', ')} connections` +
      `${r.settings.quick ? ' (--quick)' : ''}; the service runs in its own process (\`${r.settings.serviceCommand ?? 'node dist/server.js'}\`, as \`npm start\` runs it, ` +
      `NODE_ENV=production, LOG_LEVEL=${r.settings.logLevel}); load generator (autocannon) and baseline (a) in the bench process. ` +
      `Everything shares the same ${r.machine.cpus} cores, so figures are noisy; ratios within one run are what count. ` +
      'Each read scenario is measured interleaved with its baseline (a), and the two type pages with each other, in two ' +
      'rounds of half the run time each, so that drift during the run (garbage collection, other processes) falls on ' +
      'both sides alike.',
    '',
    `Catalog: ${r.catalog.tenants} tenants, one with ${r.catalog.bigTenantTypes.toLocaleString('en')} user types; ` +
      `${r.catalog.types.toLocaleString('en')} types, ${r.catalog.attributes.toLocaleString('en')} attribute definitions ` +
      `(4 types with 200, each with a 1,000-entry enumeration), ${r.catalog.entities.toLocaleString('en')} entities, loaded in ` +
      `${fixed(r.catalog.loadSeconds)} s. REST scenarios use the big tenant; the GraphQL page is the second tenant's first ` +
      '100 types, each with 20 attributes of which 4 reference other types (plus the 5 platform attributes).',
    '',
  );
  lines.push('## Service', '');
  lines.push(
    'req/s counts 2xx answers; latencies are per request as the load generator saw them; q/req is the `x-db-queries` ' +
      'header (Neo4j statements per request; fractional since requests waiting at once share one model version read); ' +
      'hit % is hits over lookups in the model cache and the engine cache together while the run was served (deltas of ' +
      '`GET /admin/engine-cache` read before and after each run, outside it); x(a), x(b), x(c), x(m) are req/s over the ' +
      `baseline at the same connection count; "target" is checked at ${r.settings.targetLevel} connections.`,
    '',
  );
  lines.push(
    mdTable(
      ['scenario', ...SERVICE_HEADER.slice(1)],
      serviceRows(r).map((row) => [`${labels.get(row[0]!) ?? row[0]!} (\`${row[0]}\`)`, ...row.slice(1)]),
      SERVICE_ALIGN,
    ),
    '',
  );
  lines.push('## Baselines', '');
  lines.push(
    '(a) the same Cypher the service sends (imported from `src/db`), sent the way the service sends it (`readOne`: an auto-commit read, one round trip) through `neo4j-driver` from ' +
      'N concurrent loops, no HTTP; (b) a minimal Fastify app answering a constant JSON body, in its own process; ' +
      '(c) `@neo4j/graphql` 7 served by Fastify + graphql-yoga in its own process, on the same data; ' +
      '(m) the memory ceiling: Fastify verifying the same token with jose and sending the very body the service answered, from memory. ' +
      'v/req: model-version statements per request (a read lease answers most: at most one a tenant every 25 ms).',
    '',
  );
  lines.push(mdTable(BASELINE_HEADER, baselineRows(r), BASELINE_ALIGN), '');
  lines.push('## Targets', '');
  lines.push(targetsTable(r), '');
  lines.push(previousText(r), '');
  lines.push(
    `Getting the cursor for row ${r.catalog.deepRow.toLocaleString('en')} walked the listing ${r.pageWalk.pages} pages of ` +
      `500, one request at a time, in ${fixed(r.pageWalk.seconds)} s: median page ${fixed(r.pageWalk.firstTenMedianMs)} ms near ` +
      `row 0, ${fixed(r.pageWalk.lastTenMedianMs)} ms near row ${r.catalog.deepRow.toLocaleString('en')}.`,
    '',
  );
  lines.push('## GraphQL round trips by page size', '');
  lines.push(
    mdTable(
      ['first', 'status', 'types', 'attributes', 'Neo4j queries', 'ms (alone)'],
      r.graphqlRoundTrips.map((t) => [
        String(t.first),
        String(t.status),
        String(t.types),
        String(t.attributes),
        t.reason ? `refused: ${t.reason}` : String(t.queries),
        fixed(t.ms, 0),
      ]),
      [true, true, true, true, false, true],
    ),
    '',
  );
  if (r.neo4jGraphql.ok) {
    const shape = r.neo4jGraphql.shape;
    const ours = r.graphqlRoundTrips.find((t) => t.first === 100);
    lines.push(
      `Baseline (c) answers the same 100 types (${shape?.types ?? '?'} returned) with ${shape?.attributes ?? '?'} attributes; ` +
        `the service answers ${ours?.attributes ?? '?'}: its \`attributes\` also lists the five platform attributes of ` +
        'every type (owned by the root type, not HAS_ATTRIBUTE children of each type, so @neo4j/graphql cannot express ' +
        'them). The service also resolves `ownerType`/`allowedRefType` as single objects and signs a cursor per edge; ' +
        '@neo4j/graphql returns lists (v7 has no single-element relationships). (c) needs no token; the service verifies ' +
        'a JWT per request.',
      '',
    );
  } else {
    lines.push(`Baseline (c) was not run: ${r.neo4jGraphql.problem}`, '');
  }
  lines.push('## CPU per request', '');
  lines.push(
    `CPU time per request of the server under test (the service, or the baseline's server), of Neo4j, and of the bench ` +
      `process (autocannon; for baseline (a) the driver loops), and the cores the three kept busy together ` +
      `(out of ${r.machine.cpus}); then the cores other processes of the machine kept busy meanwhile, and the share of ` +
      `CPU time the hypervisor stole (both from /proc/stat). Neo4j's CPU is only measured when the bench started it. ` +
      'version reads/req is, for the service, the model version statements it sent over the requests that read a ' +
      'version (1 for a request alone; requests waiting at once share one statement, so it falls under load).',
    '',
  );
  lines.push(mdTable(CPU_HEADER, cpuRows(r), CPU_ALIGN), '');
  lines.push('## Memory', '');
  lines.push(
    `Service resident set (sampled every 500 ms, every 100 ms during the storm): max ${fixed(r.memory.maxRssMb, 0)} MB, ` +
      `${fixed(r.memory.afterRssMb, 0)} MB after the storm.`,
    '',
  );
  lines.push(...stormSection(r));
  const phases = Object.entries(r.memory.phases).map(([p, mb]) => `${p} ${fixed(mb, 0)}`);
  lines.push(`Max RSS by phase (MB): ${phases.join(', ')}.`, '');
  if (r.profile) {
    lines.push(
      '## Service CPU profile (whole run)',
      '',
      `Shares of the ${fixed(r.profile.busyMs / 1000)} s the service was busy (of ${fixed(r.profile.totalMs / 1000)} s), start-up and catalog load included.`,
      '',
    );
    lines.push(
      mdTable(
        ['self time', 'area'],
        r.profile.areas.map((a) => [`${(a.share * 100).toFixed(1)}%`, a.name]),
        [true, false],
      ),
      '',
      mdTable(
        ['inclusive', 'area anywhere on the stack'],
        r.profile.inclusive.map((a) => [`${(a.share * 100).toFixed(1)}%`, a.name]),
        [true, false],
      ),
      '',
      mdTable(
        ['self time', 'function'],
        r.profile.functions.map((a) => [`${(a.share * 100).toFixed(1)}%`, a.name]),
        [true, false],
      ),
      '',
    );
  }
  lines.push(
    `Run time ${fixed(r.totalSeconds, 0)} s: ${Object.entries(r.phases)
      .map(([p, sec]) => `${p} ${fixed(sec, 0)} s`)
      .join(', ')}.`,
    '',
  );
  lines.push('![req/s at the target connection count](latest.svg)', '');
  return lines.join('\n');
}

function stormSection(r: Report): string[] {
  const setup = r.memory.stormSetup;
  return [
    'The storm (issue #11): each shape is a phase of its own; every request is a fresh connection, and its answer ' +
      "is counted by status and reason (the envelope's `DATA.reason`, or a GraphQL answer's " +
      '`errors[0].extensions.reason`; "reset" when the connection ended without an answer). "answered in" is the ' +
      'time from the start of a request to its answer. RSS before is sampled just before the phase, RSS max every ' +
      '100 ms while it runs, and RSS 10 s after ten seconds after its last answer. /healthz is probed every 50 ms ' +
      'from a process of its own over one keep-alive connection (a probe due while the last one is unanswered is ' +
      'not sent, so a stall shows as one long answer); p99 and max are over the probes sent during the phase. ' +
      `The storm's requests are for a tenant of their own (\`${setup.tenant}\`), whose type \`${setup.loopGuid}\` ` +
      `has ${setup.loopSelfReferences} attributes referring to itself (${setup.loopAttributes} with the platform ones).`,
    '',
    mdTable(['shape', ...STORM_HEADER.slice(1)], stormRows(r, true), STORM_ALIGN),
    '',
  ];
}
