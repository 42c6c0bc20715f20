// The OpenAPI 3.1 document, generated once from the REST contract (rest/schemas.ts): the same zod schemas that
// validate requests describe them here, and the answers' schemas are the envelopes the routes send.
// Over 300 lines: one document, built in one pass over the route table (parameters, bodies, answers, refusals).

import { z } from 'zod';
import { PRECONDITION_PATTERN } from '../contract/type-version.js';
import { components } from '../contract/wire.js';
import {
  IDEMPOTENCY_KEY_MAX,
  IDEMPOTENCY_KEY_PATTERN,
  isTenantWrite,
  KEYLESS_WRITES,
  takesIdempotencyKey,
} from '../contract/write-headers.js';
import { type Reason, statusOf } from '../errors.js';
import { BODY_LIMIT_BYTES } from '../model/doors.js';
import { IDEMPOTENCY_TTL_HOURS } from '../model/limits.js';
import { CHANGE_REASON_MAX } from '../resolvers/change-author.js';
import { IDEMPOTENCY_LIMITS } from '../services/keyed-requests.js';
import type { RouteKey } from './route-table/budgets.js';
import { BODY_EXAMPLES } from './route-table/examples.js';
import { BODY_REFUSALS, COMMON_REFUSALS, ROUTES, type RouteDoc, refusals, success } from './schemas.js';

type Json = Record<string, unknown>;

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad request',
  401: 'Unauthenticated',
  403: 'Not authorized',
  404: 'Not found',
  405: 'Method not allowed',
  406: 'Not acceptable',
  408: 'Body too slow',
  409: 'Conflict',
  412: 'Precondition failed',
  413: 'Body too large',
  414: 'URI too long',
  415: 'Unsupported media type',
  422: 'Idempotency-Key reused',
  431: 'Headers too large',
  500: 'Unexpected error',
  503: 'Storage unavailable or busy',
};

const pascal = (id: string) => id[0]?.toUpperCase() + id.slice(1);

/** `/a/:b` → `/a/{b}`. */
export const openApiPath = (path: string) => path.replace(/:([A-Za-z_]+)/g, '{$1}');

/** Writes of tenants take an Idempotency-Key (http/idempotency-key.ts). */
const keyed = (doc: RouteDoc) => doc.auth !== 'none' && takesIdempotencyKey(doc.method, doc.path);

/** The reasons a route's query and path parameters are refused with: each field's own, else invalid_field. */
function parameterRefusals(doc: RouteDoc): Reason[] {
  const reasons: Reason[] = [];
  for (const part of [doc.params, doc.query]) {
    for (const field of Object.values((part?.shape ?? {}) as Record<string, z.ZodType>)) {
      const meta = refusals.get(field);
      reasons.push(meta?.reason ?? 'invalid_field');
      if (meta?.missing) reasons.push(meta.missing);
      if (meta?.tooMany) reasons.push(meta.tooMany);
    }
  }
  return reasons;
}

function refusalsOf(doc: RouteDoc): Reason[] {
  const all = new Set<Reason>(doc.refusals);
  if (doc.preconditions) all.add('invalid_precondition');
  if (doc.preconditions === 'if-match') all.add('precondition_failed');
  for (const r of parameterRefusals(doc)) all.add(r);
  if (doc.auth !== 'none') for (const r of COMMON_REFUSALS) all.add(r);
  // (a public page is counted in its client's bucket of requests without a verified token; probes never are)
  else if (doc.path !== '/healthz' && doc.path !== '/readyz') all.add('rate_limited');
  if (doc.body) for (const r of BODY_REFUSALS) all.add(r);
  if (keyed(doc)) {
    for (const r of [
      'invalid_idempotency_key',
      'idempotency_key_reused',
      'idempotency_answer_too_large',
      'idempotency_keys_exhausted',
    ] as const) {
      all.add(r);
    }
  }
  if (doc.auth !== 'none' && isTenantWrite(doc.method, doc.path)) all.add('invalid_change_reason');
  if (doc.auth !== 'none' && KEYLESS_WRITES.has(doc.path)) all.add('idempotency_key_not_supported');
  // A heavy door's admission turn, or a large body's (app/admission.ts); a keyed request's turn on its key.
  if (doc.auth !== 'none' && (doc.budget?.admission === 'heavy' || doc.body || keyed(doc))) {
    all.add('tenant_busy');
    all.add('server_busy');
  }
  return [...all];
}

/** The ETag answer header of a type's reads and conditional writes. */
const ETAG = {
  description:
    'The type\'s version as a weak entity-tag (`W/"<version>"`): the same on every instance; it changes with every change of the type\'s row or of its live definitions.',
  schema: { type: 'string' },
};

/** Names each schema the document uses once (a registry: shared rows are `$ref`s, not copies). */
function schemaNamer() {
  // Every schema the document names goes through one registry, so shared rows are `$ref`s, not copies.
  const registry = z.registry<{ id: string; description?: string }>();
  for (const [schema, meta] of components) registry.add(schema, meta);
  const ids = new Map<z.ZodType, string>();
  const name = (schema: z.ZodType, id: string) => {
    const component = components.get(schema);
    if (component) return component.id;
    if (!ids.has(schema)) {
      ids.set(schema, id);
      registry.add(schema, { id });
    }
    return ids.get(schema) as string;
  };
  const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });

  const schemas = () => {
    const converted = z.toJSONSchema(registry, {
      target: 'draft-2020-12',
      io: 'output',
      uri: (id) => `#/components/schemas/${id}`,
    }) as { schemas: Record<string, Json> };
    const schemas: Record<string, Json> = {};
    for (const [id, { $schema: _s, $id: _i, ...schema }] of Object.entries(converted.schemas))
      schemas[id] = schema;
    return schemas;
  };
  return { name, ref, schemas };
}
type Namer = ReturnType<typeof schemaNamer>;

/** A route's parameters: its path and query, and the headers it honours (a write's reason and key, conditions). */
function parametersOf(doc: RouteDoc): Json[] {
  const parameters: Json[] = [];
  for (const [where, schema] of [
    ['path', doc.params],
    ['query', doc.query],
  ] as const) {
    if (!schema) continue;
    const jsonSchema = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input' }) as {
      properties?: Record<string, Json>;
      required?: string[];
    };
    for (const [param, property] of Object.entries(jsonSchema.properties ?? {})) {
      const { description, ...schemaOnly } = property;
      // A parameter holding JSON text is described by its content (OpenAPI `content`), the value it carries.
      const content =
        schemaOnly.contentMediaType === 'application/json'
          ? { content: { 'application/json': { schema: schemaOnly.contentSchema } } }
          : { schema: schemaOnly };
      parameters.push({
        name: param,
        in: where,
        required: where === 'path' || (jsonSchema.required ?? []).includes(param),
        ...(description ? { description } : {}),
        ...content,
      });
    }
  }
  if (doc.auth !== 'none' && isTenantWrite(doc.method, doc.path)) {
    parameters.push({
      name: 'X-Change-Reason',
      in: 'header',
      required: false,
      description: `Why you make this change: recorded with it in the history (a change row's \`reason\`). 1 to ${CHANGE_REASON_MAX} visible ASCII characters and spaces once trimmed (a GraphQL mutation's \`reason\` takes any text). Otherwise 400 \`invalid_change_reason\`.`,
      schema: {
        type: 'string',
        minLength: 1,
        maxLength: CHANGE_REASON_MAX,
        pattern: '^[\\x20-\\x7e]*[\\x21-\\x7e][\\x20-\\x7e]*$',
      },
    });
  }
  if (keyed(doc)) {
    parameters.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description: `Makes the write safe to send again: 1 to ${IDEMPOTENCY_KEY_MAX} visible ASCII characters, quoted ("...") or bare, unique per request of yours (a key belongs to your tenant and your token's subject). The answer of a write is stored with it for ${IDEMPOTENCY_TTL_HOURS} h; the same request sent again with the key gets that answer again (with \`Idempotent-Replayed: true\`) once it passes the same checks as a fresh request (who may call, admission), another request with the key is refused 422 \`idempotency_key_reused\`. Requests with one key at once run once: the others wait for it, in memory, and get its answer. A stored answer holds at most ${IDEMPOTENCY_LIMITS.maxAnswerBytes.toLocaleString('en-US')} bytes (a larger one is refused, 422 \`idempotency_answer_too_large\`, its write rolled back); a tenant holds at most IDEMPOTENCY_TENANT_MAX_KEYS keys and IDEMPOTENCY_TENANT_MAX_MB of answers (429 \`idempotency_keys_exhausted\`).`,
      schema: { type: 'string', pattern: IDEMPOTENCY_KEY_PATTERN },
    });
  }
  if (doc.preconditions) {
    const write = doc.preconditions === 'if-match';
    parameters.push({
      name: write ? 'If-Match' : 'If-None-Match',
      in: 'header',
      required: false,
      description: write
        ? 'The type\'s ETag as you read it (`W/"<version>"`; `*`: any version): the write happens only while the type is still at that version, else 412 `precondition_failed` with the current ETag (header and `DATA.etag`). Without it the write is unconditional. Of two writers sending the same version, one wins.'
        : 'The ETag you hold (`W/"<version>"`, or `*`): when the type is still at that version, the answer is 304 with no body.',
      schema: { type: 'string', pattern: PRECONDITION_PATTERN },
    });
  }
  return parameters;
}

/** A route's request body: its schema and the examples the service accepts. */
function requestBodyOf(key: RouteKey, doc: RouteDoc, { name, ref }: Namer): Json | undefined {
  if (!doc.body) return undefined;
  // Requests the service accepts, rather than what a renderer would make up from the schema.
  const examples = BODY_EXAMPLES[key];
  if (!examples) throw new Error(`${key}: its body has no examples (rest/route-table/examples.ts)`);
  return {
    required: doc.bodyOptional !== true,
    description: `JSON, at most ${BODY_LIMIT_BYTES / 1024 / 1024} MB (refused before parsing).`,
    content: {
      'application/json': {
        schema: ref(name(doc.body, `${pascal(doc.operationId)}Request`)),
        examples,
      },
    },
  };
}

/** A route's answers: each success, and each refusal status with exactly its reasons. */
function responsesOf(doc: RouteDoc, { name, ref }: Namer): Record<string, Json> {
  const responses: Record<string, Json> = {};
  for (const [status, answer] of Object.entries(doc.answers)) {
    const content = answer.raw
      ? {
          [answer.raw.contentType]: {
            schema: ref(name(answer.raw.schema, `${pascal(doc.operationId)}Body${status}`)),
          },
        }
      : {
          'application/json': {
            schema: ref(
              name(success(answer.data ?? z.object({})), `${pascal(doc.operationId)}Response${status}`),
            ),
          },
        };
    if (answer.alternative) {
      const { contentType, schema } = answer.alternative;
      Object.assign(content, {
        [contentType]: { schema: ref(name(schema, `${pascal(doc.operationId)}Stream${status}`)) },
      });
    }
    responses[status] = {
      description: answer.description,
      ...(doc.preconditions && Number(status) < 300 ? { headers: { ETag: ETAG } } : {}),
      content,
    };
  }
  if (doc.preconditions === 'if-none-match') {
    responses['304'] = {
      description: 'Not modified: the type is still at the version If-None-Match names. No body.',
      headers: { ETag: ETAG },
    };
  }
  const byStatus = new Map<number, Reason[]>();
  for (const reason of refusalsOf(doc)) {
    const status = statusOf(reason);
    byStatus.set(status, [...(byStatus.get(status) ?? []), reason]);
  }
  const refusal = ref(doc.refusalSchema ? name(doc.refusalSchema, '') : 'Refusal');
  for (const [status, reasons] of [...byStatus.entries()].sort((a, b) => a[0] - b[0])) {
    // The reasons of this status, exactly: a test answer with another reason fails the conformance check.
    const schema = {
      allOf: [refusal, { properties: { DATA: { properties: { reason: { enum: reasons } } } } }],
    };
    responses[String(status)] = {
      description: `${STATUS_TEXT[status] ?? 'Refused'}: ${reasons.map((r) => `\`${r}\``).join(', ')}.`,
      ...(status === 503
        ? {
            headers: {
              'Retry-After': {
                description: 'Seconds to wait before sending the request again.',
                schema: { type: 'integer', minimum: 1 },
              },
            },
          }
        : status === 412
          ? { headers: { ETag: ETAG } }
          : {}),
      content: { 'application/json': { schema } },
    };
  }
  responses.default = {
    description: 'Any other refusal, in the envelope (every reason: docs/api.md, Refusal reasons).',
    content: { 'application/json': { schema: refusal } },
  };
  return responses;
}

/** One route as an OpenAPI operation. */
function operationOf(key: RouteKey, doc: RouteDoc, namer: Namer): Json {
  const op: Json = {
    operationId: doc.operationId,
    tags: [doc.tag],
    summary: doc.summary,
    ...(doc.description ? { description: doc.description } : {}),
    // One scheme for every token, /metrics' scrape credential included: it is sent the same way (Authorization:
    // Bearer), so a second scheme would say nothing a client does differently, and the reference page would offer
    // a newcomer two boxes for one header. Which tokens a route takes is its description's (see `metrics`).
    security: doc.auth === 'none' ? [] : [{ bearer: [] }],
    // What one request may cost at most (statements, what they read, answer bytes, memory, admission).
    ...(doc.budget ? { 'x-budget': doc.budget } : {}),
  };
  const parameters = parametersOf(doc);
  if (parameters.length > 0) op.parameters = parameters;
  const requestBody = requestBodyOf(key, doc, namer);
  if (requestBody) op.requestBody = requestBody;
  op.responses = responsesOf(doc, namer);
  return op;
}

/** Builds the document (pure: the same contract always gives the same document). */
export function buildOpenApiDocument(version: string): Json {
  const namer = schemaNamer();
  const paths: Record<string, Json> = {};
  for (const [key, doc] of Object.entries(ROUTES) as [RouteKey, RouteDoc][]) {
    const path = openApiPath(doc.path);
    paths[path] = { ...(paths[path] ?? {}), [doc.method.toLowerCase()]: operationOf(key, doc, namer) };
  }
  const schemas = namer.schemas();
  return {
    // No `jsonSchemaDialect`: the default, the OAS 3.1 base dialect, is JSON Schema 2020-12 with OpenAPI's few
    // keywords added, so the schemas mean the same under it; and swagger-ui (/docs) reads only the default.
    openapi: '3.1.0',
    info: {
      title: 'Entity Metamodel API',
      version,
      description:
        'Entity types and attribute definitions of a data catalog. Every response is the envelope `{STATUS, MESSAGE, DATA}`; a refusal has `STATUS: "FAIL"` and `DATA.reason`. All data is per tenant (the token’s `tenant` claim). GraphQL is at `/graphql`. Every answer to a write carries a `Neo4j-Bookmark` header; a later request to any instance may send it back in a `Neo4j-Bookmark` request header, and its reads then wait until the Neo4j server answering them has that write (reading your own writes on a Neo4j cluster). A value this API did not issue to the tenant is refused with `invalid_bookmark` (400).',
    },
    servers: [{ url: '/' }],
    tags: [
      { name: 'Entity types' },
      { name: 'Attributes' },
      {
        name: 'Model as code',
        description: 'The metamodel as one document: export it, plan a document against the tenant.',
      },
      {
        name: 'History',
        description: 'Who changed the metamodel, when and how: per type, and as a feed to follow.',
      },
      { name: 'Entities', description: 'The curation points this service serves.' },
      { name: 'Platform', description: 'Called by the platform’s own features (role `platform`).' },
      { name: 'Operations', description: 'Health, metrics and operator endpoints.' },
      { name: 'GraphQL', description: 'The GraphQL API; GraphiQL in a browser.' },
    ],
    paths,
    components: {
      schemas,
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description:
            'A JWT with the claims `sub`, `tenant` (required), `roles` (`admin`, `platform`), `cross_tenant`. `GET /metrics` also takes the deployment’s `METRICS_TOKEN` in its place (a scrape credential for Prometheus).',
        },
      },
    },
  };
}
