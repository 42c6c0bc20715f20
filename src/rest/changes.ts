// REST routes for the metamodel's history: a type's history and the tenant's change feed, their records written
// out with their stored before/after texts spliced in (resolvers/changes.ts, changeRowJson).
import type { FastifyInstance } from 'fastify';
import { rowPieces } from '../json/slices.js';
import { changeRowJson, readFeed, typeHistory } from '../resolvers/changes.js';
import { succeedSerialised } from './envelope.js';
import { route } from './route.js';
import { ROUTES } from './schemas.js';

const pageSize = (text: string | undefined) => (text === undefined ? undefined : Number(text));

export function changeRoutes(app: FastifyInstance) {
  route(app, ROUTES.typeHistory, async (req, reply, { params, query }) => {
    const page = await typeHistory(req.ctx, params.guid, {
      cursor: query.cursor,
      pageSize: pageSize(query.page_size),
    });
    return succeedSerialised(
      reply,
      200,
      rowPieces('changes', page.changes, changeRowJson, { next_cursor: page.nextCursor }),
    );
  });

  route(app, ROUTES.listChanges, async (req, reply, { query }) => {
    const page = await readFeed(req.ctx, {
      after: query.after,
      pageSize: pageSize(query.page_size),
      filter: {
        typeGuid: query.type_guid,
        attribute: query.attribute,
        kinds: query.kind === undefined ? undefined : query.kind.split(',').map((k) => k.trim()),
      },
    });
    return succeedSerialised(
      reply,
      200,
      rowPieces('changes', page.changes, changeRowJson, {
        next_cursor: page.nextCursor,
        has_more: page.more,
      }),
    );
  });
}
