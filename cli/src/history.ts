// `metamodel history TYPE` and `metamodel changes`: who changed what, when and why. A type's history is read newest
// first (GET /entities/types/{guid}/history); the tenant's change feed oldest first (GET /entities/changes),
// filtered by type, attribute and kind, and followed with --follow as new changes come.
import { UsageError } from './client.js';
import { type Command, quoted, stringOption } from './command.js';
import { json, plural, table } from './output.js';

/** A change record as the service sends it (ChangeRow). */
interface Change {
  id: string;
  at: string;
  kind: string;
  type_guid: string;
  attribute_guid: string | null;
  actor: string | null;
  request_id: string | null;
  reason: string | null;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const name = (side: Record<string, unknown> | null) => quoted(String(side?.name ?? ''));

/** What a change did, in a few words. */
export function changeText(c: Change): string {
  switch (c.kind) {
    case 'type_created':
      return `created type ${name(c.after)}`;
    case 'type_renamed':
      return `renamed type ${name(c.before)} to ${name(c.after)}`;
    case 'type_deleted':
      return `deleted type ${name(c.before)}`;
    case 'type_described':
      return `described type ${name(c.after)}: ${evolvedText(c.before ?? {}, c.after ?? {})}`;
    case 'managed_type_set_up':
      return `set up managed type ${name(c.after)}`;
    case 'attribute_declared': {
      const a = c.after ?? {};
      const carried = a.carried as { kept: number; refused: number } | undefined;
      return (
        `declared ${name(a)}: ${String(a.value_type)}, ${String(a.cardinality)}${enumText(a.allowed_values)}` +
        (carried ? ` (carried ${plural(carried.kept, 'value')}, ${carried.refused} refused)` : '')
      );
    }
    case 'attribute_evolved':
      return `changed ${name(c.after)} in place: ${evolvedText(c.before ?? {}, c.after ?? {})}`;
    case 'attribute_withdrawn':
      return `withdrew ${name(c.before)}${c.after?.carrying_values ? ' (redeclared: its values carried)' : ''}`;
    case 'attribute_removed':
      return `purged ${name(c.before)} (${plural(Number(c.before?.values_removed ?? 0), 'value')} removed)`;
    default:
      return c.kind;
  }
}

/** An enumeration as a history line shows it: its first values. */
function enumText(values: unknown): string {
  if (!Array.isArray(values)) return '';
  const shown = values.slice(0, 5).map((v) => JSON.stringify(v));
  return `, one of ${shown.join(', ')}${values.length > shown.length ? `, … (${values.length})` : ''}`;
}

/** What a change in place changed, field by field; an enumeration by the values it added and removed. */
export function evolvedText(before: Record<string, unknown>, after: Record<string, unknown>): string {
  return Object.keys(after)
    .filter((field) => field !== 'name')
    .map((field) => {
      const was = before[field];
      const now = after[field];
      if (field === 'allowed_values' && Array.isArray(was) && Array.isArray(now)) {
        const key = (v: unknown) => JSON.stringify(v);
        const had = new Set(was.map(key));
        const added = now.filter((v) => !had.has(key(v))).map(key);
        return `allowed_values +${added.length}${added.length > 0 ? ` (${added.slice(0, 5).join(', ')}${added.length > 5 ? ', …' : ''})` : ''}`;
      }
      const text = (v: unknown) => (Array.isArray(v) ? `${v.length} values` : JSON.stringify(v ?? null));
      return `${field} ${text(was)} → ${text(now)}`;
    })
    .join('; ');
}

const rows = (changes: Change[]) =>
  table(
    ['at', 'what', 'who', 'why'],
    changes.map((c) => [c.at, changeText(c), c.actor ?? '(the service)', c.reason ?? '']),
  );

const pageSizeOption = {
  type: 'string' as const,
  value: 'N',
  help: 'changes per page, 1..500 (default 100)',
};

export const history: Command = {
  path: ['history'],
  args: ['TYPE'],
  options: {
    'page-size': pageSizeOption,
    all: { type: 'boolean', help: 'every change of the type, not only the newest page' },
  },
  service: true,
  synopsis: 'TYPE [--page-size N] [--all]',
  summary: "A type's history, newest first: who changed it and its definitions, when, and why",
  description:
    'Reads GET /entities/types/{guid}/history: the type created, renamed, deleted; its definitions declared,\n' +
    'withdrawn, purged, each with who made the change (the token subject), when, and the reason sent with it.\n' +
    "A deleted type's history is read by its guid. Without --all, the newest page (more: said on stderr).",
  examples: ['metamodel history Report', 'metamodel history Report --all --json'],
  async run(ctx, [ref], values) {
    const client = ctx.client();
    const given = String(ref).trim();
    // A guid is read as it is (a deleted type's history outlives it); a name is resolved first.
    const guid = UUID.test(given) ? given : (await ctx.types().resolve(given)).guid;
    const pageSize = stringOption(values, 'page-size');
    const changes: Change[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.request<{ changes: Change[]; next_cursor: string | null }>(
        'GET',
        `/entities/types/${encodeURIComponent(guid)}/history`,
        { query: { page_size: pageSize, cursor } },
      );
      changes.push(...page.changes);
      cursor = page.next_cursor ?? undefined;
      if (cursor && values.all !== true) ctx.io.err(`Older changes follow: use --all.\n`);
    } while (cursor && values.all === true);
    if (ctx.json) return ctx.io.out(json({ type_guid: guid, changes }));
    ctx.io.out(rows(changes));
  },
};

/** How often --follow asks for new changes. */
const FOLLOW_POLL_MS = 2_000;

export const changes: Command = {
  path: ['changes'],
  args: [],
  options: {
    type: { type: 'string', value: 'TYPE', help: 'only changes of this type (a guid, or a name)' },
    attribute: { type: 'string', value: 'NAME', help: 'only changes of definitions of this name' },
    kind: {
      type: 'string',
      value: 'KINDS',
      help: 'only changes of these kinds, comma-separated (e.g. attribute_withdrawn,attribute_removed)',
    },
    after: { type: 'string', value: 'CURSOR', help: 'start after this cursor (printed at the end of a run)' },
    'page-size': pageSizeOption,
    follow: { type: 'boolean', help: 'keep printing new changes as they are made (stop with Ctrl-C)' },
  },
  service: true,
  synopsis: '[--type TYPE] [--attribute NAME] [--kind KINDS] [--after CURSOR] [--follow]',
  summary: "The tenant's change feed, oldest first; --follow keeps printing new changes",
  description:
    "Reads GET /entities/changes: every change of the tenant's metamodel, oldest first, each once. Without\n" +
    '--after, from the first change; the cursor to resume from is printed on stderr at the end (--json: in\n' +
    'the output). With --follow it keeps asking every 2 seconds and prints each new change as it comes; with\n' +
    '--json, then, one JSON object per line (a change, or {"next_cursor": ...} after each page).',
  examples: [
    'metamodel changes --type Report',
    'metamodel changes --kind attribute_withdrawn,attribute_removed --attribute grade',
    'metamodel changes --follow --json',
  ],
  async run(ctx, _args, values) {
    const client = ctx.client();
    const typeRef = stringOption(values, 'type');
    const typeGuid =
      typeRef === undefined
        ? undefined
        : UUID.test(typeRef.trim())
          ? typeRef.trim()
          : (await ctx.types().resolve(typeRef)).guid;
    const query = {
      type_guid: typeGuid,
      attribute: stringOption(values, 'attribute'),
      kind: stringOption(values, 'kind'),
      page_size: stringOption(values, 'page-size'),
    };
    if (query.attribute !== undefined && query.attribute.trim() === '') {
      throw new UsageError('--attribute must name an attribute.');
    }
    const follow = values.follow === true;
    let cursor = stringOption(values, 'after');
    const seen: Change[] = [];
    const signal = ctx.io.signal;
    for (;;) {
      const page = await client.request<{ changes: Change[]; next_cursor: string; has_more: boolean }>(
        'GET',
        '/entities/changes',
        { query: { ...query, after: cursor } },
      );
      cursor = page.next_cursor;
      if (follow) {
        if (ctx.json) {
          for (const c of page.changes) ctx.io.out(`${JSON.stringify(c)}\n`);
          if (page.changes.length > 0) ctx.io.out(`${JSON.stringify({ next_cursor: cursor })}\n`);
        } else {
          for (const c of page.changes) {
            ctx.io.out(
              `${c.at}  ${changeText(c)}  by ${c.actor ?? '(the service)'}${c.reason ? `: ${c.reason}` : ''}\n`,
            );
          }
        }
      } else seen.push(...page.changes);
      if (page.has_more) continue;
      if (!follow) break;
      if (signal?.aborted) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, FOLLOW_POLL_MS);
        signal?.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve();
        });
      });
      if (signal?.aborted) break;
    }
    if (follow) return;
    if (ctx.json) return ctx.io.out(json({ changes: seen, next_cursor: cursor }));
    ctx.io.out(rows(seen));
    ctx.io.err(`${seen.length} changes. Resume with: --after ${quoted(cursor ?? '')}\n`);
  },
};
