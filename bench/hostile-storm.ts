// The hostile-request storm's run (issue #11): its tenant and types, each shape of bench/storm.ts as a phase, the
// service's RSS and /healthz watched throughout.

import { performance } from 'node:perf_hooks';
import { sleep } from './lib.js';
import { fmt, log, ROOT, STORM_AFTER_MS, STORM_TENANT } from './options.js';
import { probeText } from './probe-verdict.js';
import { type StormPhase, type StormSetup, TARGETS } from './report.js';
import type { Api, RssSampler } from './service.js';
import {
  deepBody,
  epochNow,
  graphqlFragmentsBody,
  graphqlNestedBody,
  graphqlPagesBody,
  manyKeysBody,
  runStorm,
  type StormShape,
  slowBody,
  startHealthProbe,
  tinyObjectsBody,
} from './storm.js';

/** How many attributes of the storm's self-referencing type refer to it (each nesting level multiplies by this). */
const LOOP_ATTRIBUTES = 45;

/**
 * The hostile-request storm (issue #11): in the storm tenant, a user type to declare on and a type whose attributes
 * all refer to itself; then each shape of bench/storm.ts as a phase of its own, with the service's RSS sampled every
 * 100 ms (before, peak, and over the STORM_AFTER_MS after) and GET /healthz probed every 50 ms from a process of
 * its own over one keep-alive connection.
 */
export async function hostileStorm(port: number, api: Api, sampler: RssSampler) {
  const started = performance.now();
  const must = async (what: string, status: number[], method: string, urlPath: string, body?: unknown) => {
    const res = await api.call(method, urlPath, body);
    if (!status.includes(res.status))
      throw new Error(
        `storm setup: ${what} answered ${res.status} ${JSON.stringify(res.json).slice(0, 400)}`,
      );
    return res.json;
  };
  const typeGuidOf = (json: Record<string, unknown>) =>
    (json.DATA as { entity_type: { guid: string } }).entity_type.guid;
  const targetGuid = typeGuidOf(
    await must('creating the target type', [201, 200], 'POST', '/entities/types', { name: 'Storm target' }),
  );
  const loopGuid = typeGuidOf(
    await must('creating the looping type', [201, 200], 'POST', '/entities/types', { name: 'Storm loop' }),
  );
  for (let i = 0; i < LOOP_ATTRIBUTES; i++) {
    await must(`declaring ref${i}`, [201], 'POST', `/entities/types/${loopGuid}/attributes`, {
      name: `ref${i}`,
      value_type: 'entity_ref',
      cardinality: 'single',
      allowed_ref_type: loopGuid,
    });
  }
  // The looping type answers an ordinary question (so a refusal below is the storm's shape, nothing else).
  const plain = await must('a plain GraphQL question', [200], 'POST', '/graphql', {
    query: `{ entityType(guid: "${loopGuid}") { attributes { name allowedRefType { guid } } } }`,
  });
  const plainAttributes =
    (
      plain.data as
        | { entityType?: { attributes?: { allowedRefType: { guid: string } | null }[] } }
        | undefined
    )?.entityType?.attributes ?? [];
  const loopRefs = plainAttributes.filter((a) => a.allowedRefType?.guid === loopGuid).length;
  if (loopRefs !== LOOP_ATTRIBUTES)
    throw new Error(
      `storm setup: the looping type has ${loopRefs} self-references, not ${LOOP_ATTRIBUTES}: ` +
        JSON.stringify(plain).slice(0, 600),
    );
  const setup: StormSetup = {
    tenant: STORM_TENANT,
    targetGuid,
    loopGuid,
    loopAttributes: plainAttributes.length,
    loopSelfReferences: loopRefs,
    seconds: (performance.now() - started) / 1000,
  };
  log(
    `\nStorm tenant ${STORM_TENANT}: type ${targetGuid} to declare on; type ${loopGuid} with ${loopRefs} ` +
      `attributes referring to itself (${plainAttributes.length} with the platform ones).`,
  );

  // Every body built once, shared by all the requests that send it.
  const declarePath = `/entities/types/${targetGuid}/attributes`;
  const tiny = tinyObjectsBody();
  const many = manyKeysBody();
  const deep = deepBody(5_000);
  const mb = (b: number) => `${(b / 1024 ** 2).toFixed(1)} MB`;
  const shapes: StormShape[] = [
    {
      kind: 'declared',
      label: 'Content-Length 9 MB, 64 KB sent',
      expected: '413 request_too_large',
      requests: 640,
      concurrency: 64,
      timeoutMs: 60_000,
      request: {
        path: '/entities/types',
        body: { mode: 'declared', declaredBytes: 9 * 1024 ** 2, sendBytes: 64 * 1024 },
      },
    },
    {
      kind: 'streamed',
      label: 'chunked, streamed until answered (9 MB at most)',
      expected: '413 request_too_large',
      requests: 64,
      concurrency: 64,
      timeoutMs: 60_000,
      request: { path: '/entities/types', body: { mode: 'streamed', limitBytes: 9 * 1024 ** 2 } },
    },
    {
      kind: 'tiny-objects',
      label: `/entities/types, ${tiny.values.toLocaleString('en')} {} in ${mb(tiny.data.length)}`,
      expected: '400 json_too_large',
      requests: 128,
      concurrency: 64,
      timeoutMs: 60_000,
      request: { path: '/entities/types', body: { mode: 'whole', data: tiny.data } },
    },
    {
      kind: 'many-keys',
      label: `declaration with ${many.keys.toLocaleString('en')} unknown keys, ${mb(many.data.length)}`,
      expected: '400 json_too_large',
      requests: 128,
      concurrency: 64,
      timeoutMs: 60_000,
      request: { path: declarePath, body: { mode: 'whole', data: many.data } },
    },
    {
      kind: 'deep',
      label: `declaration, default_value nested 5,000 deep (${(deep.length / 1024).toFixed(1)} KB)`,
      expected: '400 json_too_deep',
      requests: 640,
      concurrency: 64,
      timeoutMs: 60_000,
      request: { path: declarePath, body: { mode: 'whole', data: deep } },
    },
    {
      kind: 'slow',
      label: 'declaration, Content-Length 1,000, 1 byte every 5 s',
      expected: '408 request_timeout',
      requests: 64,
      concurrency: 64,
      timeoutMs: 120_000,
      request: { path: declarePath, body: { mode: 'trickle', data: slowBody(1_000), everyMs: 5_000 } },
    },
    {
      kind: 'graphql-nested',
      label: `GraphQL: 5 aliases x entityType, attributes nested 4 deep (${LOOP_ATTRIBUTES} self-references)`,
      expected: '200 query_too_costly',
      requests: 640,
      concurrency: 64,
      timeoutMs: 60_000,
      request: { path: '/graphql', body: { mode: 'whole', data: graphqlNestedBody(loopGuid, 5, 4) } },
    },
    {
      kind: 'graphql-pages',
      label: 'GraphQL: 15 aliases x entityTypes(first: $n = 500), attributes of referenced types',
      expected: '200 query_too_costly',
      requests: 640,
      concurrency: 64,
      timeoutMs: 60_000,
      request: { path: '/graphql', body: { mode: 'whole', data: graphqlPagesBody(15, 500) } },
    },
    {
      kind: 'graphql-fragments',
      label: 'GraphQL: two fragments, each spread 60 times in the other (3,600 expansions from 1 KB)',
      expected: '200 query_too_costly',
      requests: 640,
      concurrency: 64,
      timeoutMs: 60_000,
      request: { path: '/graphql', body: { mode: 'whole', data: graphqlFragmentsBody(loopGuid, 60) } },
    },
  ];

  const probe = await startHealthProbe(ROOT, port, 50);
  const phases: StormPhase[] = [];
  try {
    log(
      `Storm: ${shapes.length} phases, each followed by ${STORM_AFTER_MS / 1000} s of watching the service's RSS; ` +
        '/healthz probed every 50 ms ...',
    );
    sampler.every(100);
    await sleep(500); // the probe's keep-alive connection is open before the first phase
    for (const shape of shapes) {
      sampler.phase = `storm-${shape.kind}`;
      const rssBeforeMb = sampler.sample() ?? 0;
      const from = epochNow();
      const r = await runStorm(port, api.authorization, shape);
      const to = epochNow();
      sampler.sample();
      const rssMaxMb = sampler.phaseMax.get(sampler.phase) ?? 0;
      // The STORM_AFTER_MS after the last answer: when the RSS is first back under the target, and where it is then.
      sampler.phase = `storm-${shape.kind} after`;
      const ended = performance.now();
      let underMs: number | null = null;
      for (;;) {
        const now = sampler.sample();
        const at = performance.now() - ended;
        if (underMs === null && now !== null && now < TARGETS.stormSettleRssMb) underMs = at;
        if (at >= STORM_AFTER_MS) break;
        await sleep(100);
      }
      const rssAfterMb = sampler.sample() ?? 0;
      const phase: StormPhase = {
        ...r,
        rssBeforeMb,
        rssMaxMb,
        rssAfterMaxMb: sampler.phaseMax.get(sampler.phase) ?? 0,
        rssAfterMb,
        rssUnderTargetAfterMs: underMs,
        health: probe.stats(from, to),
        healthAfter: probe.stats(to, epochNow()),
      };
      phases.push(phase);
      const answers = Object.entries(r.statuses)
        .map(([k, n]) => `${n}x ${k}`)
        .join(', ');
      log(
        `  ${shape.kind.padEnd(14)} ${r.requests} requests (${r.concurrency} at once): ${answers} in ` +
          `${fmt(r.ms / 1000)} s (answer p50 ${fmt(r.answerMs.p50, 0)} ms, max ${fmt(r.answerMs.max, 0)} ms); RSS ` +
          `${fmt(rssBeforeMb, 0)} -> max ${fmt(rssMaxMb, 0)} -> ${fmt(rssAfterMb, 0)} MB ${STORM_AFTER_MS / 1000} s ` +
          `after; /healthz ${probeText(phase.health)}`,
      );
    }
  } finally {
    await probe.stop();
  }
  return { api, setup, phases };
}
