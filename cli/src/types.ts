// Entity types from the command line: listing and create-or-get.
import { type Command, quoted, stringOption } from './command.js';
import { json, table } from './output.js';
import { listTypesPage, MAX_PAGE_SIZE, type TypeRow } from './type-resolver.js';

/** What kind of type a row is, in words, from the fields that apply to it. */
export function typeKind(row: TypeRow): string {
  const kinds: string[] = [];
  if (row.catalog_level) kinds.push('catalog level');
  if (row.vocabulary) kinds.push('vocabulary');
  if (row.creatable === false) kinds.push('managed');
  return kinds.join(', ');
}

const typeTable = (rows: TypeRow[]) =>
  table(
    ['name', 'origin', 'kind', 'guid'],
    rows.map((r) => [r.name, r.origin, typeKind(r), r.guid]),
  );

export const typesList: Command = {
  path: ['types', 'list'],
  args: [],
  options: {
    'page-size': {
      type: 'string',
      value: 'N',
      help: 'rows per page, 1..500 (service default 100; 500 with --all)',
    },
    all: { type: 'boolean', help: 'every type: follow next_cursor to the last page' },
    cursor: { type: 'string', value: 'C', help: 'start at this next_cursor of an earlier page' },
  },
  service: true,
  synopsis: '[--page-size N] [--all] [--cursor C]',
  summary: 'List entity types (system and user-defined, in name order)',
  description:
    'Lists the entity types of your tenant, system and user-defined together, in name order. Without --all it\n' +
    'shows one page and, when more follow, says so on stderr with the cursor of the next page.',
  examples: [
    'metamodel types list',
    'metamodel types list --all',
    'metamodel types list --page-size 20 --json',
  ],
  async run(ctx, _args, values) {
    const pageSize = stringOption(values, 'page-size');
    const cursor = stringOption(values, 'cursor');
    const client = ctx.client();
    if (values.all === true) {
      const rows: TypeRow[] = [];
      let next: string | undefined = cursor;
      do {
        const page = await listTypesPage(client, {
          page_size: pageSize ?? MAX_PAGE_SIZE,
          ...(next ? { cursor: next } : {}),
        });
        rows.push(...page.entity_types);
        next = page.next_cursor ?? undefined;
      } while (next);
      if (ctx.json) return ctx.io.out(json({ entity_types: rows, next_cursor: null }));
      ctx.io.out(typeTable(rows));
      ctx.io.out(`${rows.length} types\n`);
      return;
    }
    const page = await listTypesPage(client, {
      ...(pageSize !== undefined ? { page_size: pageSize } : {}),
      ...(cursor !== undefined ? { cursor } : {}),
    });
    if (ctx.json) return ctx.io.out(json(page));
    ctx.io.out(typeTable(page.entity_types));
    if (page.next_cursor) {
      ctx.io.err(`More types follow: use --all, or --cursor ${page.next_cursor}\n`);
    }
  },
};

export const typesCreate: Command = {
  path: ['types', 'create'],
  args: ['NAME'],
  options: {},
  service: true,
  synopsis: 'NAME',
  summary: 'Create an entity type, or find the one that already has that name',
  description:
    'Create-or-get: when a type of that name exists (names are compared trimmed and ignoring case) it is\n' +
    'returned unchanged and nothing is written. Quote a name that has spaces.',
  examples: ['metamodel types create Report', `metamodel types create 'Data Product' --json`],
  async run(ctx, [name]) {
    const data = await ctx
      .client()
      .request<{ entity_type: TypeRow; created: boolean }>('POST', '/entities/types', { body: { name } });
    if (ctx.json) return ctx.io.out(json(data));
    const { entity_type: row } = data;
    ctx.io.out(
      data.created
        ? `Created type ${quoted(row.name)} (${row.guid}).\n`
        : `Type ${quoted(row.name)} already existed (${row.guid}); nothing was changed.\n`,
    );
  },
};
