// The bench's report as bench/results/latest.svg: requests per second per scenario at the target level, log scale.
import { find, type Report, type Target } from './report.js';

// ---- SVG: req/s per scenario at the target level, log scale, with the baselines ----

const COLORS: Record<Target, string> = {
  service: '#2563eb',
  a: '#9ca3af',
  b: '#16a34a',
  c: '#ea580c',
  m: '#7c3aed',
};
const escapeXml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function renderSvg(r: Report): string {
  const level = r.settings.targetLevel;
  const bars: { label: string; target: Target; rps: number }[] = [];
  const b = find(r, 'constant', 'b', level);
  if (b) bars.push({ label: '(b) Fastify constant JSON', target: 'b', rps: b.rps });
  for (const s of r.scenarios) {
    const m = find(r, s.id, 'service', level);
    if (m) bars.push({ label: s.id, target: 'service', rps: m.rps });
    const a = find(r, s.id, 'a', level);
    if (a) bars.push({ label: `  (a) same Cypher, driver only`, target: 'a', rps: a.rps });
    const c = find(r, s.id, 'c', level);
    if (c) bars.push({ label: '  (c) @neo4j/graphql', target: 'c', rps: c.rps });
    const ceiling = find(r, s.id, 'm', level);
    if (ceiling) bars.push({ label: '  (m) memory ceiling', target: 'm', rps: ceiling.rps });
  }
  const width = 900;
  const left = 230;
  const right = 90;
  const top = 50;
  const rowH = 22;
  const height = top + bars.length * rowH + 40;
  const maxRps = Math.max(10, ...bars.map((x) => x.rps));
  const decades = Math.ceil(Math.log10(maxRps));
  const scale = (v: number) => left + ((width - left - right) * Math.log10(Math.max(1, v))) / decades;
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-labelledby="title" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<title id="title">Requests per second at ${level} connections: the service against its baselines</title>`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${left}" y="20" font-size="14" font-weight="bold">req/s at ${level} connections (log scale) — ${escapeXml(r.date.slice(0, 10))}</text>`,
    `<text x="${left}" y="38" fill="#555">blue: service · grey: (a) same Cypher via neo4j-driver · green: (b) Fastify constant JSON · orange: (c) @neo4j/graphql · violet: (m) memory ceiling</text>`,
  );
  for (let d = 0; d <= decades; d++) {
    const x = scale(10 ** d);
    out.push(
      `<line x1="${x.toFixed(1)}" y1="${top - 4}" x2="${x.toFixed(1)}" y2="${top + bars.length * rowH}" stroke="#e5e7eb"/>`,
      `<text x="${x.toFixed(1)}" y="${top + bars.length * rowH + 16}" text-anchor="middle" fill="#555">${(10 ** d).toLocaleString('en')}</text>`,
    );
  }
  bars.forEach((bar, i) => {
    const y = top + i * rowH;
    const x = scale(bar.rps);
    out.push(
      `<text x="${left - 8}" y="${y + 15}" text-anchor="end">${escapeXml(bar.label)}</text>`,
      `<rect x="${left}" y="${y + 3}" width="${Math.max(1, x - left).toFixed(1)}" height="${rowH - 6}" fill="${COLORS[bar.target]}"/>`,
      `<text x="${(x + 6).toFixed(1)}" y="${y + 15}" fill="#111">${bar.rps >= 100 ? bar.rps.toFixed(0) : bar.rps.toFixed(1)}</text>`,
    );
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
