// The Redis lease elector against a real Redis (PLUMB_TEST_REDIS_URL, default 127.0.0.1:6379):
// acquisition, renewal, fencing epochs, takeover, release, and stepping down on a late clock.
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import type { LeaderElector, LeadershipState } from '../../cluster/election/elector.ts';
import { createRedisElector, type RedisLeaderElector } from '../../cluster/election/redis.ts';
import { silentLog } from '../../lib/log.ts';
import { startFreezableProxy } from '../support/freezable-proxy.ts';
import { REDIS_URL } from '../support/services.ts';

const redisUrl = REDIS_URL;
const LEASE_MS = 1500;
const INTERVAL_MS = 500; // a third of the lease

let raw: Redis;
const keys: string[] = [];
const electors: LeaderElector[] = [];

beforeAll(async () => {
  raw = new Redis(redisUrl, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, connectTimeout: 2000, retryStrategy: () => null });
  raw.on('error', () => {});
  try {
    await raw.connect();
    await raw.ping();
  } catch (err) {
    throw new Error(`Redis is not reachable at ${redisUrl} (${(err as Error).message}). Start it (see .ci/run) or set PLUMB_TEST_REDIS_URL; these tests never skip.`);
  }
});

afterEach(async () => {
  await Promise.all(electors.splice(0).map((elector) => elector.stop()));
  for (const key of keys.splice(0)) await raw.del(key, `${key}:epoch`);
});

afterAll(async () => {
  if (raw.status === 'ready') await raw.quit();
  else raw.disconnect();
});

function newKey(): string {
  const key = `plumb:test:leader:${randomUUID()}`;
  keys.push(key);
  return key;
}

function elector(
  key: string,
  nodeId: string,
  extra: { leaseMs?: number; now?: () => number; redisUrl?: string; epochFloor?: () => Promise<number | null> } = {},
): RedisLeaderElector {
  const created = createRedisElector({ redisUrl: extra.redisUrl ?? redisUrl, nodeId, key, leaseMs: extra.leaseMs ?? LEASE_MS, log: silentLog, now: extra.now, epochFloor: extra.epochFloor });
  electors.push(created);
  return created;
}

function recordChanges(subject: LeaderElector): LeadershipState[] {
  const seen: LeadershipState[] = [];
  subject.onChange((state) => seen.push(state));
  return seen;
}

/** Polls until `check` holds; returns the ms it took, or fails naming what never happened. */
async function waitFor(check: () => boolean, timeoutMs: number, what: string): Promise<number> {
  const startedAt = performance.now();
  while (!check()) {
    if (performance.now() - startedAt > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return performance.now() - startedAt;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('createRedisElector', () => {
  it('acquires a free lease with epoch 1 and stores `<nodeId>|<epoch>` in the key', async () => {
    const key = newKey();
    const a = elector(key, 'node-a');
    const changes = recordChanges(a);
    await a.start();

    expect(a.kind).toBe('redis');
    expect(a.isLeader()).toBe(true);
    expect(a.state()).toMatchObject({ leader: true, epoch: 1, nodeId: 'node-a', leaderNodeId: 'node-a' });
    expect(a.state().leaseExpiresAt).toBeGreaterThan(Date.now());
    expect(changes).toHaveLength(1);
    expect(await raw.get(key)).toBe('node-a|1');
    expect(await raw.get(`${key}:epoch`)).toBe('1');
  });

  it('keeps leadership with the same epoch across several renewal intervals', async () => {
    const key = newKey();
    const a = elector(key, 'node-a');
    await a.start();
    const changes = recordChanges(a);

    await sleep(LEASE_MS * 2); // six renewal intervals: without renewals the key would be gone
    expect(a.isLeader()).toBe(true);
    expect(a.state().epoch).toBe(1);
    expect(changes).toEqual([]);
    expect(await raw.get(key)).toBe('node-a|1');
    const pttl = await raw.pttl(key);
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(LEASE_MS);
  });

  it('lets exactly one of two electors on one key lead, and both name the same leader', async () => {
    const key = newKey();
    const a = elector(key, 'node-a');
    const b = elector(key, 'node-b');
    await Promise.all([a.start(), b.start()]);

    expect([a.isLeader(), b.isLeader()].filter(Boolean)).toHaveLength(1);
    const leaderId = a.isLeader() ? 'node-a' : 'node-b';
    expect(a.state().leaderNodeId).toBe(leaderId);
    expect(b.state().leaderNodeId).toBe(leaderId);
    const follower = a.isLeader() ? b : a;
    expect(follower.state().epoch).toBeNull();
    expect(follower.state().leaseExpiresAt).toBeGreaterThan(Date.now());
  });

  it('steps down within one renewal interval when another client takes the key', async () => {
    const key = newKey();
    const a = elector(key, 'node-a');
    await a.start();
    const changes = recordChanges(a);

    await raw.set(key, 'intruder|999', 'PX', 10_000);
    const took = await waitFor(() => changes.length > 0, INTERVAL_MS + 300, 'node-a to step down');
    expect(took).toBeLessThan(INTERVAL_MS + 300);
    expect(changes).toEqual([{ leader: false, epoch: null, nodeId: 'node-a', leaderNodeId: null, leaseExpiresAt: null }]);
    // The next attempt finds the intruder holding the lease.
    await waitFor(() => a.state().leaderNodeId === 'intruder', INTERVAL_MS + 300, 'node-a to see the intruder');
    expect(a.isLeader()).toBe(false);
    expect(await raw.get(key)).toBe('intruder|999');
  });

  it('hands the lease to another node once a holder that stopped renewing lets its TTL lapse', async () => {
    const key = newKey();
    // node-a reaches Redis through a link the test can stall, as a frozen or partitioned node would.
    const link = await startFreezableProxy(redisUrl);
    try {
      const a = elector(key, 'node-a', { redisUrl: link.url });
      await a.start();
      const b = elector(key, 'node-b');
      await b.start();
      expect(a.state().epoch).toBe(1);
      expect(b.isLeader()).toBe(false);

      link.freeze(); // no renewals reach Redis, and no release
      const took = await waitFor(() => b.isLeader(), LEASE_MS + INTERVAL_MS + 500, 'node-b to take over');
      // It had to wait for the TTL: the key was never released.
      expect(took).toBeGreaterThan(LEASE_MS - INTERVAL_MS - 100);
      expect(b.state()).toMatchObject({ leader: true, epoch: 2, leaderNodeId: 'node-b' });
      // The stalled holder has stepped down by now, on its own.
      expect(a.isLeader()).toBe(false);

      // The link heals: what node-a sent meanwhile arrives late, and stopping it must not delete
      // the new holder's lease.
      link.thaw();
      await a.stop();
      expect(await raw.get(key)).toBe('node-b|2');
    } finally {
      await link.close();
    }
  });

  it('hands out strictly increasing epochs to successive holders', async () => {
    const key = newKey();
    const epochs: (number | null)[] = [];
    for (const nodeId of ['node-a', 'node-b', 'node-a']) {
      const holder = elector(key, nodeId);
      await holder.start();
      epochs.push(holder.state().epoch);
      await holder.stop();
    }
    expect(epochs).toEqual([1, 2, 3]);
  });

  it('releases the lease on stop, so another node takes over well before the TTL', async () => {
    const key = newKey();
    const leaseMs = 6000; // retries every 2 s: takeover must come from the release, not the TTL
    const a = elector(key, 'node-a', { leaseMs });
    await a.start();
    const b = elector(key, 'node-b', { leaseMs });
    await b.start();
    const changes = recordChanges(a);

    await a.stop();
    expect(changes).toEqual([{ leader: false, epoch: null, nodeId: 'node-a', leaderNodeId: null, leaseExpiresAt: null }]);
    expect([null, 'node-b|2']).toContain(await raw.get(key));
    const took = await waitFor(() => b.isLeader(), 2500, 'node-b to take over');
    expect(took).toBeLessThan(2500);
    expect(b.state().epoch).toBe(2);
    await a.stop(); // idempotent
    expect(changes).toHaveLength(1);
  });

  it('does not delete, on stop, a lease that another node has taken meanwhile', async () => {
    const key = newKey();
    const a = elector(key, 'node-a');
    await a.start();
    const changes = recordChanges(a);

    await raw.set(key, 'node-z|42', 'PX', 10_000);
    await a.stop(); // node-a has not noticed yet, so it tries its compare-and-delete
    expect(changes.map((state) => state.leader)).toEqual([false]);
    expect(await raw.get(key)).toBe('node-z|42');
  });

  it('steps down when its monotonic clock says the lease could have lapsed, with Redis unchanged', async () => {
    const key = newKey();
    let skew = 0;
    // A longer lease than the other cases': the step-down comes at the next renewal tick, which a
    // loaded machine may delay past a short lease's, and the key must outlive the wait to show that
    // Redis was left as it was.
    const leaseMs = 6000;
    const a = elector(key, 'node-a', { leaseMs, now: () => performance.now() + skew });
    await a.start();
    const changes = recordChanges(a);

    skew += leaseMs * 2; // as if the event loop had been blocked for two leases
    await waitFor(() => changes.length > 0, leaseMs / 3 + 1000, 'node-a to step down');
    expect(changes).toEqual([{ leader: false, epoch: null, nodeId: 'node-a', leaderNodeId: null, leaseExpiresAt: null }]);
    expect(a.isLeader()).toBe(false);
    // Nothing changed in Redis: the old lease is still there, still counting down.
    expect(await raw.get(key)).toBe('node-a|1');
    expect(await raw.pttl(key)).toBeGreaterThan(0);
  });

  it('starts epochs above the floor the fenced resource reports, e.g. after Redis lost its counter', async () => {
    const key = newKey();
    const a = elector(key, 'node-a', { epochFloor: async () => 41 });
    await a.start();
    // The floor is read before each attempt, so a slow first attempt may leave it to the next tick.
    await waitFor(() => a.isLeader(), INTERVAL_MS + 500, 'node-a to lead');
    expect(a.state()).toMatchObject({ leader: true, epoch: 42 });
    expect(await raw.get(`${key}:epoch`)).toBe('42');
    await a.stop();
    // A floor below the counter changes nothing: epochs only grow.
    const b = elector(key, 'node-b', { epochFloor: async () => 7 });
    await b.start();
    await waitFor(() => b.isLeader(), INTERVAL_MS + 500, 'node-b to lead');
    expect(b.state().epoch).toBe(43);
  });

  it('does not campaign while the epoch floor cannot be read', async () => {
    const key = newKey();
    let readable = false;
    const a = elector(key, 'node-a', {
      epochFloor: async () => {
        if (!readable) throw new Error('metadata store unreachable');
        return null;
      },
    });
    await a.start();
    expect(a.isLeader()).toBe(false);
    expect(await raw.get(key)).toBeNull();
    readable = true;
    // The floor turns readable anywhere in a tick, and under a loaded machine's delays that tick's attempt may leave it to the next.
    await waitFor(() => a.isLeader(), 2 * INTERVAL_MS + 500, 'node-a to lead once the floor is readable');
    expect(a.state().epoch).toBe(1);
  });

  it('starts as a follower, without throwing, when Redis is unreachable', async () => {
    const a = elector(newKey(), 'node-a', { redisUrl: 'redis://127.0.0.1:1' });
    await a.start();
    expect(a.state()).toEqual({ leader: false, epoch: null, nodeId: 'node-a', leaderNodeId: null, leaseExpiresAt: null });
    await sleep(INTERVAL_MS * 2); // a few failing attempts must not throw either
    expect(a.isLeader()).toBe(false);
    await a.stop();
  });
});
