// Whole GraphQL answers served from memory: a query that reads only what the model cache holds (types, pages of
// types, attribute definitions, their owner and referenced types) has one answer per tenant, model version and
// request (document, operation name, variables, extensions, method and Accept). That answer, as the bytes Yoga
// sent, is kept in the model cache under kind `graphql_answer` and tagged with the version the executing request
// read; a later request sends it again only when the version read FOR IT (after it arrived, like every cached read)
// is the same. It skips parsing, validation, costing, execution and serialisation, which a catalog query would
// otherwise repeat over every definition on every request.
//
// What is kept: only answers without errors (a refusal is never replayed: bounds are checked afresh). The entry
// exists only after one execution of the same request succeeded; the first request of a new version executes.

import { createHash } from 'node:crypto';
import {
  type DocumentNode,
  type GraphQLSchema,
  getNamedType,
  Kind,
  TypeInfo,
  visit,
  visitWithTypeInfo,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { ModelReads } from '../cache/model-reads.js';
import type { RequestContext } from '../context.js';
import { EntityTypeRow } from '../contract/wire.js';
import { graphqlName } from './row-fields.js';

const KIND = 'graphql_answer';

/**
 * Fields whose values come from the model cache at the request's version, and nothing else (no clock, no role, no
 * uncached read). `*` admits every field of the type. A test pins this against the schema: a field added to one of
 * these types has to be placed here (or left out) on purpose.
 */
export const ANSWER_CACHE_FIELDS: Record<string, ReadonlySet<string> | '*'> = {
  Query: new Set(['entityType', 'entityTypeByName', 'entityTypes']),
  QueryEntityTypesConnection: '*',
  QueryEntityTypesConnectionEdge: '*',
  PageInfo: '*',
  // Every field of a type's row (declared once, contract/wire.ts) is model data, as are its definitions and usage.
  EntityType: new Set(['attributeUsage', 'attributes', ...Object.keys(EntityTypeRow.shape).map(graphqlName)]),
  FormerName: '*',
  AttributeDefinition: '*',
  Usage: '*',
};

/** Request texts larger than these are executed every time, not remembered. */
export const ANSWER_KEY_LIMITS = { queryChars: 16_384, variablesChars: 1_024, otherChars: 256 } as const;

const admitted = (type: string, field: string) => {
  if (field === '__typename') return true;
  const fields = ANSWER_CACHE_FIELDS[type];
  return fields === '*' || fields?.has(field) === true;
};

const cacheableDocuments = new WeakMap<DocumentNode, boolean>();

/**
 * True when every operation of the document is a query and every field it selects anywhere (fragments included)
 * is one the model cache answers. Remembered per parsed document (Yoga keeps parsed documents).
 */
export function isCacheableDocument(schema: GraphQLSchema, document: DocumentNode): boolean {
  const known = cacheableDocuments.get(document);
  if (known !== undefined) return known;
  let cacheable = true;
  const typeInfo = new TypeInfo(schema);
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      OperationDefinition(node) {
        if (node.operation !== 'query') cacheable = false;
      },
      Field(node) {
        const parent = typeInfo.getParentType();
        const type = parent && getNamedType(parent);
        if (!type || !admitted(type.name, node.name.value)) cacheable = false;
      },
    }),
  );
  // A document with nothing but fragments, or none of its own fields, is not worth a key.
  if (!document.definitions.some((d) => d.kind === Kind.OPERATION_DEFINITION)) cacheable = false;
  cacheableDocuments.set(document, cacheable);
  return cacheable;
}

/** What the GraphQL route needs of a request to name its answer. */
export interface AnswerRequest {
  method: string;
  accept: string | undefined;
  /** POST body, or GET query string, as Fastify parsed it. */
  params: unknown;
}

const text = (value: unknown, max: number): string | null | undefined => {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return value.length <= max ? value : undefined;
  // Variables and extensions posted as JSON objects: their text, bounded before it is made.
  if (typeof value === 'object') {
    const json = JSON.stringify(value);
    return json.length <= max ? json : undefined;
  }
  return undefined;
};

/**
 * The key of a request's answer (a SHA-256 over what makes the answer), or null when the request is too large to
 * remember. Variables are keyed by their text as sent: the same variables written differently are another entry.
 */
export function answerKey(request: AnswerRequest): string | null {
  const params = request.params;
  if (typeof params !== 'object' || params === null) return null;
  const p = params as Record<string, unknown>;
  const query = text(p.query, ANSWER_KEY_LIMITS.queryChars);
  const variables = text(p.variables, ANSWER_KEY_LIMITS.variablesChars);
  const operationName = text(p.operationName, ANSWER_KEY_LIMITS.otherChars);
  const extensions = text(p.extensions, ANSWER_KEY_LIMITS.otherChars);
  const accept = text(request.accept, ANSWER_KEY_LIMITS.otherChars);
  if (!query || variables === undefined || operationName === undefined || extensions === undefined)
    return null;
  if (accept === undefined) return null;
  return createHash('sha256')
    .update(JSON.stringify([request.method, accept, query, operationName, variables, extensions]))
    .digest('base64url');
}

/** A kept answer: what Yoga sent for the first request. */
export interface CachedAnswer {
  status: number;
  headers: [string, string][];
  body: Buffer;
}

export const cachedAnswerBytes = (answer: CachedAnswer) =>
  256 + answer.body.length + answer.headers.reduce((n, [k, v]) => n + 2 * (k.length + v.length), 0);

interface Running {
  /** The executing request's operation (Yoga's context is another object holding the same one). */
  owner: RequestContext['operation'];
  version: Promise<string>;
  answer: Promise<CachedAnswer | null>;
  settle: (answer: CachedAnswer | null) => void;
}

/**
 * Kept answers, and the ones being made: requests asking what another request is executing at the same model version
 * wait for its answer instead of executing the same operation again (after a model change, every client's first
 * catalog query would otherwise run it once each).
 */
export class GraphQLAnswers {
  private readonly running = new Map<string, Running>();

  constructor(
    private readonly model: ModelReads,
    /** How long a request waits for another's answer: the time a query may run. */
    private readonly waitMs: number,
  ) {}

  /**
   * The answer to a request whose answer may be kept under `key`: the one kept at the version read for it, or the
   * one a request executing at that version makes; else `execute()`'s response, kept when it may be.
   */
  async serve(
    ctx: RequestContext,
    key: string,
    execute: () => Promise<Response>,
  ): Promise<CachedAnswer | Response> {
    ctx.operation.answerKey = key;
    const slot = `${ctx.viewer.tenant}\u0000${key}`;
    let made: CachedAnswer | null = null;
    try {
      const found = await this.find(ctx, slot, key);
      if (found) return found;
      const response = await execute();
      made = await this.keep(ctx, key, response);
      return made ?? response;
    } finally {
      // Whatever happened, the requests waiting for this one's answer get it, or null (and execute themselves).
      const running = this.running.get(slot);
      if (running?.owner === ctx.operation) {
        this.running.delete(slot);
        running.settle(made);
      }
    }
  }

  /**
   * Kept at the version read for the request, or made by a request executing at that version now; null when the
   * request must execute (then it is the one executing, if none was). The version is read only when there is such
   * an answer at some version.
   */
  private async find(ctx: RequestContext, slot: string, key: string): Promise<CachedAnswer | null> {
    const tenant = ctx.viewer.tenant;
    if (!this.running.has(slot) && !this.model.cache.holds(tenant, KIND, key)) return null;
    const version = this.model.versionOf(ctx.modelScope);
    const kept = this.model.cache.get<CachedAnswer>(tenant, KIND, key, await version, false);
    const answer = kept ?? (await this.shared(ctx, slot, version));
    // A hit: kept, or made by another request at this version; a miss: this request executes.
    this.model.cache.count(KIND, answer !== null);
    return answer;
  }

  /**
   * The answer a request executing now at `version` makes, once made (null if it is not kept). With none running,
   * this request becomes the one the next requests wait for: the answer was kept at an older version, and
   * requests arriving together after a model change would otherwise all execute the same operation.
   */
  private async shared(
    ctx: RequestContext,
    slot: string,
    version: Promise<string>,
  ): Promise<CachedAnswer | null> {
    const running = this.running.get(slot);
    if (!running) {
      this.begin(ctx, slot, version);
      return null;
    }
    if (running.owner === ctx.operation || (await running.version) !== (await version)) return null;
    // Bounded like the execution itself: past it, this request executes on its own.
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((resolve) => {
      timer = setTimeout(resolve, this.waitMs, null);
    });
    try {
      return await Promise.race([running.answer, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  private begin(ctx: RequestContext, slot: string, version: Promise<string>) {
    let settle: (answer: CachedAnswer | null) => void = () => {};
    const answer = new Promise<CachedAnswer | null>((resolve) => {
      settle = resolve;
    });
    version.catch(() => {}); // the execution's own reads see the failure
    this.running.set(slot, { owner: ctx.operation, version, answer, settle });
  }

  /** Yoga's hooks: which operations may be kept, and the answer being made for them. */
  plugin(): Plugin<RequestContext> {
    return {
      onExecute: ({ args }) => {
        const ctx = args.contextValue as RequestContext;
        const operation = ctx.operation;
        operation.answerCacheable = isCacheableDocument(args.schema, args.document);
        const key = operation.answerKey;
        if (!operation.answerCacheable || !key) return;
        // The first execution of this request at any version: the next ones wait for its answer.
        const slot = `${ctx.viewer.tenant}\u0000${key}`;
        if (!this.running.has(slot)) this.begin(ctx, slot, this.model.versionOf(ctx.modelScope));
      },
      onExecutionResult: ({ result, context }) => {
        const operation = (context as unknown as RequestContext).operation;
        if (!operation?.answerCacheable) return;
        const failed =
          result === undefined ||
          Symbol.asyncIterator in result ||
          (result.errors !== undefined && result.errors.length > 0);
        if (failed) operation.answerCacheable = false;
      },
    };
  }

  /** Keeps Yoga's response when it may be kept, at the version the request's reads were made at; null if not. */
  private async keep(ctx: RequestContext, key: string, response: Response): Promise<CachedAnswer | null> {
    const version = ctx.modelScope.version;
    if (!version || !ctx.operation.answerCacheable || response.status !== 200) return null;
    // An answer larger than the cache keeps one (measured before it was serialised, at most its size in bytes) is
    // sent as it is: reading it whole only to copy it would cost megabytes of copies for nothing. One never measured
    // (the guard measures every answer it let run) is not kept either: its size is unknown.
    const bytes = ctx.operation.answerBytes;
    if (bytes === undefined || bytes > this.model.cache.maxEntryBytes) return null;
    const headers: [string, string][] = [];
    response.headers.forEach((value, name) => {
      headers.push([name, value]);
    });
    const answer = { status: response.status, headers, body: Buffer.from(await response.arrayBuffer()) };
    this.model.cache.set(ctx.viewer.tenant, KIND, key, await version, answer, cachedAnswerBytes(answer));
    return answer;
  }
}
