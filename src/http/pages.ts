// The public pages, GraphiQL and the REST reference (swagger-ui), as small HTML shells over static assets. Each
// asset is read once, compressed once (brotli and gzip, off the event loop) and served from memory under a name
// carrying its content hash, cached by browsers for a year: a visitor fetches the megabytes once, and a client
// asking for them again and again costs the server a memory copy, not a compression. The shells are a few hundred
// bytes, revalidated with an ETag, and carry a strict Content-Security-Policy (no inline script, nothing from
// another origin), no framing and no MIME sniffing (helmet).
//
// GraphiQL opens on a starter query and brings the GraphQL schema with it (an asset: the introspection of the
// served schema, which is public like schema.graphql and /openapi.json, and holds no tenant's data). So its Docs
// pane and autocomplete work at once, before a token and after, and the page sends no request of its own: the
// service keeps answering introspection to authenticated callers only (every operation at /graphql needs a token),
// and a visitor sees no refusal before they run something.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, gzip, constants as zlibConstants } from 'node:zlib';
import helmet from '@fastify/helmet';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { introspectionFromSchema } from 'graphql';
import { type DoorBudget, KB, MB } from '../model/doors.js';
import { schema } from '../schema/index.js';

const require = createRequire(import.meta.url);
const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

export const ASSETS_PREFIX = '/assets';
export const DOCS_PATHS = ['/docs', '/docs/'] as const;

interface Asset {
  name: string;
  type: string;
  body: Buffer;
  etag: string;
  compressed?: Promise<{ br: Buffer; gzip: Buffer }>;
}

const hashOf = (body: Buffer | string) => createHash('sha256').update(body).digest('base64url').slice(0, 16);

function asset(base: string, ext: string, type: string, content: Buffer | string): Asset {
  const body = typeof content === 'string' ? Buffer.from(content) : content;
  const hash = hashOf(body);
  return { name: `${base}.${hash}.${ext}`, type, body, etag: `"${hash}"` };
}

/** Brotli and gzip forms of an asset, made once on first request (in libuv's thread pool, not the event loop). */
function compressed(a: Asset) {
  a.compressed ??= Promise.all([
    brotli(a.body, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 6 } }),
    gzipAsync(a.body, { level: 9 }),
  ]).then(([br, gz]) => ({ br, gzip: gz }));
  return a.compressed;
}

interface Pages {
  graphiql: string;
  docs: string;
  assets: Map<string, Asset>;
}

const JS = 'application/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';

/** JSON inside a <script type="application/json"> element: nothing in it can close the element. */
const inertJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

const shell = (title: string, head: string, body: string) =>
  `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title>${head}</head><body>${body}</body></html>\n`;

const src = (a: Asset) => `${ASSETS_PREFIX}/${a.name}`;

/** What GraphiQL's editor holds on a first visit: how to pass the token, and a query to run with it. */
export const STARTER_QUERY = `# Entity Metamodel API
#
# 1. Open Headers (below) and replace <token>
#    with your token:
#    {"Authorization": "Bearer <token>"}
# 2. Run the query (run button, or Ctrl-Enter).
#
# Docs and autocomplete (Ctrl-Space) work
# without a token: the schema is public and
# comes with this page. Every request to
# /graphql needs the token.

query EntityTypes {
  entityTypes(first: 5) {
    edges {
      node {
        guid
        name
        origin
      }
    }
    pageInfo {
      hasNextPage
      endCursor
    }
  }
}
`;

let built: Pages | undefined;

/** The shells and their assets, built once per process (the sources are installed packages). */
function pages(): Pages {
  if (built) return built;
  const assets = new Map<string, Asset>();
  const add = (a: Asset) => {
    assets.set(a.name, a);
    return a;
  };

  // GraphiQL's parts, from the installed @graphql-yoga/render-graphiql (whose renderGraphiQL inlines them all into one
  // large page): the package exports them as its `graphiql` entry point. Loaded here, on first use, not at start-up.
  const graphiql = require('@graphql-yoga/render-graphiql/graphiql') as Record<
    'css' | 'js' | 'editorWorkerService' | 'jsonWorker' | 'graphqlWorker' | 'favicon',
    string
  >;
  const favicon = add(
    asset(
      'favicon',
      'ico',
      'image/x-icon',
      Buffer.from(graphiql.favicon.slice(graphiql.favicon.indexOf(',') + 1), 'base64'),
    ),
  );
  const workers = {
    editorWorkerService: src(add(asset('editor.worker', 'js', JS, graphiql.editorWorkerService))),
    json: src(add(asset('json.worker', 'js', JS, graphiql.jsonWorker))),
    graphql: src(add(asset('graphql.worker', 'js', JS, graphiql.graphqlWorker))),
  };
  const env = add(
    asset(
      'graphiql-env',
      'js',
      JS,
      `self.MonacoEnvironment={globalAPI:false,getWorkerUrl:function(_m,label){var w=${JSON.stringify(workers)};return w[label]||w.editorWorkerService;}};\n`,
    ),
  );
  const bundle = add(asset('graphiql', 'js', JS, graphiql.js));
  const css = add(asset('graphiql', 'css', CSS, graphiql.css));
  // The schema GraphiQL shows (Docs, autocomplete), given rather than fetched: GraphiQL then sends no
  // introspection of its own, which without a token would be refused and shown as the page's first answer.
  const graphqlSchema = add(
    asset(
      'graphql-schema',
      'js',
      JS,
      `self.METAMODEL_GRAPHQL_SCHEMA=${JSON.stringify(introspectionFromSchema(schema))};\n`,
    ),
  );
  const start = add(
    asset(
      'graphiql-start',
      'js',
      JS,
      "var options=JSON.parse(document.getElementById('graphiql-options').textContent);options.schema=self.METAMODEL_GRAPHQL_SCHEMA;YogaGraphiQL.renderYogaGraphiQL(document.querySelector('#root'),options);\n",
    ),
  );
  const options = {
    title: 'Entity Metamodel API',
    headers: JSON.stringify({ Authorization: 'Bearer <token>' }),
    defaultQuery: STARTER_QUERY,
    // The headers typed (the token) are kept in the browser's localStorage, so a reload does not ask for them again;
    // docs/api.md says what that means on a shared machine.
    shouldPersistHeaders: true,
  };
  const graphiqlShell = shell(
    options.title,
    `<link rel="icon" href="${src(favicon)}"><link rel="stylesheet" href="${src(css)}">`,
    `<noscript>GraphiQL needs JavaScript.</noscript><div id="root"></div>` +
      `<script type="application/json" id="graphiql-options">${inertJson(options)}</script>` +
      `<script src="${src(env)}"></script><script src="${src(bundle)}"></script>` +
      `<script src="${src(graphqlSchema)}"></script><script src="${src(start)}"></script>`,
  );

  // The REST reference: swagger-ui over /openapi.json.
  // swagger-ui-dist's documented way to its files (its index would load the browser bundle into Node).
  const dist = (require('swagger-ui-dist/absolute-path.js') as () => string)();
  const swaggerJs = add(
    asset('swagger-ui-bundle', 'js', JS, readFileSync(path.join(dist, 'swagger-ui-bundle.js'))),
  );
  const swaggerCss = add(asset('swagger-ui', 'css', CSS, readFileSync(path.join(dist, 'swagger-ui.css'))));
  const swaggerStart = add(
    asset(
      'docs-start',
      'js',
      JS,
      // The token goes into the Authorize dialog; it is not kept in the browser's storage.
      "window.ui=SwaggerUIBundle({url:'/openapi.json',dom_id:'#swagger-ui',presets:[SwaggerUIBundle.presets.apis],layout:'BaseLayout',persistAuthorization:false,tryItOutEnabled:true,displayOperationId:true,validatorUrl:null});\n",
    ),
  );
  const docsShell = shell(
    'Entity Metamodel API — REST reference',
    `<link rel="icon" href="${src(favicon)}"><link rel="stylesheet" href="${src(swaggerCss)}">`,
    `<div id="swagger-ui"></div><script src="${src(swaggerJs)}"></script><script src="${src(swaggerStart)}"></script>`,
  );

  built = { graphiql: graphiqlShell, docs: docsShell, assets };
  return built;
}

/**
 * Makes the pages and their assets now (server.ts: at start-up, while the database starts, before the service
 * listens). Made on a first visit instead, they would hold the event loop in one piece (GraphiQL's module compiled,
 * the assets hashed, the schema's introspection written): every request would wait, /healthz included, and the
 * first visitor of a public page could cause that pause at any time.
 */
export function preparePages() {
  pages();
}

/** Content-Security-Policy of the pages: their own assets only; styles inline because both UIs inject them. */
const PAGE_HELMET = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'self'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'", "'unsafe-inline'"],
      imgSrc: ["'self'", 'data:'],
      fontSrc: ["'self'", 'data:'],
      workerSrc: ["'self'", 'blob:'],
      connectSrc: ["'self'"],
      objectSrc: ["'none'"],
      baseUri: ["'none'"],
      formAction: ["'self'"],
      frameAncestors: ["'none'"],
    },
  },
  frameguard: { action: 'deny' as const },
  strictTransportSecurity: false,
};

/** Whether a GET of /graphql comes from a browser asking for the page (the rule GraphiQL has always used). */
export const wantsGraphiQL = (req: FastifyRequest) =>
  req.method === 'GET' && (req.headers.accept ?? '').includes('text/html');

async function sendShell(req: FastifyRequest, reply: FastifyReply, html: string) {
  const etag = `"${hashOf(html)}"`;
  await reply.helmet(PAGE_HELMET);
  reply.header('cache-control', 'no-cache').header('etag', etag).header('vary', 'accept');
  if (req.headers['if-none-match'] === etag) return reply.code(304).send();
  return reply.type('text/html; charset=utf-8').send(html);
}

export const sendGraphiQL = (req: FastifyRequest, reply: FastifyReply) =>
  sendShell(req, reply, pages().graphiql);

/**
 * What a page or an asset costs (model/doors.ts): made once per process, sent from memory, read from nothing; the
 * largest asset is the reference page's script (swagger-ui), a few MB, compressed once.
 */
export const PAGE_BUDGET: DoorBudget = {
  statements: 0,
  reads: 'nothing: the page or asset, made (and compressed) once, from memory',
  answerBytes: 4 * MB,
  memoryBytes: 64 * KB,
  admission: 'light',
};

/** Registers /docs and /assets/:name (public); GraphiQL is sent by the /graphql route (sendGraphiQL). */
export async function registerPages(app: FastifyInstance) {
  await app.register(helmet, { global: false });
  const config = { budget: PAGE_BUDGET };
  for (const url of DOCS_PATHS) {
    app.get(url, { config }, (req, reply) => sendShell(req, reply, pages().docs));
  }
  app.get<{ Params: { name: string } }>(`${ASSETS_PREFIX}/:name`, { config }, async (req, reply) => {
    const found = pages().assets.get(req.params.name);
    if (!found) {
      return reply
        .code(404)
        .type('application/json; charset=utf-8')
        .send({ STATUS: 'FAIL', MESSAGE: 'No such asset.', DATA: { reason: 'not_found' } });
    }
    reply
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('etag', found.etag)
      .header('vary', 'accept-encoding')
      .header('x-content-type-options', 'nosniff')
      .type(found.type);
    if (req.headers['if-none-match'] === found.etag) return reply.code(304).send();
    const accepts = String(req.headers['accept-encoding'] ?? '');
    if (/\b(br|gzip)\b/.test(accepts)) {
      const forms = await compressed(found);
      const br = /\bbr\b/.test(accepts);
      reply.header('content-encoding', br ? 'br' : 'gzip');
      return reply.send(br ? forms.br : forms.gzip);
    }
    return reply.send(found.body);
  });
}
