// The REST listings and histories write their rows' JSON with the stored enumerations, defaults and before/after
// texts spliced in as they are (no parse, no second serialisation): the text must be what serialising the row gives.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { StoredAttribute } from '../../src/db/attributes.js';
import type { StoredChange } from '../../src/db/changes.js';
import { attributeRowJson, toAttributeRow } from '../../src/resolvers/attributes.js';
import { changeRowJson, toChangeRow } from '../../src/resolvers/changes.js';

const json = fc.jsonValue({ maxDepth: 3 });
const text = fc.option(
  json.map((v) => JSON.stringify(v)),
  { nil: null },
);

describe('rows written with their stored JSON texts spliced in', () => {
  it('an attribute row: the same text as serialising toAttributeRow', () => {
    fc.assert(
      fc.property(
        fc.record({
          name: fc.string(),
          origin: fc.constantFrom('system', 'user_defined'),
          allowed_values_json: fc.option(
            fc.array(json).map((v) => JSON.stringify(v)),
            { nil: null },
          ),
          default_value_json: text,
          allowed_ref_type: fc.option(fc.uuid(), { nil: null }),
          required: fc.boolean(),
          filterable: fc.boolean(),
        }),
        (r) => {
          const a = {
            guid: 'g-1',
            name_key: r.name.toLowerCase(),
            owner_guid: 'owner',
            value_type: 'string',
            cardinality: 'multi',
            state: 'live',
            ...r,
          } as unknown as StoredAttribute;
          expect(attributeRowJson(a)).toBe(JSON.stringify(toAttributeRow(a)));
        },
      ),
    );
  });

  it('a change row: the same text as serialising toChangeRow', () => {
    fc.assert(
      fc.property(
        fc.record({
          actor: fc.option(fc.string(), { nil: null }),
          request_id: fc.option(fc.string(), { nil: null }),
          attribute_guid: fc.option(fc.uuid(), { nil: null }),
          before: fc.option(
            fc.dictionary(fc.string(), json).map((v) => JSON.stringify(v)),
            { nil: null },
          ),
          after: fc.option(
            fc.dictionary(fc.string(), json).map((v) => JSON.stringify(v)),
            { nil: null },
          ),
        }),
        (r) => {
          const c = {
            shard: 3,
            seq: 17,
            key: '1795640000000123-3-17',
            bytes: 10,
            at: '',
            kind: 'attribute_declared',
            type_guid: 't',
            ...r,
          } as unknown as StoredChange;
          expect(changeRowJson(c)).toBe(JSON.stringify(toChangeRow(c)));
        },
      ),
    );
  });
});
