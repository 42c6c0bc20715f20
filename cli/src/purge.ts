// `metamodel purge`: runs the purge job now, streaming its progress (NDJSON) into a bar on a terminal.
import cliProgress from 'cli-progress';
import type { PurgeReport } from '../../src/contract/wire.js';
import type { Data } from './client.js';
import type { Command } from './command.js';
import { json, plural, table } from './output.js';

const count = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

export const purge: Command = {
  path: ['purge'],
  args: [],
  options: {
    tenant: { type: 'string', value: 'T', help: 'only this tenant (default: every tenant)' },
  },
  service: true,
  synopsis: '[--tenant T]',
  summary: 'Run the purge job now (operators: admins of the default tenant, cross-tenant accounts)',
  description:
    'Runs the daily purge job now: it finishes removing the stored values of withdrawn attribute definitions and\n' +
    'removes the definitions whose data is gone, freeing their names. On a terminal a progress bar (withdrawn\n' +
    'definitions done of total, values removed) is drawn on stderr; then the report is printed.',
  examples: ['metamodel purge', 'metamodel purge --tenant acme --json'],
  async run(ctx, _args, values) {
    const tenant = typeof values.tenant === 'string' ? values.tenant : undefined;
    let bar: cliProgress.SingleBar | undefined;
    const onLine = (line: Data) => {
      const p = line.progress as Data | undefined;
      if (ctx.io.stderr.isTTY !== true || typeof p !== 'object' || p === null) return;
      const payload = { values_removed: count(p.values_removed) };
      if (!bar) {
        bar = new cliProgress.SingleBar(
          {
            stream: ctx.io.stderr,
            format: 'purge |{bar}| {value}/{total} withdrawn definitions | {values_removed} values removed',
            hideCursor: true,
          },
          cliProgress.Presets.shades_classic,
        );
        bar.start(count(p.definitions_total), count(p.definitions_done), payload);
      } else {
        bar.setTotal(count(p.definitions_total));
        bar.update(count(p.definitions_done), payload);
      }
    };
    let report: PurgeReport;
    try {
      report = await ctx
        .client()
        .streamed<PurgeReport>(
          'POST',
          '/admin/jobs/purge',
          { body: tenant === undefined ? {} : { tenant } },
          onLine,
        );
    } finally {
      bar?.stop();
    }
    if (ctx.json) return ctx.io.out(json(report));
    const removed = report.removed ?? [];
    // Two counts that differ and are both true: what this run's batches removed, and what the definitions it
    // removed had lost in all since their withdrawal (the background purge removes most values before the run).
    const sinceWithdrawal = removed.reduce((sum, r) => sum + r.values_removed, 0);
    ctx.io.out(
      `Purge finished${tenant ? ` for tenant ${tenant}` : ''}: ${plural(removed.length, 'withdrawn definition')} removed ` +
        `(${plural(sinceWithdrawal, 'stored value')} removed since their withdrawal, in the table); ` +
        `this run removed ${plural(report.values_removed, 'value')} in ${plural(report.batches, 'batch')}; ${report.pending} pending.\n`,
    );
    if (removed.length > 0) {
      ctx.io.out(
        table(
          ['name', 'type guid', 'values removed since withdrawal', 'definition guid'],
          removed.map((r) => [r.name, r.type_guid, String(r.values_removed), r.guid]),
        ),
      );
    }
    if (report.pending > 0) {
      ctx.io.out(
        'Pending definitions are withdrawn too recently (PURGE_GRACE_SECONDS) or still being emptied; a later run removes them.\n',
      );
    }
  },
};
