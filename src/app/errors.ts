// How refusals and faults are answered: framework errors mapped to refusals, one error handler rendering the
// envelope (a fault's message masked, with the request id), 404 for paths no route serves, and GraphQL errors
// masked the same way.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { FastifyError, FastifyInstance, FastifyServerOptions } from 'fastify';
import fp from 'fastify-plugin';
import type { GraphQLError } from 'graphql';
import { createGraphQLError } from 'graphql-yoga';
import type { Logger } from 'pino';
import { tooLarge } from '../body/read.js';
import {
  type AppError,
  boundedMessage,
  isAppError,
  MAX_MESSAGE_CHARS,
  refusalExtensions,
  refuse,
} from '../errors.js';
import { fail } from '../rest/envelope.js';

/** The id of the request being served, for code that has no request at hand (GraphQL error masking). */
export const requestScope = new AsyncLocalStorage<{ requestId: string }>();

/** Maps framework errors (body parsing, limits) to refusals; anything else is unexpected. */
function toAppError(error: FastifyError): AppError | null {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return tooLarge();
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return refuse('unsupported_media_type', 'Send the body as application/json.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return refuse('invalid_json', 'The body is empty; send a JSON object.');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return refuse('invalid_body', 'The body length does not match Content-Length.');
    default:
      if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
        return refuse('invalid_body', 'The request could not be read.');
      }
      return null;
  }
}

/**
 * Refusals become GraphQL errors carrying their reason (docs/api.md#refusal-reasons) in extensions.reason;
 * GraphQL's own errors (syntax, validation) pass through; anything else is logged and masked. Checked by shape, not
 * by class identity, so a second copy of graphql in the process cannot break it.
 */
export function maskGraphQLError(logger: Logger) {
  return (error: unknown, message: string): Error => {
    const wrapped = error as { originalError?: unknown; name?: string; path?: readonly (string | number)[] };
    const isGraphQLError = error instanceof Error && error.name === 'GraphQLError';
    const original = isGraphQLError ? wrapped.originalError : error;
    if (isGraphQLError && (original === undefined || (original as Error | null)?.name === 'GraphQLError')) {
      // GraphQL's own refusals (a variable's value, an unknown argument) may quote what was sent: bounded.
      const own = error as GraphQLError;
      if (own.message.length <= MAX_MESSAGE_CHARS) return own;
      return createGraphQLError(boundedMessage(own.message), {
        ...(own.nodes ? { nodes: own.nodes } : {}),
        ...(own.source ? { source: own.source } : {}),
        ...(own.positions ? { positions: own.positions } : {}),
        ...(own.path ? { path: own.path } : {}),
        extensions: own.extensions,
      });
    }
    if (isAppError(original)) {
      return createGraphQLError(original.message, {
        ...(wrapped.path ? { path: wrapped.path } : {}),
        extensions: {
          ...original.details,
          ...refusalExtensions(original.reason, original.status),
          // The database away or busy, or the tenant over its share: the answer is a 503 or 429 with Retry-After, as
          // over REST (Yoga sends `http` as the response's status and headers, not in the body).
          ...(original.retryAfterSeconds !== undefined
            ? {
                http: {
                  status: original.status,
                  headers: { 'retry-after': String(original.retryAfterSeconds) },
                },
              }
            : {}),
        },
      });
    }
    const requestId = requestScope.getStore()?.requestId;
    logger.error({ err: original, requestId }, 'unexpected GraphQL error');
    return createGraphQLError(requestId ? `${message.replace(/\.$/, '')} (request ${requestId}).` : message, {
      ...(wrapped.path ? { path: wrapped.path } : {}),
      extensions: {
        ...refusalExtensions('internal_error', 500),
        ...(requestId ? { requestId } : {}),
      },
    });
  };
}

/** Refusals the router makes before any handler (bad percent-encoding, over-long segment) get the envelope too. */
export const frameworkErrors: FastifyServerOptions['frameworkErrors'] = (error, _req, reply) =>
  fail(
    reply,
    refuse(error.statusCode === 414 ? 'uri_too_long' : 'invalid_url', 'The request URL is malformed.'),
  );

/** The one error handler and the not-found handler. */
export const errorHandling = fp(
  async (app: FastifyInstance) => {
    app.setErrorHandler((error: FastifyError, req, reply) => {
      const refusal = isAppError(error) ? error : toAppError(error);
      if (refusal) return fail(reply, refusal, { graphql: req.routeOptions.url === '/graphql' });
      req.log.error({ err: error, requestId: req.id }, 'unexpected error');
      return fail(reply, refuse('internal_error', `Unexpected error (request ${req.id}).`));
    });

    app.setNotFoundHandler((req, reply) =>
      fail(reply, refuse('not_found', `No route ${req.method} ${req.url.split('?')[0]}.`)),
    );
  },
  { name: 'error-handling' },
);
