// GraphQL operation bounds enforced before execution: graphql-armor's depth, aliases, tokens and directives, and a
// rule refusing operation types the schema has none of (a subscription); each rejection tagged with its reason.
// Introspection is not counted, so tools keep working. The cost and the execution budget are in guard.ts. Field
// suggestions are shown to a caller with a verified token, who can read the schema anyway, and hidden otherwise.
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { GraphQLError, type ValidationRule } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { type Reason, refusalExtensions } from '../errors.js';
import { GRAPHQL_LIMITS } from './limits.js';

const tag = (reason: Reason) => (_ctx: unknown, error: GraphQLError) => {
  Object.assign(error.extensions as Record<string, unknown>, refusalExtensions(reason));
};

export function armorPlugin() {
  return EnvelopArmorPlugin({
    maxDepth: { n: GRAPHQL_LIMITS.maxDepth, onReject: [tag('query_too_deep')] },
    maxAliases: { n: GRAPHQL_LIMITS.maxAliases, onReject: [tag('too_many_aliases')] },
    maxTokens: { n: GRAPHQL_LIMITS.maxTokens, onReject: [tag('too_many_tokens')] },
    maxDirectives: { n: GRAPHQL_LIMITS.maxDirectives, onReject: [tag('too_many_directives')] },
    // The static cost is computed once variables are known (guard.ts); armor's counts literals only.
    costLimit: { enabled: false },
    // Hidden per request instead (fieldSuggestionsPlugin): armor's would hide them from everyone.
    blockFieldSuggestion: { enabled: false },
  });
}

/** What replaces a field suggestion in a validation error sent to a caller without a verified token. */
export const SUGGESTION_HIDDEN = '[Suggestion hidden]';

/**
 * Keeps GraphQL's "Did you mean ...?" in validation errors for a request whose token was verified (app/auth.ts sets
 * its context), since introspection already shows it the schema; a request without one learns no field names.
 */
export function fieldSuggestionsPlugin(): Plugin<{ req?: { ctx?: unknown } }> {
  return {
    onValidate({ context }) {
      if (context.req?.ctx) return;
      return ({ valid, result, setResult }) => {
        if (valid) return;
        setResult(
          result.map((error) => {
            error.message = error.message.replace(/Did you mean ".+"\?/g, SUGGESTION_HIDDEN).trim();
            return error;
          }),
        );
      };
    },
  };
}

/** Refuses an operation whose type (subscription) the schema does not have, as a validation error. */
const KnownOperationTypes: ValidationRule = (context) => ({
  OperationDefinition(node) {
    if (context.getSchema().getRootType(node.operation)) return;
    context.reportError(
      new GraphQLError(`This API has no ${node.operation} operations.`, {
        nodes: [node],
        extensions: refusalExtensions('operation_not_supported'),
      }),
    );
  },
});

export function knownOperationTypesPlugin(): Plugin {
  return {
    onValidate({ addValidationRule }) {
      addValidationRule(KnownOperationTypes);
    },
  };
}
