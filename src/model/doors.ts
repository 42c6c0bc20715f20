// What one request through a door of the service (a REST route, a page, GraphQL) may cost at most. Every door
// states its budget where it is declared (rest/route-table/budgets.ts, http/pages.ts; GraphQL fields in
// schema/limits.ts); the bounds that hold it are checked before the work is spent; a test enumerates the doors the
// router serves and the fields the schema has and fails on one without a budget or without a shape in the hostile
// storm (bench/storm-shapes.ts).

/** The largest request body (the specification's 8 MB, as 8 MiB): read as it arrives, refused past it (body/read.ts). */
export const BODY_LIMIT_BYTES = 8 * 1024 * 1024;

/** The blocks a large body is copied into as it arrives (body/bytes.ts), each drawn from the request memory first. */
export const BODY_BLOCK_BYTES = 256 * 1024;

export const KB = 1024;
export const MB = 1024 * 1024;

export interface DoorBudget {
  /**
   * Database statements one request sends at most (the x-db-queries answer header counts them); a transaction the
   * storage policy runs again after a transient error (a deadlock, a leader switch) sends its statements again.
   */
  statements: number;
  /** What those statements read at most, in words: rows, bytes, and the bounds that hold them. */
  reads: string;
  /**
   * The largest body the door reads, when its bounds make every valid body far smaller than the 8 MB every other
   * door takes: a body past it is refused 413 request_too_large from its declared length before a byte is read, or
   * the moment a streamed one passes it, instead of being read and parsed to be refused for its content.
   */
  bodyBytes?: number;
  /** Bytes of the largest answer body. */
  answerBytes: number;
  /**
   * Memory one request holds at most while it runs, beyond its body: what it reads and its answer. A heavy door
   * reserves it from the process's request memory (REQUEST_MEMORY_MB) before its body is read; a large body reserves
   * its own share at any door (app/admission.ts).
   */
  memoryBytes: number;
  /**
   * A door whose memory grows with what it is sent (a model document planned: its steps repeat each type's name, so
   * its answer and what it holds are many times the document): a request reserves this many bytes per byte of its
   * body (its declared length, or its limit's when it declares none), at most memoryBytes, instead of memoryBytes
   * whatever its size. What it reserves past a tenant's share it still takes from the process's room
   * (fairness/admission.ts).
   */
  memoryPerBodyByte?: number;
  /**
   * `heavy`: takes an admission turn first, shared fairly between tenants (a tenant holds at most half the request
   * memory; its further requests wait, then are refused 429 tenant_busy or 503 server_busy); `light`: served at once,
   * its cost small and fixed.
   */
  admission: 'heavy' | 'light';
  /**
   * A heavy door whose answer the model cache keeps (its kind, and the path parameter naming the entry): a request
   * whose entry is held, counted at most LIGHT_FROM_MEMORY_BYTES, is admitted as a light one (app/admission.ts).
   */
  fromMemory?: { kind: 'attributes'; param: string };
}

/**
 * A heavy door's request is admitted as light when the model cache holds its answer's entry and counts it at most
 * this: served from memory, it costs what a light door's does. The entry's size is a guess when the model changed
 * since it was loaded: after a write that made the listing large, the tenant's requests admitted before the first
 * of them reloads it (at most TENANT_CONCURRENCY at once) are light while they load it; the next ones see its size.
 */
export const LIGHT_FROM_MEMORY_BYTES = 256 * KB;

/** Budget of a door that sends no statement and answers a small fixed document (health, readiness...). */
export const FIXED_DOOR: DoorBudget = {
  statements: 0,
  reads: 'nothing',
  answerBytes: 4 * KB,
  memoryBytes: 64 * KB,
  admission: 'light',
};
