// Creates the Neo4j driver from configuration.
import neo4j, { type Driver } from 'neo4j-driver';

export interface DriverOptions {
  uri: string;
  user?: string | undefined;
  password?: string | undefined;
}

export function createDriver(options: DriverOptions): Driver {
  // The local embedded database runs with authentication off; any credentials are accepted there.
  const auth = neo4j.auth.basic(options.user ?? 'neo4j', options.password ?? 'neo4j');
  return neo4j.driver(options.uri, auth, {
    disableLosslessIntegers: true,
    maxConnectionPoolSize: 100,
    // Requests queue for a connection while others hold theirs (a type's declarations take turns): be patient.
    connectionAcquisitionTimeout: 30_000,
    connectionTimeout: 5_000,
    maxTransactionRetryTime: 5_000,
    logging: { level: 'error', logger: () => {} },
  });
}
