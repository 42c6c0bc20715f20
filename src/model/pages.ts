// Page sizes: how many rows a paged list answers at once, and the one check of a size asked for (REST `page_size`,
// GraphQL `first`), read by the resolvers, the GraphQL cost bounds and the documents that state them.
import { refuse } from '../errors.js';

/** A paged list's page size: what it answers when none is asked for, and the most it answers. */
export interface PageBound {
  readonly default: number;
  readonly max: number;
}

/** Types, entities, a type's history and the change feed. */
export const PAGES: PageBound = { default: 100, max: 500 };
/** A type's withdrawn definitions (GraphQL `withdrawnAttributes(first)`). */
export const WITHDRAWN_LISTED: PageBound = { default: 100, max: 500 };

/** The bound as the documents say it: "1 to 500, default 100". */
export const pageRange = (bound: PageBound = PAGES) => `1 to ${bound.max}, default ${bound.default}`;

/**
 * The page size asked for (`field` names it in the refusal): the bound's default when none is, and
 * invalid_page_size when it is not an integer from 1 to the bound's max.
 */
export function pageSize(asked: number | undefined | null, field: string, bound: PageBound = PAGES): number {
  if (asked === undefined || asked === null) return bound.default;
  if (!Number.isInteger(asked) || asked < 1 || asked > bound.max) {
    throw refuse('invalid_page_size', `${field} must be an integer from 1 to ${bound.max}.`);
  }
  return asked;
}

/**
 * What the cost of a list counts for a `first` argument before it is checked: the nearest valid size, or the
 * default for none (the resolver then refuses an invalid one with invalid_page_size, not with the cost).
 */
export const pageBound = (first: unknown, bound: PageBound = PAGES) =>
  typeof first === 'number' && Number.isInteger(first)
    ? Math.min(Math.max(first, 1), bound.max)
    : bound.default;
