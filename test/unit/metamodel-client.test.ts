// The client package (client/) against a scripted fetch: what it sends, and how answers become data or errors.
// Its calls against the real service are in the GraphQL integration tests.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  CreateEntityTypeDocument,
  createMetamodelClient,
  EntityTypeByGuidDocument,
  EntityTypesPageDocument,
  type FetchLike,
  MetamodelGraphQLError,
  retryDelayMs,
} from '../../client/src/index.js';

interface Sent {
  url: string;
  headers: Record<string, string>;
  body: { query: string; variables: Record<string, unknown> };
}

/** A fetch that records each request and answers with the next scripted (status, body text). */
function scripted(...answers: ([number, string] | [number, string, Record<string, string>])[]) {
  const sent: Sent[] = [];
  const fetch: FetchLike = async (url, init) => {
    sent.push({ url, headers: init.headers, body: JSON.parse(init.body) });
    const [status, text, headers = {}] = answers.shift() ?? [500, 'no more answers'];
    return { status, text: async () => text, headers: { get: (name: string) => headers[name] ?? null } };
  };
  return { sent, fetch };
}

const json = (value: unknown) => JSON.stringify(value);
const emptyPage = { entityTypes: { edges: [], pageInfo: { hasNextPage: false, endCursor: null } } };

describe('createMetamodelClient: requests', () => {
  it('posts the operation text and variables to <url>/graphql with the bearer token', async () => {
    const { sent, fetch } = scripted([200, json({ data: { entityType: null } })]);
    const client = createMetamodelClient({ url: 'https://catalog.example/metamodel/', token: 'tkn', fetch });
    expect(await client.request(EntityTypeByGuidDocument, { guid: 'g1' })).toEqual({ entityType: null });
    expect(sent).toHaveLength(1);
    expect(sent[0]!.url).toBe('https://catalog.example/metamodel/graphql');
    expect(sent[0]!.headers).toMatchObject({
      authorization: 'Bearer tkn',
      'content-type': 'application/json',
    });
    expect(sent[0]!.body.variables).toEqual({ guid: 'g1' });
    // The document's own text, fragments included.
    expect(sent[0]!.body.query).toBe(EntityTypeByGuidDocument.toString());
    expect(sent[0]!.body.query).toContain('fragment EntityTypeFields on EntityType');
  });

  it('keeps a url that already names the endpoint; asks a token function for every request', async () => {
    const { sent, fetch } = scripted([200, json({ data: emptyPage })], [200, json({ data: emptyPage })]);
    let issued = 0;
    const client = createMetamodelClient({
      url: 'http://localhost:4000/graphql',
      token: async () => `t${++issued}`,
      fetch,
    });
    await client.request(EntityTypesPageDocument);
    await client.entityTypes({ first: 2 });
    expect(sent.map((s) => s.url)).toEqual([
      'http://localhost:4000/graphql',
      'http://localhost:4000/graphql',
    ]);
    expect(sent.map((s) => s.headers.authorization)).toEqual(['Bearer t1', 'Bearer t2']);
    expect(sent.map((s) => s.body.variables)).toEqual([{}, { first: 2 }]);
  });

  it('allEntityTypes follows endCursor until hasNextPage is false', async () => {
    const node = (name: string) => ({ node: { name }, cursor: `c-${name}` });
    const { sent, fetch } = scripted(
      [
        200,
        json({
          data: {
            entityTypes: { edges: [node('a'), node('b')], pageInfo: { hasNextPage: true, endCursor: 'c-b' } },
          },
        }),
      ],
      [
        200,
        json({
          data: { entityTypes: { edges: [node('c')], pageInfo: { hasNextPage: false, endCursor: 'c-c' } } },
        }),
      ],
    );
    const client = createMetamodelClient({ url: 'http://x', token: 't', fetch });
    const names: string[] = [];
    for await (const type of client.allEntityTypes(2)) names.push(type.name);
    expect(names).toEqual(['a', 'b', 'c']);
    expect(sent.map((s) => s.body.variables)).toEqual([
      { first: 2, after: null },
      { first: 2, after: 'c-b' },
    ]);
  });

  it('refuses a DocumentNode (it would be sent as "[object Object]")', async () => {
    const { sent, fetch } = scripted();
    const client = createMetamodelClient({ url: 'http://x', token: 't', fetch });
    const ast = { kind: 'Document', definitions: [] } as unknown as typeof EntityTypesPageDocument;
    await expect(client.request(ast)).rejects.toThrow(TypeError);
    expect(sent).toHaveLength(0);
  });
});

describe('MetamodelGraphQLError', () => {
  const failing = async (status: number, text: string) => {
    const { fetch } = scripted([status, text]);
    const client = createMetamodelClient({ url: 'http://x', token: 't', fetch });
    const error = await client.request(EntityTypesPageDocument).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MetamodelGraphQLError);
    return error as MetamodelGraphQLError;
  };

  it("carries each error's extensions.reason, the first as reason, with the status and partial data", async () => {
    const error = await failing(
      200,
      json({
        data: { partial: true },
        errors: [
          { message: 'Bad cursor.', path: ['entityTypes'], extensions: { reason: 'invalid_cursor' } },
          { message: 'Validation.' },
          { message: 'Too big.', extensions: { reason: 'invalid_page_size', code: 'INVALID_PAGE_SIZE' } },
        ],
      }),
    );
    expect(error.reason).toBe('invalid_cursor');
    expect(error.reasons).toEqual(['invalid_cursor', undefined, 'invalid_page_size']);
    expect(error.errors[0]!.path).toEqual(['entityTypes']);
    expect(error.status).toBe(200);
    expect(error.data).toEqual({ partial: true });
    expect(error.message).toBe('Bad cursor. (and 2 more errors)');
    expect(error.name).toBe('MetamodelGraphQLError');
  });

  it('turns a REST envelope refusal (before GraphQL ran) into one error with its reason', async () => {
    const error = await failing(
      401,
      json({ STATUS: 'FAIL', MESSAGE: 'Missing bearer token.', DATA: { reason: 'unauthenticated' } }),
    );
    expect(error).toMatchObject({ status: 401, reason: 'unauthenticated', message: 'Missing bearer token.' });
    expect(error.errors).toEqual([
      {
        message: 'Missing bearer token.',
        extensions: { reason: 'unauthenticated', code: 'UNAUTHENTICATED' },
      },
    ]);
  });

  it('reports an answer that is neither data nor errors, without a reason', async () => {
    const error = await failing(502, '<html>Bad gateway</html>');
    expect(error).toMatchObject({ status: 502, reason: undefined, errors: [], data: null });
    expect(error.message).toBe('Unexpected response (HTTP 502).');
  });
});

describe('client/README.md', () => {
  it('its usage example is client/examples/usage.ts, which tsc type-checks', () => {
    const read = (path: string) => readFileSync(new URL(`../../client/${path}`, import.meta.url), 'utf8');
    const block = /## Usage\n\n```ts\n([\s\S]*?)```/.exec(read('README.md'));
    expect(block?.[1]).toBe(read('examples/usage.ts'));
  });
});

describe('createMetamodelClient: writes safe to retry (issue #17)', () => {
  const unavailable = json({ STATUS: 'FAIL', MESSAGE: 'away', DATA: { reason: 'storage_unavailable' } });
  const created = json({ data: { createEntityType: { created: true } } });

  it('a mutation carries an Idempotency-Key, the same one on every retry of a 503; a query carries none', async () => {
    const { sent, fetch } = scripted([503, unavailable], [503, unavailable], [200, created]);
    let made = 0;
    const client = createMetamodelClient({
      url: 'http://m',
      token: 't',
      fetch,
      idempotencyKey: () => `key-${++made}`,
    });
    expect(await client.request(CreateEntityTypeDocument, { name: 'Orders' })).toEqual({
      createEntityType: { created: true },
    });
    expect(sent.map((s) => s.headers['idempotency-key'])).toEqual(['key-1', 'key-1', 'key-1']);
    const reads = scripted([200, json({ data: { entityType: null } })]);
    await createMetamodelClient({ url: 'http://m', token: 't', fetch: reads.fetch }).request(
      EntityTypeByGuidDocument,
      { guid: 'g' },
    );
    expect(reads.sent[0]!.headers['idempotency-key']).toBeUndefined();
  }, 10_000);

  it("retries a 429 with Retry-After (its tenant's own requests held its turns), the same key; not one without", async () => {
    const busy = json({ STATUS: 'FAIL', MESSAGE: 'busy', DATA: { reason: 'tenant_busy' } });
    const { sent, fetch } = scripted([429, busy, { 'retry-after': '0' }], [200, created]);
    const client = createMetamodelClient({ url: 'http://m', token: 't', fetch, idempotencyKey: () => 'k' });
    expect(await client.request(CreateEntityTypeDocument, { name: 'Orders' })).toEqual({
      createEntityType: { created: true },
    });
    expect(sent.map((s) => s.headers['idempotency-key'])).toEqual(['k', 'k']);
    const bare = scripted([429, busy], [200, created]);
    const once = createMetamodelClient({ url: 'http://m', token: 't', fetch: bare.fetch });
    await expect(once.request(CreateEntityTypeDocument, { name: 'Orders' })).rejects.toMatchObject({
      reason: 'tenant_busy',
    });
    expect(bare.sent).toHaveLength(1);
  });

  it('gives up after its attempts with the refusal, and a new call is a new key', async () => {
    const { sent, fetch } = scripted([503, unavailable], [503, unavailable], [200, created]);
    let made = 0;
    const client = createMetamodelClient({
      url: 'http://m',
      token: 't',
      fetch,
      attempts: 2,
      idempotencyKey: () => `key-${++made}`,
    });
    const refused = await client.request(CreateEntityTypeDocument, { name: 'A' }).catch((e) => e);
    expect(refused).toBeInstanceOf(MetamodelGraphQLError);
    expect(refused.reason).toBe('storage_unavailable');
    await client.request(CreateEntityTypeDocument, { name: 'A' });
    expect(sent.map((s) => s.headers['idempotency-key'])).toEqual(['key-1', 'key-1', 'key-2']);
  }, 10_000);

  it('waits as Retry-After says (at most 5 s), else 250 ms doubling', () => {
    const least = () => 0;
    expect([retryDelayMs('0', 1, least), retryDelayMs('2', 1, least), retryDelayMs('60', 1, least)]).toEqual([
      0, 2000, 5000,
    ]);
    expect([
      retryDelayMs(null, 1, least),
      retryDelayMs(null, 2, least),
      retryDelayMs('soon', 3, least),
    ]).toEqual([250, 500, 1000]);
    // plus up to half at random, so that clients refused together come back spread out
    expect([retryDelayMs('2', 1, () => 1), retryDelayMs(null, 2, () => 0.5)]).toEqual([3000, 625]);
    for (let i = 0; i < 20; i++) {
      const wait = retryDelayMs('1', 1);
      expect(wait >= 1000 && wait <= 1500).toBe(true);
    }
  });
});
