// The operators' and public routes: the purge job, logs, the engine cache, metrics, health and readiness, the
// OpenAPI document, and GraphQL over GET and POST.

import { z } from 'zod';
import { refusing } from '../../contract/refusing-fields.js';
import { PurgeReport } from '../../contract/wire.js';
import { MAX_STRING_VALUE } from '../../model/limits.js';
import { holdsStringLongerThan } from '../../resolvers/values.js';
import {
  type Answer,
  jsonObjectText,
  LOG_TIME,
  LOG_TIME_ERROR,
  LOG_TIME_TEXT,
  type RouteDoc,
  route,
} from './fields.js';
import { GraphQLRefusal, GraphQLResult } from './rows.js';

/** What /graphql answers when the operation ran (refusals inside it included). */
const GRAPHQL_ANSWERS: Record<number, Answer> = {
  200: {
    description: 'A GraphQL response.',
    raw: { contentType: 'application/json', schema: GraphQLResult },
  },
};
export const OPERATION_ROUTES = {
  purge: route({
    method: 'POST',
    path: '/admin/jobs/purge',
    operationId: 'runPurge',
    tag: 'Operations',
    summary: 'Run the daily purge job now (operators)',
    auth: 'operator',
    bodyOptional: true,
    body: z.looseObject({
      tenant: refusing(z.string().min(1).nullish().describe('Only this tenant (default: all).'), {
        reason: 'invalid_field',
      }),
    }),
    answers: {
      200: {
        description: 'What the run removed.',
        data: PurgeReport,
        alternative: {
          contentType: 'application/x-ndjson',
          schema: z
            .string()
            .describe(
              'With `Accept: application/x-ndjson`: one JSON object per line, `{"progress": {definitions_total, definitions_done, definitions_removed, values_removed, batches}}` while the job runs, then the ordinary envelope as the last line (SUCCESS with the report, or FAIL with DATA.reason). Refusals before the job starts are ordinary envelope answers.',
            ),
        },
      },
    },
    refusals: ['not_authorized', 'invalid_field', 'purge_already_running'],
  }),
  logs: route({
    method: 'GET',
    path: '/admin/logs',
    operationId: 'recentLogs',
    tag: 'Operations',
    summary: 'Recent server log entries (operators)',
    auth: 'operator',
    query: z.looseObject({
      level: refusing(
        z
          .string()
          .regex(/^(trace|debug|info|warn|error|fatal|[0-9]{1,3})$/, {
            error: 'must be trace, debug, info, warn, error, fatal or a pino level number',
          })
          .optional()
          .describe('Minimum level: trace … fatal, or a pino number.'),
        { reason: 'invalid_field' },
      ),
      since: refusing(
        z.string().regex(LOG_TIME, { error: LOG_TIME_ERROR }).optional().describe(LOG_TIME_TEXT),
        {
          reason: 'invalid_field',
        },
      ),
      until: refusing(
        z.string().regex(LOG_TIME, { error: LOG_TIME_ERROR }).optional().describe(LOG_TIME_TEXT),
        {
          reason: 'invalid_field',
        },
      ),
      limit: refusing(
        z
          .string()
          .regex(/^([1-9][0-9]{0,2}|1000)$/, { error: 'must be a whole number from 1 to 1000' })
          .optional()
          .describe('Most entries, 1 to 1000 (default 100).'),
        { reason: 'invalid_field' },
      ),
    }),
    answers: {
      200: {
        description: 'Matching entries, oldest first.',
        data: z.object({
          total: z.number().describe('Entries matching before the limit.'),
          entries: z.array(z.record(z.string(), z.unknown())).describe('pino log entries.'),
        }),
      },
    },
    refusals: ['not_authorized', 'invalid_field'],
  }),
  engineCache: route({
    method: 'GET',
    path: '/admin/engine-cache',
    operationId: 'engineCacheDiagnostic',
    tag: 'Operations',
    summary: 'Engine cache diagnostic (operators)',
    auth: 'operator',
    answers: {
      200: {
        description: 'What is cached, hits, misses and size.',
        data: z.object({
          entries: z.number(),
          maxEntries: z.number(),
          bytes: z.number().describe('Approximate memory the cached definitions hold.'),
          maxBytes: z.number().describe('The byte budget (least recently used entries leave first).'),
          hits: z.number(),
          misses: z.number(),
          evictions: z.number(),
          invalidations: z.number(),
          cached: z
            .array(
              z.object({
                type_guid: z.string(),
                version: z.string(),
                attributes: z.number(),
                bytes: z.number(),
              }),
            )
            .describe('The most recent entries: type, its definitions version, and the definitions held.'),
          model_cache: z
            .object({
              entries: z.number(),
              bytes: z.number().describe('Approximate memory the model cache holds.'),
              maxBytes: z.number().describe('Its byte budget (least recently used entries leave first).'),
              maxTenantBytes: z
                .number()
                .describe("Most one tenant's entries may hold (its own oldest leave first past it)."),
              tenants: z.number().describe('Tenants with entries.'),
              hits: z.number(),
              misses: z.number(),
              evictions: z.number(),
              invalidations: z
                .number()
                .describe(
                  'Entries replaced by one read at another model version (a metamodel write came between).',
                ),
              byKind: z
                .record(
                  z.string(),
                  z.object({ hits: z.number(), misses: z.number(), entries: z.number(), bytes: z.number() }),
                )
                .describe('The same per kind of read (type_page, type, type_name, attributes, ...).'),
              tenants_by_size: z
                .array(z.object({ tenant_hash: z.string(), entries: z.number(), bytes: z.number() }))
                .describe('The tenants holding most memory, named by a keyed hash (never in clear).'),
            })
            .describe('Metamodel reads served from memory, validated by the tenant model version.'),
          model_versions: z
            .object({
              reads: z.number().describe('Statements that read model versions.'),
              requests: z.number().describe('Requests they answered (each statement is shared).'),
              leased: z
                .number()
                .describe('Requests answered from a read lease, with no statement (MODEL_READ_LEASE_MS).'),
            })
            .describe('The shared model-version reads and the read leases.'),
        }),
      },
    },
    refusals: ['not_authorized'],
  }),
  metrics: route({
    method: 'GET',
    path: '/metrics',
    operationId: 'metrics',
    tag: 'Operations',
    summary: 'Prometheus metrics (operators, or METRICS_TOKEN)',
    description:
      'The bearer token is an operator’s token, or the deployment’s `METRICS_TOKEN` (`Authorization: Bearer <METRICS_TOKEN>`), so that a scraper needs no user token. Metrics carry no tenant, guid or name.',
    auth: 'metrics',
    answers: {
      200: { description: 'Prometheus text format.', raw: { contentType: 'text/plain', schema: z.string() } },
    },
    refusals: ['not_authorized'],
  }),
  healthz: route({
    method: 'GET',
    path: '/healthz',
    operationId: 'liveness',
    tag: 'Operations',
    summary: 'Liveness (no token)',
    auth: 'none',
    answers: { 200: { description: 'The process serves.', data: z.object({ status: z.literal('ok') }) } },
    refusals: [],
  }),
  readyz: route({
    method: 'GET',
    path: '/readyz',
    operationId: 'readiness',
    tag: 'Operations',
    summary: 'Readiness (no token): 503 while Neo4j is unreachable',
    auth: 'none',
    answers: { 200: { description: 'Neo4j answers.', data: z.object({ status: z.literal('ready') }) } },
    refusals: ['storage_unavailable'],
  }),
  openapi: route({
    method: 'GET',
    path: '/openapi.json',
    operationId: 'openapi',
    tag: 'Operations',
    summary: 'This document (no token); an interactive reference is at /docs',
    auth: 'none',
    answers: {
      200: {
        description: 'OpenAPI 3.1 document.',
        raw: { contentType: 'application/json', schema: z.record(z.string(), z.unknown()) },
      },
    },
    refusals: [],
  }),
  graphqlGet: route({
    method: 'GET',
    path: '/graphql',
    operationId: 'graphqlGet',
    tag: 'GraphQL',
    summary: 'GraphQL over GET (queries only); GraphiQL when a browser asks for HTML',
    description:
      'With `Accept: text/html` (a browser) this is GraphiQL, served without a token; paste your token into its headers editor as `{"Authorization": "Bearer …"}`. Tokens are never read from URLs.',
    auth: 'bearer',
    query: z.looseObject({
      query: refusing(z.string().min(1).describe('The GraphQL document.'), {
        reason: 'invalid_field',
        missing: 'invalid_field',
      }),
      variables: refusing(jsonObjectText.optional().describe('JSON text of the variables (an object).'), {
        reason: 'invalid_field',
      }),
      operationName: refusing(
        z.string().optional().describe('Operation to run when the document has several.'),
        { reason: 'invalid_field' },
      ),
      extensions: refusing(
        jsonObjectText.optional().describe('JSON text of the request extensions (an object).'),
        { reason: 'invalid_field' },
      ),
    }),
    answers: GRAPHQL_ANSWERS,
    refusals: ['invalid_field', 'not_acceptable'],
    refusalSchema: GraphQLRefusal,
  }),
  graphqlPost: route({
    method: 'POST',
    path: '/graphql',
    operationId: 'graphqlPost',
    tag: 'GraphQL',
    summary: 'GraphQL',
    description:
      'Refusals are GraphQL errors with the REST reason in `extensions.reason`. Depth, aliases, tokens and cost are bounded.',
    auth: 'bearer',
    body: z.strictObject({
      query: refusing(z.string().min(1).describe('The GraphQL document.'), {
        reason: 'invalid_field',
        missing: 'invalid_field',
      }),
      variables: refusing(
        z
          .record(z.string(), z.unknown())
          .nullish()
          .refine((variables) => !holdsStringLongerThan(variables, MAX_STRING_VALUE), {
            error: `a variable holds a string of more than ${MAX_STRING_VALUE.toLocaleString('en-US')} characters: no field takes one`,
          })
          .describe(
            `The variables. No string in them longer than ${MAX_STRING_VALUE.toLocaleString('en-US')} characters (the longest any field takes).`,
          ),
        { reason: 'invalid_field' },
      ),
      operationName: refusing(
        z.string().nullish().describe('Operation to run when the document has several.'),
        { reason: 'invalid_field' },
      ),
      extensions: refusing(z.record(z.string(), z.unknown()).nullish().describe('Request extensions.'), {
        reason: 'invalid_field',
      }),
    }),
    answers: GRAPHQL_ANSWERS,
    refusals: ['invalid_field', 'unknown_field', 'not_acceptable'],
    refusalSchema: GraphQLRefusal,
  }),
} satisfies Record<string, RouteDoc>;
