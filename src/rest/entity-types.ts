// REST routes for entity types: handlers take the checked input, call resolvers, and shape the envelope.
import type { FastifyInstance } from 'fastify';
import { refuse } from '../errors.js';
import { pieces } from '../json/slices.js';
import {
  createOrGetEntityType,
  deleteEntityType,
  findEntityTypeByName,
  getEntityType,
  listEntityTypes,
  renameEntityType,
  toEntityTypeRow,
} from '../resolvers/entity-types.js';
import { releaseFormerName } from '../resolvers/former-names.js';
import { withTypeSuggestions } from '../resolvers/type-suggestions.js';
import { describeEntityType, saysTexts } from '../resolvers/type-texts.js';
import { conditionalWrite, ifMatchOf, notModified, sendVersion } from './conditions.js';
import { succeed, succeedCached } from './envelope.js';
import { route } from './route.js';
import { ROUTES } from './schemas.js';

export function entityTypeRoutes(app: FastifyInstance) {
  route(app, ROUTES.createEntityType, async (req, reply, { body }) => {
    const result = await createOrGetEntityType(req.ctx, body.name);
    return succeed(reply, result.created ? 201 : 200, {
      entity_type: toEntityTypeRow(result.type),
      created: result.created,
    });
  });

  route(app, ROUTES.listEntityTypes, async (req, reply, { query }) => {
    const page = await listEntityTypes(req.ctx, {
      cursor: query.cursor,
      pageSize: query.page_size === undefined ? undefined : Number(query.page_size),
    });
    // Serialised once per page and model version (the cursor is the same for every request of the tenant), and kept
    // as bytes.
    return succeedCached(
      reply,
      page.cached.restBody,
      () => pieces({ entity_types: page.types.map(toEntityTypeRow), next_cursor: page.nextCursor }),
      (body) => {
        page.cached.restBody = body;
      },
    );
  });

  route(app, ROUTES.getEntityType, async (req, reply, { params }) => {
    const type = await getEntityType(req.ctx, params.guid);
    if (notModified(req, reply, type.version)) return reply;
    return succeed(reply, 200, { entity_type: toEntityTypeRow(type) });
  });

  route(app, ROUTES.getEntityTypeByName, async (req, reply, { params }) => {
    const type = await findEntityTypeByName(req.ctx, params.name);
    if (!type) {
      throw await withTypeSuggestions(
        req.ctx,
        refuse('unknown_entity_type', 'No entity type has this name.'),
        params.name,
      );
    }
    if (notModified(req, reply, type.version)) return reply;
    return succeed(reply, 200, { entity_type: toEntityTypeRow(type) });
  });

  route(app, ROUTES.renameEntityType, async (req, reply, { params, body }) => {
    const ifVersion = ifMatchOf(req);
    const describing = saysTexts(body);
    const type = await conditionalWrite(reply, async () => {
      // (without texts, a missing name is refused as a rename's: empty_value)
      const renamed =
        body.name !== undefined || !describing
          ? await renameEntityType(req.ctx, params.guid, body.name ?? '', { ifVersion })
          : null;
      return describing
        ? describeEntityType(req.ctx, params.guid, body, renamed ? {} : { ifVersion })
        : (renamed as NonNullable<typeof renamed>);
    });
    sendVersion(reply, type.version);
    return succeed(reply, 200, { entity_type: toEntityTypeRow(type) });
  });

  route(app, ROUTES.releaseFormerName, async (req, reply, { params, body }) => {
    const ifVersion = ifMatchOf(req);
    const result = await conditionalWrite(reply, () =>
      releaseFormerName(req.ctx, params.guid, body.name, { ifVersion }),
    );
    sendVersion(reply, result.type.version);
    return succeed(reply, 200, { entity_type: toEntityTypeRow(result.type), released: result.released });
  });

  route(app, ROUTES.deleteEntityType, async (req, reply, { params }) => {
    const ifVersion = ifMatchOf(req);
    const result = await conditionalWrite(reply, () => deleteEntityType(req.ctx, params.guid, { ifVersion }));
    return succeed(reply, 200, result);
  });
}
