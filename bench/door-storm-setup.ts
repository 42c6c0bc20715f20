// What the door storm's shapes need in the attacking tenant: types holding 4 MB of enumerations (megabytes of
// history, 4 MB listings, a model past its bounds), a type whose defaults fill their budget, tagged entities, a type
// with 60,000 instances carrying a value (written in bulk through src/db), an entity of megabytes, withdrawn
// definitions, a plain type, and a dashboard row written under a key by the platform role.

import { randomUUID } from 'node:crypto';
import type { Driver } from 'neo4j-driver';
import { valueProperty } from '../src/db/attributes.js';
import { insertEntities } from '../src/db/entities.js';
import { createExecutor } from '../src/db/executor.js';
import type { DoorSetup } from './door-shapes.js';
import type { Api } from './service.js';

const HEAVY_TYPES = 8;
const COUNTED = 60_000;

async function must(api: Api, what: string, method: string, url: string, body?: unknown, ok = [200, 201]) {
  let res = await api.call(method, url, body);
  // A 503 (the database found away, the service warming up on it again: a set-up's bulk writes on a slow disk can
  // do that) is sent again after its Retry-After, as a client would, for up to a minute.
  for (let tries = 0; res.status === 503 && tries < 30; tries++) {
    await new Promise((r) => setTimeout(r, 1000 * Number(res.headers.get('retry-after') ?? 1)));
    res = await api.call(method, url, body);
  }
  if (!ok.includes(res.status)) {
    throw new Error(`storm setup: ${what} answered ${res.status} ${JSON.stringify(res.json).slice(0, 300)}`);
  }
  // biome-ignore lint/suspicious/noExplicitAny: setup reads a few known fields of the answers it asked for
  return res.json.DATA as Record<string, any>;
}

export async function setUpStorm(p: {
  api: Api;
  driver: Driver;
  auth: DoorSetup['auth'];
  stray: string;
  base: string;
  /** Tenants of their own and never-seen tenants (authorization headers), minted by the caller. */
  crowd: Pick<DoorSetup, 'others' | 'fresh'>;
  /**
   * The storm's short form (--short): its shapes read neither the tagged entities nor the 120,000 written in bulk,
   * so they are not written (the tags are then none, the withdrawn type's definitions live).
   */
  light?: boolean;
}): Promise<DoorSetup> {
  const { api } = p;
  const type = async (name: string) =>
    (await must(api, `type ${name}`, 'POST', '/entities/types', { name })).entity_type.guid as string;
  const declare = (guid: string, body: Record<string, unknown>) =>
    must(api, `declaring ${String(body.name)}`, 'POST', `/entities/types/${guid}/attributes`, body);

  // The types first (each a change of the tenant's model, which takes turns on it), then the parts that fill them,
  // at once: the declarations (one at a time, as the model takes them), the tagged entities, the bulk writes and
  // the entity of megabytes each go their own way (the set-up's time is the longest of them, not their sum).
  const laps: string[] = [];
  const timed = async <T>(what: string, work: () => Promise<T>): Promise<T> => {
    const begun = performance.now();
    const out = await work();
    laps.push(`${what} ${((performance.now() - begun) / 1000).toFixed(1)} s`);
    return out;
  };
  const bigTypeNames = Array.from({ length: HEAVY_TYPES }, (_, i) => `Heavy ${i}`);
  const made = await timed('types', async () => {
    const bigTypes: string[] = [];
    for (const name of bigTypeNames) bigTypes.push(await type(name));
    const defaultsType = await type('Defaulted');
    const taggedType = await type('Tagged');
    const countedType = await type('Counted');
    await declare(countedType, { name: 'n', value_type: 'number', cardinality: 'single' });
    const withdrawnType = await type('Withdrawn');
    for (const name of ['gone1', 'gone2']) {
      await declare(withdrawnType, { name, value_type: 'number', cardinality: 'single' });
    }
    const bigEntityType = await type('Big entity');
    for (let b = 0; b < 4; b++)
      await declare(bigEntityType, { name: `b${b}`, value_type: 'string', cardinality: 'multi' });
    return { bigTypes, defaultsType, taggedType, countedType, withdrawnType, bigEntityType };
  });
  const { bigTypes, defaultsType, taggedType, countedType, withdrawnType, bigEntityType } = made;
  const tenant = tenantOf(p.auth.attacker);
  const [, tags, , bigEntity, wideTypeNames] = await Promise.all([
    timed('declarations', async () => {
      // Heavy types: 4 enumerations of 1,000 values of about 1 KB each (4 MB a type, 32 MB in all).
      for (const guid of bigTypes) {
        for (let e = 0; e < 4; e++) {
          await declare(guid, {
            name: `enum${e}`,
            value_type: 'string',
            cardinality: 'single',
            allowed_values: Array.from({ length: 1000 }, (_, k) => `${e}-${k}-${'v'.repeat(1000)}`),
          });
        }
      }
      // Defaults filling their budget: 64 defaults of 4 KB of JSON.
      for (let d = 0; d < 64; d++) {
        await declare(defaultsType, {
          name: `d${d}`,
          value_type: 'string',
          cardinality: 'single',
          default_value: `${String(d).padStart(2, '0')}${'x'.repeat(4096 - 4)}`,
        });
      }
    }),
    timed('tagged entities', async () => {
      if (p.light) return [] as string[];
      // Tagged entities: three tags, 600 entities each tagged with some of them.
      const tagType = (await must(api, 'the tag type', 'GET', '/entities/types/by-name/tag')).entity_type
        .guid as string;
      const tags: string[] = [];
      for (const name of ['pii', 'gold', 'raw']) {
        tags.push(
          (await must(api, `tag ${name}`, 'POST', '/entities', { type_guid: tagType, name })).entity.guid,
        );
      }
      for (let i = 0; i < 600; i += 30) {
        await Promise.all(
          Array.from({ length: 30 }, (_, k) =>
            must(api, 'a tagged entity', 'POST', '/entities', {
              type_guid: taggedType,
              name: `row ${i + k}`,
              values: { tags: tags.filter((_, t) => (i + k) % (t + 2) === 0) },
            }),
          ),
        );
      }
      return tags;
    }),
    timed('bulk entities', async () => {
      if (p.light) return;
      // A type with 60,000 instances carrying a value, written in bulk the way the service writes entities, and
      // as many of a type whose two definitions are then withdrawn.
      const db = createExecutor(p.driver);
      for (let i = 0; i < COUNTED; i += 5_000) {
        const batch = Array.from({ length: 5_000 }, (_, k) => {
          const n = i + k;
          return [countedType, withdrawnType].map((typeGuid) => ({
            guid: randomUUID(),
            name: `e${n}`,
            name_key: `e${n}`,
            type_guid: typeGuid,
            properties: { [valueProperty('n')]: n, [valueProperty('gone1')]: n, [valueProperty('gone2')]: n },
            refs: [],
          }));
        }).flat();
        await db.write((run) => insertEntities(run, tenant, batch));
      }
      for (const name of ['gone1', 'gone2']) {
        await must(api, `withdrawing ${name}`, 'DELETE', `/entities/attributes/${withdrawnType}/${name}`);
      }
    }),
    timed('the big entity', async () => {
      // An entity of megabytes: 4 string attributes, each value 1 MB.
      const answer = await must(api, 'the big entity', 'POST', '/entities', {
        type_guid: bigEntityType,
        name: 'big',
        values: Object.fromEntries(
          Array.from({ length: 4 }, (_, b) => [
            `b${b}`,
            Array.from({ length: 20 }, (_, k) => `${k}${'z'.repeat(50_000)}`),
          ]),
        ),
      });
      return answer.entity.guid as string;
    }),
    timed('wide names', () => wideNames(p)),
  ]);
  // A plain type, and a dashboard row the platform role wrote under a key.
  const plainTypeName = 'Plain';
  const plainType = await type(plainTypeName);
  const platform = { ...api, authorization: p.auth.platform };
  const board = await fetch(`${p.base}/platform/dashboards`, {
    method: 'POST',
    headers: {
      authorization: platform.authorization,
      'content-type': 'application/json',
      'idempotency-key': 'dashboard-key',
    },
    body: JSON.stringify({ name: 'Storm board' }),
  });
  if (board.status !== 201 && board.status !== 200)
    throw new Error(`storm setup: the dashboard answered ${board.status}`);
  // An asset of the reference page.
  const docs = await (await fetch(`${p.base}/docs`)).text();
  const asset = /(\/assets\/[^"']+\.js)/.exec(docs)?.[1] ?? '/assets/none.js';
  console.log(`Set-up parts: ${laps.join(', ')}`);
  return {
    auth: p.auth,
    stray: p.stray,
    bigTypes,
    bigTypeNames,
    defaultsType,
    taggedType,
    tags,
    countedType,
    bigEntity,
    withdrawnType,
    plainType,
    plainTypeName,
    asset,
    wideTypeNames,
    ...p.crowd,
  };
}

/**
 * The `wide` tenant: 400 types named with 256 characters, each with 50 reference definitions named as long, and 32
 * former names of 256 four-byte characters stored on each row (as a release that kept them whole would have).
 * Written straight in the database (20,000 declarations and 12,800 renames would take minutes).
 */
async function wideNames(p: { base: string; auth: DoorSetup['auth']; driver: Driver }): Promise<string[]> {
  const tenant = tenantOf(p.auth.wide);
  const setUp = await fetch(`${p.base}/entities/types?page_size=1`, {
    headers: { authorization: p.auth.wide },
  });
  if (setUp.status !== 200) throw new Error(`storm setup: the wide tenant answered ${setUp.status}`);
  const tail = 'x'.repeat(252);
  const former = JSON.stringify(
    Array.from({ length: 32 }, (_, i) => ({
      name: `${String.fromCodePoint(0x20000 + i)}${'\u{1F600}'.repeat(255)}`,
      left_at: new Date().toISOString(),
    })),
  );
  await p.driver.executeQuery(
    `UNWIND range(0, 399) AS i
     CREATE (t:EntityType {tenant: $tenant, guid: $tenant + '-t' + i, name: 'w' + right('00' + i, 3) + $tail,
                           name_key: 'w' + right('00' + i, 3) + $tail, origin: 'user_defined', catalog_level: true,
                           former_names_json: $former})
     WITH t
     UNWIND range(0, 49) AS j
     CREATE (t)-[:HAS_ATTRIBUTE]->(a:AttributeDefinition {tenant: $tenant, owner_guid: t.guid, guid: t.guid + '-a' + j,
       name: 'a' + right('0' + j, 2) + $tail, name_key: 'a' + right('0' + j, 2) + $tail, origin: 'user_defined',
       state: 'live', value_type: 'entity_ref', cardinality: 'single', required: false, filterable: false,
       json_utf8: 0, default_utf8: 0, allowed_ref_type: $tenant + '-t0'})`,
    { tenant, tail, former },
  );
  // A write through the service: a new model version, so nothing it holds in memory from before is served.
  const marker = await fetch(`${p.base}/entities/types`, {
    method: 'POST',
    headers: { authorization: p.auth.wide, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Wide marker' }),
  });
  if (marker.status !== 201)
    throw new Error(`storm setup: the wide tenant's marker answered ${marker.status}`);
  return Array.from({ length: 400 }, (_, i) => `w${String(i).padStart(3, '0')}${tail}`);
}

/** The tenant a bearer token names (the storm minted it: its payload is trusted here). */
function tenantOf(authorization: string): string {
  const payload = authorization.replace(/^Bearer /, '').split('.')[1] as string;
  return (JSON.parse(Buffer.from(payload, 'base64url').toString()) as { tenant: string }).tenant;
}
