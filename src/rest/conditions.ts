// Conditional requests on a type (docs/api.md#versions-and-conditional-requests): the ETag a read of the type or
// its listing answers with, If-None-Match answered 304 from what was read (memory), and If-Match handed to the
// write, whose refusal (412 precondition_failed) carries the current ETag in its header too.
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  conditionOf,
  ETAG_HEADER,
  etagOf,
  IF_MATCH_HEADER,
  IF_NONE_MATCH_HEADER,
  MAX_PRECONDITION_TAGS,
  meets,
  type VersionCondition,
} from '../contract/type-version.js';
import { AppError, refuse } from '../errors.js';

const malformed = (header: string) =>
  refuse(
    'invalid_precondition',
    `${header} must be * or up to ${MAX_PRECONDITION_TAGS} entity-tags (W/"<version>" or "<version>"), comma-separated.`,
  );

/** The versions a write's If-Match names (undefined: none sent; invalid_precondition when malformed). */
export function ifMatchOf(req: FastifyRequest): VersionCondition | undefined {
  const condition = conditionOf(req.headers[IF_MATCH_HEADER]);
  if (condition === null) throw malformed('If-Match');
  return condition;
}

/**
 * Sends the type's ETag with a read; when If-None-Match names that version, answers 304 with no body and returns
 * true (the caller sends nothing more).
 */
export function notModified(req: FastifyRequest, reply: FastifyReply, version: string): boolean {
  const condition = conditionOf(req.headers[IF_NONE_MATCH_HEADER]);
  if (condition === null) throw malformed('If-None-Match');
  reply.header(ETAG_HEADER, etagOf(version));
  if (condition === undefined || !meets(condition, version)) return false;
  reply.code(304).send();
  return true;
}

/** Runs a conditional write; a refusal for a stale version carries the current ETag in its header. */
export async function conditionalWrite<T>(reply: FastifyReply, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (e) {
    if (e instanceof AppError && e.reason === 'precondition_failed' && typeof e.details?.etag === 'string') {
      reply.header(ETAG_HEADER, e.details.etag);
    }
    throw e;
  }
}

/** Sends the ETag of the type's version after a write (when the write knows it). */
export function sendVersion(reply: FastifyReply, version: string | undefined) {
  if (version !== undefined) reply.header(ETAG_HEADER, etagOf(version));
}
