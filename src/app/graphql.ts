// GraphQL at /graphql: the request's shape checked with the REST contract, a fair share of GRAPHQL_CONCURRENCY
// slots, whole answers from memory when the model has not changed, then Yoga with the bounds (armor, guard), the
// one-keyed-write rule and graphql-jit, over the Pothos schema.
import { useGraphQlJit } from '@envelop/graphql-jit';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { getOperationAST } from 'graphql';
import { createGraphQLError, createYoga, type Plugin, type YogaLogger } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { RequestContext, Services } from '../context.js';
import { isAppError, refusalExtensions, refuse } from '../errors.js';
import { Slots } from '../fairness/slots.js';
import { replayed, takeKeyedTurn } from '../http/idempotency-key.js';
import { sendGraphiQL, wantsGraphiQL } from '../http/pages.js';
import { assertWellFormed } from '../json/text.js';
import { inputOf } from '../rest/route.js';
import { ROUTES } from '../rest/schemas.js';
import { armorPlugin, fieldSuggestionsPlugin, knownOperationTypesPlugin } from '../schema/armor.js';
import { answerKey, type CachedAnswer, GraphQLAnswers } from '../schema/graphql-answers.js';
import { operationGuardPlugin } from '../schema/guard.js';
import { schema } from '../schema/index.js';
import { graphqlTracingPlugin, type Tracing } from '../telemetry/tracing.js';
import { maskGraphQLError } from './errors.js';

/** Whether an Accept header admits a JSON answer (absent, or listing a JSON type or a wildcard with q > 0). */
export function acceptsGraphQLAnswer(accept: string | undefined): boolean {
  if (accept === undefined || accept.trim() === '') return true;
  return accept.split(',').some((range) => {
    const [type, ...params] = range.split(';').map((part) => part.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    if (q !== undefined && !(Number(q.slice(2)) > 0)) return false;
    return ['*/*', 'application/*', 'application/json', 'application/graphql-response+json'].includes(
      type ?? '',
    );
  });
}

/**
 * An Idempotency-Key stands for one write and its answer: a keyed mutation operation selects one field, or it is
 * refused before it runs (idempotency_key_not_supported), so that no part of it is written under a key.
 */
function oneKeyedWritePlugin(): Plugin<RequestContext> {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const ctx = args.contextValue as RequestContext;
      if (!ctx.keyed?.pending) return;
      const operation = getOperationAST(args.document, args.operationName);
      if (operation?.operation !== 'mutation' || operation.selectionSet.selections.length === 1) return;
      setResultAndStopExecution({
        errors: [
          createGraphQLError('An Idempotency-Key covers one write; send one mutation field per request.', {
            extensions: refusalExtensions('idempotency_key_not_supported', 400),
          }),
        ],
      });
    },
  };
}

/**
 * Yoga's own log lines, through the app's logger (and so its scrubbing), at the app's levels. An error Yoga reports
 * that carries a reason has been answered already (a refusal, or a fault maskGraphQLError logged with its request
 * id): it is a debug line here, not a second error line.
 */
/**
 * A keyed mutation's turn (http/idempotency-key.ts), taken once the operation passed its bounds and its cost check,
 * like a fresh request: its stored answer, if any, replaces the whole answer (sent by the route below).
 */
function keyedTurnPlugin(): Plugin<RequestContext> {
  return {
    async onExecute({ args, setResultAndStopExecution }) {
      const ctx = args.contextValue as RequestContext;
      const take = ctx.keyed?.take;
      if (!take) return;
      ctx.keyed.take = undefined;
      const stored = await take();
      if (!stored) return;
      ctx.keyed.replay = stored;
      setResultAndStopExecution({ data: null });
    },
  };
}

export function yogaLogger(logger: Logger): YogaLogger {
  const child = logger.child({ component: 'graphql-yoga' });
  const at =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (...args: unknown[]) =>
      child[level]({ details: args.slice(1) }, String(args[0]));
  // A refusal (AppError, with its reason), or a GraphQL error carrying one, or wrapping one, or GraphQL's own refusal
  // of what the request sent (a variable's value, an unknown field: no original error): the caller's mistake.
  const answered = (e: unknown): boolean => {
    if (typeof e !== 'object' || e === null) return false;
    const error = e as {
      name?: unknown;
      reason?: unknown;
      extensions?: { reason?: unknown };
      originalError?: unknown;
    };
    return (
      isAppError(e) ||
      error.extensions?.reason !== undefined ||
      (error.name === 'GraphQLError' && error.originalError == null) ||
      (error.originalError != null && answered(error.originalError))
    );
  };
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: (...args: unknown[]) => (answered(args[0]) ? at('debug') : at('error'))(...args),
  };
}

/**
 * A GET operation's variables (JSON text in the query string, parsed by Yoga) hold well-formed strings only, as a
 * body's do (body/read.ts); text that is not JSON is left to Yoga's own refusal.
 */
function variablesWellFormed(query: unknown) {
  const text = (query as { variables?: unknown }).variables;
  if (typeof text !== 'string' || !(text.includes('\\ud') || text.includes('\\uD'))) return;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return;
  }
  assertWellFormed(value, 'The variables');
}

/** The reason a wait for a GraphQL slot is given up with when it took too long. */
const QUEUE_TIMEOUT = 'waited GRAPHQL_QUEUE_TIMEOUT_MS for a slot';

export const graphqlRoute = fp(
  async (app: FastifyInstance, { services, tracing }: { services: Services; tracing: Tracing }) => {
    const { config, logger } = services;
    const graphqlSlots = new Slots(config.GRAPHQL_CONCURRENCY);
    const answers = new GraphQLAnswers(services.model, config.GRAPHQL_QUERY_TIMEOUT_MS);
    const yoga = createYoga<{ req: { ctx: RequestContext | null } }>({
      schema,
      graphqlEndpoint: '/graphql',
      plugins: [
        armorPlugin(),
        fieldSuggestionsPlugin(),
        knownOperationTypesPlugin(),
        answers.plugin(),
        oneKeyedWritePlugin(),
        operationGuardPlugin({ queryTimeMs: config.GRAPHQL_QUERY_TIMEOUT_MS }),
        keyedTurnPlugin(),
        useGraphQlJit(
          {},
          { onError: (failure) => logger.warn({ failure }, 'GraphQL operation not compiled') },
        ),
        ...(tracing.tracer ? [graphqlTracingPlugin((ctx: RequestContext) => ctx.stats.trace)] : []),
      ],
      landingPage: false,
      // GraphiQL is served by the /graphql route (http/pages.ts); CORS is the app's (configured origins only).
      graphiql: false,
      cors: false,
      multipart: false,
      logging: yogaLogger(logger),
      context: ({ req }) => {
        if (!req.ctx) throw refuse.unauthenticated();
        return req.ctx;
      },
      // isDev off: Yoga's own refusals must not carry originalError (internals) whatever NODE_ENV says.
      maskedErrors: { maskError: maskGraphQLError(logger), isDev: false },
    });

    app.route({
      url: '/graphql',
      method: ['GET', 'POST'],
      // An operation's budget (its GET form carries no body).
      config: { budget: ROUTES.graphqlPost.budget },
      handler: async (req, reply) => {
        if (wantsGraphiQL(req)) return sendGraphiQL(req, reply);
        // The request's shape is checked here, with the REST contract's schemas and reasons, so that Yoga only ever
        // sees a well-formed GraphQL request.
        inputOf(req.method === 'GET' ? ROUTES.graphqlGet : ROUTES.graphqlPost, req);
        if (req.method === 'GET') variablesWellFormed(req.query);
        if (!acceptsGraphQLAnswer(req.headers.accept)) {
          throw refuse(
            'not_acceptable',
            'The answer is JSON (application/json or application/graphql-response+json).',
          );
        }
        const ctx = req.ctx;
        const execute = async () => {
          // A few operations at a time: a nested catalog query holds megabytes of rows and result while it runs,
          // and on 2 cores running 64 at once only multiplies memory, not throughput. The rest wait their turn.
          let release: () => void;
          // A wait given up after GRAPHQL_QUEUE_TIMEOUT_MS; its timer cleared once the slot comes (AbortSignal.timeout
          // would fire for every operation anyway, each time making a DOMException with a stack trace).
          const waited = new AbortController();
          const timer = setTimeout(() => waited.abort(QUEUE_TIMEOUT), config.GRAPHQL_QUEUE_TIMEOUT_MS);
          try {
            release = await graphqlSlots.acquire(ctx?.viewer.tenant ?? '', waited.signal);
          } catch {
            reply.header('retry-after', '1');
            throw refuse('server_busy', 'Too many GraphQL operations are waiting; try again shortly.');
          } finally {
            clearTimeout(timer);
          }
          try {
            return await yoga.handleNodeRequestAndResponse(req, reply, { req });
          } finally {
            release();
          }
        };
        // A query answered before at the request's model version, or being answered now, is sent as it was made
        // (schema/graphql-answers.ts); any other operation executes.
        const key =
          ctx &&
          answerKey({
            method: req.method,
            accept: req.headers.accept,
            params: req.method === 'GET' ? req.query : req.body,
          });
        // A keyed mutation takes its key's turn inside the operation, once its cost is known to be within bounds.
        if (ctx?.keyed.pending) ctx.keyed.take = () => takeKeyedTurn(req, reply);
        const answer = ctx && key ? await answers.serve(ctx, key, execute) : await execute();
        if (ctx?.keyed.replay) return reply.send(replayed(reply, ctx.keyed.replay));
        // A kept answer's body is bytes; Yoga's Response (not necessarily this runtime's Response class) streams.
        if (Buffer.isBuffer(answer.body)) {
          for (const [name, value] of (answer as CachedAnswer).headers) reply.header(name, value);
          reply.status(answer.status);
          return reply.send(answer.body);
        }
        const response = answer as Response;
        response.headers.forEach((value, name) => {
          reply.header(name, value);
        });
        reply.status(response.status);
        // Under an Idempotency-Key the answer is read whole: it is stored with the write, or replaced, on send.
        return reply.send(ctx?.keyed.scope ? Buffer.from(await response.arrayBuffer()) : response.body);
      },
    });
  },
  { name: 'graphql' },
);
