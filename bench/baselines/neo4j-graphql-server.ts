// Baseline (c): the catalog query served by @neo4j/graphql (the library a user would otherwise pick) on the same
// Neo4j data, in its own process like the service, through the same HTTP stack (Fastify + graphql-yoga), with no
// authentication. Env: NEO4J_URI (required), NEO4J_USER/NEO4J_PASSWORD/NEO4J_DATABASE (optional), PORT (0: any
// free port). Prints `LISTENING <port>` once it listens.
import { Neo4jGraphQL } from '@neo4j/graphql';
import Fastify from 'fastify';
import { createYoga } from 'graphql-yoga';
import { createDriver } from '../../src/db/driver.js';
import { NEO4J_GRAPHQL_TYPEDEFS } from '../queries.js';
import { listenUntilStopped } from './listen.js';

const uri = process.env.NEO4J_URI;
if (!uri) {
  console.error('NEO4J_URI is required');
  process.exit(2);
}
// The service's driver settings (pool size, timeouts), so both sides talk to Neo4j the same way.
const driver = createDriver({ uri, user: process.env.NEO4J_USER, password: process.env.NEO4J_PASSWORD });
const database = process.env.NEO4J_DATABASE || undefined;
const neoSchema = new Neo4jGraphQL({ typeDefs: NEO4J_GRAPHQL_TYPEDEFS, driver });
const schema = await neoSchema.getSchema();

const yoga = createYoga({
  schema,
  graphqlEndpoint: '/graphql',
  logging: false,
  landingPage: false,
  context: () => (database ? { sessionConfig: { database } } : {}),
});
const app = Fastify({ logger: false });
app.route({
  url: '/graphql',
  method: ['GET', 'POST'],
  handler: async (req, reply) => {
    const response = await yoga.handleNodeRequestAndResponse(req, reply, {});
    response.headers.forEach((value, key) => {
      reply.header(key, value);
    });
    reply.status(response.status);
    return reply.send(response.body);
  },
});

await listenUntilStopped(app, () => driver.close());
