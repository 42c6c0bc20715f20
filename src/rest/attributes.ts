// REST routes for attribute definitions: declare, list, withdraw (the curation API's DELETE).
import type { FastifyInstance } from 'fastify';
import { refuse } from '../errors.js';
import {
  declareAttribute,
  listAttributes,
  MAX_ATTRIBUTE_DEFS,
  toAttributeRow,
  withdrawAttribute,
} from '../resolvers/attributes.js';
import { succeed } from './envelope.js';
import { bodyObject, queryValue } from './input.js';

/** `?dry_run=true` validates and reports without writing. */
function dryRunOf(query: unknown): boolean {
  const value = queryValue(query, 'dry_run', 'invalid_field');
  if (value === undefined || value === 'false' || value === '0') return false;
  if (value === 'true' || value === '1' || value === '') return true;
  throw refuse.badRequest('invalid_field', 'dry_run must be true or false.');
}

export function attributeRoutes(app: FastifyInstance) {
  app.post<{ Params: { guid: string } }>('/entities/types/:guid/attributes', async (req, reply) => {
    const dryRun = dryRunOf(req.query);
    const result = await declareAttribute(req.ctx, req.params.guid, bodyObject(req.body), { dryRun });
    const data = {
      attribute: toAttributeRow(result.attribute),
      usage: { declared: result.declared, limit: MAX_ATTRIBUTE_DEFS },
    };
    return dryRun ? succeed(reply, 200, { dry_run: true, ...data }) : succeed(reply, 201, data);
  });

  app.get<{ Params: { guid: string } }>('/entities/types/:guid/attributes', async (req, reply) => {
    const result = await listAttributes(req.ctx, req.params.guid);
    return succeed(reply, 200, { attributes: result.attributes.map(toAttributeRow) });
  });

  app.delete<{ Params: { typeGuid: string; name: string } }>(
    '/entities/attributes/:typeGuid/:name',
    async (req, reply) => {
      const dryRun = dryRunOf(req.query);
      const result = await withdrawAttribute(req.ctx, req.params.typeGuid, req.params.name, { dryRun });
      const attribute = { ...toAttributeRow(result.attribute), state: result.attribute.state };
      return dryRun
        ? succeed(reply, 200, { dry_run: true, attribute, impact: result.impact })
        : succeed(reply, 200, { attribute, withdrawn: true });
    },
  );
}
