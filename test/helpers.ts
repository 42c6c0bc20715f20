// Test world: an app on the run's Neo4j, a fresh tenant per test, tokens, and REST/GraphQL callers.
import { randomUUID } from 'node:crypto';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { FastifyInstance } from 'fastify';
import { print } from 'graphql';
import type { Driver } from 'neo4j-driver';
import pino from 'pino';
import { inject } from 'vitest';
import { buildApp } from '../src/app.js';
import { mintToken } from '../src/auth/tokens.js';
import { parseConfig } from '../src/config.js';
import { createDriver } from '../src/db/driver.js';

export const TEST_SECRET = 'test-secret-that-is-long-enough-0123456789';

export interface TestWorld {
  app: FastifyInstance;
  driver: Driver;
  close(): Promise<void>;
}

/** An app on the run's Neo4j. Purges run without a grace period unless `env` says otherwise. */
export async function createWorld(env: Record<string, string> = {}): Promise<TestWorld> {
  const uri = inject('neo4jUri');
  const config = parseConfig({
    NODE_ENV: 'test',
    AUTH_JWT_SECRET: TEST_SECRET,
    NEO4J_URI: uri,
    LOG_LEVEL: 'silent',
    PURGE_GRACE_SECONDS: '0',
    ...env,
  });
  const driver = createDriver({ uri });
  const app = await buildApp({ config, driver, logger: pino({ level: 'silent' }) });
  await app.ready();
  return {
    app,
    driver,
    async close() {
      await app.close();
      await driver.close();
    },
  };
}

export const newTenant = (label = 't') => `${label}-${randomUUID()}`;

export function tokenFor(
  tenant: string,
  opts: { roles?: string[]; crossTenant?: boolean; sub?: string } = {},
) {
  return mintToken(TEST_SECRET, { tenant, ...opts });
}

export interface Envelope<D = Record<string, unknown>> {
  STATUS: 'SUCCESS' | 'FAIL';
  MESSAGE: string;
  DATA: D;
}

export interface Reply<D = Record<string, any>> {
  status: number;
  body: Envelope<D>;
  headers: Record<string, unknown>;
}

/** A REST caller bound to one token. */
export function restClient(app: FastifyInstance, token: string | undefined) {
  const call = async <D = Record<string, any>>(
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    url: string,
    payload?: unknown,
  ): Promise<Reply<D>> => {
    const res = await app.inject({
      method,
      url,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(payload !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(payload !== undefined
        ? { payload: typeof payload === 'string' ? payload : JSON.stringify(payload) }
        : {}),
    });
    return { status: res.statusCode, body: res.json() as Envelope<D>, headers: res.headers };
  };
  return {
    get: <D = Record<string, any>>(url: string) => call<D>('GET', url),
    post: <D = Record<string, any>>(url: string, body?: unknown) => call<D>('POST', url, body ?? {}),
    patch: <D = Record<string, any>>(url: string, body?: unknown) => call<D>('PATCH', url, body ?? {}),
    delete: <D = Record<string, any>>(url: string) => call<D>('DELETE', url),
  };
}

export interface GraphQLReply<T> {
  /** Database queries the request sent (x-db-queries). */
  queries: number;
  data?: T | null;
  errors?: { message: string; path?: string[]; extensions?: { reason?: string; code?: string } }[];
}

/** Runs a typed operation (generated from test/operations/*.graphql) against /graphql. */
export async function gql<T, V>(
  app: FastifyInstance,
  token: string,
  document: TypedDocumentNode<T, V>,
  variables?: V,
): Promise<GraphQLReply<T>> {
  const res = await app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    payload: JSON.stringify({ query: print(document), variables }),
  });
  return {
    ...(res.json() as Omit<GraphQLReply<T>, 'queries'>),
    queries: Number(res.headers['x-db-queries']),
  };
}

/** Token of an operator: an administrator of the default tenant. */
export const operatorToken = () => tokenFor('default', { roles: ['admin'] });

/** Creates a user-defined type in the tenant of `api` and returns its guid. */
export async function createType(api: ReturnType<typeof restClient>, name: string): Promise<string> {
  const res = await api.post('/entities/types', { name });
  if (res.status !== 201 && res.status !== 200) throw new Error(`type ${name}: ${JSON.stringify(res.body)}`);
  return res.body.DATA.entity_type.guid;
}

export async function typeGuidByName(api: ReturnType<typeof restClient>, name: string): Promise<string> {
  const res = await api.post('/entities/types', { name });
  return res.body.DATA.entity_type.guid;
}
