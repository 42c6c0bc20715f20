// What the door storm checks once its shapes have run, gathered from the service (its metrics, its log) and read
// back through its API, then judged by afterStormVerdict (bench/door-verdict.ts). The storm (bench/door-storm.ts)
// and the doors' integration test (test/integration/door-storm.test.ts) both call it.
import { ROUTES } from '../src/rest/schemas.js';
import { STORM_KEY_CAP } from './door-shapes.js';
import { type AfterStorm, afterStormVerdict } from './door-verdict.js';
import { type Api, apiFor } from './service.js';
import type { Verdict } from './verdict.js';

/** The answer budgets of the REST routes (rest/schemas.ts), by route key: a shape's answers are held to its door's. */
export const ANSWER_BUDGETS: Record<string, number> = Object.fromEntries(
  Object.entries(ROUTES as Record<string, { budget?: { answerBytes: number } }>)
    .filter(([, r]) => r.budget !== undefined)
    .map(([k, r]) => [k, r.budget?.answerBytes as number]),
);

/** The counts of the shapes that ran, as the storm's results give them. */
export interface RanShape {
  name: string;
  requests: number;
  answers: Record<string, number>;
}

/** Every type of the attacking tenant named "Keyed <n>" (the many-keys shape's creates). */
async function keyedTypes(api: Api): Promise<number> {
  let listed = 0;
  let cursor: string | null = null;
  do {
    const page: Awaited<ReturnType<Api['call']>> = await api.call(
      'GET',
      `/entities/types?page_size=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    const data = page.json.DATA as { entity_types: { name: string }[]; next_cursor: string | null };
    listed += data.entity_types.filter((t) => /^Keyed \d+$/.test(t.name)).length;
    cursor = data.next_cursor;
  } while (cursor);
  return listed;
}

/**
 * Gathers what must hold after the storm and judges it: nothing past a budget (the service's counter), nothing
 * acknowledged lost, the key cap reached and kept, the stray token in no log line (`logText`: the service's log as
 * text).
 */
export async function afterTheStorm(p: {
  api: Api;
  operator: string;
  plainType: string;
  stray: string;
  shapes: readonly RanShape[];
  logText: () => Promise<string>;
}): Promise<Verdict & { measured: AfterStorm }> {
  const metrics = await fetch(`${p.api.base}/metrics`, { headers: { authorization: p.operator } });
  const overBudget = (await metrics.text())
    .split('\n')
    .filter((l) => l.startsWith('metamodel_door_over_budget_total{') && !l.endsWith(' 0'));
  const log = await p.logText();
  const [, payload, signature] = p.stray.split('.');
  const measured: AfterStorm = {
    overBudget,
    strayLogged: log.includes(signature as string) || log.includes(payload as string),
  };
  if (p.shapes.some((s) => s.name === 'keyed-one-key-300')) {
    const found = await p.api.call('POST', '/entities/query', { type_guid: p.plainType, page_size: 500 });
    const entities = (found.json.DATA as { entities?: { name: string }[] } | undefined)?.entities ?? [];
    measured.oneKeyEntities = entities.filter((e) => e.name === 'waited on').length;
  }
  const many = p.shapes.find((s) => s.name === 'keyed-many-keys');
  if (many) {
    measured.manyKeys = {
      created: many.answers['201'] ?? 0,
      exhausted: many.answers['429 idempotency_keys_exhausted'] ?? 0,
      listed: await keyedTypes(p.api),
      requests: many.requests,
      cap: STORM_KEY_CAP,
    };
  }
  return { ...afterStormVerdict(measured), measured };
}

/** The service's log as the operator reads it (GET /admin/logs), as text. */
export const adminLogText = (base: string, operator: string) => async () =>
  JSON.stringify((await apiFor(base, operator).call('GET', '/admin/logs?limit=1000')).json);
