// The GraphQL documents the bench sends: the service's nested catalog query, and the same question asked of
// @neo4j/graphql (baseline c) over the same nodes and relationships.

/** The service: a page of types in name order, every attribute applying to each, owner and referenced type. */
export function serviceCatalogQuery(first: number): string {
  return `query Catalog {
  entityTypes(first: ${first}) {
    edges {
      node {
        guid
        name
        attributes {
          name
          valueType
          ownerType { name }
          allowedRefType { name }
        }
      }
    }
    pageInfo { hasNextPage endCursor }
  }
}`;
}

/**
 * Type definitions for @neo4j/graphql (v7) over the service's graph model. Only the fields the query reads are
 * mapped. v7 has no single-element relationships, so owner and referenced type are lists (of at most one).
 */
export const NEO4J_GRAPHQL_TYPEDEFS = /* GraphQL */ `
  type EntityType @node {
    guid: ID!
    tenant: String!
    name: String!
    name_key: String!
    origin: String
    attributes: [AttributeDefinition!]! @relationship(type: "HAS_ATTRIBUTE", direction: OUT)
  }

  type AttributeDefinition @node {
    guid: ID!
    tenant: String!
    name: String!
    name_key: String!
    state: String
    origin: String
    value_type: String
    ownerType: [EntityType!]! @relationship(type: "HAS_ATTRIBUTE", direction: IN)
    allowedRefType: [EntityType!]! @relationship(type: "ALLOWED_REF_TYPE", direction: OUT)
  }
`;

/**
 * The same question for @neo4j/graphql: the tenant's first `limit` types in name order (sorted on both properties
 * of the (tenant, name_key) index, the way the service orders them), each with its live definitions in name order
 * and their owner and referenced type. What it cannot express: the five platform attributes (owned by the root
 * type, applying to every type) are not HAS_ATTRIBUTE children of each type, so they are absent from its answer.
 */
export const NEO4J_GRAPHQL_QUERY = `query Catalog($tenant: String!, $limit: Int!) {
  entityTypes(
    where: { tenant: { eq: $tenant } }
    sort: [{ tenant: ASC }, { name_key: ASC }]
    limit: $limit
  ) {
    guid
    name
    attributes(where: { state: { eq: "live" } }, sort: [{ name_key: ASC }]) {
      name
      value_type
      ownerType { name }
      allowedRefType { name }
    }
  }
}`;
