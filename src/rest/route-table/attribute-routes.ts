// The routes of attribute definitions: declare, list, withdraw.

import { z } from 'zod';
import { DeclareBody, EvolveBody } from '../../contract/model-document.js';
import { NAME_DOC, PLATFORM_NAME_DOC } from '../../contract/refusing-fields.js';
import { AttributeRow, FieldChange, WithdrawImpact } from '../../contract/wire.js';
import {
  MAX_ATTRIBUTE_DEFS,
  MAX_TYPE_DEFAULTS_JSON_BYTES,
  MAX_TYPE_DEFINITIONS_JSON_BYTES,
} from '../../model/limits.js';
import { DECLARATION_RULE_REASONS } from './bodies.js';
import { dryRun, guidParams, type RouteDoc, route, typeGuidParam } from './fields.js';
import { AttributeState } from './rows.js';

export const ATTRIBUTE_ROUTES = {
  declareAttribute: route({
    method: 'POST',
    path: '/entities/types/:guid/attributes',
    operationId: 'declareAttribute',
    preconditions: 'if-match',
    tag: 'Attributes',
    summary: 'Declare an attribute definition on a type',
    description: `At most ${MAX_ATTRIBUTE_DEFS} live definitions per type, holding at most ${MAX_TYPE_DEFINITIONS_JSON_BYTES.toLocaleString('en-US')} bytes (UTF-8 JSON text) of enumerations and defaults together (\`attribute_defs_too_large\`), of which at most ${MAX_TYPE_DEFAULTS_JSON_BYTES.toLocaleString('en-US')} of defaults (\`defaults_too_large\`: every entity created without those values carries them). With \`dry_run\` nothing is written.`,
    auth: 'bearer',
    params: guidParams,
    query: z.looseObject({ dry_run: dryRun }),
    body: DeclareBody,
    bodyCheckedByResolver: true,
    answers: {
      201: {
        description: 'Declared.',
        data: z.object({
          attribute: AttributeRow,
          usage: z
            .object({ declared: z.number(), limit: z.literal(MAX_ATTRIBUTE_DEFS) })
            .describe('Live definitions on the type after this one, and the limit.'),
        }),
      },
      200: {
        description: 'Dry run: the declaration is valid; nothing was written.',
        data: z.object({
          dry_run: z.literal(true),
          attribute: AttributeRow,
          usage: z.object({ declared: z.number(), limit: z.literal(MAX_ATTRIBUTE_DEFS) }),
        }),
      },
    },
    refusals: [
      'unknown_entity_type',
      'base_type_not_owner',
      'attribute_def_already_exists',
      'attribute_def_withdrawn',
      'too_many_attribute_defs',
      'attribute_defs_too_large',
      'defaults_too_large',
      ...DECLARATION_RULE_REASONS,
      'referent_not_found',
      'ref_type_mismatch',
    ],
  }),
  evolveAttribute: route({
    method: 'PATCH',
    path: '/entities/types/:guid/attributes/:name',
    operationId: 'evolveAttribute',
    preconditions: 'if-match',
    tag: 'Attributes',
    summary: 'Change a live attribute definition in place',
    description:
      'For changes every stored value survives: allowed values added (or the enumeration dropped), `required` dropped, `filterable` turned on or off, another default. The definition keeps its guid and its values, and never leaves the listing; one `attribute_evolved` change record says what changed. Any other change (value type, cardinality, referenced type, values removed from the enumeration, `required` added) is refused with `attribute_change_not_in_place`: redeclare it through a model document (its values carried). A change that changes nothing writes nothing (`changed: false`). With `dry_run` nothing is written.',
    auth: 'bearer',
    params: z.object({
      guid: typeGuidParam(),
      name: z
        .string()
        .describe('Attribute name (trimmed, letter case ignored); not a platform attribute.')
        .meta({ ...NAME_DOC, not: PLATFORM_NAME_DOC }),
    }),
    query: z.looseObject({ dry_run: dryRun }),
    body: EvolveBody,
    bodyCheckedByResolver: true,
    answers: {
      200: {
        description:
          'Changed in place (or, with `dry_run`, as it would be); `changed: false` when it already was.',
        data: z.object({
          dry_run: z.literal(true).optional().describe('Present on a dry run: nothing was written.'),
          attribute: AttributeRow,
          changed: z
            .boolean()
            .describe('False when the definition already was as asked: nothing was written.'),
          changes: z.array(FieldChange).describe('How the definition changed, field by field.'),
        }),
      },
    },
    refusals: [
      'unknown_entity_type',
      'attribute_def_not_found',
      'attribute_def_withdrawn',
      'attribute_change_not_in_place',
      'base_type_not_owner',
      'attribute_defs_too_large',
      'defaults_too_large',
      ...DECLARATION_RULE_REASONS,
      'referent_not_found',
      'ref_type_mismatch',
    ],
  }),
  listAttributes: route({
    method: 'GET',
    path: '/entities/types/:guid/attributes',
    operationId: 'listAttributes',
    preconditions: 'if-none-match',
    tag: 'Attributes',
    summary: 'List the attributes applying to a type',
    description:
      'The five platform attributes (owner_type null) first, then the type’s own live definitions by name; one being redeclared (its values carried) is listed as it will be, with `redeclaring` set. Not paged.',
    auth: 'bearer',
    params: guidParams,
    answers: {
      200: { description: 'The attributes.', data: z.object({ attributes: z.array(AttributeRow) }) },
    },
    refusals: ['unknown_entity_type'],
  }),
  withdrawAttribute: route({
    method: 'DELETE',
    path: '/entities/attributes/:typeGuid/:name',
    operationId: 'withdrawAttribute',
    preconditions: 'if-match',
    tag: 'Attributes',
    summary: 'Withdraw a live attribute definition (curation API)',
    description:
      'Its stored values start being removed and it leaves the listing; the daily job removes the definition.',
    auth: 'bearer',
    params: z.object({
      typeGuid: typeGuidParam(),
      name: z
        .string()
        .describe('Attribute name; not a platform attribute (the platform owns those).')
        .meta({ ...NAME_DOC, not: PLATFORM_NAME_DOC }),
    }),
    query: z.looseObject({ dry_run: dryRun }),
    answers: {
      200: {
        description: 'Withdrawn; or, with `dry_run`, what withdrawing would affect.',
        data: z.union([
          z.object({
            attribute: AttributeRow.extend({ state: AttributeState }),
            withdrawn: z.literal(true),
          }),
          z.object({
            dry_run: z.literal(true),
            attribute: AttributeRow.extend({ state: AttributeState }),
            impact: WithdrawImpact,
          }),
        ]),
      },
    },
    refusals: [
      'unknown_entity_type',
      'attribute_def_not_found',
      'attribute_def_withdrawn',
      'base_type_not_owner',
      'empty_value',
      'name_too_long',
      'invalid_field',
    ],
  }),
} satisfies Record<string, RouteDoc>;
