// Holds real responses against the OpenAPI document: the operation the request matched, the documented answer for
// its status (or `default`), and that answer's JSON schema. restClient checks every REST call of the suite this way.

import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { openApi } from '../src/app/operations.js';

interface Operation {
  operationId: string;
  responses: Record<string, { content?: Record<string, { schema: object }> }>;
  'x-budget'?: { statements: number; answerBytes: number };
}

const doc = openApi() as {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, object> };
};
const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addSchema({ $id: 'https://metamodel.invalid/openapi.json', components: doc.components });

// Paths as patterns; a static segment beats a parameter (`/entities/types` is not `/entities/{guid}`).
const patterns = Object.keys(doc.paths)
  .map((path) => ({
    path,
    params: (path.match(/\{/g) ?? []).length,
    regex: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
  }))
  .sort((a, b) => a.params - b.params);

const compiled = new Map<string, ValidateFunction>();
function validatorFor(schema: object) {
  const key = JSON.stringify(schema);
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajv.compile({
      $id: `https://metamodel.invalid/answer/${compiled.size}`,
      ...rewriteRefs(schema),
    });
    compiled.set(key, validate);
  }
  return validate;
}
const rewriteRefs = (schema: object): object =>
  JSON.parse(
    JSON.stringify(schema).replaceAll(
      '"#/components/',
      '"https://metamodel.invalid/openapi.json#/components/',
    ),
  );

/** The documented operation for a request, or undefined when no path of the document matches. */
export function operationFor(method: string, url: string) {
  const path = url.split('?')[0] as string;
  for (const p of patterns) {
    if (!p.regex.test(path)) continue;
    const op = doc.paths[p.path]?.[method.toLowerCase()];
    if (op) return { path: p.path, op };
  }
  return undefined;
}

/**
 * Throws when a response does not match the document: an undocumented route, or a body that its status's
 * documented schema refuses. Unmatched paths must be the envelope's `not_found`.
 */
export function assertConforms(
  method: string,
  url: string,
  status: number,
  contentType: string,
  body: unknown,
  /** What the request cost: statements (x-db-queries) and answer bytes, held to the operation's x-budget. */
  cost?: { statements: number; bytes: number },
) {
  if (method === 'HEAD') return;
  const found = operationFor(method, url);
  const where = `${method} ${url.split('?')[0]} → ${status}`;
  const budget = found?.op['x-budget'];
  if (cost && budget) {
    if (cost.statements > budget.statements) {
      throw new Error(`${where}: sent ${cost.statements} statements; its budget states ${budget.statements}`);
    }
    if (cost.bytes > budget.answerBytes) {
      throw new Error(`${where}: answered ${cost.bytes} bytes; its budget states ${budget.answerBytes}`);
    }
  }
  if (!found) {
    // The router's own refusals (no such route, a malformed URL) are the envelope's Refusal.
    if (status >= 400 && validatorFor({ $ref: '#/components/schemas/Refusal' })(body)) return;
    throw new Error(`${where}: the OpenAPI document has no such operation`);
  }
  const answer = found.op.responses[String(status)] ?? found.op.responses.default;
  if (!answer) throw new Error(`${where}: status not documented for ${found.path}`);
  const media = contentType.split(';')[0]?.trim() ?? '';
  const content = answer.content?.[media];
  if (!content) throw new Error(`${where}: content type ${media} not documented`);
  if (media !== 'application/json') return;
  const validate = validatorFor(content.schema);
  if (!validate(body)) {
    throw new Error(
      `${where}: body does not match the document: ${ajv.errorsText(validate.errors, { dataVar: 'body' })}\n${JSON.stringify(body).slice(0, 2000)}`,
    );
  }
}
