// An example of every request body, for the document (OpenAPI `examples` of the body's media type): what the
// reference page (/docs) puts in the body when a person tries a route, so each one is a request the service accepts
// as it stands once its guids are filled in. They tell one story: a `Data product` type whose `owned_by` refers to a
// `Team`; every other attribute value type has a declaration of its own. openapi.test.ts sends each of them to its
// route for a fresh tenant (PLACEHOLDERS replaced by what it creates) and expects it accepted.

import { MODEL_FORMAT } from '../../model/plans.js';
import type { RouteKey } from './budgets.js';

/** One example of a body, as OpenAPI states it: a title (the page's drop-down), what to change, the value. */
export interface BodyExample {
  summary: string;
  description?: string;
  value: unknown;
}

/**
 * What no example can know in advance: the guids of your types and entities, and a tenant. Each is written as what
 * to put there; the test replaces each with one it created.
 */
export const PLACEHOLDERS = {
  /** The type the example acts on (`Data product`). */
  type: '<guid of the type, e.g. Data product>',
  /** The type a reference attribute points at (`Team`). */
  refType: '<guid of the referenced type, e.g. Team>',
  /** An entity of the referenced type (a team). */
  entity: '<guid of an entity of the referenced type, e.g. a team>',
  /** A tenant an operator purges. */
  tenant: 'acme',
} as const;

const REPLACE_TYPE = `Replace \`${PLACEHOLDERS.type}\` with the guid of your type (\`GET /entities/types\`, or the answer that created it).`;
const REPLACE_REF_TYPE = `Replace \`${PLACEHOLDERS.refType}\` with the guid of the type the attribute refers to (\`GET /entities/types\`, or create it first, e.g. \`{"name": "Team"}\`).`;
const REPLACE_ENTITY = `Replace \`${PLACEHOLDERS.entity}\` with the guid of an entity of that type (the answer of \`POST /entities\` that created it).`;

/** The declarations the examples share: a string enumeration, and a reference to a team. */
const TIER = {
  name: 'tier',
  value_type: 'string',
  cardinality: 'single',
  allowed_values: ['gold', 'silver', 'bronze'],
  default_value: 'bronze',
};
const OWNED_BY = {
  name: 'owned_by',
  value_type: 'entity_ref',
  cardinality: 'single',
  filterable: true,
};

/** The model document of the plan and apply examples: types by name, references by the name of their type. */
const MODEL = {
  format: MODEL_FORMAT,
  types: [
    {
      name: 'Data product',
      attributes: [
        { ...OWNED_BY, allowed_ref_type: 'Team' },
        { name: 'row_count', value_type: 'number', cardinality: 'single' },
        TIER,
      ],
    },
    { name: 'Team' },
  ],
};
const MODEL_TEXT =
  'Two types, `Data product` and `Team`: the plan creates those you do not have, and declares the attributes of `Data product` it lacks (`owned_by` refers to `Team` by name, so the document moves between tenants). `Team` lists no `attributes`: the document leaves its definitions alone.';

/** The examples of each route that takes a body (rest/openapi.ts refuses to build a document with one missing). */
export const BODY_EXAMPLES: Partial<Record<RouteKey, Record<string, BodyExample>>> = {
  createEntityType: {
    dataProduct: {
      summary: 'A type named Data product',
      description: 'Sent again (in any letter case), it answers the same type with `created: false`.',
      value: { name: 'Data product' },
    },
  },
  renameEntityType: {
    rename: {
      summary: 'Rename the type to Data asset',
      description: 'The guid in the path is the type renamed; it keeps its guid.',
      value: { name: 'Data asset' },
    },
    describe: {
      summary: 'Describe the type (its name stays)',
      description: 'A description and a display name, for people; null (or empty) removes one.',
      value: { description: 'A curated dataset with an owner and a tier.', display_name: 'Data product' },
    },
  },
  releaseFormerName: {
    release: {
      summary: 'Release the name the type was created under',
      description:
        'For a type created as Data item and renamed since: creating a type named Data item then makes a new type.',
      value: { name: 'Data item' },
    },
  },
  declareAttribute: {
    string: {
      summary: 'string: an enumeration with a default',
      description:
        'One of three values; an entity created without one gets `bronze`. `allowed_values` applies to every value type but `entity_ref`.',
      value: TIER,
    },
    number: {
      summary: 'number',
      value: { name: 'row_count', value_type: 'number', cardinality: 'single' },
    },
    boolean: {
      summary: 'boolean: required, with a default',
      description: 'Every entity of the type carries a value: `false` unless it is created with one.',
      value: {
        name: 'certified',
        value_type: 'boolean',
        cardinality: 'single',
        required: true,
        default_value: false,
      },
    },
    date: {
      summary: 'date: a list of dates',
      description: 'ISO 8601 dates or date-times, at most 1,000 per entity (`cardinality: multi`).',
      value: { name: 'review_dates', value_type: 'date', cardinality: 'multi' },
    },
    json: {
      summary: 'json: any JSON value, with a default',
      value: {
        name: 'settings',
        value_type: 'json',
        cardinality: 'single',
        default_value: { retention_days: 30 },
      },
    },
    entity_ref: {
      summary: 'entity_ref: a reference to an entity of another type (replace the guid)',
      description: `${REPLACE_REF_TYPE} \`filterable\` (entity_ref only) lets \`GET /entities\` and \`POST /entities/query\` list the entities referring to a given one.`,
      value: { ...OWNED_BY, allowed_ref_type: PLACEHOLDERS.refType },
    },
  },
  evolveAttribute: {
    widen: {
      summary: 'Add a value to the enumeration of tier, in place',
      description: `${REPLACE_TYPE} The path names the attribute (\`tier\`, as the declaration examples declare it); its guid and its stored values are kept.`,
      value: { allowed_values: ['gold', 'silver', 'bronze', 'platinum'] },
    },
    relax: {
      summary: 'Another default, and no longer required',
      value: { default_value: 'silver', required: false },
    },
  },
  createEntity: {
    dataProduct: {
      summary: 'An entity with values (replace the guids)',
      description: `${REPLACE_TYPE} ${REPLACE_ENTITY} The values are of attributes the declaration examples declare on the type (\`tier\`, \`row_count\`, \`certified\`, \`owned_by\`); the type's defaults fill in the others.`,
      value: {
        type_guid: PLACEHOLDERS.type,
        name: 'Quarterly sales',
        values: { tier: 'gold', row_count: 1200000, certified: true, owned_by: PLACEHOLDERS.entity },
      },
    },
  },
  queryEntities: {
    ownedBy: {
      summary: 'The entities of a type referring to a team (replace the guids)',
      description: `${REPLACE_TYPE} ${REPLACE_ENTITY} \`owned_by\` is the filterable reference of the declaration examples; \`tags\`, on every type, works too.`,
      value: {
        type_guid: PLACEHOLDERS.type,
        where: [{ attribute: 'owned_by', any_of: [PLACEHOLDERS.entity] }],
        page_size: 50,
      },
    },
  },
  lookup: {
    identifiers: {
      summary: 'Resolve guids (replace them with yours)',
      description: `${REPLACE_ENTITY} An identifier nothing of yours has resolves to null.`,
      value: { identifiers: [PLACEHOLDERS.entity, '00000000-0000-0000-0000-000000000000'] },
    },
  },
  writeDashboard: {
    dashboard: {
      summary: 'A dashboard row',
      description: 'Role `platform` only.',
      value: { name: 'Quarterly revenue' },
    },
  },
  planModel: {
    model: { summary: 'Plan a model of two types', description: MODEL_TEXT, value: MODEL },
  },
  applyModel: {
    model: {
      summary: 'Apply a model of two types',
      description: `${MODEL_TEXT} Nothing is withdrawn (\`allow_withdraw\` is false): a definition the document states differently stops the apply before it writes.`,
      value: { document: MODEL, allow_withdraw: false },
    },
  },
  purge: {
    tenant: {
      summary: 'Purge one tenant',
      description: `Replace \`${PLACEHOLDERS.tenant}\` with the tenant; send \`{}\` (or no body) to purge every tenant.`,
      value: { tenant: PLACEHOLDERS.tenant },
    },
  },
  graphqlPost: {
    entityTypes: {
      summary: 'The first entity types, with variables',
      value: {
        query:
          'query EntityTypes($first: Int) { entityTypes(first: $first) { edges { node { guid name origin } } pageInfo { hasNextPage endCursor } } }',
        variables: { first: 20 },
        operationName: 'EntityTypes',
      },
    },
    typeByName: {
      summary: 'A type by name, with its attributes',
      value: {
        query:
          '{ entityTypeByName(name: "table") { guid name attributes { name valueType cardinality required } } }',
      },
    },
  },
};
