import { createMetamodelClient, MetamodelGraphQLError, TypeAttributesDocument } from '@metamodel/client';

const client = createMetamodelClient({
  url: 'http://localhost:4000', // or …/graphql; the client posts to <url>/graphql
  token: process.env.METAMODEL_TOKEN ?? '', // or () => currentToken(), asked for on every request
});

// Create-or-get a type, then declare an attribute on it.
const { entityType, created } = await client.createEntityType('Data Product');
console.log(created ? 'created' : 'already there', entityType.guid);

const { attribute, usage } = await client.declareAttribute(entityType.guid, {
  name: 'tier',
  valueType: 'string',
  cardinality: 'single',
  allowedValues: ['gold', 'silver'],
  defaultValue: 'silver',
});
console.log(attribute.name, `${usage.declared} of ${usage.limit} definitions`);

// Any operation of client/operations through request(): variables and data are typed.
const listed = await client.request(TypeAttributesDocument, { guid: entityType.guid });
console.log(listed.entityType?.attributes.map((a) => `${a.name}: ${a.valueType}`));

// Every type of the tenant, page by page.
for await (const type of client.allEntityTypes(200)) console.log(type.name, type.origin);

// A refusal is a MetamodelGraphQLError carrying the service's reason.
try {
  await client.declareAttribute(entityType.guid, {
    name: 'tier',
    valueType: 'string',
    cardinality: 'single',
  });
} catch (error) {
  if (!(error instanceof MetamodelGraphQLError)) throw error;
  console.log(error.reason); // attribute_def_already_exists
}
