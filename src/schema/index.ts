// Assembles the GraphQL schema: imports each object family, then builds it once.
import { builder } from './builder.js';
import './entity-type.js';
import './attribute.js';
import './history.js';
import './model.js';
import './entities.js';

export const schema = builder.toSchema({ sortSchema: true });
