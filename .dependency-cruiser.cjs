// The layers of the repository (ARCHITECTURE.md), checked by `npm run check:deps` (part of `npm run lint`): imports
// point down, never up, and never in a circle. From the bottom of src/: base modules (config, refusals, logs, traces),
// the two floors of runtime machinery (json/: JSON read in pieces and written in slices; fairness/: admission, turns,
// slots, the loop's share), model/, db/, the services below the request context, context.ts, resolvers/, the doors
// (REST, GraphQL, HTTP plumbing, request bodies), app/ and server.ts. Beside it: the clients (cli/, client/), and the
// tools (bench/, and scripts/ above it).
const BASE = '^src/(config|errors)[.]ts$|^src/telemetry/(logging|tracing)[.]ts$';
/** The runtime machinery's floors: they know nothing of the domain (json/ reads model/'s string rule). */
const FLOORS = '^src/(json|fairness)/';
const ENTRY = '^src/server[.]ts$|^src/app/';
const DOORS = '^src/(rest|schema|http|body)/';
/** The composition root: app/build.ts, the executor it builds (app/services.ts) and the warm-up (app/warmup.ts). */
const ROOT = '^src/app/(build|services|warmup)[.]ts$';
const SERVICES = '^src/(cache|services|auth)/|^src/telemetry/metrics[.]ts$|^src/jobs/purge[.]ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'no import cycle, type-only ones included',
      from: {},
      to: { circular: true },
    },
    {
      name: 'base-imports-base',
      severity: 'error',
      comment:
        'configuration, refusals, logging, tracing and the bounded-input helpers know nothing of the domain',
      from: { path: BASE },
      to: { path: '^src/', pathNot: BASE },
    },
    {
      name: 'floors-know-no-domain',
      severity: 'error',
      comment:
        'json/ (bodies read in pieces, answers written in slices, the string rule applied) and fairness/ (admission, turns, slots) serve every layer above and reach only base modules and model/',
      from: { path: FLOORS },
      to: { path: '^src/', pathNot: `${FLOORS}|^src/model/|${BASE}` },
    },
    {
      name: 'model-is-pure',
      severity: 'error',
      comment: 'model/ (names, system types, the limits of docs/api.md) needs only the refusal type',
      from: { path: '^src/model/' },
      to: { path: '^src/', pathNot: '^src/model/|^src/errors[.]ts$' },
    },
    {
      name: 'contract-is-pure',
      severity: 'error',
      comment:
        "contract/ (the envelope, the rows and the model document, as zod schemas) is the API's shared vocabulary: it reads model/ and the refusal reasons",
      from: { path: '^src/contract/' },
      to: { path: '^src/', pathNot: '^src/(contract|model)/|^src/errors[.]ts$' },
    },
    {
      name: 'db-below-services',
      severity: 'error',
      comment:
        'db/ (Cypher, the executor) is reached from above and reaches only base, model/ and contract/ (the rows it stores, each declared once)',
      from: { path: '^src/db/' },
      to: { path: '^src/', pathNot: `^src/(db|model|contract)/|${FLOORS}|${BASE}` },
    },
    {
      name: 'services-below-context',
      severity: 'error',
      comment:
        'caches, codecs, the tenant directory, tokens, metrics and the purger serve the request context',
      from: { path: SERVICES },
      to: { path: `^src/(context|resolvers)|${DOORS}|${ENTRY}` },
    },
    {
      name: 'context-below-resolvers',
      severity: 'error',
      from: { path: '^src/context[.]ts$' },
      to: { path: `^src/resolvers/|${DOORS}|${ENTRY}` },
    },
    {
      name: 'resolvers-below-doors',
      severity: 'error',
      comment: 'the rules (resolvers/) are called by REST and GraphQL alike and know neither',
      from: { path: '^src/resolvers/' },
      to: { path: `${DOORS}|${ENTRY}` },
    },
    {
      name: 'doors-apart',
      severity: 'error',
      comment: 'REST and GraphQL share the resolvers, not each other',
      from: { path: '^src/(rest|schema)/' },
      to: { path: '^src/(rest|schema)/', pathNot: '^src/$1/' },
    },
    {
      name: 'doors-call-no-db',
      severity: 'error',
      comment:
        'a door (REST, GraphQL, HTTP plumbing, the request hooks of app/) reaches the database through a resolver; it may name db/ types, not call its functions',
      from: { path: `${DOORS}|^src/app/`, pathNot: ROOT },
      to: { path: '^src/db/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'entry-on-top',
      severity: 'error',
      comment: 'the composition root (app/build.ts and its plugins in app/) is reached from server.ts only',
      from: { path: '^src/', pathNot: `^src/server[.]ts$|${ENTRY}` },
      to: { path: ENTRY },
    },
    {
      name: 'app-from-server-only',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/server[.]ts$' },
      to: { path: '^src/app/build[.]ts$' },
    },
    {
      name: 'cli-is-a-client',
      severity: 'error',
      comment:
        "the command-line tool (cli/) talks to the service over REST: it reads the wire contract (src/contract/), and its token command the service's development-token minting; nothing else of the server",
      from: { path: '^cli/src/' },
      to: { path: '^src/', pathNot: '^src/contract/|^src/auth/dev-token[.]ts$' },
    },
    {
      name: 'service-knows-no-client',
      severity: 'error',
      comment: 'the service does not depend on its clients (cli/, client/)',
      from: { path: '^src/' },
      to: { path: '^(cli|client)/' },
    },
    {
      name: 'nothing-shipped-knows-the-tools',
      severity: 'error',
      comment: 'the service and its clients do not depend on the benchmarks, scripts or tests',
      from: { path: '^(src|cli/src|client/src)/' },
      to: { path: '^(bench|scripts|test)/' },
    },
    {
      name: 'bench-below-scripts',
      severity: 'error',
      comment:
        "bench/ (the benchmarks and their harness: lib.ts, service.ts) is used by scripts/ (the load test, the fuzzer's runner), never the reverse",
      from: { path: '^bench/' },
      to: { path: '^scripts/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
  },
};
