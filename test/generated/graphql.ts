/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';
export type Maybe<T> = T | null;
export type InputMaybe<T> = Maybe<T>;
/** All built-in and custom scalars, mapped to their actual values */
export type Scalars = {
  ID: { input: string; output: string; }
  String: { input: string; output: string; }
  Boolean: { input: boolean; output: boolean; }
  Int: { input: number; output: number; }
  Float: { input: number; output: number; }
};

/** Result of create-or-get. */
export type CreateEntityTypePayload = {
  __typename?: 'CreateEntityTypePayload';
  /** False when the name already resolved to a type. */
  created: Scalars['Boolean']['output'];
  entityType: EntityType;
};

/** Result of a delete. */
export type DeleteEntityTypePayload = {
  __typename?: 'DeleteEntityTypePayload';
  deleted: Scalars['Boolean']['output'];
  guid: Scalars['ID']['output'];
};

/** A class of catalog entities. Fields that do not apply to a type are null. */
export type EntityType = {
  __typename?: 'EntityType';
  /** True: the type's entities are rows in the Entity Catalog table. */
  catalogLevel?: Maybe<Scalars['Boolean']['output']>;
  /** False: creating an instance is refused by the curation API. */
  creatable?: Maybe<Scalars['Boolean']['output']>;
  /** Identifier, derived from the tenant and the name the type was created under. */
  guid: Scalars['ID']['output'];
  /** Icon key. */
  icon?: Maybe<Scalars['String']['output']>;
  /** Display name. */
  label?: Maybe<Scalars['String']['output']>;
  /** Type name. */
  name: Scalars['String']['output'];
  /** Text to show where an instance's name cannot be edited. */
  nameLockedHint?: Maybe<Scalars['String']['output']>;
  /** user_defined, system or connector. */
  origin: EntityTypeOrigin;
  /** The catalog level one step above. */
  parentType?: Maybe<EntityType>;
  /** True: the type's entities are values picked in an attribute cell. */
  vocabulary?: Maybe<Scalars['Boolean']['output']>;
};

/** Where a type comes from. */
export type EntityTypeOrigin =
  /** Reported by a connector. */
  | 'connector'
  /** Shipped or managed by the platform. */
  | 'system'
  /** Created by a caller. */
  | 'user_defined';

/** Changes to the entity metamodel. */
export type Mutation = {
  __typename?: 'Mutation';
  /** Create-or-get a user-defined type by name. */
  createEntityType: CreateEntityTypePayload;
  /** Delete a user-defined type and its attribute definitions. */
  deleteEntityType: DeleteEntityTypePayload;
  /** Rename a user-defined type; its guid does not change. */
  renameEntityType: EntityType;
};


/** Changes to the entity metamodel. */
export type MutationCreateEntityTypeArgs = {
  name: Scalars['String']['input'];
};


/** Changes to the entity metamodel. */
export type MutationDeleteEntityTypeArgs = {
  guid: Scalars['ID']['input'];
};


/** Changes to the entity metamodel. */
export type MutationRenameEntityTypeArgs = {
  guid: Scalars['ID']['input'];
  name: Scalars['String']['input'];
};

export type PageInfo = {
  __typename?: 'PageInfo';
  endCursor?: Maybe<Scalars['String']['output']>;
  hasNextPage: Scalars['Boolean']['output'];
  hasPreviousPage: Scalars['Boolean']['output'];
  startCursor?: Maybe<Scalars['String']['output']>;
};

/** Reads of the entity metamodel. */
export type Query = {
  __typename?: 'Query';
  /** A type of your tenant by guid; null when none has it. */
  entityType?: Maybe<EntityType>;
  /** The type a name resolves to (trimmed, letter case ignored); null when none. */
  entityTypeByName?: Maybe<EntityType>;
  /** System and user-defined types together, in name order. first: 1..500, default 100. */
  entityTypes: QueryEntityTypesConnection;
};


/** Reads of the entity metamodel. */
export type QueryEntityTypeArgs = {
  guid: Scalars['ID']['input'];
};


/** Reads of the entity metamodel. */
export type QueryEntityTypeByNameArgs = {
  name: Scalars['String']['input'];
};


/** Reads of the entity metamodel. */
export type QueryEntityTypesArgs = {
  after?: InputMaybe<Scalars['String']['input']>;
  before?: InputMaybe<Scalars['String']['input']>;
  first?: InputMaybe<Scalars['Int']['input']>;
  last?: InputMaybe<Scalars['Int']['input']>;
};

export type QueryEntityTypesConnection = {
  __typename?: 'QueryEntityTypesConnection';
  edges: Array<QueryEntityTypesConnectionEdge>;
  pageInfo: PageInfo;
};

export type QueryEntityTypesConnectionEdge = {
  __typename?: 'QueryEntityTypesConnectionEdge';
  cursor: Scalars['String']['output'];
  node: EntityType;
};

/** Where a type comes from. */
export type EntityTypeOrigin =
  /** Reported by a connector. */
  | 'connector'
  /** Shipped or managed by the platform. */
  | 'system'
  /** Created by a caller. */
  | 'user_defined';

export type EntityTypeFieldsFragment = { guid: string, name: string, origin: EntityTypeOrigin, catalogLevel: boolean | null, vocabulary: boolean | null, label: string | null, icon: string | null, creatable: boolean | null, nameLockedHint: string | null, parentType: { guid: string, name: string } | null };

export type EntityTypeByGuidQueryVariables = Exact<{
  guid: string;
}>;


export type EntityTypeByGuidQuery = { entityType: { guid: string, name: string, origin: EntityTypeOrigin, catalogLevel: boolean | null, vocabulary: boolean | null, label: string | null, icon: string | null, creatable: boolean | null, nameLockedHint: string | null, parentType: { guid: string, name: string } | null } | null };

export type EntityTypeByNameQueryVariables = Exact<{
  name: string;
}>;


export type EntityTypeByNameQuery = { entityTypeByName: { guid: string, name: string, origin: EntityTypeOrigin, catalogLevel: boolean | null, vocabulary: boolean | null, label: string | null, icon: string | null, creatable: boolean | null, nameLockedHint: string | null, parentType: { guid: string, name: string } | null } | null };

export type EntityTypesPageQueryVariables = Exact<{
  first?: number | null | undefined;
  after?: string | null | undefined;
}>;


export type EntityTypesPageQuery = { entityTypes: { edges: Array<{ cursor: string, node: { guid: string, name: string, origin: EntityTypeOrigin, catalogLevel: boolean | null, vocabulary: boolean | null, label: string | null, icon: string | null, creatable: boolean | null, nameLockedHint: string | null, parentType: { guid: string, name: string } | null } }>, pageInfo: { hasNextPage: boolean, endCursor: string | null } } };

export type CreateEntityTypeMutationVariables = Exact<{
  name: string;
}>;


export type CreateEntityTypeMutation = { createEntityType: { created: boolean, entityType: { guid: string, name: string, origin: EntityTypeOrigin, catalogLevel: boolean | null, vocabulary: boolean | null, label: string | null, icon: string | null, creatable: boolean | null, nameLockedHint: string | null, parentType: { guid: string, name: string } | null } } };

export type RenameEntityTypeMutationVariables = Exact<{
  guid: string;
  name: string;
}>;


export type RenameEntityTypeMutation = { renameEntityType: { guid: string, name: string, origin: EntityTypeOrigin, catalogLevel: boolean | null, vocabulary: boolean | null, label: string | null, icon: string | null, creatable: boolean | null, nameLockedHint: string | null, parentType: { guid: string, name: string } | null } };

export type DeleteEntityTypeMutationVariables = Exact<{
  guid: string;
}>;


export type DeleteEntityTypeMutation = { deleteEntityType: { guid: string, deleted: boolean } };

export const EntityTypeFieldsFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"EntityTypeFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"EntityType"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"guid"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"origin"}},{"kind":"Field","name":{"kind":"Name","value":"catalogLevel"}},{"kind":"Field","name":{"kind":"Name","value":"vocabulary"}},{"kind":"Field","name":{"kind":"Name","value":"label"}},{"kind":"Field","name":{"kind":"Name","value":"icon"}},{"kind":"Field","name":{"kind":"Name","value":"creatable"}},{"kind":"Field","name":{"kind":"Name","value":"nameLockedHint"}},{"kind":"Field","name":{"kind":"Name","value":"parentType"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"guid"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]} as unknown as DocumentNode<EntityTypeFieldsFragment, unknown>;
export const EntityTypeByGuidDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"EntityTypeByGuid"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"guid"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"entityType"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"guid"},"value":{"kind":"Variable","name":{"kind":"Name","value":"guid"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"EntityTypeFields"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"EntityTypeFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"EntityType"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"guid"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"origin"}},{"kind":"Field","name":{"kind":"Name","value":"catalogLevel"}},{"kind":"Field","name":{"kind":"Name","value":"vocabulary"}},{"kind":"Field","name":{"kind":"Name","value":"label"}},{"kind":"Field","name":{"kind":"Name","value":"icon"}},{"kind":"Field","name":{"kind":"Name","value":"creatable"}},{"kind":"Field","name":{"kind":"Name","value":"nameLockedHint"}},{"kind":"Field","name":{"kind":"Name","value":"parentType"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"guid"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]} as unknown as DocumentNode<EntityTypeByGuidQuery, EntityTypeByGuidQueryVariables>;
export const EntityTypeByNameDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"EntityTypeByName"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"name"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"entityTypeByName"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"name"},"value":{"kind":"Variable","name":{"kind":"Name","value":"name"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"EntityTypeFields"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"EntityTypeFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"EntityType"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"guid"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"origin"}},{"kind":"Field","name":{"kind":"Name","value":"catalogLevel"}},{"kind":"Field","name":{"kind":"Name","value":"vocabulary"}},{"kind":"Field","name":{"kind":"Name","value":"label"}},{"kind":"Field","name":{"kind":"Name","value":"icon"}},{"kind":"Field","name":{"kind":"Name","value":"creatable"}},{"kind":"Field","name":{"kind":"Name","value":"nameLockedHint"}},{"kind":"Field","name":{"kind":"Name","value":"parentType"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"guid"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]} as unknown as DocumentNode<EntityTypeByNameQuery, EntityTypeByNameQueryVariables>;
export const EntityTypesPageDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"EntityTypesPage"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"first"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"after"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"entityTypes"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"Variable","name":{"kind":"Name","value":"first"}}},{"kind":"Argument","name":{"kind":"Name","value":"after"},"value":{"kind":"Variable","name":{"kind":"Name","value":"after"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"edges"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"cursor"}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"EntityTypeFields"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"pageInfo"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hasNextPage"}},{"kind":"Field","name":{"kind":"Name","value":"endCursor"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"EntityTypeFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"EntityType"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"guid"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"origin"}},{"kind":"Field","name":{"kind":"Name","value":"catalogLevel"}},{"kind":"Field","name":{"kind":"Name","value":"vocabulary"}},{"kind":"Field","name":{"kind":"Name","value":"label"}},{"kind":"Field","name":{"kind":"Name","value":"icon"}},{"kind":"Field","name":{"kind":"Name","value":"creatable"}},{"kind":"Field","name":{"kind":"Name","value":"nameLockedHint"}},{"kind":"Field","name":{"kind":"Name","value":"parentType"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"guid"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]} as unknown as DocumentNode<EntityTypesPageQuery, EntityTypesPageQueryVariables>;
export const CreateEntityTypeDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"CreateEntityType"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"name"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"createEntityType"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"name"},"value":{"kind":"Variable","name":{"kind":"Name","value":"name"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"created"}},{"kind":"Field","name":{"kind":"Name","value":"entityType"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"EntityTypeFields"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"EntityTypeFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"EntityType"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"guid"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"origin"}},{"kind":"Field","name":{"kind":"Name","value":"catalogLevel"}},{"kind":"Field","name":{"kind":"Name","value":"vocabulary"}},{"kind":"Field","name":{"kind":"Name","value":"label"}},{"kind":"Field","name":{"kind":"Name","value":"icon"}},{"kind":"Field","name":{"kind":"Name","value":"creatable"}},{"kind":"Field","name":{"kind":"Name","value":"nameLockedHint"}},{"kind":"Field","name":{"kind":"Name","value":"parentType"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"guid"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]} as unknown as DocumentNode<CreateEntityTypeMutation, CreateEntityTypeMutationVariables>;
export const RenameEntityTypeDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"RenameEntityType"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"guid"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"name"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"renameEntityType"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"guid"},"value":{"kind":"Variable","name":{"kind":"Name","value":"guid"}}},{"kind":"Argument","name":{"kind":"Name","value":"name"},"value":{"kind":"Variable","name":{"kind":"Name","value":"name"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"EntityTypeFields"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"EntityTypeFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"EntityType"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"guid"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"origin"}},{"kind":"Field","name":{"kind":"Name","value":"catalogLevel"}},{"kind":"Field","name":{"kind":"Name","value":"vocabulary"}},{"kind":"Field","name":{"kind":"Name","value":"label"}},{"kind":"Field","name":{"kind":"Name","value":"icon"}},{"kind":"Field","name":{"kind":"Name","value":"creatable"}},{"kind":"Field","name":{"kind":"Name","value":"nameLockedHint"}},{"kind":"Field","name":{"kind":"Name","value":"parentType"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"guid"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]} as unknown as DocumentNode<RenameEntityTypeMutation, RenameEntityTypeMutationVariables>;
export const DeleteEntityTypeDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"DeleteEntityType"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"guid"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"deleteEntityType"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"guid"},"value":{"kind":"Variable","name":{"kind":"Name","value":"guid"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"guid"}},{"kind":"Field","name":{"kind":"Name","value":"deleted"}}]}}]}}]} as unknown as DocumentNode<DeleteEntityTypeMutation, DeleteEntityTypeMutationVariables>;