// Requests with one Idempotency-Key taking turns (src/services/keyed-requests.ts), on a database whose reads the
// test releases: which request is answered what, whatever order they arrive in.
import { describe, expect, it } from 'vitest';
import type { Executor } from '../../src/db/executor.js';
import type { IdempotencyRecord } from '../../src/db/idempotency-records.js';
import { KeyedRequests } from '../../src/services/keyed-requests.js';

const owner = { tenant: 't', subject: 's', key: 'k' };

/** A database holding `record` under the key; each read waits until `open()`. */
function heldDatabase(record: IdempotencyRecord | null) {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  let reads = 0;
  const db = {
    readOne: async () => {
      reads += 1;
      await gate;
      return { record, usage: { keys: 1, bytes: 2 } };
    },
  } as unknown as Executor;
  return { db, open, reads: () => reads };
}

describe('requests with one Idempotency-Key', () => {
  const stored: IdempotencyRecord = {
    fingerprint: 'A',
    status: 201,
    contentType: 'application/json',
    body: '{"x":1}',
  };

  it('an exact resend arriving while another request with the key is looked up gets the stored answer', async () => {
    const { db, open } = heldDatabase(stored);
    const keyed = new KeyedRequests();
    const other = keyed.start(db, owner, 'B', { name: 'other' });
    const resend = keyed.start(db, owner, 'A', { name: 'first' });
    open();
    await expect(other).rejects.toMatchObject({ reason: 'idempotency_key_reused' });
    expect(await resend).toEqual({
      replay: { status: 201, contentType: 'application/json', body: '{"x":1}' },
    });
  });

  it('another request arriving while the key is being run for its first request is refused', async () => {
    const { db, open, reads } = heldDatabase(null);
    const keyed = new KeyedRequests();
    const first = keyed.start(db, owner, 'A', { name: 'first' });
    const other = keyed.start(db, owner, 'B', { name: 'other' });
    open();
    await expect(other).rejects.toMatchObject({ reason: 'idempotency_key_reused' });
    const started = await first;
    expect(started.replay).toBeUndefined();
    expect(reads()).toBe(2); // the first's look-up, and the other's read of the stored answer (none)
  });
});
