// The REST route of the managed dashboard rows (POST /platform/dashboards, role `platform`): the first row sets the
// managed type up.
import type { FastifyInstance } from 'fastify';
import { writeDashboardRow } from '../resolvers/dashboards.js';
import { toEntityTypeRow } from '../resolvers/entity-types.js';
import { succeed } from './envelope.js';
import { route } from './route.js';
import { ROUTES } from './schemas.js';

export function dashboardRoutes(app: FastifyInstance) {
  route(app, ROUTES.writeDashboard, async (req, reply, { body }) => {
    const result = await writeDashboardRow(req.ctx, body.name);
    return succeed(reply, result.created ? 201 : 200, {
      entity: result.entity,
      created: result.created,
      entity_type: toEntityTypeRow(result.type),
      type_set_up: result.typeSetUp,
    });
  });
}
