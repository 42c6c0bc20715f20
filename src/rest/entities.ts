// REST routes for the curation points: create an entity, read it, look up many identifiers.
import type { FastifyInstance } from 'fastify';
import { createEntityWithValues, getEntity, lookupIdentifiers } from '../resolvers/entities.js';
import { succeed } from './envelope.js';
import { bodyObject } from './input.js';

export function entityRoutes(app: FastifyInstance) {
  app.post('/entities', async (req, reply) => {
    const entity = await createEntityWithValues(req.ctx, bodyObject(req.body));
    return succeed(reply, 201, { entity });
  });

  app.get<{ Params: { guid: string } }>('/entities/:guid', async (req, reply) => {
    return succeed(reply, 200, { entity: await getEntity(req.ctx, req.params.guid) });
  });

  app.post('/entities/lookup', async (req, reply) => {
    const entries = await lookupIdentifiers(req.ctx, bodyObject(req.body).identifiers);
    return succeed(reply, 200, { entries });
  });
}
