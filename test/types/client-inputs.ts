// Compiled by the project's typecheck (and by test/unit/client-input-types.test.ts): the client's declaration inputs
// take valueType and cardinality as their unions, so each misspelt value below must fail to compile; a directive
// left unused (the typo accepted) is itself an error.
import {
  createMetamodelClient,
  DeclareAttributeDocument,
  type DeclareAttributeInput,
  EvolveAttributeDocument,
  type EvolveAttributeInput,
} from '../../client/src/index.js';

const client = createMetamodelClient({ url: 'http://localhost:4000', token: 't' });
const name = 'tier';

export const declared: DeclareAttributeInput = { name, valueType: 'string', cardinality: 'single' };
export const evolved: EvolveAttributeInput = { valueType: null, cardinality: undefined, required: false };

// @ts-expect-error a misspelt value type
export const badType: DeclareAttributeInput = { name, valueType: 'strng', cardinality: 'single' };
// @ts-expect-error a misspelt cardinality
export const badCardinality: DeclareAttributeInput = { name, valueType: 'string', cardinality: 'many' };
// @ts-expect-error a misspelt value type in a change in place
export const badChange: EvolveAttributeInput = { valueType: 'text' };

export async function throughTheClient(typeGuid: string) {
  // @ts-expect-error the convenience method takes the narrowed input
  await client.declareAttribute(typeGuid, { name, valueType: 'strng', cardinality: 'single' });
  // @ts-expect-error and so does request() with the declaration's document
  await client.request(DeclareAttributeDocument, { typeGuid, input: { ...declared, valueType: 'text' } });
  // @ts-expect-error and with the change's document
  await client.request(EvolveAttributeDocument, { typeGuid, name, input: { cardinality: 'many' } });
}
