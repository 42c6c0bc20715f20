import { GraphQLError } from 'graphql';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { maskGraphQLError } from '../../src/app.js';
import { AppError } from '../../src/errors.js';

const mask = maskGraphQLError(pino({ level: 'silent' }));

describe('GraphQL error masking', () => {
  it('turns a refusal into its reason', () => {
    const wrapped = new GraphQLError('x', {
      path: ['a'],
      originalError: new AppError('empty_value', 400, 'Empty.'),
    });
    const out = mask(wrapped, 'Unexpected error.') as GraphQLError;
    expect(out.message).toBe('Empty.');
    expect(out.extensions).toMatchObject({ reason: 'empty_value' });
    expect(out.path).toEqual(['a']);
  });
  it('masks anything unexpected', () => {
    const wrapped = new GraphQLError('db password is hunter2', {
      originalError: new Error('db password is hunter2'),
    });
    const out = mask(wrapped, 'Unexpected error.') as GraphQLError;
    expect(out.message).toBe('Unexpected error.');
    expect(out.extensions).toMatchObject({ reason: 'internal_error' });
  });
  it('passes GraphQL validation errors through', () => {
    const err = new GraphQLError('Cannot query field "x"');
    expect(mask(err, 'Unexpected error.')).toBe(err);
  });
});
