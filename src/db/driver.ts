// Creates the Neo4j driver from configuration.
import neo4j, { type Driver } from 'neo4j-driver';

export interface DriverOptions {
  uri: string;
  user?: string | undefined;
  password?: string | undefined;
  /** How long a new connection may take to open (an unreachable host); the bound on a request's wait for one. */
  connectTimeoutMs?: number;
}

export function createDriver(options: DriverOptions): Driver {
  // The local embedded database runs with authentication off; any credentials are accepted there.
  const auth = neo4j.auth.basic(options.user ?? 'neo4j', options.password ?? 'neo4j');
  return neo4j.driver(options.uri, auth, {
    disableLosslessIntegers: true,
    maxConnectionPoolSize: 100,
    // Requests queue for a connection while others hold theirs (a type's declarations take turns): be patient.
    connectionAcquisitionTimeout: 30_000,
    connectionTimeout: options.connectTimeoutMs ?? 2_000,
    // The driver's retrying transaction functions are not used: the service's policy (storage-policy.ts) retries,
    // and does not wait on an unreachable database.
    logging: { level: 'error', logger: () => {} },
  });
}
