// REST routes for entity types: handlers parse, call resolvers, and shape the envelope.
import type { FastifyInstance } from 'fastify';
import {
  createOrGetEntityType,
  deleteEntityType,
  getEntityType,
  listEntityTypes,
  renameEntityType,
  toEntityTypeRow,
} from '../resolvers/entity-types.js';
import { succeed } from './envelope.js';
import { bodyObject, queryValue, stringField } from './input.js';

type GuidParams = { Params: { guid: string } };

export function entityTypeRoutes(app: FastifyInstance) {
  app.post('/entities/types', async (req, reply) => {
    const name = stringField(bodyObject(req.body), 'name') ?? '';
    const result = await createOrGetEntityType(req.ctx, name);
    return succeed(reply, result.created ? 201 : 200, {
      entity_type: toEntityTypeRow(result.type),
      created: result.created,
    });
  });

  app.get('/entities/types', async (req, reply) => {
    const cursor = queryValue(req.query, 'cursor', 'invalid_cursor');
    const rawSize = queryValue(req.query, 'page_size', 'invalid_page_size');
    // Only plain decimal digits are a page size; anything else reaches the rule as NaN and is refused there.
    const pageSize =
      rawSize === undefined ? undefined : /^[0-9]{1,9}$/.test(rawSize) ? Number(rawSize) : Number.NaN;
    const page = await listEntityTypes(req.ctx, { cursor, pageSize });
    return succeed(reply, 200, {
      entity_types: page.types.map(toEntityTypeRow),
      next_cursor: page.nextCursor,
    });
  });

  app.get<GuidParams>('/entities/types/:guid', async (req, reply) => {
    const type = await getEntityType(req.ctx, req.params.guid);
    return succeed(reply, 200, { entity_type: toEntityTypeRow(type) });
  });

  app.patch<GuidParams>('/entities/types/:guid', async (req, reply) => {
    const name = stringField(bodyObject(req.body), 'name') ?? '';
    const type = await renameEntityType(req.ctx, req.params.guid, name);
    return succeed(reply, 200, { entity_type: toEntityTypeRow(type) });
  });

  app.delete<GuidParams>('/entities/types/:guid', async (req, reply) => {
    const result = await deleteEntityType(req.ctx, req.params.guid);
    return succeed(reply, 200, result);
  });
}
