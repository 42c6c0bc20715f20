// The OpenAPI document: a valid 3.1 document, served without a token at /openapi.json with a reference at /docs,
// listing exactly the routes the router serves, and matching what each route really answers.

import { validate } from '@readme/openapi-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { describe, expect } from 'vitest';
import { openApi } from '../../src/app/operations.js';
import { ASSETS_PREFIX, DOCS_PATHS } from '../../src/http/pages.js';
import { openApiPath } from '../../src/rest/openapi.js';
import { PLACEHOLDERS } from '../../src/rest/route-table/examples.js';
import { ROUTES } from '../../src/rest/schemas.js';
import { assertConforms, operationFor } from '../conformance.js';
import { it } from '../fixtures.js';
import { createType, newTenant, operatorToken, restClient, tokenFor } from '../helpers.js';

type Doc = { paths: Record<string, Record<string, { operationId: string }>> };

/** The pages (GraphiQL, the reference) and their assets are not API operations. */
const isPage = (url: string) =>
  (DOCS_PATHS as readonly string[]).includes(url) || url.startsWith(`${ASSETS_PREFIX}/`);

describe('the document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const doc = structuredClone(openApi());
    expect(doc.openapi).toBe('3.1.0');
    const result = await validate(doc as never);
    expect(result.valid ? [] : result.errors).toEqual([]);
  });

  it('states one security scheme, bearer, and the default JSON Schema dialect (what swagger-ui reads whole)', () => {
    const doc = openApi() as {
      jsonSchemaDialect?: string;
      components: { securitySchemes: Record<string, { description: string }> };
      paths: Record<string, Record<string, { security: unknown; description: string }>>;
    };
    expect(doc.jsonSchemaDialect).toBeUndefined();
    expect(Object.keys(doc.components.securitySchemes)).toEqual(['bearer']);
    // /metrics takes an operator's token or METRICS_TOKEN, both as a bearer token: said, not a second scheme.
    const metrics = doc.paths['/metrics']?.get;
    expect(metrics?.security).toEqual([{ bearer: [] }]);
    expect(metrics?.description).toContain('METRICS_TOKEN');
    expect(doc.components.securitySchemes.bearer?.description).toContain('METRICS_TOKEN');
    expect(doc.paths['/healthz']?.get?.security).toEqual([]);
  });

  it('lists every route the router serves, and nothing it does not (the reference pages aside)', ({
    world,
  }) => {
    const served = new Set(
      world.app.registeredRoutes
        .filter((r) => r.method !== 'HEAD' && !isPage(r.url))
        .map((r) => `${r.method} ${openApiPath(r.url)}`),
    );
    const documented = new Set(
      Object.entries((openApi() as Doc).paths).flatMap(([path, ops]) =>
        Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`),
      ),
    );
    expect([...served].sort()).toEqual([...documented].sort());
    // The documented paths (docs/api.md#rest-routes) are all there.
    for (const route of [
      'PATCH /entities/types/{guid}',
      'DELETE /entities/types/{guid}',
      'POST /entities',
      'GET /entities/{guid}',
      'DELETE /entities/attributes/{typeGuid}/{name}',
      'POST /entities/lookup',
      'POST /platform/dashboards',
      'GET /admin/logs',
      'GET /admin/engine-cache',
      'POST /admin/jobs/purge',
      'GET /healthz',
      'GET /readyz',
      'POST /graphql',
    ]) {
      expect(documented).toContain(route);
    }
  });

  it('describes each refusal with its status and the envelope; a body with an undocumented field fails the check', () => {
    const op = operationFor('POST', '/entities/types/abc/attributes');
    expect(op?.path).toBe('/entities/types/{guid}/attributes');
    expect(Object.keys(op?.op.responses ?? {})).toEqual(
      expect.arrayContaining(['201', '200', '400', '401', '404', '409', '413', 'default']),
    );
    const ok = {
      STATUS: 'SUCCESS',
      MESSAGE: '',
      DATA: { entity_type: { guid: 'g', name: 'n', origin: 'system', version: '0-0' } },
    };
    expect(() => assertConforms('GET', '/entities/types/g', 200, 'application/json', ok)).not.toThrow();
    const extra = { ...ok, DATA: { entity_type: { ...ok.DATA.entity_type, secret: 1 } } };
    expect(() => assertConforms('GET', '/entities/types/g', 200, 'application/json', extra)).toThrow(
      /secret/,
    );
    // A real reason, but not one this route documents for 404: the document lists each status's reasons exactly.
    const otherReason = { STATUS: 'FAIL', MESSAGE: '', DATA: { reason: 'referent_not_found' } };
    expect(() => assertConforms('GET', '/entities/types/g', 404, 'application/json', otherReason)).toThrow();
    const documented = { STATUS: 'FAIL', MESSAGE: '', DATA: { reason: 'unknown_entity_type' } };
    expect(() =>
      assertConforms('GET', '/entities/types/g', 404, 'application/json', documented),
    ).not.toThrow();
    const wrongReason = { STATUS: 'FAIL', MESSAGE: '', DATA: { reason: 'made_up' } };
    expect(() => assertConforms('GET', '/entities/types/g', 404, 'application/json', wrongReason)).toThrow();
    expect(() => assertConforms('GET', '/nowhere/at/all', 200, 'application/json', ok)).toThrow(
      /no such operation/,
    );
    // Every operation states its budget, and an answer past it fails the check like a wrong body.
    const budget = operationFor('GET', '/entities/types/g')?.op['x-budget'] as {
      statements: number;
      answerBytes: number;
    };
    expect(budget).toMatchObject({ statements: expect.any(Number), answerBytes: expect.any(Number) });
    const at = { statements: budget.statements, bytes: budget.answerBytes };
    expect(() => assertConforms('GET', '/entities/types/g', 200, 'application/json', ok, at)).not.toThrow();
    expect(() =>
      assertConforms('GET', '/entities/types/g', 200, 'application/json', ok, {
        ...at,
        statements: at.statements + 1,
      }),
    ).toThrow(/statements/);
    expect(() =>
      assertConforms('GET', '/entities/types/g', 200, 'application/json', ok, { ...at, bytes: at.bytes + 1 }),
    ).toThrow(/bytes/);
    // A door with a smaller body limit than the 8 MB states it (the lookup's 1 MiB), and a plan its memory per byte.
    expect(operationFor('POST', '/entities/lookup')?.op['x-budget']).toMatchObject({
      bodyBytes: 1024 * 1024,
    });
    expect(operationFor('POST', '/entities/model/plan')?.op['x-budget']).toMatchObject({
      memoryPerBodyByte: expect.any(Number),
    });
  });
});

describe('what the document says a request may hold is what the service accepts (outside fuzzers rely on it)', () => {
  type Param = { name: string; in: string; schema?: { pattern?: string }; content?: Record<string, unknown> };
  const params = (path: string, method: string) =>
    (openApi() as { paths: Record<string, Record<string, { parameters?: Param[] }>> }).paths[path]?.[method]
      ?.parameters ?? [];
  const patternOf = (path: string, method: string, name: string) =>
    new RegExp(params(path, method).find((p) => p.name === name)?.schema?.pattern ?? '(?!)', 'u');

  it('page_size: the pattern matches exactly the values answered 200 (1 to 500, at most 9 digits)', async ({
    world,
  }) => {
    const api = restClient(world.app, await tokenFor(newTenant()));
    const pattern = patternOf('/entities/types', 'get', 'page_size');
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.integer({ min: -2, max: 600 }).map(String),
          fc.tuple(fc.nat(9), fc.integer({ min: 0, max: 600 })).map(([zeros, n]) => '0'.repeat(zeros) + n),
          fc.string({ maxLength: 4 }),
        ),
        async (value) => {
          const res = await api.get(`/entities/types?page_size=${encodeURIComponent(value)}`);
          expect([value, res.status === 200]).toEqual([value, pattern.test(value)]);
        },
      ),
      { numRuns: 60, examples: [['0'], ['1'], ['500'], ['501'], ['000000500'], ['0000000500'], ['']] },
    );
  });

  it('the change feed: type_guid, attribute and kind patterns match exactly the filters answered 200', async ({
    world,
  }) => {
    const api = restClient(world.app, await tokenFor(newTenant()));
    const kinds = ['type_created', 'attribute_declared', 'attribute_withdrawn'];
    const cases: Record<string, fc.Arbitrary<string>> = {
      type_guid: fc.oneof(
        fc.constantFrom('', 'a', 'abc-DEF_1.2:3', '-x', 'x y', 'x'.repeat(200), 'x'.repeat(201)),
        fc.string({ maxLength: 6 }),
      ),
      attribute: fc.oneof(
        fc.constantFrom('', ' ', 'grade', ' grade ', 'a\u0001b', 'x'.repeat(256), 'x'.repeat(257)),
        fc.string({ maxLength: 6 }),
      ),
      kind: fc.oneof(
        fc.constantFrom(
          '',
          ',',
          'type_created',
          ' type_created , attribute_declared',
          'nope',
          'type_created,',
        ),
        fc.array(fc.constantFrom(...kinds, 'nope'), { minLength: 1, maxLength: 3 }).map((k) => k.join(',')),
        fc.string({ maxLength: 6 }),
      ),
    };
    for (const [name, values] of Object.entries(cases)) {
      const pattern = patternOf('/entities/changes', 'get', name);
      await fc.assert(
        fc.asyncProperty(values, async (value) => {
          const res = await api.get(`/entities/changes?${name}=${encodeURIComponent(value)}`);
          expect([name, value, res.status === 200]).toEqual([name, value, pattern.test(value)]);
          if (res.status !== 200) expect(res.body.DATA.reason).toBe('invalid_filter');
        }),
        { numRuns: 40 },
      );
    }
  });

  it("a route's 400 answer lists the reasons its query and path parameters are refused with", () => {
    type Doc400 = {
      paths: Record<
        string,
        Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>
      >;
    };
    const doc = openApi() as Doc400;
    const reasonsAt = (path: string, method: string) =>
      JSON.stringify(
        doc.paths[path]?.[method]?.responses['400']?.content?.['application/json']?.schema ?? {},
      );
    // former_names is a flag: a value that is not one is invalid_field
    expect(reasonsAt('/entities/model', 'get')).toContain('"invalid_field"');
    // the feed's filters are invalid_filter, its cursor invalid_cursor
    expect(reasonsAt('/entities/changes', 'get')).toContain('"invalid_filter"');
    expect(reasonsAt('/entities/changes', 'get')).toContain('"invalid_cursor"');
  });

  it('/admin/logs: level, since, until and limit patterns match exactly what is answered 200', async ({
    world,
  }) => {
    const admin = restClient(world.app, await operatorToken());
    for (const [name, accepted, refused] of [
      ['limit', ['1', '999', '1000'], ['0', '1001', '01', '1e2', ' 5', '']],
      ['level', ['info', 'fatal', '30', '0'], ['INFO', '', '1000', '-1']],
      [
        'since',
        ['0', '1700000000000', '2026-01-31T12:00:00Z', '2026-02-31T23:59:59.5+14:00'],
        ['2026-01', 'x', ''],
      ],
    ] as const) {
      const pattern = patternOf('/admin/logs', 'get', name);
      for (const value of [...accepted, ...refused]) {
        const res = await admin.get(`/admin/logs?${name}=${encodeURIComponent(value)}`);
        expect([name, value, res.status]).toEqual([
          name,
          value,
          (accepted as readonly string[]).includes(value) ? 200 : 400,
        ]);
        expect([name, value, pattern.test(value)]).toEqual([name, value, res.status === 200]);
      }
    }
  });

  it('names: the pattern refuses what is empty once trimmed or holds control characters, as the service does', async ({
    world,
  }) => {
    const api = restClient(world.app, await tokenFor(newTenant()));
    const doc = openApi() as {
      components: { schemas: Record<string, { properties: Record<string, { pattern: string }> }> };
    };
    const pattern = new RegExp(
      doc.components.schemas.CreateEntityTypeRequest?.properties.name?.pattern ?? '(?!)',
      'u', // JSON Schema patterns count code points
    );
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ unit: 'grapheme', maxLength: 8 }),
          // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are among the names tried
          fc.stringMatching(/^[ \t\n\u00a0\u3000\ufeff\u0001\u0085a-z]{0,6}$/),
          fc
            .tuple(fc.nat(4), fc.integer({ min: 250, max: 260 }))
            .map(([pad, n]) => ' '.repeat(pad) + '\u{1F600}'.repeat(n) + '\t'.repeat(pad)),
        ),
        async (name) => {
          const res = await api.post('/entities/types', { name });
          expect([name, res.status < 300]).toEqual([name, pattern.test(name)]);
        },
      ),
      {
        numRuns: 60,
        examples: [[''], [' '], ['\ufeff'], ['a\u0085b'], ['\u3000x'], ['a\t'], ['\ta b\n'], ['a\tb']],
      },
    );
  });

  it('withdraw: the name says `not` the platform attributes, spelled any way the service reads as one of them', async ({
    world,
  }) => {
    const api = restClient(world.app, await tokenFor(newTenant()));
    const type = (await api.post('/entities/types', { name: 'Withdraw Names' })).body.DATA.entity_type.guid;
    const schema = params('/entities/attributes/{typeGuid}/{name}', 'delete').find((p) => p.name === 'name')
      ?.schema as { pattern: string; not: { pattern: string } };
    const allowed = (name: string) =>
      new RegExp(schema.pattern, 'u').test(name) && !new RegExp(schema.not.pattern, 'u').test(name);
    // Spellings of the platform names: letter case, the folds upper-then-lower casing maps onto ASCII letters
    // (dotless i, long s, sharp s for "ss", the fi ligature), spaces around; and names that only look close.
    const variant = fc
      .tuple(
        fc.constantFrom(
          'domain',
          'env',
          'tags',
          'classification',
          'groups',
          'domains',
          'tag',
          'clasification',
        ),
        fc.array(fc.boolean(), { minLength: 16, maxLength: 16 }),
        fc.constantFrom('', ' ', '\t', '\u3000'),
      )
      .map(([name, flips, pad]) => {
        let out = name.replace(/ss/, flips[15] ? '\u00df' : 'ss').replace(/fi/, flips[14] ? '\ufb01' : 'fi');
        out = [...out]
          .map((ch, i) => {
            if (!flips[i % 14]) return ch;
            if (ch === 'i') return '\u0131';
            if (ch === 's') return '\u017f';
            return ch.toUpperCase();
          })
          .join('');
        return pad + out + pad;
      });
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(variant, fc.string({ unit: 'grapheme', minLength: 1, maxLength: 6 })),
        async (name) => {
          // A segment "." or ".." (even as %2E) is resolved away by any WHATWG URL client, this one included, before
          // it is sent (docs/api.md#decisions-where-the-specification-is-silent says how to withdraw such a name); every
          // other name travels as it is.
          fc.pre(name !== '.' && name !== '..');
          const res = await api.delete(
            `/entities/attributes/${type}/${encodeURIComponent(name)}?dry_run=true`,
          );
          // Allowed by the document: answered 200 or 404 (no such attribute), never refused as malformed.
          expect([name, res.status === 200 || res.status === 404]).toEqual([name, allowed(name)]);
          if (!allowed(name) && new RegExp(schema.pattern, 'u').test(name)) {
            expect([name, res.body.DATA.reason]).toEqual([name, 'base_type_not_owner']);
          }
        },
      ),
      {
        numRuns: 60,
        examples: [
          ['domain'],
          ['ENV'],
          [' Tags '],
          ['cla\u00dfi\ufb01cation'],
          ['do\u0131main'],
          ['grou\u0070\u017f'],
          ['domains'],
        ],
      },
    );
  });

  it('declarations: the conditions on value_type and cardinality hold exactly what the service accepts', async ({
    world,
  }) => {
    const api = restClient(world.app, await tokenFor(newTenant()));
    const type = (await api.post('/entities/types', { name: 'Declared Shapes' })).body.DATA.entity_type.guid;
    const target = (await api.post('/entities/types', { name: 'Declared Target' })).body.DATA.entity_type
      .guid;
    const doc = openApi() as { components: { schemas: Record<string, object> } };
    const valid = new Ajv2020({ strict: false }).compile(doc.components.schemas.DeclareAttribute as object);
    // Values of every kind, so each field meets values of its own type and of the others.
    const value = fc.constantFrom<unknown>(
      'a',
      '',
      'x'.repeat(1025),
      1,
      2.5,
      true,
      false,
      '2024-02-29',
      '0050-01-01',
      '2024-01-01T10:00:00Z',
      '2024-01-01 10:00:00.5+02:00',
      '2024-13-01',
      { a: 1 },
      [1],
      null,
    );
    const declaration = fc.record(
      {
        value_type: fc.constantFrom('string', 'number', 'boolean', 'date', 'json', 'entity_ref'),
        cardinality: fc.constantFrom('single', 'multi'),
        allowed_values: fc.oneof(
          fc.constant(null),
          fc.uniqueArray(value, { maxLength: 3 }),
          fc.constant(['a', 'a']),
        ),
        allowed_ref_type: fc.constantFrom(null, target, 7),
        default_value: fc.oneof(value, fc.array(value, { maxLength: 2 })),
        filterable: fc.constantFrom(null, true, false),
        required: fc.constantFrom(null, true, false, 'yes'),
      },
      { requiredKeys: ['value_type', 'cardinality'] },
    );
    let run = 0;
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(declaration, async (fields) => {
        run += 1;
        const body = { name: `shape ${run}`, ...fields };
        const res = await api.post(`/entities/types/${type}/attributes?dry_run=true`, body);
        // What JSON Schema cannot state: an enumerated json value is at most 1,024 characters of JSON text (such a
        // declaration is not compared); a default must be one of the allowed_values, and a reference default must
        // name an entity that exists (none does here), both judged after every rule the document states.
        const longJson =
          body.value_type === 'json' &&
          Array.isArray(body.allowed_values) &&
          body.allowed_values.some((v) => JSON.stringify(v).length > 1024);
        if (longJson) return;
        if (['default_value_not_allowed', 'referent_not_found'].includes(res.body.DATA?.reason)) {
          expect([body, valid(body)]).toEqual([body, true]);
          return;
        }
        expect([body, res.status === 200]).toEqual([body, valid(body)]);
        seen.add(res.status === 200 ? 'accepted' : res.body.DATA.reason);
      }),
      { numRuns: 250 },
    );
    // Both sides were tried, and the refusals were for the rules the conditions state.
    expect(seen).toContain('accepted');
    for (const reason of ['allowed_ref_type_required', 'filterable_not_supported', 'invalid_default_value']) {
      expect(seen).toContain(reason);
    }
  });

  it('GraphQL over GET: variables and extensions are parameters whose content is a JSON object', () => {
    const byName = new Map(params('/graphql', 'get').map((p) => [p.name, p]));
    for (const name of ['variables', 'extensions']) {
      expect(byName.get(name)?.content).toEqual({ 'application/json': { schema: { type: 'object' } } });
      expect(byName.get(name)?.schema).toBeUndefined();
    }
  });
});

describe('the examples of the request bodies (what /docs puts in a body)', () => {
  type Example = { summary: string; description?: string; value: unknown };
  type Served = {
    paths: Record<
      string,
      Record<
        string,
        {
          operationId: string;
          requestBody?: { content: Record<string, { schema: object; examples?: Record<string, Example> }> };
        }
      >
    >;
    components: { schemas: Record<string, object> };
  };
  const served = async (world: { app: { inject: (o: object) => Promise<{ json(): unknown }> } }) =>
    (await world.app.inject({ method: 'GET', url: '/openapi.json' })).json() as Served;
  /** Every operation taking a body, with its examples. */
  const bodies = (doc: Served) =>
    Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).flatMap(([method, op]) =>
        op.requestBody
          ? [{ path, method, operationId: op.operationId, media: op.requestBody.content['application/json'] }]
          : [],
      ),
    );

  it('every request body has examples, each valid against the body’s schema', async ({ world }) => {
    const doc = await served(world);
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    ajv.addSchema({ $id: 'https://metamodel.invalid/openapi.json', components: doc.components });
    const withBody = bodies(doc);
    expect(withBody.length).toBeGreaterThanOrEqual(11);
    for (const { operationId, media } of withBody) {
      const examples = Object.entries(media?.examples ?? {});
      expect([operationId, examples.length > 0]).toEqual([operationId, true]);
      const validate = ajv.compile(
        JSON.parse(
          JSON.stringify(media?.schema).replaceAll(
            '"#/components/',
            '"https://metamodel.invalid/openapi.json#/components/',
          ),
        ),
      );
      for (const [name, example] of examples) {
        expect([operationId, name, example.summary.length > 0]).toEqual([operationId, name, true]);
        validate(example.value);
        expect([operationId, name, validate.errors ?? []]).toEqual([operationId, name, []]);
      }
    }
    // One declaration per value type; the reference's says to replace the guid it cannot know.
    const declare = withBody.find((b) => b.operationId === 'declareAttribute')?.media?.examples ?? {};
    const valueTypes = Object.values(declare).map((e) => (e.value as { value_type: string }).value_type);
    expect(valueTypes.sort()).toEqual(['boolean', 'date', 'entity_ref', 'json', 'number', 'string']);
    const ref = Object.values(declare).find(
      (e) => (e.value as { value_type: string }).value_type === 'entity_ref',
    );
    expect(ref?.description).toContain(`Replace \`${PLACEHOLDERS.refType}\``);
    expect(ref?.value).toMatchObject({ allowed_ref_type: PLACEHOLDERS.refType });
  });

  it('each example, sent to its route for a fresh tenant with the guids it names created, is accepted (2xx)', async ({
    world,
  }) => {
    const doc = await served(world);
    const withBody = bodies(doc);
    const declarations = Object.values(
      withBody.find((b) => b.operationId === 'declareAttribute')?.media?.examples ?? {},
    );
    const authOf = (operationId: string) =>
      (Object.values(ROUTES) as { operationId: string; auth: string }[]).find(
        (r) => r.operationId === operationId,
      )?.auth;
    let tried = 0;
    for (const { path, method, operationId, media } of withBody) {
      for (const [name, example] of Object.entries(media?.examples ?? {})) {
        // A fresh tenant holding what the examples name: a `Data product` type, a `Team` type and a team.
        const tenant = newTenant('example');
        const api = restClient(world.app, await tokenFor(tenant));
        const type = await createType(api, 'Data product');
        const refType = await createType(api, 'Team');
        const team = await api.post('/entities', { type_guid: refType, name: 'Platform team' });
        expect(team.status).toBe(201);
        const found: Record<string, string> = {
          [PLACEHOLDERS.type]: type,
          [PLACEHOLDERS.refType]: refType,
          [PLACEHOLDERS.entity]: team.body.DATA.entity.guid,
          [PLACEHOLDERS.tenant]: tenant,
        };
        const fill = (value: unknown): unknown =>
          JSON.parse(JSON.stringify(value), (_k, v) => (typeof v === 'string' && v in found ? found[v] : v));
        // The entity examples use the attributes the declaration examples declare.
        if (['createEntity', 'queryEntities', 'evolveAttribute'].includes(operationId)) {
          for (const declaration of declarations) {
            const res = await api.post(`/entities/types/${type}/attributes`, fill(declaration.value));
            expect([declaration.summary, res.status]).toEqual([declaration.summary, 201]);
          }
        }
        // (a change in place names the attribute the declaration examples declare with an enumeration)
        const url = path.replace('{guid}', type).replace('{name}', 'tier');
        expect(url).not.toContain('{');
        const auth = authOf(operationId);
        const caller =
          auth === 'operator'
            ? restClient(world.app, await operatorToken())
            : auth === 'platform'
              ? restClient(world.app, await tokenFor(tenant, { roles: ['platform'] }))
              : api;
        const send = method === 'patch' ? caller.patch : caller.post;
        expect(method).toMatch(/^(post|patch)$/);
        const res = await send(url, fill(example.value));
        const accepted = res.status >= 200 && res.status < 300 && !('errors' in res.body);
        expect([operationId, name, accepted ? 'accepted' : res.body]).toEqual([
          operationId,
          name,
          'accepted',
        ]);
        tried += 1;
      }
    }
    expect(tried).toBeGreaterThanOrEqual(withBody.length + 5);
  });
});

describe('served', () => {
  it('GET /openapi.json needs no token and is the document', async ({ world }) => {
    const res = await world.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual(JSON.parse(JSON.stringify(openApi())));
  });

  it('GET /docs is the interactive reference over /openapi.json, without a token, loading only its own assets', async ({
    world,
  }) => {
    for (const url of ['/docs', '/docs/']) {
      const page = await world.app.inject({ method: 'GET', url });
      expect(page.statusCode).toBe(200);
      expect(page.headers['content-type']).toMatch(/text\/html/);
      expect(page.body).toContain('swagger-ui');
      expect(page.body).not.toMatch(/https?:\/\//);
      const scripts = [...page.body.matchAll(/src="([^"]+)"/g)].map((m) => m[1] as string);
      expect(scripts.length).toBeGreaterThan(0);
      for (const script of scripts) {
        const asset = await world.app.inject({ method: 'GET', url: script });
        expect([script, asset.statusCode]).toEqual([script, 200]);
      }
      const start = scripts.find((s) => s.includes('docs-start')) as string;
      expect((await world.app.inject({ method: 'GET', url: start })).body).toContain("url:'/openapi.json'");
    }
  });
});

describe('requests are checked against the same schemas', () => {
  it('refuses each malformed part with the reason its field names', async ({ world }) => {
    const api = restClient(world.app, await tokenFor(newTenant()));
    const type = await createType(api, 'Asset');
    const cases: [string, Promise<{ status: number; body: { DATA: Record<string, unknown> } }>, string][] = [
      ['body not an object', api.post('/entities/types', [1]), 'invalid_body'],
      ['name missing', api.post('/entities/types', {}), 'empty_value'],
      ['name null', api.post('/entities/types', { name: null }), 'empty_value'],
      ['name not a string', api.post('/entities/types', { name: 7 }), 'invalid_field'],
      ['page_size not digits', api.get('/entities/types?page_size=1e2'), 'invalid_page_size'],
      ['page_size repeated', api.get('/entities/types?page_size=1&page_size=2'), 'invalid_page_size'],
      ['cursor repeated', api.get('/entities/types?cursor=a&cursor=b'), 'invalid_cursor'],
      ['dry_run neither', api.delete(`/entities/attributes/${type}/x?dry_run=maybe`), 'invalid_field'],
      [
        'unknown declaration field',
        api.post(`/entities/types/${type}/attributes`, {
          name: 'a',
          value_type: 'string',
          cardinality: 'single',
          x: 1,
        }),
        'unknown_field',
      ],
      [
        'value_type not one of six',
        api.post(`/entities/types/${type}/attributes`, { name: 'a', value_type: 5, cardinality: 'single' }),
        'unknown_value_type',
      ],
      [
        // the declaration rule outranks the shape: allowed_values on a reference, even when it is not an array
        'allowed_values on entity_ref',
        api.post(`/entities/types/${type}/attributes`, {
          name: 'a',
          value_type: 'entity_ref',
          cardinality: 'single',
          allowed_ref_type: type,
          allowed_values: 'x',
        }),
        'allowed_values_not_supported',
      ],
      ['type_guid missing', api.post('/entities', { name: 'e' }), 'invalid_field'],
      ['values an array', api.post('/entities', { type_guid: type, name: 'e', values: [] }), 'invalid_field'],
      ['identifiers not strings', api.post('/entities/lookup', { identifiers: [1] }), 'invalid_field'],
      // two faults: the shared rule's reason wins over the shape's, as before the schemas checked bodies
      [
        'empty name and values an array',
        api.post('/entities', { type_guid: type, name: ' ', values: [] }),
        'empty_value',
      ],
    ];
    for (const [what, call, reason] of cases) {
      const res = await call;
      expect({ what, status: res.status, reason: res.body.DATA.reason }).toEqual({
        what,
        status: 400,
        reason,
      });
    }
  });

  it('who may call is checked before what they sent: without the role any body is 403', async ({ world }) => {
    const api = restClient(world.app, await tokenFor(newTenant()));
    for (const res of [
      await api.post('/platform/dashboards', {}),
      await api.post('/platform/dashboards', { name: 7 }),
      await api.post('/admin/jobs/purge', { tenant: 5 }),
      await api.post('/admin/jobs/purge', { tenant: '' }),
      await api.get('/admin/logs?limit=x&limit=y'),
    ]) {
      expect({ status: res.status, reason: res.body.DATA.reason }).toEqual({
        status: 403,
        reason: 'not_authorized',
      });
    }
  });
});

describe('every operation answers as documented', () => {
  it('each documented success answer is what the route sends (restClient checks every call against the document)', async ({
    world,
  }) => {
    const tenant = newTenant();
    const api = restClient(world.app, await tokenFor(tenant));
    const platform = restClient(world.app, await tokenFor(tenant, { roles: ['platform'] }));
    const operator = restClient(world.app, await operatorToken());
    const seen = new Set<string>();
    const call = async (
      res: Promise<{ status: number; body: { DATA: any } }>,
      method: string,
      url: string,
      status: number,
    ) => {
      const reply = await res;
      expect({ url, status: reply.status }).toEqual({ url, status });
      seen.add(`${operationFor(method, url)?.op.operationId} ${status}`);
      return reply.body.DATA;
    };

    const created = await call(
      api.post('/entities/types', { name: 'Report' }),
      'POST',
      '/entities/types',
      201,
    );
    const guid = created.entity_type.guid as string;
    await call(api.post('/entities/types', { name: ' report ' }), 'POST', '/entities/types', 200);
    await call(api.get('/entities/types?page_size=2'), 'GET', '/entities/types', 200);
    await call(api.get(`/entities/types/${guid}`), 'GET', `/entities/types/${guid}`, 200);
    await call(api.get('/entities/types/by-name/report'), 'GET', '/entities/types/by-name/report', 200);
    await call(
      api.patch(`/entities/types/${guid}`, { name: 'Reports' }),
      'PATCH',
      `/entities/types/${guid}`,
      200,
    );
    const release = `/entities/types/${guid}/former-names/release`;
    await call(api.post(release, { name: 'Report' }), 'POST', release, 200);
    const attrs = `/entities/types/${guid}/attributes`;
    const declaration = {
      name: 'tier',
      value_type: 'string',
      cardinality: 'single',
      allowed_values: ['a', 'b'],
    };
    await call(api.post(`${attrs}?dry_run=true`, declaration), 'POST', attrs, 200);
    await call(api.post(attrs, declaration), 'POST', attrs, 201);
    await call(api.get(attrs), 'GET', attrs, 200);
    const evolve = `${attrs}/tier`;
    await call(api.patch(evolve, { allowed_values: ['a', 'b', 'c'] }), 'PATCH', evolve, 200);
    const entity = await call(
      api.post('/entities', { type_guid: guid, name: 'q1', values: { tier: 'a' } }),
      'POST',
      '/entities',
      201,
    );
    await call(api.get(`/entities/${entity.entity.guid}`), 'GET', `/entities/${entity.entity.guid}`, 200);
    await call(
      api.get(`/entities?type_guid=${guid}&where=tags:${entity.entity.guid}&page_size=1`),
      'GET',
      '/entities',
      200,
    );
    await call(
      api.post('/entities/query', {
        type_guid: guid,
        where: [{ attribute: 'tags', any_of: [entity.entity.guid] }],
        page_size: 1,
      }),
      'POST',
      '/entities/query',
      200,
    );
    await call(
      api.post('/entities/lookup', { identifiers: [entity.entity.guid, 'nope'] }),
      'POST',
      '/entities/lookup',
      200,
    );
    const withdraw = `/entities/attributes/${guid}/tier`;
    await call(api.delete(`${withdraw}?dry_run=1`), 'DELETE', withdraw, 200);
    await call(api.delete(withdraw), 'DELETE', withdraw, 200);
    await call(api.delete(`/entities/types/${guid}`), 'DELETE', `/entities/types/${guid}`, 200);
    await call(platform.post('/platform/dashboards', { name: 'Sales' }), 'POST', '/platform/dashboards', 201);
    await call(platform.post('/platform/dashboards', { name: 'sales' }), 'POST', '/platform/dashboards', 200);
    await call(operator.post('/admin/jobs/purge', { tenant }), 'POST', '/admin/jobs/purge', 200);
    const history = `/entities/types/${guid}/history`;
    await call(api.get(`${history}?page_size=2`), 'GET', history, 200);
    await call(api.get('/entities/changes?page_size=3'), 'GET', '/entities/changes', 200);
    const model = await call(api.get('/entities/model'), 'GET', '/entities/model', 200);
    await call(api.post('/entities/model/plan', model.model), 'POST', '/entities/model/plan', 200);
    await call(
      api.post('/entities/model/apply', { document: model.model }),
      'POST',
      '/entities/model/apply',
      200,
    );
    await call(api.get('/schemas/metamodel.json'), 'GET', '/schemas/metamodel.json', 200);
    await call(operator.get('/admin/logs?limit=5'), 'GET', '/admin/logs', 200);
    await call(operator.get('/admin/engine-cache'), 'GET', '/admin/engine-cache', 200);
    await call(api.get('/healthz'), 'GET', '/healthz', 200);
    await call(api.get('/readyz'), 'GET', '/readyz', 200);

    // Refusals answer with the documented Refusal envelope too.
    await call(api.get('/entities/types/nope/attributes'), 'GET', '/entities/types/nope/attributes', 404);
    await call(api.post('/platform/dashboards', { name: 'x' }), 'POST', '/platform/dashboards', 403);
    await call(restClient(world.app, undefined).get('/entities/types'), 'GET', '/entities/types', 401);

    const documented = Object.values((openApi() as Doc).paths)
      .flatMap((ops) => Object.values(ops) as { operationId: string; responses: Record<string, unknown> }[])
      .filter(
        (op) => !op.operationId.startsWith('graphql') && !['metrics', 'openapi'].includes(op.operationId),
      )
      .flatMap((op) =>
        Object.keys(op.responses)
          .filter((s) => /^2/.test(s))
          .map((s) => `${op.operationId} ${s}`),
      );
    expect(documented.filter((answer) => !seen.has(answer))).toEqual([]);
  });

  it('/graphql refused before it runs: the envelope plus GraphQL errors, as documented', async ({
    world,
  }) => {
    const res = await world.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(res.statusCode).toBe(401);
    const body = res.json();
    expect(body).toMatchObject({
      STATUS: 'FAIL',
      DATA: { reason: 'unauthenticated' },
      errors: [{ extensions: { reason: 'unauthenticated', code: 'UNAUTHENTICATED' } }],
    });
    expect(() => assertConforms('POST', '/graphql', 401, 'application/json', body)).not.toThrow();
    // A REST route's refusal stays the plain envelope.
    const rest = await world.app.inject({ method: 'GET', url: '/entities/types' });
    expect(Object.keys(rest.json()).sort()).toEqual(['DATA', 'MESSAGE', 'STATUS']);
  });

  it('the purge documents its streamed progress as a second media type of its 200', () => {
    const op = operationFor('POST', '/admin/jobs/purge')?.op;
    expect(Object.keys(op?.responses['200']?.content ?? {}).sort()).toEqual([
      'application/json',
      'application/x-ndjson',
    ]);
  });

  it('non-envelope answers carry their documented content type', async ({ world }) => {
    const res = await world.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `Bearer ${await operatorToken()}` },
    });
    expect(res.statusCode).toBe(200);
    expect(() =>
      assertConforms('GET', '/metrics', res.statusCode, String(res.headers['content-type']), res.body),
    ).not.toThrow();
    expect(() => assertConforms('GET', '/metrics', 200, 'application/xml', res.body)).toThrow(
      /not documented/,
    );
  });
});
