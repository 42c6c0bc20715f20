// REST routes for the metamodel's history: a type's history and the tenant's change feed.
import type { FastifyInstance } from 'fastify';
import { readFeed, toChangeRow, typeHistory } from '../resolvers/changes.js';
import { succeed } from './envelope.js';
import { route } from './route.js';
import { ROUTES } from './schemas.js';

const pageSize = (text: string | undefined) => (text === undefined ? undefined : Number(text));

export function changeRoutes(app: FastifyInstance) {
  route(app, ROUTES.typeHistory, async (req, reply, { params, query }) => {
    const page = await typeHistory(req.ctx, params.guid, {
      cursor: query.cursor,
      pageSize: pageSize(query.page_size),
    });
    return succeed(reply, 200, { changes: page.changes.map(toChangeRow), next_cursor: page.nextCursor });
  });

  route(app, ROUTES.listChanges, async (req, reply, { query }) => {
    const page = await readFeed(req.ctx, { after: query.after, pageSize: pageSize(query.page_size) });
    return succeed(reply, 200, {
      changes: page.changes.map(toChangeRow),
      next_cursor: page.nextCursor,
      has_more: page.more,
    });
  });
}
