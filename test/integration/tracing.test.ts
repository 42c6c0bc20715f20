// OpenTelemetry spans for the HTTP request, the GraphQL operation and each Neo4j statement,
// checked with an in-memory exporter; no tenant data or token in any attribute; off without an endpoint.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SpanKind } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTracing } from '../../src/telemetry/tracing.js';
import { createWorld, newTenant, type TestWorld, tokenFor } from '../helpers.js';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
let world: TestWorld;
beforeAll(async () => {
  world = await createWorld(
    {},
    { tracing: { tracer: provider.getTracer('test'), shutdown: async () => {} } },
  );
});
afterAll(async () => {
  await world?.close();
  await provider.shutdown();
});
beforeEach(() => exporter.reset());

const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;

/** The spans of the trace whose root span has this request id. */
function traceOfRequest(requestId: string) {
  const all = exporter.getFinishedSpans();
  const root = all.find((s) => s.attributes['request.id'] === requestId);
  expect(root, `a root span with request.id ${requestId}`).toBeDefined();
  const traceId = root!.spanContext().traceId;
  return { root: root!, spans: all.filter((s) => s.spanContext().traceId === traceId) };
}

function assertNothingSecret(spans: ReadableSpan[], secrets: string[]) {
  for (const span of spans) {
    const text = JSON.stringify({ name: span.name, attributes: span.attributes, status: span.status });
    for (const secret of secrets) expect(text, span.name).not.toContain(secret);
  }
}

describe('traces', () => {
  it('a REST request: its HTTP span (route template, status, request id) and one child span per statement, Cypher without values', async () => {
    const tenant = newTenant();
    const token = await tokenFor(tenant);
    const name = `Secret Project ${tenant.slice(-6)}`;
    const res = await world.app.inject({
      method: 'POST',
      url: '/entities/types',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ name }),
    });
    expect(res.statusCode).toBe(201);
    const guid = res.json().DATA.entity_type.guid;
    const { root, spans } = traceOfRequest(String(res.headers['x-request-id']));
    expect(root.name).toBe('POST /entities/types');
    expect(root.kind).toBe(SpanKind.SERVER);
    expect(root.attributes).toMatchObject({
      'http.route': '/entities/types',
      'http.response.status_code': 201,
    });
    const statements = spans.filter((s) => s.name.startsWith('neo4j '));
    expect(statements.length).toBe(Number(res.headers['x-db-queries']));
    for (const s of statements) {
      expect(parentOf(s)).toBe(root.spanContext().spanId);
      expect(s.kind).toBe(SpanKind.CLIENT);
      expect(s.attributes['db.system.name']).toBe('neo4j');
      expect(String(s.attributes['db.query.text'])).toMatch(/\$tenant/);
    }
    expect(
      statements.some((s) => String(s.attributes['db.query.text']).includes('CREATE (t:EntityType')),
    ).toBe(true);
    assertNothingSecret(spans, [tenant, token, name, guid]);

    // a path with a guid: the span names the route's template, not the URL
    const got = await world.app.inject({
      method: 'GET',
      url: `/entities/types/${guid}`,
      headers: { authorization: `Bearer ${token}` },
    });
    const read = traceOfRequest(String(got.headers['x-request-id']));
    expect(read.root.name).toBe('GET /entities/types/:guid');
    assertNothingSecret(read.spans, [tenant, token, guid]);
  });

  it('a GraphQL request: HTTP span → GraphQL operation span → its statements', async () => {
    const tenant = newTenant();
    const token = await tokenFor(tenant);
    const res = await world.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ query: 'mutation Make { createEntityType(name: "Traced") { created } }' }),
    });
    expect(res.json()).toEqual({ data: { createEntityType: { created: true } } });
    const { root, spans } = traceOfRequest(String(res.headers['x-request-id']));
    expect(root.name).toBe('POST /graphql');
    const operation = spans.find((s) => s.name === 'graphql mutation');
    expect(operation).toBeDefined();
    expect(parentOf(operation!)).toBe(root.spanContext().spanId);
    expect(operation!.attributes).toEqual({ 'graphql.operation.type': 'mutation' });
    const statements = spans.filter((s) => s.name.startsWith('neo4j '));
    expect(statements.length).toBeGreaterThan(0);
    expect(statements.length).toBe(Number(res.headers['x-db-queries']));
    for (const s of statements) expect(parentOf(s)).toBe(operation!.spanContext().spanId);
    assertNothingSecret(spans, [tenant, token, 'Traced']);
  });

  it("a caller's traceparent continues its trace: the request's span is a child of the caller's; a malformed one starts a new trace", async () => {
    const token = await tokenFor(newTenant());
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const callerSpan = '00f067aa0ba902b7';
    const continued = await world.app.inject({
      method: 'GET',
      url: '/entities/types',
      headers: { authorization: `Bearer ${token}`, traceparent: `00-${traceId}-${callerSpan}-01` },
    });
    expect(continued.statusCode).toBe(200);
    const { root } = traceOfRequest(String(continued.headers['x-request-id']));
    expect(root.spanContext().traceId).toBe(traceId);
    expect(parentOf(root)).toBe(callerSpan);

    for (const bad of [`00-${'0'.repeat(32)}-${callerSpan}-01`, `00-${traceId}-zz-01`, 'x'.repeat(300)]) {
      const fresh = await world.app.inject({
        method: 'GET',
        url: '/entities/types',
        headers: { authorization: `Bearer ${token}`, traceparent: bad },
      });
      expect(fresh.statusCode).toBe(200);
      const t = traceOfRequest(String(fresh.headers['x-request-id']));
      expect(t.root.spanContext().traceId).not.toBe(traceId);
      expect(t.root.spanContext().traceId).not.toBe('0'.repeat(32));
      expect(parentOf(t.root)).toBeUndefined();
    }
  });

  it('a refused request still ends its span, with the status it was answered with', async () => {
    const res = await world.app.inject({ method: 'GET', url: '/entities/types' });
    expect(res.statusCode).toBe(401);
    const { root } = traceOfRequest(String(res.headers['x-request-id']));
    expect(root.attributes['http.response.status_code']).toBe(401);
  });
});

describe('tracing off', () => {
  it('without OTEL_EXPORTER_OTLP_ENDPOINT there is no tracer (the app then adds no hook and makes no span); with one there is', async () => {
    expect(createTracing(undefined, 'x').tracer).toBeNull();
    const on = createTracing('http://127.0.0.1:9/', 'x');
    expect(on.tracer).not.toBeNull();
    await on.shutdown();
  });

  it('with OTEL_EXPORTER_OTLP_ENDPOINT the spans are posted to its /v1/traces (flushed on close at the latest)', async () => {
    const posts: { url: string; bytes: number }[] = [];
    const collector = createServer((req, res) => {
      let bytes = 0;
      req.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
      });
      req.on('end', () => {
        posts.push({ url: req.url ?? '', bytes });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    const port = (collector.address() as AddressInfo).port;
    const traced = await createWorld({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` });
    try {
      const res = await traced.app.inject({
        method: 'GET',
        url: '/entities/types',
        headers: { authorization: `Bearer ${await tokenFor(newTenant())}` },
      });
      expect(res.statusCode).toBe(200);
    } finally {
      await traced.close();
      collector.close();
    }
    expect(posts.length).toBeGreaterThan(0);
    expect(posts.every((p) => p.url === '/v1/traces' && p.bytes > 0)).toBe(true);
  });
});
