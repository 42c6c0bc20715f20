// REST routes for the curation points: create an entity, read it, list a type's entities by their references,
// look up many identifiers.
import type { FastifyInstance } from 'fastify';
import { createEntityWithValues, getEntity, lookupIdentifiers } from '../resolvers/entities.js';
import { listEntities, parseWhere } from '../resolvers/entity-list.js';
import { succeed } from './envelope.js';
import { route } from './route.js';
import { ROUTES } from './schemas.js';

export function entityRoutes(app: FastifyInstance) {
  route(app, ROUTES.createEntity, async (req, reply, { body }) => {
    const entity = await createEntityWithValues(req.ctx, body);
    return succeed(reply, 201, { entity });
  });

  route(app, ROUTES.getEntity, async (req, reply, { params }) => {
    return succeed(reply, 200, { entity: await getEntity(req.ctx, params.guid) });
  });

  route(app, ROUTES.listEntities, async (req, reply, { query }) => {
    const page = await listEntities(req.ctx, {
      typeGuid: query.type_guid,
      where: parseWhere(query.where ?? []),
      cursor: query.cursor,
      pageSize: query.page_size === undefined ? undefined : Number(query.page_size),
    });
    return succeed(reply, 200, { entities: page.entities, next_cursor: page.nextCursor });
  });

  route(app, ROUTES.queryEntities, async (req, reply, { body }) => {
    const page = await listEntities(req.ctx, {
      typeGuid: body.type_guid,
      where: (body.where ?? []).map((c) => ({ attribute: c.attribute, anyOf: c.any_of })),
      cursor: body.cursor,
      pageSize: body.page_size,
    });
    return succeed(reply, 200, { entities: page.entities, next_cursor: page.nextCursor });
  });

  route(app, ROUTES.lookup, async (req, reply, { body }) => {
    const entries = await lookupIdentifiers(req.ctx, body.identifiers);
    return succeed(reply, 200, { entries });
  });
}
