// The REST contract as data: each route's path, parameters, body and answers as zod schemas. The router checks
// requests' shapes with these schemas (rest/route.ts) and the OpenAPI document is generated from them (rest/openapi.ts),
// so the document cannot drift from what the service accepts. The rules themselves stay in resolvers/, shared with
// GraphQL; a body whose rules a resolver checks whole (bodyCheckedByResolver) is documented here and checked there.
// The routes are written by area in route-table/; this is the one table the router, the OpenAPI document, the
// conformance test and the fuzzer read.
// The rows before the bodies: named schemas become the document's components in the order they are made.
import './route-table/rows.js';
import type { Reason } from '../errors.js';
import type { DoorBudget } from '../model/doors.js';
import { ATTRIBUTE_ROUTES } from './route-table/attribute-routes.js';
import { ROUTE_BUDGETS, type RouteKey } from './route-table/budgets.js';
import { ENTITY_ROUTES } from './route-table/entity-routes.js';
import type { RouteDoc } from './route-table/fields.js';
import { MODEL_ROUTES } from './route-table/model-routes.js';
import { OPERATION_ROUTES } from './route-table/operation-routes.js';
import { TYPE_ROUTES } from './route-table/type-routes.js';

export { ModelDocument } from '../contract/model-document.js';
export { type FieldRefusals, refusals } from '../contract/refusing-fields.js';
export type { Answer, Method, RouteDoc } from './route-table/fields.js';
export { success } from './route-table/rows.js';

/** Each route with its budget (route-table/budgets.ts), which the route table cannot do without. */
function withBudgets<T extends Record<RouteKey, RouteDoc>>(routes: T) {
  const out = {} as { [K in keyof T]: T[K] & { budget: DoorBudget } };
  for (const key of Object.keys(routes) as RouteKey[]) {
    (out as Record<string, unknown>)[key] = { ...routes[key], budget: ROUTE_BUDGETS[key] };
  }
  return out;
}

/** Every route, in the order the document lists them, each with its budget. */
export const ROUTES = withBudgets({
  ...TYPE_ROUTES,
  ...MODEL_ROUTES,
  ...ATTRIBUTE_ROUTES,
  ...ENTITY_ROUTES,
  ...OPERATION_ROUTES,
} satisfies Record<RouteKey, RouteDoc>);

/** Reasons any authenticated route may refuse with, whatever it does. */
export const COMMON_REFUSALS: Reason[] = [
  'unauthenticated',
  'invalid_bookmark',
  // A path or query the router cannot decode (bad percent-encoding), refused before any route runs.
  'invalid_url',
  // A new token, past its address's (or everyone's) bucket of requests without a verified token (app/auth.ts).
  'rate_limited',
  'storage_unavailable',
  'storage_busy',
  'internal_error',
];
/** Reasons any route with a body may refuse with before a handler runs (body/read.ts). */
export const BODY_REFUSALS: Reason[] = [
  'request_too_large',
  'request_timeout',
  'json_too_deep',
  'json_too_large',
  'invalid_json',
  'invalid_unicode',
  'invalid_body',
  'unsupported_media_type',
];
