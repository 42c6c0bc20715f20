import { GraphQLError } from 'graphql';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { maskGraphQLError } from '../../src/app/errors.js';
import { yogaLogger } from '../../src/app/graphql.js';
import { type AppError, REASONS, refusalExtensions, refuse, statusOf } from '../../src/errors.js';

const mask = maskGraphQLError(pino({ level: 'silent' }));

describe('GraphQL error masking', () => {
  it('turns a refusal into its reason', () => {
    const wrapped = new GraphQLError('x', {
      path: ['a'],
      originalError: refuse('empty_value', 'Empty.'),
    });
    const out = mask(wrapped, 'Unexpected error.') as GraphQLError;
    expect(out.message).toBe('Empty.');
    expect(out.extensions).toMatchObject({ reason: 'empty_value', code: 'BAD_USER_INPUT' });
    expect(out.path).toEqual(['a']);
  });
  it('masks anything unexpected', () => {
    const wrapped = new GraphQLError('db password is hunter2', {
      originalError: new Error('db password is hunter2'),
    });
    const out = mask(wrapped, 'Unexpected error.') as GraphQLError;
    expect(out.message).toBe('Unexpected error.');
    expect(out.extensions).toMatchObject({ reason: 'internal_error', code: 'INTERNAL_SERVER_ERROR' });
  });
  it('passes GraphQL validation errors through', () => {
    const err = new GraphQLError('Cannot query field "x"');
    expect(mask(err, 'Unexpected error.')).toBe(err);
  });
});

describe('GraphQL error codes (extensions.code)', () => {
  it('every reason gets the standard code of its kind, so GraphQL tools tell refusals from faults', () => {
    const codes = Object.fromEntries(REASONS.map((r) => [r, refusalExtensions(r, statusOf(r)).code]));
    for (const reason of [
      'query_too_deep',
      'too_many_aliases',
      'query_too_costly',
      'operation_not_supported',
    ]) {
      expect([reason, codes[reason]]).toEqual([reason, 'GRAPHQL_VALIDATION_FAILED']);
    }
    expect(codes.unauthenticated).toBe('UNAUTHENTICATED');
    expect(codes.not_authorized).toBe('FORBIDDEN');
    for (const reason of ['storage_unavailable', 'storage_busy', 'server_busy']) {
      expect([reason, codes[reason]]).toEqual([reason, 'SERVICE_UNAVAILABLE']);
    }
    expect(codes.internal_error).toBe('INTERNAL_SERVER_ERROR');
    // Everything else refuses what the caller sent (400, 404, 409, 413...): BAD_USER_INPUT.
    for (const reason of [
      'empty_value',
      'unknown_entity_type',
      'attribute_def_already_exists',
      'result_too_large',
    ]) {
      expect([reason, codes[reason]]).toEqual([reason, 'BAD_USER_INPUT']);
    }
    expect(new Set(Object.values(codes))).toEqual(
      new Set([
        'GRAPHQL_VALIDATION_FAILED',
        'UNAUTHENTICATED',
        'FORBIDDEN',
        'SERVICE_UNAVAILABLE',
        'INTERNAL_SERVER_ERROR',
        'BAD_USER_INPUT',
      ]),
    );
  });
});

describe('driver error mapping', () => {
  it('maps overload to 503 storage_busy and unavailability to 503 storage_unavailable, never a 500', async () => {
    const { Neo4jError } = await import('neo4j-driver');
    const { mapDriverError, ConstraintViolation } = await import('../../src/db/executor.js');
    const reason = (e: unknown) => (mapDriverError(e) as AppError).reason;
    const driverError = (message: string, code: string) => new Neo4jError(message, code, '50N42', 'test');
    expect(reason(driverError('Connection acquisition timed out in 30000 ms. Pool status: …', 'N/A'))).toBe(
      'storage_busy',
    );
    expect(reason(driverError('deadlock', 'Neo.TransientError.Transaction.DeadlockDetected'))).toBe(
      'storage_busy',
    );
    expect(reason(driverError('gone', 'ServiceUnavailable'))).toBe('storage_unavailable');
    expect(reason(driverError('down', 'Neo.TransientError.General.DatabaseUnavailable'))).toBe(
      'storage_unavailable',
    );
    expect(
      mapDriverError(driverError('dup', 'Neo.ClientError.Schema.ConstraintValidationFailed')),
    ).toBeInstanceOf(ConstraintViolation);
  });
});

describe("Yoga's log lines, through the app's logger", () => {
  const lines = () => {
    const out: { level: number; msg: string; component?: string }[] = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => out.push(JSON.parse(line)) });
    return { out, log: yogaLogger(logger) };
  };
  it('an error already answered (it carries a reason) is a debug line, not a second error line', () => {
    const { out, log } = lines();
    log.error(
      new GraphQLError('No entity type has this guid.', { extensions: { reason: 'unknown_entity_type' } }),
    );
    expect(out.map((l) => [l.level, l.component, l.msg])).toEqual([
      [20, 'graphql-yoga', 'No entity type has this guid.'],
    ]);
  });
  it("GraphQL's own refusal of what was sent (a variable's value; no original error) is a debug line", () => {
    const { out, log } = lines();
    log.error(
      new GraphQLError('Variable "$n" got invalid value "x"; Int cannot represent non-integer value: "x"'),
    );
    expect(out.map((l) => l.level)).toEqual([20]);
  });
  it('any other error Yoga reports is an error line', () => {
    const { out, log } = lines();
    log.error(new Error('socket hang up'));
    log.warn('slow');
    expect(out.map((l) => [l.level, l.msg])).toEqual([
      [50, 'Error: socket hang up'],
      [40, 'slow'],
    ]);
  });
});
