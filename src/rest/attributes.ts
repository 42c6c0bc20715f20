// REST routes for attribute definitions: declare, evolve in place, list, withdraw (the curation API's DELETE).

import type { FastifyInstance } from 'fastify';
import { rowPieces } from '../json/slices.js';
import { MAX_ATTRIBUTE_DEFS } from '../model/limits.js';
import {
  attributeRowJson,
  declareAttribute,
  listAttributes,
  toAttributeRow,
  withdrawAttribute,
} from '../resolvers/attributes.js';
import { evolveAttribute } from '../resolvers/evolution.js';
import { conditionalWrite, ifMatchOf, notModified, sendVersion } from './conditions.js';
import { succeed, succeedCached } from './envelope.js';
import { route } from './route.js';
import { ROUTES } from './schemas.js';

export function attributeRoutes(app: FastifyInstance) {
  route(app, ROUTES.declareAttribute, async (req, reply, { params, query, body }) => {
    const dryRun = query.dry_run;
    const ifVersion = ifMatchOf(req);
    const result = await conditionalWrite(reply, () =>
      declareAttribute(req.ctx, params.guid, body, { dryRun, ifVersion }),
    );
    sendVersion(reply, result.typeVersion);
    const data = {
      attribute: toAttributeRow(result.attribute),
      usage: { declared: result.declared, limit: MAX_ATTRIBUTE_DEFS },
    };
    return dryRun ? succeed(reply, 200, { dry_run: true, ...data }) : succeed(reply, 201, data);
  });

  route(app, ROUTES.evolveAttribute, async (req, reply, { params, query, body }) => {
    const dryRun = query.dry_run;
    const ifVersion = ifMatchOf(req);
    const result = await conditionalWrite(reply, () =>
      evolveAttribute(req.ctx, params.guid, params.name, body, { dryRun, ifVersion }),
    );
    sendVersion(reply, result.typeVersion);
    const data = {
      attribute: toAttributeRow(result.attribute),
      changed: result.changed,
      changes: result.changes,
    };
    return succeed(reply, 200, dryRun ? { dry_run: true, ...data } : data);
  });

  route(app, ROUTES.listAttributes, async (req, reply, { params }) => {
    const result = await listAttributes(req.ctx, params.guid);
    if (notModified(req, reply, result.typeVersion)) return reply;
    // Serialised once per type and model version, the stored JSON texts spliced in as they are, and kept as bytes.
    return succeedCached(
      reply,
      result.restBody,
      () => rowPieces('attributes', result.attributes, attributeRowJson),
      (body) => {
        result.restBody = body;
      },
    );
  });

  route(app, ROUTES.withdrawAttribute, async (req, reply, { params, query }) => {
    const dryRun = query.dry_run;
    const ifVersion = ifMatchOf(req);
    const result = await conditionalWrite(reply, () =>
      withdrawAttribute(req.ctx, params.typeGuid, params.name, { dryRun, ifVersion }),
    );
    sendVersion(reply, result.typeVersion);
    const attribute = { ...toAttributeRow(result.attribute), state: result.attribute.state };
    return dryRun
      ? succeed(reply, 200, { dry_run: true, attribute, impact: result.impact })
      : succeed(reply, 200, { attribute, withdrawn: true });
  });
}
