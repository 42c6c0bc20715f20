// What a refusal or an answer quotes back of the request is bounded: a refusal's message (GraphQL's own refusals
// too) at MAX_MESSAGE_CHARS, a lookup's identifiers at MAX_LOOKUP_IDENTIFIER_CHARS and its body at LOOKUP_BODY_BYTES. Before, a GraphQL variable of
// 4 Mi quotes was answered in 33.5 MB (quoted twice, escaped twice), a 3 MB unknown field name in 6.3 MB, and 1,000
// identifiers of 8,000 characters in 8 MB.
import { describe, expect } from 'vitest';
import { MAX_MESSAGE_CHARS } from '../../src/errors.js';
import { MAX_STRING_VALUE } from '../../src/model/limits.js';
import {
  LOOKUP_BODY_BYTES,
  MAX_LOOKUP_IDENTIFIER_CHARS,
  MAX_LOOKUP_IDENTIFIERS,
} from '../../src/resolvers/entities.js';
import { it } from '../fixtures.js';
import { createType, newTenant, restClient, tokenFor } from '../helpers.js';

describe('what an answer quotes of the request', () => {
  it('a GraphQL variable holding a string longer than any field takes is refused before GraphQL reads it', async ({
    world,
  }) => {
    const token = await tokenFor(newTenant('echo'));
    const send = (n: unknown) =>
      world.app.inject({
        method: 'POST',
        url: '/graphql',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        payload: {
          query: 'query($n: Int) { entityTypes(first: $n) { edges { cursor } } }',
          variables: { n },
        },
      });
    // a megabyte of quotes (quoted whole in GraphQL's own refusal, before its message is cut): refused at the door
    const long = await send('"'.repeat(1024 * 1024));
    expect([long.statusCode, long.json().DATA.reason]).toEqual([400, 'invalid_field']);
    expect(long.json().MESSAGE).toContain(`more than ${MAX_STRING_VALUE.toLocaleString('en-US')} characters`);
    expect(long.rawPayload.length).toBeLessThan(4 * 1024);
    // deep in a list or an object too
    const nested = await send([{ a: ['x'.repeat(MAX_STRING_VALUE + 1)] }]);
    expect([nested.statusCode, nested.json().DATA.reason]).toEqual([400, 'invalid_field']);
    // at the bound, GraphQL refuses it itself, its message cut at MAX_MESSAGE_CHARS
    const atBound = await send('"'.repeat(MAX_STRING_VALUE));
    const body = atBound.json() as { errors: { message: string }[] };
    expect(atBound.statusCode).toBeLessThan(500);
    expect(body.errors[0]?.message).toMatch(/^Variable "\$n" got invalid value/);
    expect(body.errors[0]?.message.length).toBeLessThanOrEqual(MAX_MESSAGE_CHARS);
    expect(body.errors[0]?.message.endsWith('…')).toBe(true);
    expect(atBound.rawPayload.length).toBeLessThan(4 * 1024);
  });

  it('an unknown field with a 300 KB name: unknown_field, its message quoting the start of the name', async ({
    world,
  }) => {
    const api = restClient(world.app, await tokenFor(newTenant('echo')));
    const type = await createType(api, 'Echo');
    const name = `x${'y'.repeat(300_000)}`;
    const res = await api.post(`/entities/types/${type}/attributes`, {
      name: 'a',
      value_type: 'string',
      cardinality: 'single',
      [name]: 1,
    });
    expect(res.status).toBe(400);
    expect(res.body.DATA.reason).toBe('unknown_field');
    expect(res.body.MESSAGE.length).toBeLessThanOrEqual(MAX_MESSAGE_CHARS);
    expect(res.body.MESSAGE).toMatch(/^Unknown field "xyyy/);
    expect(JSON.stringify(res.body).length).toBeLessThan(4 * 1024);
  });

  it('a lookup of identifiers longer than any guid is refused; one at the bound is answered', async ({
    world,
  }) => {
    const token = await tokenFor(newTenant('echo'));
    const api = restClient(world.app, token);
    const over = await api.post('/entities/lookup', {
      identifiers: ['x'.repeat(MAX_LOOKUP_IDENTIFIER_CHARS + 1)],
    });
    expect(over.status).toBe(400);
    expect(over.body.DATA.reason).toBe('invalid_field');
    const atBound = await api.post('/entities/lookup', {
      identifiers: ['x'.repeat(MAX_LOOKUP_IDENTIFIER_CHARS)],
    });
    expect(atBound.status).toBe(200);
    expect(atBound.body.DATA.entries).toEqual([
      { identifier: 'x'.repeat(MAX_LOOKUP_IDENTIFIER_CHARS), entity: null },
    ]);

    const raw = (payload: string) =>
      world.app.inject({
        method: 'POST',
        url: '/entities/lookup',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        payload,
      });
    // The largest valid lookup: 1,000 identifiers at the bound, every character escaped, pretty-printed. It fits.
    const escaped = `"${'\\u0078'.repeat(MAX_LOOKUP_IDENTIFIER_CHARS)}"`;
    const largest = `{\n    "identifiers": [\n        ${Array(MAX_LOOKUP_IDENTIFIERS).fill(escaped).join(',\n        ')}\n    ]\n}`;
    expect(Buffer.byteLength(largest)).toBeLessThan(LOOKUP_BODY_BYTES);
    const fits = await raw(largest);
    expect(fits.statusCode).toBe(200);
    expect(fits.json().DATA.entries).toHaveLength(MAX_LOOKUP_IDENTIFIERS);
    // The bound itself: a body of exactly LOOKUP_BODY_BYTES (a lookup padded with spaces) is read; one byte more is not.
    const small = '{"identifiers":["a"]}';
    const exact = await raw(small + ' '.repeat(LOOKUP_BODY_BYTES - small.length));
    expect([exact.statusCode, exact.json().DATA.entries]).toEqual([200, [{ identifier: 'a', entity: null }]]);
    const oneMore = await raw(small + ' '.repeat(LOOKUP_BODY_BYTES - small.length + 1));
    expect([oneMore.statusCode, oneMore.json().DATA.reason]).toEqual([413, 'request_too_large']);
    // An 8 MB body of identifiers of 8,000 characters is refused from its length, before it is read or parsed.
    const long = await raw(
      JSON.stringify({ identifiers: Array.from({ length: 1000 }, () => 'x'.repeat(8000)) }),
    );
    expect([long.statusCode, long.json().DATA.reason]).toEqual([413, 'request_too_large']);
    expect(long.json().MESSAGE).toContain(`${LOOKUP_BODY_BYTES.toLocaleString('en-US')} bytes`);
    expect(long.rawPayload.length).toBeLessThan(4 * 1024);
  });
});
