// REST routes for the metamodel as code: export, plan, apply, and the document's JSON Schema.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { exportModel, planModel } from '../resolvers/model.js';
import { applyModel, checkApplyRequest } from '../resolvers/model-apply.js';
import { succeed } from './envelope.js';
import { route } from './route.js';
import { ModelDocument, ROUTES } from './schemas.js';

let jsonSchema: Record<string, unknown> | undefined;
/** The model document's JSON Schema, from the same zod schema the OpenAPI document shows (made once). */
export const metamodelJsonSchema = () => {
  jsonSchema ??= {
    $id: '/schemas/metamodel.json',
    title: 'Entity metamodel document',
    ...z.toJSONSchema(ModelDocument, { target: 'draft-2020-12' }),
  };
  return jsonSchema;
};

export function modelRoutes(app: FastifyInstance) {
  route(app, ROUTES.exportModel, async (req, reply, { query }) => {
    return succeed(reply, 200, { model: await exportModel(req.ctx, { formerNames: query.former_names }) });
  });

  route(app, ROUTES.planModel, async (req, reply, { body }) => {
    const plan = await planModel(req.ctx, body);
    return succeed(reply, 200, {
      tenant: plan.tenant,
      based_on: plan.based_on,
      steps: plan.steps,
      unchanged: plan.unchanged,
      drift: plan.drift,
      redeclaring: plan.redeclaring,
    });
  });

  route(app, ROUTES.applyModel, async (req, reply, { body }) => {
    const report = await applyModel(req.ctx, checkApplyRequest(body));
    return succeed(reply, 200, { ...report });
  });

  // Serialised once, as the OpenAPI document is.
  let schemaBytes: Buffer | undefined;
  route(app, ROUTES.metamodelSchema, async (_req, reply) => {
    schemaBytes ??= Buffer.from(JSON.stringify(metamodelJsonSchema()));
    return reply.type('application/json; charset=utf-8').send(schemaBytes);
  });
}
