// The answers' shapes beyond the shared rows of contract/wire.ts: entities, changes, the refusal envelope, GraphQL
// results, and the success envelope around a route's DATA.

import { z } from 'zod';
import { guid, named } from '../../contract/wire.js';
import { REASONS } from '../../errors.js';

export const AttributeState = z
  .enum(['live', 'withdrawn'])
  .describe('`withdrawn`: its stored values are being removed; the daily job then removes the definition.');

export const Entity = named(
  'Entity',
  'An entity (instance of a type) with the values of its type’s live attributes, keyed by attribute name.',
  z.object({
    guid: guid('Identifier of the entity (random UUID).'),
    name: z.string().describe('Entity name.'),
    type_guid: guid('Its entity type.'),
    values: z
      .record(z.string(), z.unknown())
      .describe('Attribute name → value; attributes without value are absent.'),
  }),
);

export const EntitySummary = z.object({ guid: z.string(), name: z.string(), type_guid: z.string() });

export const GraphQLResult = named(
  'GraphQLResult',
  'A GraphQL response (not the REST envelope).',
  z.looseObject({
    data: z.record(z.string(), z.unknown()).nullish(),
    errors: z
      .array(
        z.looseObject({
          message: z.string(),
          path: z.array(z.union([z.string(), z.number()])).optional(),
          extensions: z
            .looseObject({ reason: z.enum(REASONS).optional().describe('The refusal reason, as in REST.') })
            .optional(),
        }),
      )
      .optional(),
  }),
);

export const GraphQLRefusal = named(
  'GraphQLRefusal',
  'A request to /graphql refused before it ran (no token, a body over the limit): the envelope, with the same refusal as GraphQL `errors`; or a GraphQL response refusing the document.',
  z.looseObject({
    STATUS: z.literal('FAIL').optional(),
    MESSAGE: z.string().optional(),
    DATA: z.object({ reason: z.enum(REASONS) }).optional(),
    errors: z.array(
      z.looseObject({
        message: z.string(),
        extensions: z.looseObject({ reason: z.enum(REASONS).optional() }).optional(),
      }),
    ),
  }),
);

// ——— Envelopes ———

export const Refusal = named(
  'Refusal',
  'A refused request: STATUS FAIL and a machine-readable reason. Clients branch on DATA.reason, never MESSAGE.',
  z.object({
    STATUS: z.literal('FAIL'),
    MESSAGE: z.string().describe('Human-readable text; do not branch on it.'),
    DATA: z
      .looseObject({
        reason: z.enum(REASONS).describe('Why the request was refused (see the reasons table).'),
      })
      .describe(
        'The reason, and what some refusals say beside it (a plan that cannot be applied lists its steps; see each route).',
      ),
  }),
);

/** The success envelope around a route's DATA. */
export const success = <T extends z.ZodType>(data: T) =>
  z.object({
    STATUS: z.literal('SUCCESS'),
    MESSAGE: z.literal('').describe('Empty on success.'),
    DATA: data,
  });
