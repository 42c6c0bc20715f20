// The reasons of the declaration rules, for the routes that check a declaration (declare, plan, apply). The bodies
// themselves (a declaration, a model document) are the contract's: contract/model-document.ts.

import type { Reason } from '../../errors.js';

/** The reasons of the declaration rules that need no database (checkDeclaration): a declaration's and a plan's. */
export const DECLARATION_RULE_REASONS: Reason[] = [
  'too_many_allowed_values',
  'unknown_value_type',
  'invalid_cardinality',
  'allowed_values_not_supported',
  'allowed_ref_type_not_supported',
  'allowed_ref_type_required',
  'filterable_not_supported',
  'empty_value',
  'name_too_long',
  'invalid_field',
  'unknown_field',
  'invalid_allowed_value',
  'duplicate_allowed_value',
  'invalid_default_value',
  'default_value_not_allowed',
];
