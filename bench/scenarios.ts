// The measured part of the bench: the catalog loaded, baselines (b) and (c) started, the cursors and pages the
// scenarios need, then every scenario at every connection count, the service interleaved with its baselines.
// Over 300 lines: the scenarios, each a request shape of a few lines, and the loop that runs them against the baselines.

import type { ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import type { Driver } from 'neo4j-driver';
import { mintToken } from '../src/auth/tokens.js';
import { findAttributesApplyingTo } from '../src/db/attributes.js';
import { listKey, readEntityPage } from '../src/db/entities.js';
import { findTypeByName, listTypes } from '../src/db/entity-types.js';
import type { Executor } from '../src/db/executor.js';
import { nameKey, platformAttributeGuid, typeGuid } from '../src/model/names.js';
import { startAnnouncingChild, stopChild, withTimeout } from './lib.js';
import { DEFAULT_CATALOG, type LoadedCatalog, loadCatalog } from './load-catalog.js';
import {
  cacheDelta,
  cannon,
  driverLoops,
  type HttpRequest,
  measurement,
  mergeParts,
  type Part,
  type RunLength,
  type Scenario,
  settle,
  withCpu,
} from './measure.js';
import {
  BIG_TYPES,
  DATABASE,
  DEEP_ROW,
  env,
  fmt,
  GRAPHQL_MAX_SECONDS,
  GRAPHQL_MIN,
  GRAPHQL_PER_CONNECTION,
  HOST,
  LEVELS,
  log,
  ONLY,
  PREVIOUS,
  ROOT,
  SECONDS,
  TARGET_LEVEL,
  WARMUP,
} from './options.js';
import { NEO4J_GRAPHQL_QUERY, serviceCatalogQuery } from './queries.js';
import {
  type CacheCounts,
  CEILING_READS,
  hitPct,
  type Measurement,
  type Report,
  type Target,
} from './report.js';
import { type Api, apiFor, type RssSampler, type startService } from './service.js';

export interface BenchContext {
  sampler: RssSampler;
  driver: Driver;
  uri: string;
  exec: Executor;
  svc: Awaited<ReturnType<typeof startService>>;
  secret: string;
  tokenOf(tenant: string): Promise<string>;
  mark(phase: string): void;
  /** The throwaway Neo4j's process (undefined for a server of NEO4J_URI, whose CPU is not measured). */
  neo4jPid: number | undefined;
  /** Baselines started here, for the caller to stop on every exit path. */
  baselineChildren: ChildProcess[];
}

/** The catalog loaded, baselines (b) and (c) started, the deep cursor, GraphQL round trips and the page walk. */
async function prepare(ctx: BenchContext) {
  const { sampler, driver, uri, svc, secret, tokenOf, mark, baselineChildren } = ctx;
  log(
    PREVIOUS
      ? `Writes compared with the previous run (${PREVIOUS.date}${PREVIOUS.quick ? ', --quick' : ''}): x(b) at ` +
          `${TARGET_LEVEL} connections ${Object.entries(PREVIOUS.writeRatiosToB)
            .map(([id, x]) => `${id} ${x === null ? '–' : x.toPrecision(3)}`)
            .join(', ')}.`
      : 'No previous run (bench/results/latest.json) to compare the writes with.',
  );
  // ---- catalog ----
  sampler.phase = 'load';
  log(
    `Loading the catalog: ${DEFAULT_CATALOG.tenants} tenants, one with ${BIG_TYPES.toLocaleString('en')} types ...`,
  );
  const catalog: LoadedCatalog = await withTimeout(
    'loading the catalog',
    loadCatalog(
      driver,
      async (tenant) => {
        const res = await apiFor(svc.base, await tokenOf(tenant)).call('GET', '/entities/types?page_size=1');
        if (res.status !== 200) throw new Error(`GET /entities/types for ${tenant}: ${res.status}`);
      },
      { ...DEFAULT_CATALOG, bigTypes: BIG_TYPES, database: DATABASE, log },
    ),
    900_000,
  );
  log(
    `Catalog loaded in ${fmt(catalog.seconds)} s: ${catalog.counts.types} types, ${catalog.counts.attributes} ` +
      `attribute definitions, ${catalog.counts.entities} entities, ${catalog.counts.relationships} relationships ` +
      '(besides the system types the service created).',
  );
  const big = catalog.bigTenant;
  const api = apiFor(svc.base, await tokenOf(big));
  const graphApi = apiFor(svc.base, await tokenOf(catalog.graphTenant));
  const headersOf = (a: Api) => ({ authorization: a.authorization, 'content-type': 'application/json' });

  // The service's cache counters (issue #12), read by an operator (an administrator of the default tenant)
  // before and after each measured run of the service. The diagnostic touches neither cache, and its requests
  // go outside the runs' timing, CPU and request counts.
  const operator = apiFor(
    svc.base,
    `Bearer ${await mintToken(secret, { tenant: process.env.DEFAULT_TENANT || 'default', roles: ['admin'] })}`,
  );
  let countersProblem: string | undefined;
  const cacheCounters = async (): Promise<CacheCounts | null> => {
    try {
      const res = await operator.call('GET', '/admin/engine-cache');
      const data = res.json.DATA as
        | {
            hits?: unknown;
            misses?: unknown;
            model_cache?: { hits?: unknown; misses?: unknown };
            model_versions?: { reads?: unknown; requests?: unknown; leased?: unknown };
          }
        | undefined;
      const counts = {
        modelHits: data?.model_cache?.hits,
        modelMisses: data?.model_cache?.misses,
        engineHits: data?.hits,
        engineMisses: data?.misses,
        versionReads: data?.model_versions?.reads,
        versionRequests: data?.model_versions?.requests,
        versionLeased: data?.model_versions?.leased,
      };
      if (res.status !== 200 || !Object.values(counts).every((v) => typeof v === 'number')) {
        throw new Error(`answered ${res.status} ${JSON.stringify(res.json).slice(0, 300)}`);
      }
      return counts as CacheCounts;
    } catch (e) {
      // Said once: the runs are still measured, only without hit rates.
      if (countersProblem === undefined) {
        countersProblem = e instanceof Error ? e.message : String(e);
        log(`GET /admin/engine-cache failed, so no hit rates: ${countersProblem}`);
      }
      return null;
    }
  };
  await cacheCounters();

  mark('catalog load');

  // Baselines (b) and (c) start in their own processes meanwhile.
  const constantStarting = startAnnouncingChild('bench/baselines/constant-server.ts', { PORT: '0' }, ROOT);
  const ceilingStarting = startAnnouncingChild(
    'bench/baselines/memory-server.ts',
    { PORT: '0', SECRET: secret },
    ROOT,
  );
  const neoGraphqlStarting = startAnnouncingChild(
    'bench/baselines/neo4j-graphql-server.ts',
    {
      PORT: '0',
      NEO4J_URI: uri,
      NEO4J_USER: env.NEO4J_USER ?? '',
      NEO4J_PASSWORD: env.NEO4J_PASSWORD ?? '',
      NEO4J_DATABASE: DATABASE ?? '',
    },
    ROOT,
  ).then(
    (started) => ({ started, problem: undefined }),
    (e: unknown) => ({ started: undefined, problem: e instanceof Error ? e.message : String(e) }),
  );
  constantStarting.catch(() => {});

  // ---- the cursor at row DEEP_ROW: a real next_cursor, by paging there once ----
  sampler.phase = 'prepare';
  let cursor: string | null = null;
  let rows = 0;
  let lastName = '';
  const pagingStarted = performance.now();
  const pagePath = (c: string | null) =>
    `/entities/types?page_size=500${c ? `&cursor=${encodeURIComponent(c)}` : ''}`;
  const pageCursors: (string | null)[] = [];
  while (rows < DEEP_ROW) {
    pageCursors.push(cursor);
    const res = await api.call('GET', pagePath(cursor));
    const data = res.json.DATA as { entity_types: { name: string }[]; next_cursor: string | null };
    if (res.status !== 200 || !data.next_cursor)
      throw new Error(`paging stopped at row ${rows}: ${res.status}`);
    rows += data.entity_types.length;
    lastName = data.entity_types[data.entity_types.length - 1]!.name;
    cursor = data.next_cursor;
  }
  const deepCursor = cursor!;
  const deepKey = nameKey(lastName);
  const walkSeconds = (performance.now() - pagingStarted) / 1000;
  log(`Cursor at row ${rows.toLocaleString('en')} obtained by paging (500 a page) in ${fmt(walkSeconds)} s.`);

  // ---- GraphQL round trips per page size ----
  const roundTrips: Report['graphqlRoundTrips'] = [];
  // Once untimed first: Neo4j plans the statements on their first use.
  await graphApi.call('POST', '/graphql', { query: serviceCatalogQuery(100) });
  for (const first of [1, 10, 50, 100, 200]) {
    const t = performance.now();
    const res = await graphApi.call('POST', '/graphql', { query: serviceCatalogQuery(first) });
    const ms = performance.now() - t;
    const data = res.json.data as
      | { entityTypes?: { edges: { node: { attributes: unknown[] } }[] } }
      | undefined;
    const errors = res.json.errors as { extensions?: { reason?: string } }[] | undefined;
    const edges = data?.entityTypes?.edges ?? [];
    roundTrips.push({
      first,
      status: res.status,
      queries: res.headers.get('x-db-queries') === null ? null : Number(res.headers.get('x-db-queries')),
      types: edges.length,
      attributes: edges.reduce((n, e) => n + e.node.attributes.length, 0),
      ms,
      ...(errors?.[0] ? { reason: errors[0].extensions?.reason ?? 'error' } : {}),
    });
  }
  log(
    `GraphQL round trips by page size: ${roundTrips
      .map(
        (r) =>
          `first ${r.first}: ${r.reason ? `refused (${r.reason})` : `${r.queries} queries, ${r.attributes} attributes, ${fmt(r.ms, 0)} ms`}`,
      )
      .join(', ')}`,
  );

  // ---- baselines (b) and (c) in their own processes ----
  const constant = await constantStarting;
  baselineChildren.push(constant.child);
  const ceiling = await ceilingStarting;
  baselineChildren.push(ceiling.child);

  // The walk's first and last ten pages again, one at a time, now that nothing else is starting.
  const timePages = async (cursors: (string | null)[]) => {
    const ms: number[] = [];
    for (const c of cursors) {
      const t = performance.now();
      const res = await api.call('GET', pagePath(c));
      if (res.status !== 200) throw new Error(`page walk: ${res.status}`);
      ms.push(performance.now() - t);
    }
    return ms.sort((x, y) => x - y)[Math.floor(ms.length / 2)] ?? Number.NaN;
  };
  const pageWalk = {
    pages: pageCursors.length,
    seconds: walkSeconds,
    firstTenMedianMs: await timePages(pageCursors.slice(0, 10)),
    lastTenMedianMs: await timePages(pageCursors.slice(-10)),
  };
  log(
    `Pages of 500, one at a time: median ${fmt(pageWalk.firstTenMedianMs)} ms for the first ten, ` +
      `${fmt(pageWalk.lastTenMedianMs)} ms for the last ten before row ${rows.toLocaleString('en')}.`,
  );
  const neoGraphqlStart = await neoGraphqlStarting;
  let neoGraphql: { child: ChildProcess; port: number } | undefined = neoGraphqlStart.started;
  let neoGraphqlProblem: string | undefined = neoGraphqlStart.problem;
  if (neoGraphql) baselineChildren.push(neoGraphql.child);
  else log(`Baseline (c) skipped: @neo4j/graphql did not start: ${neoGraphqlProblem}`);
  const neoGraphqlBody = JSON.stringify({
    query: NEO4J_GRAPHQL_QUERY,
    variables: { tenant: catalog.graphTenant, limit: 100 },
  });
  let neoGraphqlShape: { types: number; attributes: number } | undefined;
  if (neoGraphql) {
    const res = await fetch(`http://${HOST}:${neoGraphql.port}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: neoGraphqlBody,
      signal: AbortSignal.timeout(60_000),
    });
    const json = (await res.json()) as {
      data?: { entityTypes: { attributes: unknown[] }[] };
      errors?: { message: string }[];
    };
    if (res.status !== 200 || json.errors || !json.data) {
      neoGraphqlProblem = `@neo4j/graphql answered ${res.status}: ${JSON.stringify(json.errors ?? json).slice(0, 500)}`;
      log(`Baseline (c) skipped: ${neoGraphqlProblem}`);
      await stopChild(neoGraphql.child);
      neoGraphql = undefined;
    } else {
      neoGraphqlShape = {
        types: json.data.entityTypes.length,
        attributes: json.data.entityTypes.reduce((n, t) => n + t.attributes.length, 0),
      };
    }
  }

  return {
    api,
    big,
    cacheCounters,
    catalog,
    ceiling,
    constant,
    deepCursor,
    deepKey,
    graphApi,
    headersOf,
    neoGraphql,
    neoGraphqlBody,
    neoGraphqlProblem,
    neoGraphqlShape,
    pageWalk,
    roundTrips,
  };
}

type Prepared = Awaited<ReturnType<typeof prepare>>;

/** The memory ceiling (m) loaded with the bodies the service answers for its scenarios' paths (each key they rotate). */
async function loadCeiling(
  active: Scenario[],
  headersOf: (s: Scenario) => Record<string, string>,
  base: string,
  port: number,
) {
  const bodies: Record<string, string> = {};
  for (const s of active.filter((x) => CEILING_READS.includes(x.id))) {
    for (let k = 0; k < 8; k++) {
      const r = s.request(k);
      const res = await fetch(`${base}${r.path}`, { headers: headersOf(s) });
      if (res.status !== 200) throw new Error(`${s.id}: ${r.path} answered ${res.status} for the ceiling`);
      bodies[r.path] = await res.text();
    }
  }
  const res = await fetch(`http://${HOST}:${port}/_bodies`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(bodies),
  });
  if (res.status !== 200) throw new Error(`the memory ceiling refused its bodies: ${res.status}`);
}

/** The measured scenarios: what each sends, and the same Cypher through the driver for baseline (a). */
async function scenarioList(ctx: BenchContext, prepared: Prepared): Promise<Scenario[]> {
  const { exec } = ctx;
  const { catalog, big, api, graphApi, deepCursor, deepKey } = prepared;
  const tag = catalog.runId;
  const existingBodies = catalog.existingNames.map((name) => JSON.stringify({ name }));
  const entityBodies = Array.from({ length: 1_000 }, (_, i) =>
    JSON.stringify({
      type_guid: catalog.wideGuids[1],
      name: `bench-entity-${i}`,
      values: catalog.entityValues(i),
    }),
  );
  const graphqlBody = JSON.stringify({ query: serviceCatalogQuery(100) });

  // Issue #14: pages of the tagged type's entities filtered by tags. The last page of a tag (rows 200 to 299 of
  // its 300) starts at a real cursor, found by paging there once, for the first FILTER_TAGS tags.
  const FILTER_TAGS = 20;
  const tagged = catalog.taggedType;
  const tagsDefinition = platformAttributeGuid(big, 'tags');
  const filterPath = (where: string[], after?: string) =>
    `/entities?type_guid=${tagged}${where.map((w) => `&where=${w}`).join('')}&page_size=100` +
    (after ? `&cursor=${encodeURIComponent(after)}` : '');
  const lastPages: { tag: string; cursor: string; key: string }[] = [];
  for (const tag of catalog.tagGuids.slice(0, FILTER_TAGS)) {
    let cursor: string | undefined;
    let key = '';
    for (let page = 0; page < 2; page++) {
      const res = await api.call('GET', filterPath([`tags:${tag}`], cursor));
      const data = res.json.DATA as {
        entities: { guid: string; name: string }[];
        next_cursor: string | null;
      };
      const last = data?.entities[data.entities.length - 1];
      if (res.status !== 200 || !data.next_cursor || !last)
        throw new Error(
          `filter paging for tag ${tag}: ${res.status} ${JSON.stringify(res.json).slice(0, 200)}`,
        );
      cursor = data.next_cursor;
      key = listKey(nameKey(last.name), last.guid);
    }
    lastPages.push({ tag, cursor: cursor as string, key });
  }
  const tagAt = (i: number) => catalog.tagGuids[i % FILTER_TAGS]!;
  const filterDirect = (guids: string[], after: string) =>
    exec.readOne((run) =>
      readEntityPage(run, {
        tenant: big,
        typeGuid: tagged,
        after,
        drive: { attr: 'tags', guids },
        others: [],
        definitions: [tagsDefinition],
        window: 101,
        limit: 101,
      }),
    );
  const listGuid = catalog.wideGuids[0]!;
  const rootKey = nameKey('entity');
  const scenarios: Scenario[] = [
    {
      id: 'create-existing',
      label: 'create-or-get, existing name',
      ok: [200],
      request: (i) => ({
        method: 'POST',
        path: '/entities/types',
        body: existingBodies[i % existingBodies.length]!,
      }),
      direct: (i) => {
        const key = nameKey(catalog.existingNames[i % catalog.existingNames.length]!);
        return exec.readOne((run) => findTypeByName(run, big, key, typeGuid(big, key)));
      },
    },
    {
      id: 'create-new',
      label: 'create-or-get, new name',
      ok: [201],
      request: (i) => ({ method: 'POST', path: '/entities/types', body: `{"name":"New ${tag} ${i}"}` }),
    },
    {
      id: 'page-start',
      label: 'type page at row 0 (100 rows)',
      ok: [200],
      request: () => ({ method: 'GET', path: '/entities/types?page_size=100' }),
      direct: () => exec.readOne((run) => listTypes(run, big, '', 101)),
    },
    {
      id: 'page-deep',
      label: `type page at row ${DEEP_ROW.toLocaleString('en')} (100 rows)`,
      ok: [200],
      request: () => ({
        method: 'GET',
        path: `/entities/types?page_size=100&cursor=${encodeURIComponent(deepCursor)}`,
      }),
      direct: () => exec.readOne((run) => listTypes(run, big, deepKey, 101)),
    },
    {
      id: 'attributes',
      label: 'attribute listing, 200-attribute type',
      ok: [200],
      request: () => ({ method: 'GET', path: `/entities/types/${listGuid}/attributes` }),
      direct: () => exec.readOne((run) => findAttributesApplyingTo(run, big, listGuid, rootKey)),
    },
    {
      id: 'type-by-name',
      label: 'a type by its name',
      ok: [200],
      request: (i) => ({
        method: 'GET',
        path: `/entities/types/by-name/${encodeURIComponent(catalog.existingNames[i % 8]!)}`,
      }),
      direct: (i) => {
        const key = nameKey(catalog.existingNames[i % 8]!);
        return exec.readOne((run) => findTypeByName(run, big, key, typeGuid(big, key)));
      },
    },
    {
      id: 'declare',
      label: 'declare an attribute',
      ok: [201],
      request: (i) => ({
        method: 'POST',
        path: `/entities/types/${catalog.declareGuids[i % catalog.declareGuids.length]}/attributes`,
        body: `{"name":"d_${tag}_${i}","value_type":"string","cardinality":"single"}`,
      }),
    },
    {
      id: 'entity-write',
      label: 'entity write with 12 values (+ default)',
      ok: [201],
      request: (i) => ({
        method: 'POST',
        path: '/entities',
        body: entityBodies[i % entityBodies.length]!,
      }),
    },
    {
      id: 'filter-tag',
      primes: 2 * FILTER_TAGS,
      label: 'entities with a tag (of 300), page at row 0 (100 rows)',
      ok: [200],
      request: (i) => ({ method: 'GET', path: filterPath([`tags:${tagAt(i)}`]) }),
      direct: (i) => filterDirect([tagAt(i)], ''),
    },
    {
      id: 'filter-tag-last',
      primes: 2 * FILTER_TAGS,
      label: 'entities with a tag (of 300), last page (rows 200-299)',
      ok: [200],
      request: (i) => {
        const last = lastPages[i % lastPages.length]!;
        return { method: 'GET', path: filterPath([`tags:${last.tag}`], last.cursor) };
      },
      direct: (i) => {
        const last = lastPages[i % lastPages.length]!;
        return filterDirect([last.tag], last.key);
      },
    },
    {
      id: 'filter-two-tags',
      primes: 2 * FILTER_TAGS,
      label: 'entities with either of two tags (of 600), page at row 0 (100 rows)',
      ok: [200],
      request: (i) => ({ method: 'GET', path: filterPath([`tags:${tagAt(i)},${tagAt(i + 7)}`]) }),
      direct: (i) => filterDirect([tagAt(i), tagAt(i + 7)], ''),
    },
    {
      id: 'graphql',
      label: 'GraphQL: 100 types, attributes, owner and referenced types',
      ok: [200],
      graphql: true,
      api: graphApi,
      request: () => ({ method: 'POST', path: '/graphql', body: graphqlBody }),
    },
  ];
  return scenarios;
}

/** The catalog, the baselines and every measured scenario (all skipped with --storm-only). */
export async function measureScenarios(ctx: BenchContext) {
  const { sampler, svc, mark, neo4jPid } = ctx;
  const prepared = await prepare(ctx);
  const {
    catalog,
    api,
    headersOf,
    cacheCounters,
    roundTrips,
    constant,
    ceiling,
    pageWalk,
    neoGraphql,
    neoGraphqlProblem,
    neoGraphqlBody,
    neoGraphqlShape,
  } = prepared;
  const scenarios = await scenarioList(ctx, prepared);
  let counter = 0;
  const active = scenarios.filter((s) => !ONLY || ONLY.has(s.id));
  if (active.length === 0)
    throw new Error(`--only matches no scenario (${scenarios.map((s) => s.id).join(', ')})`);

  // Priming: every scenario answers as expected before anything is measured (and its plans are cached).
  sampler.phase = 'prepare';
  for (const s of active) {
    for (let k = 0; k < (s.graphql ? 2 : (s.primes ?? 5)); k++) {
      const r = s.request(counter++);
      const res = await (s.api ?? api).call(r.method, r.path, r.body);
      if (!s.ok.includes(res.status) || (s.graphql && res.json.errors)) {
        throw new Error(
          `${s.id}: ${r.method} ${r.path} answered ${res.status} ${JSON.stringify(res.json).slice(0, 400)}`,
        );
      }
    }
    if (s.direct) for (let k = 0; k < (s.primes ?? 5); k++) await s.direct(k);
  }
  await loadCeiling(active, (s) => headersOf(s.api ?? api), svc.base, ceiling.port);
  mark('prepare');

  const runsPlanned =
    LEVELS.length *
    (1 +
      active.length +
      active.filter((s) => s.direct).length +
      (neoGraphql && active.some((s) => s.graphql) ? 1 : 0));
  log(
    `\nMeasuring: ${runsPlanned} runs of ${SECONDS} s, each after ${WARMUP} s of warm-up (GraphQL: ` +
      `${GRAPHQL_PER_CONNECTION} requests per connection, at least ${GRAPHQL_MIN}, no warm-up), at ` +
      `${LEVELS.join(', ')} connections ...`,
  );
  const measurements: Measurement[] = [];
  const record = (m: Measurement) => {
    measurements.push(m);
    const who = m.target === 'service' ? 'service' : `baseline (${m.target})`;
    log(
      `  ${m.scenario.padEnd(16)} ${who.padEnd(13)} c=${String(m.connections).padEnd(3)} ` +
        `${fmt(m.rps, 0).padStart(7)} req/s  p50 ${fmt(m.p50, 2).padStart(7)} ms  p99 ${fmt(m.p99, 2).padStart(7)} ms` +
        `${m.queriesPerRequest === null ? '' : `  q/req ${fmt(m.queriesPerRequest, 2)}`}` +
        `${m.cacheHitRate === undefined ? '' : `  hit ${hitPct(m.cacheHitRate)}%`}` +
        `${m.non2xx + m.errors > 0 ? `  non-2xx ${m.non2xx} errors ${m.errors}` : ''}` +
        `  rss ${m.rssMaxMb === null || m.rssMaxMb === undefined ? '-' : fmt(m.rssMaxMb, 0)} MB`,
    );
  };

  /** One job: a scenario against one target, warmed up once, measured in one or more interleaved parts. */
  interface Job {
    scenario: string;
    target: Target;
    graphql: boolean;
    warmed: boolean;
    parts: Part[];
    /** Runs the job for `length`, returning what it measured; `warmup` first when not warmed yet. */
    run(length: RunLength): Promise<Omit<Part, 'cpu' | 'load' | 'rssMaxMb' | 'cache'>>;
    warmup(): Promise<unknown>;
    pids: (number | undefined)[];
    serverPid: number | undefined;
    /** The service's cache counters, read around each part (service jobs only). */
    counters?: () => Promise<CacheCounts | null>;
  }
  const httpJob = (
    scenario: string,
    target: Target,
    base: string,
    reqHeaders: Record<string, string>,
    build: () => HttpRequest,
    graphql: boolean,
    serverPid: number | undefined,
    connections: number,
  ): Job => ({
    scenario,
    target,
    graphql,
    warmed: false,
    parts: [],
    serverPid,
    pids: [serverPid, neo4jPid],
    run: (length) => cannon(base, reqHeaders, connections, length, build, graphql),
    // GraphQL is warm from priming; a timed warm-up would leave many slow requests in flight.
    warmup: () =>
      graphql || WARMUP === 0
        ? Promise.resolve()
        : cannon(base, reqHeaders, connections, { seconds: WARMUP }, build, graphql),
  });
  const directJob = (s: Scenario, op: (i: number) => Promise<unknown>, connections: number): Job => ({
    scenario: s.id,
    target: 'a',
    graphql: false,
    warmed: false,
    parts: [],
    serverPid: undefined,
    pids: [neo4jPid],
    run: async (length) => {
      const r = await driverLoops(op, connections, 'seconds' in length ? length.seconds : SECONDS);
      return { ...r, non2xx: 0, queries: r.ok, counted: r.ok, graphqlErrors: 0, statuses: {} };
    },
    warmup: () => (WARMUP === 0 ? Promise.resolve() : driverLoops(op, connections, WARMUP)),
  });

  /** Runs one part of a job: warm-up the first time, then measured, then waits until the processes are idle. */
  const runPart = async (job: Job, connections: number, length: RunLength) => {
    if (!job.warmed) {
      await job.warmup();
      await settle(job.pids);
      job.warmed = true;
    }
    // Read before the part (after the warm-up), outside its timing and CPU.
    const countersBefore = job.counters ? await job.counters() : undefined;
    sampler!.phase = `${job.scenario}@${connections}`;
    const rssBefore = sampler!.sample();
    const { value, cpu, load } = await withCpu({ server: job.serverPid, neo4j: neo4jPid }, () =>
      job.run(length),
    );
    // Requests still in flight when the run ended are served before the next run begins.
    const settled = await settle(job.pids);
    if (settled > 2_000) log(`    (${fmt(settled / 1000)} s until the processes were idle again)`);
    // Read once the processes are idle, so the lookups of requests still in flight at the end are in.
    const countersAfter = job.counters ? await job.counters() : undefined;
    const rssMaxMb =
      job.target === 'service' ? Math.max(rssBefore ?? 0, sampler!.phaseMax.get(sampler!.phase) ?? 0) : null;
    const cache =
      countersBefore === undefined || countersAfter === undefined
        ? undefined
        : cacheDelta(countersBefore, countersAfter);
    job.parts.push({ ...value, cpu, load, rssMaxMb, cache });
  };

  /**
   * Runs jobs interleaved: `rounds` rounds, each giving every job SECONDS / rounds, so that whatever drifts during
   * the run (garbage collection, other processes) falls on all of them alike. Then records each.
   */
  const interleaved = async (jobs: Job[], connections: number, rounds: number) => {
    for (let k = 0; k < rounds; k++) {
      for (const job of jobs) await runPart(job, connections, { seconds: SECONDS / rounds });
    }
    for (const job of jobs) record(measurement(job.scenario, job.target, connections, mergeParts(job.parts)));
  };
  const ROUNDS = 2;

  for (const c of LEVELS) {
    const constantJob = httpJob(
      'constant',
      'b',
      `http://${HOST}:${constant.port}`,
      {},
      () => ({ method: 'GET', path: '/constant' }),
      false,
      constant.child.pid,
      c,
    );
    await interleaved([constantJob], c, 1);
    const serviceJob = (s: Scenario): Job => ({
      ...httpJob(
        s.id,
        'service',
        svc.base,
        headersOf(s.api ?? api),
        () => s.request(counter++),
        s.graphql === true,
        svc.child.pid,
        c,
      ),
      counters: cacheCounters,
    });
    // Reads, each interleaved with its baseline (a); the two type pages interleaved with each other as well.
    const reads = active.filter((s) => s.direct);
    const groups: Scenario[][] = [];
    const pages = reads.filter((s) => s.id === 'page-start' || s.id === 'page-deep');
    for (const s of reads) {
      if (pages.includes(s)) {
        if (s === pages[0]) groups.push(pages);
      } else {
        groups.push([s]);
      }
    }
    const ceilingJob = (s: Scenario) =>
      httpJob(
        s.id,
        'm',
        `http://${HOST}:${ceiling.port}`,
        headersOf(s.api ?? api),
        () => s.request(counter++),
        false,
        ceiling.child.pid,
        c,
      );
    for (const group of groups) {
      await interleaved(
        group.flatMap((s) => [
          serviceJob(s),
          directJob(s, s.direct!, c),
          ...(CEILING_READS.includes(s.id) ? [ceilingJob(s)] : []),
        ]),
        c,
        ROUNDS,
      );
    }
    // GraphQL: a fixed number of requests per connection, the service and then @neo4j/graphql.
    for (const s of active.filter((x) => x.graphql)) {
      const length: RunLength = {
        amount: Math.max(GRAPHQL_MIN, GRAPHQL_PER_CONNECTION * c),
        maxSeconds: GRAPHQL_MAX_SECONDS,
      };
      const jobs = [serviceJob(s)];
      if (neoGraphql) {
        jobs.push(
          httpJob(
            s.id,
            'c',
            `http://${HOST}:${neoGraphql.port}`,
            { 'content-type': 'application/json' },
            () => ({ method: 'POST', path: '/graphql', body: neoGraphqlBody }),
            true,
            neoGraphql.child.pid,
            c,
          ),
        );
      }
      for (const job of jobs) {
        await runPart(job, c, length);
        record(measurement(job.scenario, job.target, c, mergeParts(job.parts), { amount: length.amount }));
      }
    }
    // Writes last: they grow the catalog.
    for (const s of active.filter((x) => !x.direct && !x.graphql)) {
      await interleaved([serviceJob(s)], c, 1);
    }
  }

  mark('runs');
  return {
    catalog,
    roundTrips,
    pageWalk,
    neo4jGraphql: neoGraphql
      ? ({ ok: true, shape: neoGraphqlShape ?? null } as const)
      : ({ ok: false, problem: neoGraphqlProblem ?? 'not run' } as const),
    active,
    measurements,
  };
}
