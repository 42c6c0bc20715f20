// What a unit of work's statements run through: one parameterised Cypher statement in, plain rows out.

export type Row = Record<string, unknown>;

/** Runs one parameterised Cypher statement inside the current transaction and returns plain rows. */
export type Run = (cypher: string, params?: Record<string, unknown>) => Promise<Row[]>;

/**
 * A record returned as a list (cheaper for Neo4j to build and the driver to decode than a map: no key string per
 * field) turned back into an object, the list's values in `fields` order; missing values are null.
 */
export function objectFromList<T>(fields: readonly string[], values: unknown): T {
  const list = values as unknown[];
  const out: Record<string, unknown> = {};
  for (let i = 0; i < fields.length; i += 1) out[fields[i] as string] = list[i] ?? null;
  return out as T;
}
