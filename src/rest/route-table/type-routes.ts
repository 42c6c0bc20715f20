// The routes of entity types: create-or-get, pages, by guid and by name, rename, delete; their history and the
// change feed (the metamodel as a file: model-routes.ts).

import { z } from 'zod';
import { NAME_DOC, nameField, refusing, typeName } from '../../contract/refusing-fields.js';
import { ChangeRow, EntityTypeRow, RELEASE_FORMER_NAME } from '../../contract/wire.js';
import { CHANGE_KINDS } from '../../model/changes.js';
import { CHANGE_PAGE_MAX_BYTES, FEED_FILTER_WINDOW } from '../../resolvers/changes.js';
import { GUID_SHAPE, KIND_LIST_SHAPE } from '../../resolvers/feed-filter.js';
import { guidParams, pageQuery, pageSizeField, type RouteDoc, route } from './fields.js';

export const TYPE_ROUTES = {
  createEntityType: route({
    method: 'POST',
    path: '/entities/types',
    operationId: 'createEntityType',
    tag: 'Entity types',
    summary: 'Create an entity type (create-or-get)',
    description:
      'Names are compared trimmed and ignoring letter case; a name that resolves returns that type with `created: false` and writes nothing. Unknown fields are ignored.',
    auth: 'bearer',
    body: z.looseObject({ name: typeName }),
    answers: {
      201: {
        description: 'Created.',
        data: z.object({ entity_type: EntityTypeRow, created: z.literal(true) }),
      },
      200: {
        description: 'The name already resolved to a type; nothing was written.',
        data: z.object({ entity_type: EntityTypeRow, created: z.literal(false) }),
      },
    },
    refusals: ['empty_value', 'name_too_long', 'invalid_field', 'type_instances_managed'],
  }),
  listEntityTypes: route({
    method: 'GET',
    path: '/entities/types',
    operationId: 'listEntityTypes',
    tag: 'Entity types',
    summary: 'List entity types',
    description: 'System and user-defined types together, in normalised-name order, keyset-paged.',
    auth: 'bearer',
    query: pageQuery('Opaque `next_cursor` from a previous page.'),
    answers: {
      200: {
        description: 'A page of types.',
        data: z.object({
          entity_types: z.array(EntityTypeRow),
          next_cursor: z.string().nullable().describe('Cursor of the next page; null on the last page.'),
        }),
      },
    },
    refusals: ['invalid_cursor', 'invalid_page_size'],
  }),
  getEntityType: route({
    method: 'GET',
    path: '/entities/types/:guid',
    operationId: 'getEntityType',
    preconditions: 'if-none-match',
    tag: 'Entity types',
    summary: 'Read one entity type',
    auth: 'bearer',
    params: guidParams,
    answers: { 200: { description: 'The type.', data: z.object({ entity_type: EntityTypeRow }) } },
    refusals: ['unknown_entity_type'],
  }),
  getEntityTypeByName: route({
    method: 'GET',
    path: '/entities/types/by-name/:name',
    operationId: 'getEntityTypeByName',
    preconditions: 'if-none-match',
    tag: 'Entity types',
    summary: 'Read one entity type by its name',
    description:
      'The name is compared as create-or-get compares it (trimmed, letter case ignored), and a name a type was created under keeps resolving to it after a rename. Percent-encode the name in the path (`/` as `%2F`). Nothing is ever created.',
    auth: 'bearer',
    params: z.object({ name: z.string().describe('Type name.').meta(NAME_DOC) }),
    answers: { 200: { description: 'The type.', data: z.object({ entity_type: EntityTypeRow }) } },
    refusals: ['unknown_entity_type', 'empty_value', 'name_too_long', 'invalid_field'],
  }),
  typeHistory: route({
    method: 'GET',
    path: '/entities/types/:guid/history',
    operationId: 'typeHistory',
    tag: 'History',
    summary: "A type's change history, newest first",
    description:
      "Every change of the type and of its attribute definitions: who (the token's sub), when, what, the request id, and before/after. Keyset-paged with signed cursors bound to the tenant, like type pages. A type's history outlives it: a deleted type's history is still read by its guid, and a type recreated under its name (same guid) continues it.",
    auth: 'bearer',
    params: guidParams,
    query: pageQuery('Opaque `next_cursor` from a previous page of this history.'),
    answers: {
      200: {
        description: 'A page of changes, newest first.',
        data: z.object({
          changes: z.array(ChangeRow),
          next_cursor: z
            .string()
            .nullable()
            .describe('Cursor of the next (older) page; null on the last page.'),
        }),
      },
    },
    refusals: ['unknown_entity_type', 'invalid_cursor', 'invalid_page_size'],
  }),
  listChanges: route({
    method: 'GET',
    path: '/entities/changes',
    operationId: 'listChanges',
    tag: 'History',
    summary: "The tenant's change feed, oldest first",
    description: `Every change of the tenant's metamodel, oldest first, each exactly once over successive pages: send each page's \`next_cursor\` as \`after\` to get the changes made since (an empty page keeps the same cursor; poll with it). Without \`after\`, the feed starts at the tenant's first change. Changes made one after another (the second after the first was committed) come in that order; a page carries at most \`page_size\` changes and ${CHANGE_PAGE_MAX_BYTES / 1024 / 1024} MiB of before/after (UTF-8 bytes; a single larger change on a page of its own). Filtered (\`type_guid\`, \`attribute\`, \`kind\`: all must hold), a page examines at most ${FEED_FILTER_WINDOW.toLocaleString('en-US')} changes of the feed, so it can carry fewer than \`page_size\` (even none) with \`has_more\` true: follow \`next_cursor\`. A cursor is a position in the feed, good with any filter.`,
    auth: 'bearer',
    query: z.looseObject({
      after: refusing(
        z.string().optional().describe('Opaque `next_cursor` of the last page read; none for the start.'),
        { reason: 'invalid_cursor' },
      ),
      page_size: pageSizeField,
      type_guid: refusing(
        z
          .string()
          .optional()
          .describe("Only changes of this type and its definitions (a deleted type's too).")
          .meta({ pattern: GUID_SHAPE.source }),
        { reason: 'invalid_filter' },
      ),
      attribute: refusing(
        z
          .string()
          .optional()
          .describe(
            'Only changes of definitions of this name (letter case ignored), on any type unless `type_guid` is sent too.',
          )
          .meta(NAME_DOC),
        { reason: 'invalid_filter' },
      ),
      kind: refusing(
        z
          .string()
          .optional()
          .describe(
            `Only changes of these kinds, comma-separated (${CHANGE_KINDS.map((k) => `\`${k}\``).join(', ')}).`,
          )
          .meta({ pattern: KIND_LIST_SHAPE }),
        { reason: 'invalid_filter' },
      ),
    }),
    answers: {
      200: {
        description: 'The next changes, oldest first.',
        data: z.object({
          changes: z.array(ChangeRow),
          next_cursor: z.string().describe('Where to resume: send it as `after` next time (never null).'),
          has_more: z
            .boolean()
            .describe('More changes were ready than this page carries: ask again at once.'),
        }),
      },
    },
    refusals: ['invalid_cursor', 'invalid_page_size', 'invalid_filter'],
  }),
  renameEntityType: route({
    method: 'PATCH',
    path: '/entities/types/:guid',
    operationId: 'renameEntityType',
    preconditions: 'if-match',
    tag: 'Entity types',
    summary: 'Rename a user-defined type, or change its description and display name',
    description:
      'With `name`: rename (the guid stays; system, managed and connector types are refused). With `description` or `display_name` (any type; null or empty removes one; at most 1,000 and 256 characters, no control or invisible characters but line breaks in a description: invalid_field): its texts for people, recorded as `type_described`. Both may come in one body (the rename first).',
    auth: 'bearer',
    params: guidParams,
    body: z.looseObject({
      name: typeName.optional(),
      description: z
        .string()
        .nullable()
        .optional()
        .describe('What the type is for (at most 1,000 characters).'),
      display_name: z.string().nullable().optional().describe('A label for people (at most 256 characters).'),
    }),
    answers: {
      200: { description: 'Renamed or described.', data: z.object({ entity_type: EntityTypeRow }) },
    },
    refusals: [
      'unknown_entity_type',
      'empty_value',
      'name_too_long',
      'invalid_field',
      'type_not_user_defined',
      'type_name_taken',
      'type_instances_managed',
    ],
  }),
  releaseFormerName: route({
    method: 'POST',
    path: '/entities/types/:guid/former-names/release',
    operationId: 'releaseFormerName',
    preconditions: 'if-match',
    tag: 'Entity types',
    summary: 'Release a former name of a user-defined type',
    description: RELEASE_FORMER_NAME.description,
    auth: 'bearer',
    params: guidParams,
    body: z.looseObject({ name: nameField(RELEASE_FORMER_NAME.name) }),
    answers: {
      200: {
        description: 'Released, or already free.',
        data: z.object({
          entity_type: EntityTypeRow,
          released: z.boolean().describe(RELEASE_FORMER_NAME.released),
        }),
      },
    },
    refusals: [
      'unknown_entity_type',
      'empty_value',
      'name_too_long',
      'invalid_field',
      'type_not_user_defined',
      'name_not_held',
    ],
  }),
  deleteEntityType: route({
    method: 'DELETE',
    path: '/entities/types/:guid',
    operationId: 'deleteEntityType',
    preconditions: 'if-match',
    tag: 'Entity types',
    summary: 'Delete a user-defined type',
    description:
      'Withdraws its live definitions; its entities remain. Recreating the name gives the same guid back.',
    auth: 'bearer',
    params: guidParams,
    answers: {
      200: {
        description: 'Deleted.',
        data: z.object({ guid: z.string(), deleted: z.literal(true) }),
      },
    },
    refusals: ['unknown_entity_type', 'type_not_user_defined', 'type_referenced'],
  }),
} satisfies Record<string, RouteDoc>;
