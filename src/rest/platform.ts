// REST routes the platform's own features call (role `platform`).
import type { FastifyInstance } from 'fastify';
import { writeDashboardRow } from '../resolvers/dashboards.js';
import { toEntityTypeRow } from '../resolvers/entity-types.js';
import { succeed } from './envelope.js';
import { bodyObject, stringField } from './input.js';

export function platformRoutes(app: FastifyInstance) {
  app.post('/platform/dashboards', async (req, reply) => {
    const name = stringField(bodyObject(req.body), 'name') ?? '';
    const result = await writeDashboardRow(req.ctx, name);
    return succeed(reply, result.created ? 201 : 200, {
      entity: result.entity,
      created: result.created,
      entity_type: toEntityTypeRow(result.type),
      type_set_up: result.typeSetUp,
    });
  });
}
