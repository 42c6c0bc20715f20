// OpenTelemetry traces: a span for each HTTP request, for the GraphQL operation it runs, and for each Neo4j statement
// it sends (the Cypher text, never its parameters), exported over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set.
// Off otherwise: no provider, no hook, no span object is made. Spans are parented explicitly (the request's span is
// kept on its context), so no global context manager is installed. No attribute carries tenant data or a token:
// the route is its template (`/entities/types/:guid`), never the URL, and statements are the service's own text.
import {
  type Context,
  context,
  defaultTextMapGetter,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { FastifyInstance } from 'fastify';
import { type DocumentNode, Kind, type OperationDefinitionNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';

export const TRACER_NAME = 'entity-metamodel';

export interface Tracing {
  /** Null when tracing is off. */
  tracer: Tracer | null;
  /** Sends what is buffered and stops the exporter (on close). */
  shutdown(): Promise<void>;
}

/** Tracing to an OTLP/HTTP collector at `endpoint` (its /v1/traces), or off when there is none. */
export function createTracing(endpoint: string | undefined, serviceName: string): Tracing {
  if (!endpoint) return { tracer: null, shutdown: async () => {} };
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, '')}/v1/traces` })),
    ],
  });
  return { tracer: provider.getTracer(TRACER_NAME), shutdown: () => provider.shutdown() };
}

/** The spans of one request: its root (HTTP) span and the one its statements hang under now. */
export interface RequestTrace {
  tracer: Tracer;
  root: Span;
  current: Span;
}

const under = (parent: Span): Context => trace.setSpan(context.active(), parent);

/** The first keyword of a statement, for its span's name (`neo4j MATCH`, `neo4j CALL`...). */
const operationOf = (cypher: string) => /^\s*([A-Za-z]+)/.exec(cypher)?.[1]?.toUpperCase() ?? 'QUERY';

/** Runs `send` inside a span for the statement, a child of the request's current span. */
export async function tracedStatement<T>(
  t: RequestTrace,
  cypher: string,
  send: () => Promise<T>,
): Promise<T> {
  const span = t.tracer.startSpan(
    `neo4j ${operationOf(cypher)}`,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'db.system.name': 'neo4j',
        'db.operation.name': operationOf(cypher),
        'db.query.text': cypher,
      },
    },
    under(t.current),
  );
  try {
    return await send();
  } catch (e) {
    // The error's kind only: a message may quote a value the statement was sent.
    span.setStatus({ code: SpanStatusCode.ERROR, message: (e as Error)?.name ?? 'Error' });
    throw e;
  } finally {
    span.end();
  }
}

const traces = new WeakMap<object, RequestTrace>();

/** W3C Trace Context: a caller's traceparent (and tracestate) makes the request's span a child of the caller's. */
const traceContext = new W3CTraceContextPropagator();
/** The request headers a caller continues its trace with. */
export const TRACE_CONTEXT_HEADERS: readonly string[] = traceContext.fields();

/** The trace of a request (its raw request object), when tracing is on. */
export const traceOf = (raw: object) => traces.get(raw);

/** Opens the HTTP span of every request on `app`, and closes it with the answer's status. */
export function traceRequests(app: FastifyInstance, tracer: Tracer) {
  app.addHook('onRequest', (req, _reply, done) => {
    const route = req.routeOptions.url ?? 'unmatched';
    // A well-formed traceparent continues the caller's trace (the propagator ignores a malformed one: a new trace).
    const caller = traceContext.extract(ROOT_CONTEXT, req.headers, defaultTextMapGetter);
    const root = tracer.startSpan(
      `${req.method} ${route}`,
      {
        kind: SpanKind.SERVER,
        attributes: { 'http.request.method': req.method, 'http.route': route, 'request.id': req.id },
      },
      caller,
    );
    traces.set(req.raw, { tracer, root, current: root });
    done();
  });
  app.addHook('onResponse', (req, reply, done) => {
    const t = traces.get(req.raw);
    if (t) {
      t.root.setAttribute('http.response.status_code', reply.statusCode);
      if (reply.statusCode >= 500) t.root.setStatus({ code: SpanStatusCode.ERROR });
      t.root.end();
      traces.delete(req.raw);
    }
    done();
  });
}

/** A span for the GraphQL operation a request runs, between its HTTP span and its statements. */
export function graphqlTracingPlugin<Context>(
  traceOfContext: (ctx: Context) => RequestTrace | undefined,
): Plugin {
  return {
    onExecute({ args }) {
      const t = traceOfContext(args.contextValue as unknown as Context);
      if (!t) return;
      const document = args.document as DocumentNode;
      const operation = document.definitions.find(
        (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
      );
      const type = operation?.operation ?? 'query';
      const span = t.tracer.startSpan(
        `graphql ${type}`,
        {
          kind: SpanKind.INTERNAL,
          // Not the operation's name: the client chooses it, and it may say anything.
          attributes: { 'graphql.operation.type': type },
        },
        under(t.root),
      );
      t.current = span;
      return {
        onExecuteDone() {
          t.current = t.root;
          span.end();
        },
      };
    },
  };
}
