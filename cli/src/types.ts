// Entity types from the command line: listing, create-or-get, rename, delete, and releasing a former name.
import { UsageError } from './client.js';
import { type Command, quoted, stringOption, textFields } from './command.js';
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
    if (data.created) return ctx.io.out(`Created type ${quoted(row.name)} (${row.guid}).\n`);
    // Found under another name: the one given is a name the type had (created under, renamed from), which still
    // resolves to it until released. (A display check only: the service compared the names.)
    const fold = (n: string) => n.trim().normalize('NFC').toLowerCase();
    if (fold(row.name) !== fold(name!)) {
      return ctx.io.out(
        `${quoted(name!.trim())} is a former name of type ${quoted(row.name)} (${row.guid}): it still resolves to that type, so nothing was created.\n` +
          `To create a new type under it, free the name first: metamodel types release-name ${shellWord(row.name)} ${shellWord(name!.trim())}\n`,
      );
    }
    ctx.io.out(`Type ${quoted(row.name)} already existed (${row.guid}); nothing was changed.\n`);
  },
};

/** A word as a shell reads it back: quoted when it holds anything but plain characters. */
const shellWord = (word: string) =>
  /^[\w.@%+=:,/-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;

export const typesRename: Command = {
  path: ['types', 'rename'],
  args: ['TYPE', 'NAME'],
  options: {},
  service: true,
  synopsis: 'TYPE NAME',
  summary: 'Rename a user-defined type (its guid, definitions and entities are kept)',
  description:
    'Renames TYPE to NAME (PATCH /entities/types/{guid}). The name it had keeps resolving to it (create-or-get\n' +
    'and TYPE arguments find it by that name) until released with `metamodel types release-name`.',
  examples: ['metamodel types rename "Quarterly Report" Report'],
  async run(ctx, [typeRef, name]) {
    const type = await ctx.types().resolve(typeRef!);
    const data = await ctx
      .client()
      .request<{ entity_type: TypeRow }>('PATCH', `/entities/types/${encodeURIComponent(type.guid)}`, {
        body: { name },
      });
    if (ctx.json) return ctx.io.out(json(data));
    const row = data.entity_type;
    if (row.name === type.name) {
      return ctx.io.out(`Type ${quoted(row.name)} already has that name; nothing was changed.\n`);
    }
    ctx.io.out(
      `Renamed type ${quoted(type.name)} to ${quoted(row.name)} (${row.guid}). ${quoted(type.name)} still resolves to it; ` +
        `free it with: metamodel types release-name ${shellWord(row.name)} ${shellWord(type.name)}\n`,
    );
  },
};

export const typesDelete: Command = {
  path: ['types', 'delete'],
  args: ['TYPE'],
  options: {},
  service: true,
  synopsis: 'TYPE',
  summary: 'Delete a user-defined type (its live definitions are withdrawn; its entities remain)',
  description:
    'Deletes TYPE (DELETE /entities/types/{guid}). Its live definitions are withdrawn with it (their values are\n' +
    'purged); its entities remain and keep its guid, so creating a type under its name again reattaches them.\n' +
    "Refused while other types' definitions refer to it (type_referenced), and for system and managed types.",
  examples: ['metamodel types delete Report'],
  async run(ctx, [typeRef]) {
    const type = await ctx.types().resolve(typeRef!);
    const data = await ctx
      .client()
      .request<{ guid: string; deleted: boolean }>(
        'DELETE',
        `/entities/types/${encodeURIComponent(type.guid)}`,
      );
    if (ctx.json) return ctx.io.out(json(data));
    ctx.io.out(
      `Deleted type ${quoted(type.name)} (${type.guid}); its live definitions were withdrawn (their values are being purged).\n`,
    );
  },
};

export const typesDescribe: Command = {
  path: ['types', 'describe'],
  args: ['TYPE'],
  options: {
    description: { type: 'string', value: 'TEXT', help: 'what the type is for (at most 1,000 characters)' },
    'display-name': { type: 'string', value: 'TEXT', help: 'a label for people (at most 256 characters)' },
  },
  service: true,
  synopsis: 'TYPE [--description TEXT] [--display-name TEXT]',
  summary: "Set a type's description and display name (an empty text removes one)",
  description:
    'Sets the texts for people of TYPE (PATCH /entities/types/{guid}); an option left out keeps its text, an\n' +
    'empty one removes it. Any type may carry them; a model file states them too (description, display_name).',
  examples: [
    'metamodel types describe Report --display-name "Quarterly report" --description "One per quarter"',
  ],
  async run(ctx, [typeRef], values) {
    const body: Record<string, unknown> = textFields(values);
    if (Object.keys(body).length === 0) throw new UsageError('give --description or --display-name.');
    const type = await ctx.types().resolve(typeRef!);
    const data = await ctx
      .client()
      .request<{ entity_type: TypeRow }>('PATCH', `/entities/types/${encodeURIComponent(type.guid)}`, {
        body,
      });
    if (ctx.json) return ctx.io.out(json(data));
    const row = data.entity_type;
    const said = (v: string | undefined) => (v ? quoted(v) : 'none');
    ctx.io.out(
      `Type ${quoted(row.name)}: display name ${said(row.display_name)}, description ${said(row.description)}.\n`,
    );
  },
};

export const typesReleaseName: Command = {
  path: ['types', 'release-name'],
  args: ['TYPE', 'NAME'],
  options: {},
  service: true,
  synopsis: 'TYPE NAME',
  summary: 'Release a former name of a type, so that creating a type under it makes a new one',
  description:
    'A renamed type is still found by the names it had (create-or-get answers it). Releasing NAME ends that\n' +
    '(POST /entities/types/{guid}/former-names/release): `metamodel types create NAME` then creates a new type.',
  examples: ['metamodel types release-name Report "Quarterly Report"'],
  async run(ctx, [typeRef, name]) {
    const type = await ctx.types().resolve(typeRef!);
    const data = await ctx
      .client()
      .request<{ entity_type: TypeRow; released: boolean }>(
        'POST',
        `/entities/types/${encodeURIComponent(type.guid)}/former-names/release`,
        { body: { name } },
      );
    if (ctx.json) return ctx.io.out(json(data));
    ctx.io.out(
      data.released
        ? `Released ${quoted(name!.trim())}: it no longer resolves to type ${quoted(data.entity_type.name)}; creating a type under it now makes a new type.\n`
        : `${quoted(name!.trim())} was already released from type ${quoted(data.entity_type.name)}; nothing was changed.\n`,
    );
  },
};
