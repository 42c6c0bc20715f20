// Entity types from the command line: listing, create-or-get, and TYPE arguments given as a guid or a name.
import type { z } from 'zod';
import { nameKey } from '../resolvers/names.js';
import type { EntityTypeRow } from '../rest/schemas.js';
import { type Client, Refusal, UsageError } from './client.js';
import { type Command, quoted, stringOption } from './command.js';
import { json, table } from './output.js';

/** An entity type row as the REST API sends it (its schema in the REST contract). */
export type TypeRow = z.output<typeof EntityTypeRow>;

export interface TypePage {
  entity_types: TypeRow[];
  next_cursor: string | null;
}

/** The largest page the service serves; used when reading every type. */
export const MAX_PAGE_SIZE = '500';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** How the service compares type names (spec: trimmed, letter case ignored; the service also composes to NFC). */
export const typeNameKey = (name: string) => nameKey(name.normalize('NFC').trim());

export const listTypesPage = (client: Client, query: { page_size?: string; cursor?: string }) =>
  client.request<TypePage>('GET', '/entities/types', { query });

/** Every type of the tenant, page after page (following next_cursor). */
export async function* allTypes(client: Client, pageSize = MAX_PAGE_SIZE): AsyncGenerator<TypeRow> {
  let cursor: string | undefined;
  do {
    const page = await listTypesPage(client, { page_size: pageSize, ...(cursor ? { cursor } : {}) });
    yield* page.entity_types;
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
}

/**
 * Resolves TYPE arguments: a type guid, or a type's current name compared as the service does. A name is looked up
 * by paging GET /entities/types (read once per command, however many names it resolves); nothing is ever created.
 */
export class TypeResolver {
  #byKey: Map<string, TypeRow> | undefined;

  constructor(private readonly client: Client) {}

  async resolve(ref: string, what = 'TYPE'): Promise<TypeRow> {
    const trimmed = ref.trim();
    if (trimmed === '') throw new UsageError(`${what} must be a type guid or a type name, not empty.`);
    if (UUID.test(trimmed)) {
      try {
        const { entity_type } = await this.client.request<{ entity_type: TypeRow }>(
          'GET',
          `/entities/types/${encodeURIComponent(trimmed)}`,
        );
        return entity_type;
      } catch (err) {
        // Not a type guid of this tenant: it may still be a type's name.
        if (!(err instanceof Refusal && err.reason === 'unknown_entity_type')) throw err;
      }
    }
    if (!this.#byKey) {
      this.#byKey = new Map();
      for await (const row of allTypes(this.client)) {
        const key = typeNameKey(row.name);
        if (!this.#byKey.has(key)) this.#byKey.set(key, row);
      }
    }
    const found = this.#byKey.get(typeNameKey(trimmed));
    if (found) return found;
    throw new Refusal(404, {
      STATUS: 'FAIL',
      MESSAGE: `No entity type with the guid or name "${trimmed}" in your tenant (names are compared trimmed and ignoring case; nothing was created).`,
      DATA: { reason: 'unknown_entity_type' },
    });
  }
}

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
