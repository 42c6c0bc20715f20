// The declaration inputs as a TypeScript caller should see them: valueType and cardinality take the ValueType and
// Cardinality unions, so a misspelt value fails to compile. The schema keeps them String (a wrong value sent anyway
// gets its refusal reason, as over REST), so the generated inputs say string; these types are derived from the
// generated ones and follow them whenever npm run codegen runs.
import type {
  Cardinality,
  DeclareAttributeMutation,
  EvolveAttributeMutation,
  DeclareAttributeInput as GeneratedDeclareAttributeInput,
  DeclareAttributeMutationVariables as GeneratedDeclareAttributeVariables,
  EvolveAttributeInput as GeneratedEvolveAttributeInput,
  EvolveAttributeMutationVariables as GeneratedEvolveAttributeVariables,
  TypedDocumentString,
  ValueType,
} from './generated.js';
import * as generated from './generated.js';

/** An input with its valueType and cardinality narrowed to their unions; optional and null stay as generated. */
export type WithValueWords<T> = {
  [K in keyof T]: K extends 'valueType'
    ? ValueType | Exclude<T[K], string>
    : K extends 'cardinality'
      ? Cardinality | Exclude<T[K], string>
      : T[K];
};

/** A declaration (see the generated DeclareAttributeInput for each field's rules). */
export type DeclareAttributeInput = WithValueWords<GeneratedDeclareAttributeInput>;
/** A change in place (see the generated EvolveAttributeInput for each field's rules). */
export type EvolveAttributeInput = WithValueWords<GeneratedEvolveAttributeInput>;

export type DeclareAttributeMutationVariables = WithInput<
  GeneratedDeclareAttributeVariables,
  DeclareAttributeInput
>;
export type EvolveAttributeMutationVariables = WithInput<
  GeneratedEvolveAttributeVariables,
  EvolveAttributeInput
>;

type WithInput<V, I> = { [K in keyof V]: K extends 'input' ? I : V[K] };

/** The same documents, typed with the narrowed variables (request() checks them). */
export const DeclareAttributeDocument = generated.DeclareAttributeDocument as unknown as TypedDocumentString<
  DeclareAttributeMutation,
  DeclareAttributeMutationVariables
>;
export const EvolveAttributeDocument = generated.EvolveAttributeDocument as unknown as TypedDocumentString<
  EvolveAttributeMutation,
  EvolveAttributeMutationVariables
>;
