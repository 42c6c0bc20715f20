// The door storm's traffic (bench/door-traffic.ts): a shape sends its requests, for at least its minimum time, and no
// more past its time cap once each connection has sent one, unless it must send them all (`whole`).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DoorSetup, DoorShape } from '../../bench/door-shapes.js';
import { runDoorShape } from '../../bench/door-traffic.js';

let server: http.Server;
let port = 0;
/** Every answer takes this long. */
const ANSWER_MS = 20;

beforeAll(async () => {
  server = http.createServer((_req, res) => {
    setTimeout(() => res.end('{}'), ANSWER_MS);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const setup = { auth: { attacker: 'Bearer x' } } as unknown as DoorSetup;
const shape = (requests: number, whole?: boolean): DoorShape => ({
  name: 'test',
  label: 'test',
  doors: [],
  expected: ['200'],
  through: 1,
  requests,
  concurrency: 4,
  ...(whole ? { whole } : {}),
  request: () => ({ method: 'GET', path: '/', auth: 'none' }),
});

describe('a door shape', () => {
  it('sends every request when they take less than its cap', async () => {
    const result = await runDoorShape(port, setup, shape(12), 0, 60_000);
    expect(result.requests).toBe(12);
    expect(result.answers).toEqual({ '200': 12 });
  });

  it('keeps sending for its minimum time', async () => {
    const result = await runDoorShape(port, setup, shape(4), 300, 60_000);
    expect(result.ms).toBeGreaterThanOrEqual(300);
    expect(result.requests).toBeGreaterThan(4 * 2);
  });

  it('sends no more past its cap, once each connection has sent one', async () => {
    // 4,000 requests of 20 ms on 4 connections would take 20 s
    const result = await runDoorShape(port, setup, shape(4_000), 0, 200);
    expect(result.requests).toBeGreaterThanOrEqual(4);
    expect(result.requests).toBeLessThan(4_000 / 4);
    expect(result.ms).toBeLessThan(2_000);
    // a cap shorter than a round: one round still
    const one = await runDoorShape(port, setup, shape(4_000), 0, 1);
    expect(one.requests).toBe(4);
  });

  it('a whole shape sends every request past its cap', async () => {
    const result = await runDoorShape(port, setup, shape(40, true), 0, 1);
    expect(result.requests).toBe(40);
  });
});
