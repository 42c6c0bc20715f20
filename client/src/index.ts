// @metamodel/client: a small typed client for the Entity Metamodel GraphQL API. The operations live in
// client/operations/*.graphql; GraphQL Code Generator turns them into typed documents (./generated.ts), and
// request() posts one to /graphql and answers with its typed data, or throws MetamodelGraphQLError.
// Over 300 lines: the client is one surface, a typed method per operation with its documentation.
import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';
import {
  CreateEntityTypeDocument,
  type CreateEntityTypeMutation,
  type DeclareAttributeMutation,
  DeleteEntityTypeDocument,
  type DeleteEntityTypeMutation,
  EntitiesDocument,
  type EntitiesQuery,
  EntityTypeByGuidDocument,
  type EntityTypeByGuidQuery,
  EntityTypeByNameDocument,
  type EntityTypeByNameQuery,
  type EntityTypeFieldsFragment,
  EntityTypesPageDocument,
  type EntityTypesPageQuery,
  type EvolveAttributeMutation,
  ModelChangesDocument,
  type ModelChangesQuery,
  type ModelChangesQueryVariables,
  ReleaseFormerNameDocument,
  type ReleaseFormerNameMutation,
  RenameEntityTypeDocument,
  type RenameEntityTypeMutation,
  TypeAttributesDocument,
  type TypeAttributesQuery,
  TypeHistoryDocument,
  type TypeHistoryQuery,
  WithdrawAttributeDocument,
  type WithdrawAttributeMutation,
} from './generated.js';
import {
  DeclareAttributeDocument,
  type DeclareAttributeInput,
  EvolveAttributeDocument,
  type EvolveAttributeInput,
} from './inputs.js';

export * from './generated.js';
// Named here, they take the place of the generated declarations of the same names (valueType and cardinality typed
// as their unions).
export {
  DeclareAttributeDocument,
  type DeclareAttributeInput,
  type DeclareAttributeMutationVariables,
  EvolveAttributeDocument,
  type EvolveAttributeInput,
  type EvolveAttributeMutationVariables,
  type WithValueWords,
} from './inputs.js';

/** A typed operation: its GraphQL text (toString) and, in its type, its result and variables. */
export type Operation<TData, TVariables> = DocumentTypeDecoration<TData, TVariables> & { toString(): string };

/** What the client needs of a response; the global fetch's Response has it. */
export interface FetchResponse {
  readonly status: number;
  /** For Retry-After on a 503 or a 429; optional so that a minimal adapter still fits. */
  readonly headers?: { get(name: string): string | null };
  text(): Promise<string>;
}

/** What the client needs of fetch; globalThis.fetch fits, and so does an adapter over a test server. */
export type FetchLike = (
  url: string,
  init: { method: 'POST'; headers: Record<string, string>; body: string },
) => Promise<FetchResponse>;

export interface MetamodelClientOptions {
  /** Base URL of the service (`http://localhost:4000`) or its GraphQL endpoint (`…/graphql`). */
  url: string;
  /** Bearer token (JWT with `sub` and `tenant`), or a function giving the current one for each request. */
  token: string | (() => string | Promise<string>);
  /** fetch implementation; default `globalThis.fetch`. */
  fetch?: FetchLike;
  /**
   * Sends of one request at most while the service answers 503 (the database away or busy) or 429 with Retry-After
   * (the tenant's own requests holding its turns), the first included;
   * default 4. Mutations carry an Idempotency-Key (the same on every retry), so a retried write happens once.
   */
  attempts?: number;
  /** Makes each mutation's Idempotency-Key; default `crypto.randomUUID()`. */
  idempotencyKey?: () => string;
}

/**
 * The wait before retry `attempt` + 1: the service's Retry-After (at most 5 s), else 250 ms doubling; plus up to
 * half of it at random, so that clients refused together do not all come back at the same moment.
 */
export function retryDelayMs(
  retryAfter: string | null | undefined,
  attempt: number,
  random: () => number = Math.random,
): number {
  const seconds = retryAfter == null ? Number.NaN : Number(retryAfter);
  const base =
    Number.isFinite(seconds) && seconds >= 0 ? Math.min(seconds, 5) * 1000 : 250 * 2 ** (attempt - 1);
  return base * (1 + 0.5 * random());
}

/** Whether a document's (first) operation is a mutation: its text starts with `mutation`, comments aside. */
const isMutation = (text: string) => /^(\s*#[^\n]*\n)*\s*mutation\b/.test(text);

/** One error of a GraphQL response, as the service sends it. */
export interface GraphQLErrorEntry {
  message: string;
  path?: readonly (string | number)[];
  /** `reason`: the machine-readable refusal reason (the same as over REST); `code`: its upper-case form. */
  extensions?: { reason?: string; code?: string; [key: string]: unknown };
}

/**
 * A request the service refused or could not answer: the GraphQL errors of the response (or, for a refusal
 * before GraphQL ran, such as `unauthenticated`, the REST envelope's reason as one error). Branch on `reason`.
 */
export class MetamodelGraphQLError extends Error {
  override readonly name = 'MetamodelGraphQLError';
  /** `extensions.reason` of each error, in order; undefined for errors without one (e.g. query validation). */
  readonly reasons: readonly (string | undefined)[];

  constructor(
    /** Every error of the response, as sent. */
    readonly errors: readonly GraphQLErrorEntry[],
    /** HTTP status of the response. */
    readonly status: number,
    /** Data that came with the errors (a partial result), or null. */
    readonly data: unknown = null,
  ) {
    const first = errors[0]?.message ?? `Unexpected response (HTTP ${status}).`;
    super(errors.length > 1 ? `${first} (and ${errors.length - 1} more errors)` : first);
    this.reasons = errors.map((e) => e.extensions?.reason);
  }

  /** The first error's reason: what a caller usually branches on (e.g. `invalid_cursor`). */
  get reason(): string | undefined {
    return this.reasons[0];
  }
}

/** Variables are optional exactly when the operation has no required variable. */
export type VariablesArgs<TVariables> =
  Record<string, never> extends TVariables ? [variables?: TVariables] : [variables: TVariables];

const endpointOf = (url: string) => {
  const u = new URL(url);
  if (!u.pathname.endsWith('/graphql')) u.pathname = `${u.pathname.replace(/\/$/, '')}/graphql`;
  return u.toString();
};

function parseBody(text: string): Record<string, unknown> | null {
  try {
    const body: unknown = JSON.parse(text);
    return body !== null && typeof body === 'object' && !Array.isArray(body)
      ? (body as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** The errors a response body carries: GraphQL errors, or a REST envelope refusal (401 before GraphQL ran). */
function errorsOf(body: Record<string, unknown> | null): GraphQLErrorEntry[] | null {
  if (Array.isArray(body?.errors) && body.errors.length > 0) return body.errors as GraphQLErrorEntry[];
  if (body?.STATUS === 'FAIL') {
    const reason = (body.DATA as { reason?: unknown } | null)?.reason;
    return [
      {
        message: typeof body.MESSAGE === 'string' && body.MESSAGE !== '' ? body.MESSAGE : 'Request refused.',
        ...(typeof reason === 'string' ? { extensions: { reason, code: reason.toUpperCase() } } : {}),
      },
    ];
  }
  return null;
}

/** The global fetch, bound (browsers refuse a detached call). */
function globalFetch(): FetchLike {
  const global = (globalThis as { fetch?: FetchLike }).fetch;
  if (!global) throw new Error('No global fetch: pass options.fetch.');
  return global.bind(globalThis);
}

/** Why a write is made (1 to 500 characters): recorded with it in the history (`ModelChange.reason`). */
export interface Reasoned {
  reason?: string;
}

/**
 * A write made only while the type is at the version the caller read (its `version` field; REST: its ETag), and
 * why it is made.
 */
export interface Conditional extends Reasoned {
  ifVersion?: string;
}

export function createMetamodelClient(options: MetamodelClientOptions) {
  const endpoint = endpointOf(options.url);
  const fetchImpl = options.fetch ?? globalFetch();
  const attempts = Math.max(1, options.attempts ?? 4);
  const makeKey = options.idempotencyKey ?? (() => globalThis.crypto.randomUUID());

  /** Runs one operation; resolves to its data, or throws MetamodelGraphQLError with each error's reason. */
  async function request<TData, TVariables>(
    document: Operation<TData, TVariables>,
    ...[variables]: VariablesArgs<TVariables>
  ): Promise<TData> {
    if (typeof document === 'object' && document !== null && 'kind' in document) {
      throw new TypeError('Pass a string document (codegen documentMode: string), not a DocumentNode.');
    }
    const token = typeof options.token === 'function' ? await options.token() : options.token;
    const query = document.toString();
    const headers: Record<string, string> = {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/graphql-response+json, application/json;q=0.9',
    };
    if (isMutation(query)) headers['idempotency-key'] = makeKey();
    const payload = JSON.stringify({ query, variables: variables ?? {} });
    let response: FetchResponse;
    let text: string;
    for (let attempt = 1; ; attempt += 1) {
      response = await fetchImpl(endpoint, { method: 'POST', headers, body: payload });
      text = await response.text();
      // 503: the database away or the service busy; 429 with a short Retry-After: the tenant's own requests hold its
      // turns (a long one, such as a cap on keys, is not worth waiting for here).
      const wait = response.headers?.get('retry-after');
      const again = response.status === 503 || (response.status === 429 && wait != null && Number(wait) <= 5);
      if (!again || attempt >= attempts) break;
      await new Promise((r) => setTimeout(r, retryDelayMs(response.headers?.get('retry-after'), attempt)));
    }
    const body = parseBody(text);
    const errors = errorsOf(body);
    if (errors) throw new MetamodelGraphQLError(errors, response.status, body?.data ?? null);
    if (body?.data === null || typeof body?.data !== 'object') {
      throw new MetamodelGraphQLError([], response.status);
    }
    return body.data as TData;
  }

  const dry = (options?: { dryRun?: boolean }) => ({ dryRun: options?.dryRun === true });
  const reasoned = (options?: Reasoned) => (options?.reason === undefined ? {} : { reason: options.reason });
  const conditional = (options?: Conditional) => ({
    ...(options?.ifVersion === undefined ? {} : { ifVersion: options.ifVersion }),
    ...reasoned(options),
  });

  return {
    request,

    /** One page of the tenant's entity types in name order (`first` 1..500, default 100; `after` a cursor). */
    entityTypes: async (page: { first?: number; after?: string | null } = {}) =>
      (await request(EntityTypesPageDocument, page)).entityTypes,

    /** Every entity type of the tenant, following the cursors page by page. */
    async *allEntityTypes(pageSize = 100): AsyncGenerator<EntityTypeFieldsFragment> {
      let after: string | null = null;
      for (;;) {
        const page: EntityTypesPageQuery['entityTypes'] = (
          await request(EntityTypesPageDocument, { first: pageSize, after })
        ).entityTypes;
        for (const edge of page.edges) yield edge.node;
        if (!page.pageInfo.hasNextPage) return;
        after = page.pageInfo.endCursor;
      }
    },

    /** A type by guid; null when the tenant has none with it. */
    entityType: async (guid: string): Promise<EntityTypeByGuidQuery['entityType']> =>
      (await request(EntityTypeByGuidDocument, { guid })).entityType,

    /** The type a name resolves to (trimmed, letter case ignored); null when none. */
    entityTypeByName: async (name: string): Promise<EntityTypeByNameQuery['entityTypeByName']> =>
      (await request(EntityTypeByNameDocument, { name })).entityTypeByName,

    /** Create-or-get a user-defined type: `created` is false when the name already resolved (`reason`: why). */
    createEntityType: async (
      name: string,
      options?: Reasoned,
    ): Promise<CreateEntityTypeMutation['createEntityType']> =>
      (await request(CreateEntityTypeDocument, { name, ...reasoned(options) })).createEntityType,

    /**
     * Renames a user-defined type (its guid stays). `ifVersion`: the type's `version` as you read it; the rename
     * happens only while the type is still at it (else a MetamodelError with reason precondition_failed).
     */
    renameEntityType: async (
      guid: string,
      name: string,
      options?: Conditional,
    ): Promise<RenameEntityTypeMutation['renameEntityType']> =>
      (await request(RenameEntityTypeDocument, { guid, name, ...conditional(options) })).renameEntityType,

    /**
     * Releases the name a renamed type was created under: creating that name then makes a new type. `released` is
     * false when the name already resolved to no type (`ifVersion`: only while the type is at that version).
     */
    releaseFormerName: async (
      guid: string,
      name: string,
      options?: Conditional,
    ): Promise<ReleaseFormerNameMutation['releaseFormerName']> =>
      (await request(ReleaseFormerNameDocument, { guid, name, ...conditional(options) })).releaseFormerName,

    /** Deletes a user-defined type (`ifVersion`: only while it is at that version). */
    deleteEntityType: async (
      guid: string,
      options?: Conditional,
    ): Promise<DeleteEntityTypeMutation['deleteEntityType']> =>
      (await request(DeleteEntityTypeDocument, { guid, ...conditional(options) })).deleteEntityType,

    /** Declares an attribute definition on a type (`dryRun`: validate only; `ifVersion`: only while the type is at it). */
    declareAttribute: async (
      typeGuid: string,
      input: DeclareAttributeInput,
      options?: { dryRun?: boolean } & Conditional,
    ): Promise<DeclareAttributeMutation['declareAttribute']> =>
      (await request(DeclareAttributeDocument, { typeGuid, input, ...dry(options), ...conditional(options) }))
        .declareAttribute,

    /**
     * Changes a live attribute definition in place (values added to its enumeration, required dropped, filterable,
     * another default): its guid and values kept. Any other change is refused (attribute_change_not_in_place).
     */
    evolveAttribute: async (
      typeGuid: string,
      name: string,
      input: EvolveAttributeInput,
      options?: { dryRun?: boolean } & Conditional,
    ): Promise<EvolveAttributeMutation['evolveAttribute']> =>
      (
        await request(EvolveAttributeDocument, {
          typeGuid,
          name,
          input,
          ...dry(options),
          ...conditional(options),
        })
      ).evolveAttribute,

    /** The attributes applying to a type, its usage and withdrawn definitions; null for an unknown guid. */
    typeAttributes: async (typeGuid: string): Promise<TypeAttributesQuery['entityType']> =>
      (await request(TypeAttributesDocument, { guid: typeGuid })).entityType,

    /** Withdraws a live attribute definition (`dryRun`: report the impact only). */
    withdrawAttribute: async (
      typeGuid: string,
      name: string,
      options?: { dryRun?: boolean } & Conditional,
    ): Promise<WithdrawAttributeMutation['withdrawAttribute']> =>
      (await request(WithdrawAttributeDocument, { typeGuid, name, ...dry(options), ...conditional(options) }))
        .withdrawAttribute,

    /** One page of a type's history, newest first; null for a guid that is no type of the tenant now. */
    typeHistory: async (
      typeGuid: string,
      page: { first?: number; after?: string | null } = {},
    ): Promise<TypeHistoryQuery['entityType']> =>
      (await request(TypeHistoryDocument, { guid: typeGuid, ...page })).entityType,

    /**
     * The next changes of the tenant's feed after `after` (none: from the start), oldest first; only those of a type,
     * of definitions of a name, of some kinds, when asked (a filtered page can be short: follow `hasMore`).
     */
    modelChanges: async (
      page: {
        first?: number;
        after?: string | null;
        typeGuid?: string;
        attribute?: string;
        kinds?: ModelChangesQueryVariables['kinds'];
      } = {},
    ): Promise<ModelChangesQuery['modelChanges']> => (await request(ModelChangesDocument, page)).modelChanges,

    /**
     * A page of the entities of a type whose references meet every condition of `where` (each: the attribute refers
     * to any of `anyOf`), in name order; follow `nextCursor` as `after` until it is null.
     */
    entities: async (
      typeGuid: string,
      where: { attribute: string; anyOf: string[] }[] = [],
      page: { first?: number; after?: string | null } = {},
    ): Promise<EntitiesQuery['entities']> =>
      (await request(EntitiesDocument, { typeGuid, where, ...page })).entities,
  };
}

export type MetamodelClient = ReturnType<typeof createMetamodelClient>;
