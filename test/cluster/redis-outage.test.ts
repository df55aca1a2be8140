// Redis goes away under a three-node cluster (a redis-server of this test's own, killed by its
// PID): the leader steps down, nobody leads meanwhile (checked by every node's terms and epochs),
// server ingest is still acknowledged because followers buffer it in JetStream, and when Redis is
// back (empty: it kept nothing on disk) one node leads again, with an epoch above the one
// PostgreSQL holds, and the buffered events are stored once.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import type { ClusterView } from '../../cluster/status.ts';
import { signUpOwner, startCluster, type TestCluster } from '../support/cluster.ts';
import { freePort, type Instance, waitFor } from '../support/instance.ts';

const LEASE_MS = 3000;
let redisPort: number;
let redisDir: string;
let redis: ChildProcess | undefined;
let cluster: TestCluster;
let members: Instance[];

/** Our own Redis, without persistence: after a restart its epoch counter starts from nothing. */
async function startRedis(): Promise<void> {
  redis = spawn('/usr/bin/redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', redisDir], {
    stdio: 'ignore',
  });
  const probe = new Redis({ port: redisPort, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => undefined);
  await waitFor(
    async () => {
      try {
        if (probe.status !== 'ready') await probe.connect();
        return (await probe.ping()) === 'PONG';
      } catch {
        probe.disconnect();
        return false;
      }
    },
    10_000,
    () => 'redis-server did not start',
  );
  probe.disconnect();
}

async function killRedis(): Promise<void> {
  if (!redis || redis.exitCode !== null || redis.signalCode !== null) return;
  const exited = once(redis, 'exit');
  redis.kill('SIGKILL');
  await exited;
}

beforeAll(async () => {
  redisPort = await freePort();
  redisDir = mkdtempSync(join(tmpdir(), 'plumb-cluster-redis-'));
  await startRedis();
  cluster = await startCluster({ leaseMs: LEASE_MS, redisUrl: `redis://127.0.0.1:${redisPort}` });
  members = await Promise.all(['node-a', 'node-b', 'node-c'].map((id) => cluster.start(id)));
  await signUpOwner(cluster, members[0]);
}, 180_000);

afterAll(async () => {
  await cluster?.close();
  await killRedis();
  rmSync(redisDir, { recursive: true, force: true });
}, 60_000);

describe('a Redis outage', () => {
  it('makes the leader step down, keeps ingest acknowledged and buffered, and ends with one leader again', async () => {
    const firstLeader = await cluster.agreedLeader(members, 30_000);
    const firstEpoch = (await cluster.view(members[0])).leader.epoch!;

    const stoppedAt = Date.now();
    await killRedis();
    await waitFor(async () => (await Promise.all(members.map((m) => cluster.view(m)))).every((v) => !v.this_node.leader), LEASE_MS + 2000, () => 'the leader did not step down');
    const stepDownMs = Date.now() - stoppedAt;
    // Each follower learns on its next election round that nobody holds the lease.
    await waitFor(async () => (await Promise.all(members.map((m) => cluster.view(m)))).every((v) => v.leader.node_id === null), LEASE_MS, () => 'nodes still name a leader');

    // No leader anywhere: server ingest on every node is buffered in JetStream and still acknowledged.
    const paths = members.flatMap((_, n) => Array.from({ length: 15 }, (__, i) => `/outage/${n}/${i}`));
    const statuses = await Promise.all(paths.map((p, i) => cluster.sendPageview(members[Math.floor(i / 15)], p)));
    expect(statuses).toEqual(paths.map(() => 202));
    const buffered = (await Promise.all(members.map((m) => cluster.view(m)))).reduce((sum, v) => sum + (v.forwarding?.buffered ?? 0), 0);
    expect(buffered).toBe(paths.length);
    expect((await cluster.view(members[0])).buffer!.pending).toBeGreaterThanOrEqual(1);

    await startRedis();
    const secondLeader = await cluster.agreedLeader(members, 30_000);
    const views: ClusterView[] = await Promise.all(members.map((m) => cluster.view(m)));
    const secondEpoch = views.find((v) => v.this_node.leader)!.this_node.epoch!;
    expect(secondEpoch).toBeGreaterThan(firstEpoch);

    // Never two leaders: every term of every node, ordered by start, ends before the next begins.
    const terms = views
      .flatMap((v) => v.this_node.terms.map((t) => ({ node: v.node_id, epoch: t.epoch, from: Date.parse(t.started_at), to: t.ended_at ? Date.parse(t.ended_at) : Number.POSITIVE_INFINITY })))
      .sort((x, y) => x.from - y.from);
    expect(terms.map((t) => t.epoch)).toEqual([...new Set(terms.map((t) => t.epoch))].sort((x, y) => x - y));
    for (let i = 1; i < terms.length; i++) expect(terms[i].from).toBeGreaterThanOrEqual(terms[i - 1].to);
    expect(terms[0]).toMatchObject({ node: firstLeader, epoch: firstEpoch });
    expect(terms.at(-1)).toMatchObject({ node: secondLeader, epoch: secondEpoch, to: Number.POSITIVE_INFINITY });

    let stored = new Map<string, number>();
    await waitFor(
      async () => {
        stored = await cluster.storedPaths();
        return paths.every((p) => stored.has(p));
      },
      30_000,
      () => `buffered events not stored: ${paths.filter((p) => !stored.has(p)).length} missing`,
    );
    expect([...stored].filter(([, n]) => n !== 1)).toEqual([]);
    process.stdout.write(`redis outage: leader ${firstLeader} (epoch ${firstEpoch}) stepped down within ${stepDownMs} ms; ${secondLeader} leads with epoch ${secondEpoch}\n`);
  });
});
