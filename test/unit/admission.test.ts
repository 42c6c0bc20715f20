// The admission of expensive requests (src/fairness/admission.ts): memory reserved before a request runs, a tenant at most
// its share, freed memory handed to the tenants in turn, bounded queues and waits.
import { describe, expect, it } from 'vitest';
import { Admission, AdmissionAbandoned } from '../../src/fairness/admission.js';

const reasonOf = async (p: Promise<unknown>) => {
  try {
    await p;
    return undefined;
  } catch (e) {
    return (e as { reason?: string }).reason;
  }
};

describe('Admission', () => {
  it('a waiter whose request goes away (its signal aborts) leaves the queue at once and takes no turn', async () => {
    const admission = new Admission({ capacity: 100, maxRunning: 1, queueTimeoutMs: 10_000 });
    const running = await admission.acquire('a', 0);
    const away = new AbortController();
    const abandoned = admission.acquire('a', 0, away.signal);
    const next = admission.acquire('a', 0);
    expect(admission.queued).toBe(2);
    away.abort();
    await expect(abandoned).rejects.toBeInstanceOf(AdmissionAbandoned);
    expect(admission.queued).toBe(1);
    // the turn freed goes to the request still waiting, not to the one that left
    running();
    const release = await next;
    expect(admission.runningBy('a')).toBe(1);
    release();
    expect([admission.runningBy('a'), admission.queued]).toEqual([0, 0]);
    // a signal already aborted: refused before it queues
    const gone = new AbortController();
    gone.abort();
    const busy = await admission.acquire('a', 0);
    await expect(admission.acquire('a', 0, gone.signal)).rejects.toBeInstanceOf(AdmissionAbandoned);
    busy();
    expect(admission.queued).toBe(0);
  });

  it('runs requests while their memory fits; a tenant holds at most its share, another tenant still runs', async () => {
    const admission = new Admission({ capacity: 100, queueTimeoutMs: 10_000 });
    expect(admission.maxPerTenant).toBe(50);
    const a1 = await admission.acquire('a', 30);
    let a2Granted = false;
    const a2 = admission.acquire('a', 30).then((release) => {
      a2Granted = true;
      return release;
    });
    // b is served at once although a waits: a is at its share, not the process at its capacity
    const b1 = await admission.acquire('b', 40);
    expect([admission.inUse, admission.queued, a2Granted]).toEqual([70, 1, false]);
    a1();
    const release = await a2;
    expect([a2Granted, admission.heldBy('a'), admission.heldBy('b')]).toEqual([true, 30, 40]);
    release();
    b1();
    release(); // idempotent
    expect(admission.inUse).toBe(0);
  });

  it('hands freed memory to the waiting tenants in turn, not to the one with the longest queue', async () => {
    const admission = new Admission({ capacity: 20, maxPerTenant: 20, queueTimeoutMs: 10_000 });
    const first = await admission.acquire('busy', 20);
    const order: string[] = [];
    const waits = [
      ...Array.from({ length: 5 }, (_, i) =>
        admission.acquire('busy', 20).then((r) => {
          order.push(`busy${i}`);
          r();
        }),
      ),
      admission.acquire('quiet', 20).then((r) => {
        order.push('quiet');
        r();
      }),
    ];
    first();
    await Promise.all(waits);
    expect(order.indexOf('quiet')).toBeLessThanOrEqual(1);
  });

  it("a request stating more than a tenant's share counts the share against its tenant and takes the room less a heavy request's: no two such run at once, another tenant's heavy request still does", async () => {
    const admission = new Admission({ capacity: 100, queueTimeoutMs: 10_000 });
    expect(admission.maxRoom).toBe(75);
    const big = await admission.acquire('a', 1_000);
    expect([admission.heldBy('a'), admission.inUse]).toEqual([50, 75]);
    // another tenant's large request waits for it (counted as its share only, two tenants' 60 MB plans ran at once on
    // 32 MiB each)
    let other = false;
    const waiting = admission.acquire('b', 1_000).then((release) => {
      other = true;
      return release;
    });
    await new Promise((r) => setImmediate(r));
    expect(other).toBe(false);
    big();
    (await waiting)();
    expect(other).toBe(true);
    // while one runs, another tenant's heavy request (a quarter of the room) runs beside it: a large request whose
    // client is slow never holds every other tenant's heavy requests
    const slow = await admission.acquire('a', 1_000);
    const heavy = await admission.acquire('c', 25);
    expect(admission.inUse).toBe(100);
    // a large one waiting for room keeps its place: a smaller one arriving later waits behind it, but a request that
    // reserves no room takes none from it and runs at once
    let bigRan = false;
    const second = admission.acquire('b', 1_000).then((release) => {
      bigRan = true;
      return release;
    });
    let laterRan = false;
    const later = admission.acquire('d', 10).then((release) => {
      laterRan = true;
      return release;
    });
    const light = await admission.acquire('e', 0);
    const lightToo = await admission.acquire('e', 0);
    light();
    lightToo();
    await new Promise((r) => setImmediate(r));
    expect([bigRan, laterRan]).toEqual([false, false]);
    slow();
    await new Promise((r) => setImmediate(r));
    expect([bigRan, laterRan]).toEqual([true, false]);
    heavy();
    (await later)();
    (await second)();
    expect(admission.inUse).toBe(0);
  });

  it('a large request is not starved by smaller ones that keep arriving', async () => {
    const admission = new Admission({ capacity: 100, maxPerTenant: 100, queueTimeoutMs: 10_000 });
    const small = await admission.acquire('s', 60);
    let bigGranted = false;
    const big = admission.acquire('b', 80).then((r) => {
      bigGranted = true;
      return r;
    });
    // a small request arriving after the large one waits behind it, though it would fit now
    let lateGranted = false;
    const late = admission.acquire('t', 30).then((r) => {
      lateGranted = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 20));
    expect([bigGranted, lateGranted]).toEqual([false, false]);
    small();
    (await big)();
    (await late)();
    expect([bigGranted, lateGranted]).toEqual([true, true]);
  });

  it("past a tenant's queue: tenant_busy at once; past the wait: tenant_busy when its own requests held its turns, server_busy when others' did; others are not affected", async () => {
    const admission = new Admission({ capacity: 10, queueTimeoutMs: 50, maxQueuedPerTenant: 2 });
    const held = await admission.acquire('a', 5);
    const queued = [admission.acquire('a', 5), admission.acquire('a', 5)];
    expect(await reasonOf(admission.acquire('a', 5))).toBe('tenant_busy');
    // a's own request holds its share: its waiters are refused as a tenant over its bound (429), not a busy server
    expect(await Promise.all(queued.map(reasonOf))).toEqual(['tenant_busy', 'tenant_busy']);
    expect(admission.refused).toBe(3);
    (await admission.acquire('b', 5))();
    held();
    expect([admission.inUse, admission.queued]).toEqual([0, 0]);
    // the process's memory held by others (b and c at their shares): a newcomer's wait ends in server_busy (503)
    const wide = new Admission({ capacity: 10, maxPerTenant: 5, queueTimeoutMs: 50 });
    const b = await wide.acquire('b', 5);
    const c = await wide.acquire('c', 5);
    expect(await reasonOf(wide.acquire('d', 5))).toBe('server_busy');
    // a tenant at its running limit waits as its own: tenant_busy
    const running = new Admission({
      capacity: 100,
      maxRunningPerTenant: 1,
      maxRunning: 1,
      queueTimeoutMs: 50,
    });
    const one = await running.acquire('e', 0);
    expect(await reasonOf(running.acquire('e', 0))).toBe('tenant_busy');
    one();
    b();
    c();
  });
});

describe('leases (memory that grows with its request)', () => {
  it('count as one request against the tenant: a lease past the share counts the share, and never waits on itself', async () => {
    const admission = new Admission({ capacity: 100, queueTimeoutMs: 10_000 });
    const lease = admission.lease('a');
    for (let i = 0; i < 8; i += 1) await lease.grow(10);
    expect(lease.bytes).toBe(80);
    // (a tenant's share is 50: the lease counts 50 against its tenant, takes 75 of the room at most)
    expect(admission.heldBy('a')).toBe(50);
    expect(admission.inUse).toBe(75);
    expect(admission.holdersOf('a')).toBe(1);
    lease.release();
    expect([admission.inUse, admission.heldBy('a'), admission.holdersOf('a')]).toEqual([0, 0, 0]);
  });

  it('two leases of one tenant each holding part and waiting for the rest: the younger is refused at once, the older goes on', async () => {
    const admission = new Admission({ capacity: 100, queueTimeoutMs: 60_000 });
    const older = admission.lease('a');
    const younger = admission.lease('a');
    await older.grow(25);
    await younger.grow(25);
    const begun = performance.now();
    const olderMore = older.grow(20);
    const youngerMore = younger.grow(20);
    expect(await reasonOf(youngerMore)).toBe('tenant_busy');
    // Refused at once, not at the queue's timeout; its memory comes back when its request lets it go.
    expect(performance.now() - begun).toBeLessThan(1_000);
    younger.release();
    await olderMore;
    expect(older.bytes).toBe(45);
    older.release();
    expect(admission.inUse).toBe(0);
  });

  it('leases of several tenants waiting on the room each other holds: the youngest is refused (server_busy)', async () => {
    const admission = new Admission({ capacity: 100, queueTimeoutMs: 60_000 });
    const leases = ['a', 'b', 'c'].map((tenant) => admission.lease(tenant));
    for (const lease of leases) await lease.grow(30);
    const more = leases.map((lease) => lease.grow(40));
    expect(await reasonOf(more[2] as Promise<void>)).toBe('server_busy');
    (leases[2] as (typeof leases)[number]).release();
    await more[0];
    // The middle one is still waiting for the oldest to end: running, not stuck, so nobody else is refused.
    let second = false;
    void (more[1] as Promise<void>).then(() => {
      second = true;
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(second).toBe(false);
    (leases[0] as (typeof leases)[number]).release();
    await more[1];
    expect(second).toBe(true);
  });

  it('a lease waiting for memory that running requests hold waits: nobody is refused', async () => {
    const admission = new Admission({ capacity: 100, queueTimeoutMs: 60_000 });
    const running = await admission.acquire('b', 60);
    const lease = admission.lease('a');
    await lease.grow(10);
    const other = admission.lease('c');
    await other.grow(10);
    const waits = [lease.grow(30), other.grow(30)];
    await new Promise((r) => setTimeout(r, 20));
    expect(admission.refused).toBe(0);
    running();
    await Promise.all(waits);
    expect(admission.refused).toBe(0);
  });
});

describe('turns, work-conserving', () => {
  it('a tenant alone runs past its limit (up to every turn there is); once another runs or waits, the turns go in turn', async () => {
    const admission = new Admission({
      capacity: 100,
      maxRunningPerTenant: 2,
      maxRunning: 6,
      queueTimeoutMs: 10_000,
    });
    const alone = await Promise.all(Array.from({ length: 6 }, () => admission.acquire('a', 0)));
    expect(admission.runningBy('a')).toBe(6);
    // Every turn taken: the next of either tenant waits.
    const order: string[] = [];
    const more = admission.acquire('a', 0).then((r) => {
      order.push('a');
      return r;
    });
    const other = admission.acquire('b', 0).then((r) => {
      order.push('b');
      return r;
    });
    expect(admission.queued).toBe(2);
    // A turn comes free: "b" waits, so "a" (past its limit of 2) is held; "b" gets it although "a" asked first.
    (alone[0] as () => void)();
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual(['b']);
    // The next turn: "b" runs, so "a" (at 5, past its limit of 2) is still held.
    (alone[1] as () => void)();
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual(['b']);
    expect(admission.othersActive('a')).toBe(true);
    // "b" done, nobody else runs or waits: "a" may go past its limit again.
    (await other)();
    await more;
    expect(order).toEqual(['b', 'a']);
    for (const release of [...alone.slice(2), await more]) release();
    expect(admission.runningBy('a') + admission.runningBy('b')).toBe(0);
  });

  it('with no limit on all, a tenant alone is never held by its own limit', async () => {
    const admission = new Admission({ capacity: 100, maxRunningPerTenant: 2, queueTimeoutMs: 10_000 });
    const many = await Promise.all(Array.from({ length: 20 }, () => admission.acquire('a', 0)));
    expect(admission.runningBy('a')).toBe(20);
    expect(admission.othersActive('a')).toBe(false);
    for (const release of many) release();
  });
});

describe('turns of writes', () => {
  it('are held to the tenant limit even when no other tenant waits; its reads are not (they queue behind a waiting write, as every request of a tenant keeps its order)', async () => {
    const admission = new Admission({ capacity: 100, maxRunningPerTenant: 2, queueTimeoutMs: 10_000 });
    const writes = [
      await admission.acquire('a', 0, undefined, true),
      await admission.acquire('a', 0, undefined, true),
    ];
    // Reads past the limit of 2: no other tenant waits.
    const reads = await Promise.all(Array.from({ length: 5 }, () => admission.acquire('a', 0)));
    let third = false;
    const more = admission.acquire('a', 0, undefined, true).then((r) => {
      third = true;
      return r;
    });
    await new Promise((r) => setImmediate(r));
    expect(third).toBe(false);
    expect(admission.runningBy('a')).toBe(7);
    (writes[0] as () => void)();
    (await more)();
    expect(third).toBe(true);
    for (const release of [...reads, writes[1] as () => void]) release();
  });
});
