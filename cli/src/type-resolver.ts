// TYPE arguments given as a guid or a name, resolved by the service; and a page of types.
import { type EntityTypeRow, PAGES } from '../../src/contract/wire.js';
import { type Client, Refusal, UsageError } from './client.js';

/** An entity type row as the REST API sends it (its schema in the REST contract). */
export type TypeRow = EntityTypeRow;

export interface TypePage {
  entity_types: TypeRow[];
  next_cursor: string | null;
}

/** The largest page the service serves; used when reading every type. */
export const MAX_PAGE_SIZE = String(PAGES.max);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const listTypesPage = (client: Client, query: { page_size?: string; cursor?: string }) =>
  client.request<TypePage>('GET', '/entities/types', { query });

/**
 * Resolves TYPE arguments: a type guid, or a type's name as the service resolves it (GET /entities/types/by-name:
 * trimmed, letter case ignored, and a renamed type also by the name it was created under). One request per
 * argument, a type found remembered for the command; nothing is ever created.
 */
export class TypeResolver {
  readonly #seen = new Map<string, Promise<TypeRow>>();

  constructor(private readonly client: Client) {}

  async resolve(ref: string, what = 'TYPE'): Promise<TypeRow> {
    const trimmed = ref.trim();
    if (trimmed === '') throw new UsageError(`${what} must be a type guid or a type name, not empty.`);
    let found = this.#seen.get(trimmed);
    if (!found) {
      found = this.#lookUp(trimmed);
      this.#seen.set(trimmed, found);
      // Only a type found is remembered: a name may come to resolve later in the command (apply creates types).
      found.catch(() => this.#seen.delete(trimmed));
    }
    return found;
  }

  async #lookUp(ref: string): Promise<TypeRow> {
    const unknown = (err: unknown) => err instanceof Refusal && err.reason === 'unknown_entity_type';
    if (UUID.test(ref)) {
      try {
        const { entity_type } = await this.client.request<{ entity_type: TypeRow }>(
          'GET',
          `/entities/types/${encodeURIComponent(ref)}`,
        );
        return entity_type;
      } catch (err) {
        // Not a type guid of this tenant: it may still be a type's name.
        if (!unknown(err)) throw err;
      }
    }
    try {
      const { entity_type } = await this.client.request<{ entity_type: TypeRow }>(
        'GET',
        `/entities/types/by-name/${encodeURIComponent(ref)}`,
      );
      return entity_type;
    } catch (err) {
      if (!unknown(err)) throw err;
      // The service's suggestions of close names, if it made any, are kept.
      const suggested = / Did you mean .*\?$/.exec((err as Refusal).message)?.[0] ?? '';
      throw new Refusal(404, {
        STATUS: 'FAIL',
        MESSAGE: `No entity type with the guid or name "${ref}" in your tenant (names are compared trimmed and ignoring case; nothing was created).${suggested}`,
        DATA: { reason: 'unknown_entity_type' },
      });
    }
  }
}
