// GraphQL cost bounds (graphql-armor): depth, aliases, tokens, directives and static cost, each rejection tagged
// with a reason like every other refusal. Introspection is not counted, so tools keep working.
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import type { GraphQLError } from 'graphql';

export const GRAPHQL_LIMITS = {
  maxDepth: 10,
  maxAliases: 15,
  maxTokens: 2_000,
  maxDirectives: 20,
  // Static cost: objects 2, scalars 1, x1.5 per level, x a literal `first` (page sizes are capped at 500 anyway).
  maxCost: 100_000,
} as const;

const tag = (reason: string) => (_ctx: unknown, error: GraphQLError) => {
  Object.assign(error.extensions as Record<string, unknown>, { reason, code: reason.toUpperCase() });
};

export function armorPlugin() {
  return EnvelopArmorPlugin({
    maxDepth: { n: GRAPHQL_LIMITS.maxDepth, onReject: [tag('query_too_deep')] },
    maxAliases: { n: GRAPHQL_LIMITS.maxAliases, onReject: [tag('too_many_aliases')] },
    maxTokens: { n: GRAPHQL_LIMITS.maxTokens, onReject: [tag('too_many_tokens')] },
    maxDirectives: { n: GRAPHQL_LIMITS.maxDirectives, onReject: [tag('too_many_directives')] },
    costLimit: { maxCost: GRAPHQL_LIMITS.maxCost, onReject: [tag('query_too_costly')] },
    blockFieldSuggestion: { enabled: true },
  });
}
