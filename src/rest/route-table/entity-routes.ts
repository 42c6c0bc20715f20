// The routes of entities: create, read, list by references, look up; and the platform's dashboard writes.

import { z } from 'zod';
import { NAME_DOC, nameField, refusing, typeName } from '../../contract/refusing-fields.js';
import { EntityTypeRow, guid } from '../../contract/wire.js';
import type { Reason } from '../../errors.js';
import { PAGES } from '../../model/pages.js';
import { MAX_LOOKUP_IDENTIFIER_CHARS, MAX_LOOKUP_IDENTIFIERS } from '../../resolvers/entities.js';
import { FILTER_SCAN_WINDOW, MAX_FILTER_CONDITIONS, MAX_FILTER_GUIDS } from '../../resolvers/entity-list.js';
import { type Answer, entityGuidParam, pageQuery, type RouteDoc, route } from './fields.js';
import { Entity, EntitySummary } from './rows.js';

/** A page of a type's entities: what both listings answer. */
const ENTITY_PAGE_ANSWERS: Record<number, Answer> = {
  200: {
    description: 'A page of entities.',
    data: z.object({
      entities: z.array(EntitySummary),
      next_cursor: z
        .string()
        .nullable()
        .describe('Cursor of the next page; null when the listing is complete.'),
    }),
  },
};
const ENTITY_PAGE_REFUSALS: Reason[] = [
  'unknown_entity_type',
  'invalid_field',
  'invalid_filter',
  'too_many_filters',
  'too_many_filter_guids',
  'unknown_attribute',
  'attribute_not_filterable',
  'attribute_def_withdrawn',
  'empty_value',
  'name_too_long',
  'invalid_cursor',
  'invalid_page_size',
];

export const ENTITY_ROUTES = {
  createEntity: route({
    method: 'POST',
    path: '/entities',
    operationId: 'createEntity',
    tag: 'Entities',
    summary: 'Create an entity of a type (curation)',
    description: 'Values are validated against the type’s live definitions; defaults are applied.',
    auth: 'bearer',
    bodyCheckedByResolver: true,
    body: z.looseObject({
      type_guid: refusing(z.string().min(1).describe('Its entity type.'), {
        reason: 'invalid_field',
        missing: 'invalid_field',
      }),
      name: nameField('Entity name.'),
      values: z
        .record(z.string().meta(NAME_DOC), z.unknown())
        .nullish()
        .describe('Attribute name → value (letter case ignored); null means no value.'),
    }),
    answers: { 201: { description: 'Created.', data: z.object({ entity: Entity }) } },
    refusals: [
      'unknown_entity_type',
      'type_not_creatable',
      'unknown_attribute',
      'invalid_value',
      'value_not_allowed',
      'required_value_missing',
      'referent_not_found',
      'ref_type_mismatch',
      'concurrent_change',
      'empty_value',
      'name_too_long',
      'invalid_field',
    ],
  }),
  getEntity: route({
    method: 'GET',
    path: '/entities/:guid',
    operationId: 'getEntity',
    tag: 'Entities',
    summary: 'Read one entity with its values',
    auth: 'bearer',
    params: z.object({ guid: entityGuidParam() }),
    answers: { 200: { description: 'The entity.', data: z.object({ entity: Entity }) } },
    refusals: ['not_found'],
  }),
  listEntities: route({
    method: 'GET',
    path: '/entities',
    operationId: 'listEntities',
    tag: 'Entities',
    summary: 'The entities of a type, filtered by their references',
    description: `Entities of exactly the type \`type_guid\`, in name order (then guid), keyset-paged with signed cursors bound to your tenant, like type pages. Each \`where\` is one condition, \`<attribute>:<guid>[,<guid>...]\`: the entity refers to any of those entities through that filterable reference attribute (\`tags\` on every type, or an \`entity_ref\` declared \`filterable: true\`); the attribute is what comes before the last colon. Several conditions must all hold (the same attribute twice: both). At most ${MAX_FILTER_CONDITIONS} conditions of at most ${MAX_FILTER_GUIDS} guids each. A page reads one index in order: with one condition or none it is always full until the last; with several, a page examines at most ${FILTER_SCAN_WINDOW.toLocaleString('en-US')} matches of one condition, so it can carry fewer rows than \`page_size\` (even none) and still a \`next_cursor\`: follow it until it is null. A withdrawn attribute's references stop matching when it is withdrawn (\`attribute_def_withdrawn\`), not when the purge removes them.`,
    auth: 'bearer',
    query: pageQuery('Opaque `next_cursor` from a previous page of the same listing.').extend({
      type_guid: refusing(guid('The entity type whose entities are listed.'), {
        reason: 'invalid_field',
        missing: 'invalid_field',
      }),
      where: refusing(
        z
          .array(
            z
              .string()
              .regex(/^.+:[^:,]+(,[^:,]+)*$/, { error: 'must be <attribute>:<guid>[,<guid>...]' })
              .describe('`<attribute>:<guid>[,<guid>...]`'),
          )
          .max(MAX_FILTER_CONDITIONS)
          .optional()
          .describe(
            `Conditions (repeat the parameter), at most ${MAX_FILTER_CONDITIONS}; each \`<attribute>:<guid>[,<guid>...]\` with at most ${MAX_FILTER_GUIDS} guids.`,
          ),
        { reason: 'invalid_filter', tooMany: 'too_many_filters' },
      ),
    }),
    answers: ENTITY_PAGE_ANSWERS,
    refusals: ENTITY_PAGE_REFUSALS,
  }),
  queryEntities: route({
    method: 'POST',
    path: '/entities/query',
    operationId: 'queryEntities',
    tag: 'Entities',
    summary: 'The entities of a type, filtered by their references (conditions in the body)',
    description: `The listing of \`GET /entities\` with its conditions in the body, so that the largest filter (${MAX_FILTER_CONDITIONS} conditions of ${MAX_FILTER_GUIDS} guids, about 40 KB) fits: a URL that long passes what HTTP servers take in a request's headers. The same rules, order, pages and cursors (a cursor of either listing of a type is good for both); it reads and writes nothing else.`,
    auth: 'bearer',
    body: z.strictObject({
      type_guid: refusing(guid('The entity type whose entities are listed.'), {
        reason: 'invalid_field',
        missing: 'invalid_field',
      }),
      where: refusing(
        z
          .array(
            z.strictObject({
              attribute: z
                .string()
                .describe('A filterable reference attribute of the type (by name).')
                .meta(NAME_DOC),
              any_of: refusing(
                z
                  .array(z.string())
                  .min(1)
                  .max(MAX_FILTER_GUIDS)
                  .describe(`Entity guids, 1 to ${MAX_FILTER_GUIDS}: the entity refers to any of them.`),
                { reason: 'invalid_filter', tooMany: 'too_many_filter_guids' },
              ),
            }),
          )
          .max(MAX_FILTER_CONDITIONS)
          .optional()
          .describe(`Conditions, all of which must hold; at most ${MAX_FILTER_CONDITIONS}.`),
        { reason: 'invalid_filter', tooMany: 'too_many_filters' },
      ),
      page_size: refusing(
        z
          .number()
          .int()
          .min(1)
          .max(PAGES.max)
          .optional()
          .describe(`Rows per page, 1 to ${PAGES.max} (default ${PAGES.default}).`),
        { reason: 'invalid_page_size' },
      ),
      cursor: refusing(
        z.string().optional().describe('Opaque `next_cursor` from a previous page of this listing.'),
        { reason: 'invalid_cursor' },
      ),
    }),
    answers: ENTITY_PAGE_ANSWERS,
    refusals: [...ENTITY_PAGE_REFUSALS, 'unknown_field'],
  }),
  lookup: route({
    method: 'POST',
    path: '/entities/lookup',
    operationId: 'lookupIdentifiers',
    tag: 'Entities',
    summary: 'Resolve many identifiers in one call',
    description: 'An unknown identifier (or another tenant’s) resolves to null.',
    auth: 'bearer',
    body: z.looseObject({
      identifiers: refusing(
        z
          .array(z.string().max(MAX_LOOKUP_IDENTIFIER_CHARS))
          .max(MAX_LOOKUP_IDENTIFIERS)
          .describe(
            `Entity guids, at most ${MAX_LOOKUP_IDENTIFIERS}, each at most ${MAX_LOOKUP_IDENTIFIER_CHARS} characters.`,
          ),
        { reason: 'invalid_field', missing: 'invalid_field', tooMany: 'too_many_identifiers' },
      ),
    }),
    answers: {
      200: {
        description: 'One entry per identifier, in order.',
        data: z.object({
          entries: z.array(z.object({ identifier: z.string(), entity: EntitySummary.nullable() })),
        }),
      },
    },
    refusals: ['invalid_field', 'too_many_identifiers'],
  }),
  writeDashboard: route({
    method: 'POST',
    path: '/platform/dashboards',
    operationId: 'writeDashboardRow',
    tag: 'Platform',
    summary: 'Write a dashboard catalog row (role platform)',
    description: 'Idempotent per dashboard name. The first one sets up the managed `dashboard` type.',
    auth: 'platform',
    body: z.looseObject({ name: typeName }),
    answers: Object.fromEntries(
      [
        [201, 'A new row.'],
        [200, 'The row existed.'],
      ].map(([status, description]) => [
        status,
        {
          description: description as string,
          data: z.object({
            entity: EntitySummary.extend({ values: z.record(z.string(), z.unknown()).optional() }),
            created: z.boolean(),
            entity_type: EntityTypeRow,
            type_set_up: z.boolean().describe('Whether this call set up the managed type.'),
          }),
        },
      ]),
    ) as Record<number, Answer>,
    refusals: ['not_authorized', 'managed_type_blocked', 'empty_value', 'name_too_long', 'invalid_field'],
  }),
} satisfies Record<string, RouteDoc>;
