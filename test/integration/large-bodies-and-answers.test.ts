// Large bodies and answers: a body of more than 256 KB (a large-body slot's) is read as a small one would be, and an
// entity, an attribute listing and a GraphQL answer of more than 256 KB come out as the same JSON a small one would,
// with the same media types and an exact Content-Length.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorld, newTenant, restClient, type TestWorld, tokenFor } from '../helpers.js';

const LARGE = 256 * 1024;

let world: TestWorld;
beforeAll(async () => {
  world = await createWorld();
});
afterAll(async () => {
  await world?.close();
});

const valuesOf = (attribute: number) =>
  Array.from({ length: 100 }, (_, i) => `${attribute}-${i} "quoted" \\ é ${'v'.repeat(900)}`);

describe('large answers', () => {
  it('take a large entity body and answer a large entity exactly, both off the event loop', async () => {
    const token = await tokenFor(newTenant());
    const api = restClient(world.app, token);
    const guid = (await api.post('/entities/types', { name: 'Heavy' })).body.DATA.entity_type.guid as string;
    const declared = await api.post(`/entities/types/${guid}/attributes`, {
      name: 'notes',
      value_type: 'string',
      cardinality: 'multi',
    });
    expect(declared.status).toBe(201);
    const notes = Array.from({ length: 40 }, (_, i) => `${i} "quoted" \\ é ✓ ${'n'.repeat(20_000)}`);
    const created = await api.post('/entities', { type_guid: guid, name: 'heavy one', values: { notes } });
    expect(created.status).toBe(201);
    const entityGuid = created.body.DATA.entity.guid as string;
    const read = await world.app.inject({
      method: 'GET',
      url: `/entities/${entityGuid}`,
      headers: { authorization: `Bearer ${token}` },
    });
    expect(read.statusCode).toBe(200);
    expect(read.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(Number(read.headers['content-length'])).toBe(Buffer.byteLength(read.body));
    expect(read.json().DATA.entity.values.notes).toEqual(notes);
  });

  it('take a body whose long strings are written with escapes (as clients that escape non-ASCII write them), decoded in pieces, exactly', async () => {
    const token = await tokenFor(newTenant());
    const api = restClient(world.app, token);
    const guid = (await api.post('/entities/types', { name: 'Escaped' })).body.DATA.entity_type
      .guid as string;
    const declared = await api.post(`/entities/types/${guid}/attributes`, {
      name: 'notes',
      value_type: 'string',
      cardinality: 'multi',
    });
    expect(declared.status).toBe(201);
    // 63,001 UTF-16 units each, 270,000 bytes written: past a piece of 256 KiB, cut inside an escape.
    const notes = Array.from({ length: 3 }, (_, i) => `${i}${'é😀"\\\n✓'.repeat(9_000)}`);
    const ascii = JSON.stringify({ type_guid: guid, name: 'escaped one', values: { notes } }).replace(
      /[\u007f-\uffff]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
    expect(Buffer.byteLength(ascii)).toBe(ascii.length);
    const created = await world.app.inject({
      method: 'POST',
      url: '/entities',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: ascii,
    });
    expect(created.statusCode).toBe(201);
    const read = await api.get(`/entities/${created.json().DATA.entity.guid}`);
    expect(read.body.DATA.entity.values.notes).toEqual(notes);
  });

  it('come out whole and exact over REST and GraphQL, as JSON of the media type asked for', async () => {
    const token = await tokenFor(newTenant());
    const api = restClient(world.app, token);
    const guid = (await api.post('/entities/types', { name: 'Wide' })).body.DATA.entity_type.guid as string;
    for (let a = 0; a < 4; a++) {
      const declared = await api.post(`/entities/types/${guid}/attributes`, {
        name: `grade_${a}`,
        value_type: 'string',
        cardinality: 'single',
        allowed_values: valuesOf(a),
      });
      expect([declared.status, declared.body.DATA]).toEqual([201, expect.anything()]);
    }

    const listing = await world.app.inject({
      method: 'GET',
      url: `/entities/types/${guid}/attributes`,
      headers: { authorization: `Bearer ${token}` },
    });
    expect(listing.statusCode).toBe(200);
    expect(Number(listing.headers['content-length'])).toBe(Buffer.byteLength(listing.body));
    expect(listing.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(listing.body.length).toBeGreaterThan(LARGE);
    // (The listing holds the platform attributes too.)
    const rows = (listing.json().DATA.attributes as { name: string; allowed_values: string[] }[]).filter(
      (r) => r.name.startsWith('grade_'),
    );
    expect(rows.map((r) => r.name).sort()).toEqual(['grade_0', 'grade_1', 'grade_2', 'grade_3']);
    for (const row of rows) expect(row.allowed_values).toEqual(valuesOf(Number(row.name.slice(6))));

    const query = `{ entityType(guid: "${guid}") { name attributes { name allowedValues } } }`;
    for (const [accept, mediaType] of [
      ['application/json', 'application/json'],
      ['application/graphql-response+json', 'application/graphql-response+json'],
      ['*/*', 'application/json'],
    ] as const) {
      const answer = await world.app.inject({
        method: 'POST',
        url: '/graphql',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept },
        payload: JSON.stringify({ query }),
      });
      expect(answer.statusCode).toBe(200);
      expect(answer.headers['content-type']).toBe(`${mediaType}; charset=utf-8`);
      expect(answer.body.length).toBeGreaterThan(LARGE);
      const body = answer.json() as {
        data: { entityType: { name: string; attributes: { name: string; allowedValues: string[] }[] } };
        errors?: unknown;
      };
      expect(body.errors).toBeUndefined();
      expect(body.data.entityType.name).toBe('Wide');
      const grades = body.data.entityType.attributes.filter((r) => r.name.startsWith('grade_'));
      expect(grades).toHaveLength(4);
      for (const row of grades) expect(row.allowedValues).toEqual(valuesOf(Number(row.name.slice(6))));
    }
  });
});
