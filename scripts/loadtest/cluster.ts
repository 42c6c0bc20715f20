// --instances N: the instances, the tallies of the checks across them, and a request through another instance.

import { performance } from 'node:perf_hooks';
import type { Answer, HttpTarget } from './http.js';
import type { ServiceInstance } from './instances.js';
import { REQUEST_TIMEOUT_SECONDS } from './options.js';
import { bump, countServerError, parseEnvelope, serverErrors, type Tenant } from './state.js';

//
// Each virtual client sends one request at a time to the instance it is assigned to (client i to instance i mod
// N). After every acknowledged write it reads the write back at once through another instance; after every
// listing with a next cursor it pages on with that cursor through another instance; after every acknowledged
// withdrawal it sends a curation write with a value for the withdrawn attribute to every other instance, which
// must refuse it (unknown_attribute). Halfway through the traffic the last instance is killed (SIGKILL); its
// clients move to the survivors, which must go on answering without errors.

interface InstanceCounts {
  /** Requests before the traffic: setup writes and their read-backs. */
  setup: number;
  /** Then the traffic's operations, and the checks that follow them; the rest counts the traffic's answers. */
  traffic: number;
  checks: number;
  byClass: Map<number, number>;
  connectionErrors: number;
}
export interface Client {
  index: number;
  instance: ServiceInstance;
  moved: boolean;
}
export interface Tally {
  checked: number;
  /** Of those checked, how many through the instance that wrote (no other one alive). */
  same: number;
  failed: number;
  samples: string[];
  notes: Map<string, number>;
}
const tally = (): Tally => ({ checked: 0, same: 0, failed: 0, samples: [], notes: new Map() });
export function judge(t: Tally, same: boolean, ok: boolean, detail: () => string) {
  t.checked += 1;
  if (same) t.same += 1;
  if (!ok) {
    t.failed += 1;
    if (t.samples.length < 5) t.samples.push(detail());
  }
}

export let cluster:
  | {
      instances: ServiceInstance[];
      targets: HttpTarget[];
      counts: InstanceCounts[];
      victim?: ServiceInstance;
      /** Seconds into the traffic when the victim was killed. */
      killedAfter?: number;
    }
  | undefined;

export const readYourWrite = tally();
export const crossCursor = tally();
export const withdrawalRefusal = tally();
export const afterKill = {
  /** Requests to the survivors sent after the kill, and those answered 5xx or not at all. */
  survivorRequests: 0,
  survivorErrors: 0,
  /** Requests to the survivors that got no answer, whenever sent. */
  survivorConnectionErrors: 0,
  /** Requests in flight to the victim when it was killed (cut), and any sent to it afterwards (none should be). */
  cut: 0,
  misrouted: 0,
  /** Clients assigned to the victim when it was killed; how many moved, and what they sent afterwards. */
  clientsOnVictim: 0,
  movedClients: 0,
  movedRequests: 0,
  samples: [] as string[],
};
export const clusterTotals = { answered: 0, errors: 0, timeouts: 0, byClass: new Map<number, number>() };
export const clusterLatencies: number[] = [];
/** Set when the traffic starts: the summary and the per-instance answers count from there. */
let trafficStarted = false;
let nextOther = 0;
/** Holders of the leases held before the instances started (not theirs). */
export let leaseHoldersBefore: string[] = [];
/** The instances of an --instances run, set once they have started. */
export function setCluster(started: NonNullable<typeof cluster>) {
  cluster = started;
}
export function setLeaseHoldersBefore(holders: string[]) {
  leaseHoldersBefore = holders;
}
export function startTraffic() {
  trafficStarted = true;
}

/** An alive instance other than `than`, in turn; `than` itself when it is the only one alive. */
export function another(than: ServiceInstance): { instance: ServiceInstance; same: boolean } {
  const others = cluster!.instances.filter((i) => i.alive && i !== than);
  if (others.length === 0) return { instance: than, same: true };
  return { instance: others[nextOther++ % others.length]!, same: false };
}

export async function exchange(
  instance: ServiceInstance,
  kind: 'traffic' | 'check',
  label: string,
  request: {
    method: string;
    path: string;
    authorization: string;
    body?: string | undefined;
    ifMatch?: string | undefined;
  },
): Promise<Answer> {
  const { counts, targets, victim } = cluster!;
  const sentAfterKill = victim !== undefined;
  const c = counts[instance.index]!;
  const inTraffic = trafficStarted;
  if (!inTraffic) c.setup += 1;
  else if (kind === 'traffic') c.traffic += 1;
  else c.checks += 1;
  if (sentAfterKill && instance === victim) afterKill.misrouted += 1;
  const started = performance.now();
  const answer = await targets[instance.index]!.send(
    request.method,
    request.path,
    {
      authorization: request.authorization,
      ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(request.ifMatch === undefined ? {} : { 'if-match': request.ifMatch }),
    },
    request.body,
    REQUEST_TIMEOUT_SECONDS * 1000,
  );
  const survivor = instance !== cluster!.victim;
  const failed = answer.status === 0 || answer.status >= 500;
  if (answer.status === 0) {
    if (inTraffic) {
      c.connectionErrors += 1;
      clusterTotals.errors += 1;
      if (answer.timedOut) clusterTotals.timeouts += 1;
    }
    if (survivor) afterKill.survivorConnectionErrors += 1;
    else if (!sentAfterKill) afterKill.cut += 1;
  } else {
    if (inTraffic) {
      const cls = Math.floor(answer.status / 100);
      bump(c.byClass, cls);
      bump(clusterTotals.byClass, cls);
      clusterTotals.answered += 1;
      clusterLatencies.push(performance.now() - started);
    }
    if (answer.status >= 500) {
      countServerError();
      if (serverErrors.length < 5) {
        serverErrors.push({
          op: `${label} (${instance.name})`,
          method: request.method,
          path: request.path,
          status: answer.status,
          body: answer.body.slice(0, 500),
        });
      }
    }
  }
  if (survivor && sentAfterKill) {
    afterKill.survivorRequests += 1;
    if (failed) afterKill.survivorErrors += 1;
  }
  if (survivor && (failed || (sentAfterKill && answer.status === 0)) && afterKill.samples.length < 5) {
    afterKill.samples.push(
      `${instance.name} ${request.method} ${request.path.split('?')[0]} -> ${answer.status || answer.error}`,
    );
  }
  return answer;
}

export const dataOf = (answer: Answer) => parseEnvelope(answer.body)?.DATA ?? {};
export const checkOn = (
  instance: ServiceInstance,
  tenant: Tenant,
  label: string,
  method: string,
  urlPath: string,
  body?: unknown,
) =>
  exchange(instance, 'check', label, {
    method,
    path: urlPath,
    authorization: tenant.authorization,
    body: body === undefined ? undefined : JSON.stringify(body),
  });

/**
 * A GET through another instance than `writer`. A check the kill cut (in flight to the killed instance) is sent
 * again through another instance: the kill says nothing about what was written.
 */
export async function getElsewhere(
  writer: ServiceInstance,
  tenant: Tenant,
  label: string,
  urlPath: string,
  t: Tally,
) {
  for (;;) {
    const { instance, same } = another(writer);
    const answer = await checkOn(instance, tenant, label, 'GET', urlPath);
    if (answer.status === 0 && instance === cluster!.victim) {
      bump(t.notes, 'checks cut by the kill and sent again');
      continue;
    }
    return { answer, data: dataOf(answer), reader: instance, same };
  }
}
