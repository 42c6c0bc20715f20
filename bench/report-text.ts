// The bench's report as the plain-text tables printed at the end of a run (their rows also feed the Markdown).

import { fixed, hitPct, type Report, WRITES, x2, x3 } from './report.js';
import { answersText, checkTargets, ratios, rowTarget } from './report-checks.js';

export const yesNo = (met: boolean | null) => (met === null ? '–' : met ? 'yes' : 'NO');

// ---- plain text ----

function textTable(header: string[], rows: string[][], rightAlign: boolean[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (rightAlign[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function serviceRows(r: Report): string[][] {
  const rows: string[][] = [];
  const checks = checkTargets(r);
  for (const s of r.scenarios) {
    for (const m of r.measurements.filter((x) => x.scenario === s.id && x.target === 'service')) {
      const x = ratios(r, m);
      rows.push([
        s.id,
        String(m.connections),
        fixed(m.rps, 0),
        fixed(m.p50, 2),
        fixed(m.p99, 2),
        fixed(m.queriesPerRequest, 2),
        hitPct(m.cacheHitRate),
        String(m.non2xx + m.errors + (m.graphqlErrors ?? 0)),
        x2(x.a),
        x2(x.b),
        x2(x.c),
        x2(x.m),
        fixed(m.versionReadsPerRequest, 3),
        yesNo(rowTarget(r, m, checks)),
      ]);
    }
  }
  return rows;
}

export const SERVICE_HEADER = [
  'scenario',
  'conns',
  'req/s',
  'p50 ms',
  'p99 ms',
  'q/req',
  'hit %',
  'fail',
  'x(a)',
  'x(b)',
  'x(c)',
  'x(m)',
  'v/req',
  'target',
];
export const SERVICE_ALIGN = [
  false,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  false,
];

export function baselineRows(r: Report): string[][] {
  const name = {
    a: '(a) neo4j-driver',
    b: '(b) Fastify constant',
    c: '(c) @neo4j/graphql',
    m: '(m) memory ceiling',
    service: '',
  };
  return r.measurements
    .filter((m) => m.target !== 'service')
    .map((m) => [
      name[m.target],
      m.scenario,
      String(m.connections),
      fixed(m.rps, 0),
      fixed(m.p50, 2),
      fixed(m.p99, 2),
      String(m.non2xx + m.errors + (m.graphqlErrors ?? 0)),
    ]);
}

export const BASELINE_HEADER = ['baseline', 'scenario', 'conns', 'req/s', 'p50 ms', 'p99 ms', 'fail'];
export const BASELINE_ALIGN = [false, false, true, true, true, true, true];

export function cpuRows(r: Report): string[][] {
  return r.measurements.map((m) => [
    m.target === 'service' ? 'service' : `(${m.target})`,
    m.scenario,
    String(m.connections),
    fixed(m.cpuMsPerRequest.server, 3),
    fixed(m.cpuMsPerRequest.neo4j, 3),
    fixed(m.cpuMsPerRequest.loadgen, 3),
    fixed(m.cpuCoresBusy, 2),
    fixed(m.machine?.otherCores, 2),
    fixed(m.machine?.stealPct, 0),
    fixed(m.versionReadsPerRequest, 3),
  ]);
}

export const CPU_HEADER = [
  'who',
  'scenario',
  'conns',
  'server ms/req',
  'neo4j ms/req',
  'bench ms/req',
  'cores busy',
  'others cores',
  'steal %',
  'version reads/req',
];
export const CPU_ALIGN = [false, false, true, true, true, true, true, true, true, true];

// ---- the storm: one row per phase ----

export const STORM_HEADER = [
  'shape',
  'requests',
  'at once',
  'answers',
  'answered in p50 / max',
  'RSS before',
  'RSS max',
  'RSS 10 s after',
  '/healthz p99 ms',
  '/healthz max ms',
  'time',
];
export const STORM_ALIGN = [false, true, true, false, true, true, true, true, true, true, true];

export function stormRows(r: Report, markdown: boolean): string[][] {
  const ms = (n: number) => (n >= 1_000 ? `${fixed(n / 1000, 1)} s` : `${fixed(n, 0)} ms`);
  return r.memory.storms.map((s) => [
    markdown ? `\`${s.kind}\`: ${s.label}` : s.kind,
    String(s.requests),
    String(s.concurrency),
    answersText(s.statuses, markdown ? '×' : 'x'),
    `${ms(s.answerMs.p50)} / ${ms(s.answerMs.max)}`,
    `${fixed(s.rssBeforeMb, 0)} MB`,
    `${fixed(s.rssMaxMb, 0)} MB`,
    `${fixed(s.rssAfterMb, 0)} MB`,
    fixed(s.health.p99, 1),
    `${fixed(s.health.max, 1)} (${s.health.failures} failed, ${s.health.late} late)`,
    `${fixed(s.ms / 1000, 1)} s`,
  ]);
}

export function renderTable(r: Report): string {
  const parts: string[] = [];
  if (!r.settings.stormOnly) {
    parts.push(
      `== service (${r.settings.seconds} s per run, GraphQL ${r.settings.graphqlRequests.perConnection} requests per connection, LOG_LEVEL=${r.settings.logLevel}; x(a)/x(b)/x(c)/x(m) = req/s over the baseline's at the same connections; v/req = model-version statements per request) ==`,
      textTable(SERVICE_HEADER, serviceRows(r), SERVICE_ALIGN),
      '',
      '== baselines ==',
      textTable(BASELINE_HEADER, baselineRows(r), BASELINE_ALIGN),
      '',
      `== CPU per request (server under test, Neo4j, bench process) on ${r.machine.cpus} cores ==`,
      textTable(CPU_HEADER, cpuRows(r), CPU_ALIGN),
      '',
    );
  }
  parts.push(
    '== targets ==',
    ...checkTargets(r).map((t) => `${yesNo(t.met).padEnd(3)}  ${t.name}: ${t.detail}`),
  );
  if (!r.settings.stormOnly) parts.push(previousText(r));
  if (r.pageWalk && r.catalog) {
    parts.push(
      '',
      `page walk: ${r.pageWalk.pages} pages of 500 in ${fixed(r.pageWalk.seconds)} s, one at a time; median page ` +
        `${fixed(r.pageWalk.firstTenMedianMs)} ms near row 0, ${fixed(r.pageWalk.lastTenMedianMs)} ms near row ${r.catalog.deepRow.toLocaleString('en')}`,
    );
  }
  parts.push(
    '',
    `memory: service RSS max ${fixed(r.memory.maxRssMb, 0)} MB, after the storm ${fixed(r.memory.afterRssMb, 0)} MB`,
    '',
    '== storm (one phase per shape; RSS sampled every 100 ms; /healthz every 50 ms over one keep-alive connection) ==',
    textTable(STORM_HEADER, stormRows(r, false), STORM_ALIGN),
    ...r.memory.storms.map((s) => `  ${s.kind}: ${s.label}`),
  );
  if (r.profile) {
    parts.push(
      '',
      `== service CPU profile (whole run, ${fixed(r.profile.busyMs / 1000)} s busy of ${fixed(r.profile.totalMs / 1000)} s): self time by area ==`,
    );
    parts.push(...r.profile.areas.map((a) => `  ${(a.share * 100).toFixed(1).padStart(5)}%  ${a.name}`));
    parts.push('  inclusive (area anywhere on the stack):');
    parts.push(...r.profile.inclusive.map((a) => `  ${(a.share * 100).toFixed(1).padStart(5)}%  ${a.name}`));
    parts.push('  hottest functions:');
    parts.push(...r.profile.functions.map((a) => `  ${(a.share * 100).toFixed(1).padStart(5)}%  ${a.name}`));
  }
  return `${parts.join('\n')}\n`;
}

/** What the write targets compared with: the previous run's ratios to baseline (b). */
export function previousText(r: Report): string {
  const p = r.previous;
  if (!p)
    return 'Writes: no previous run to compare with (no bench/results/latest.json when this run started).';
  return (
    `Writes are compared with the previous run (${p.date}${p.quick ? ', --quick' : ''}) at ${p.connections} ` +
    `connections, where x(b) was ${WRITES.map((id) => `${id} ${x3(p.writeRatiosToB[id] ?? null)}`).join(', ')}.`
  );
}

/** The storm's table and what it measures (Markdown lines). */
