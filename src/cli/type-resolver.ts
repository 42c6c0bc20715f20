// TYPE arguments given as a guid or a name, and reading every type of the tenant page after page.
import type { EntityTypeRow } from '../contract/wire.js';
import { nameKey } from '../model/names.js';
import { type Client, Refusal, UsageError } from './client.js';

/** An entity type row as the REST API sends it (its schema in the REST contract). */
export type TypeRow = EntityTypeRow;

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
