// Three (then four) real Plumb processes over the shared NATS, Redis and PostgreSQL, writing to
// one ClickHouse endpoint: one leader that everyone names, server ingest forwarded by followers
// and stored once, a late joiner, and the leader SIGKILLed under a steady stream of server ingest.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import type { Instance } from '../support/instance.ts';
import { waitFor } from '../support/instance.ts';
import { signUpOwner, startCluster, type TestCluster } from '../support/cluster.ts';

const LEASE_MS = 3000;
const RENEW_MS = LEASE_MS / 3;

let cluster: TestCluster;
let a: Instance;
let b: Instance;
let c: Instance;

beforeAll(async () => {
  cluster = await startCluster({ leaseMs: LEASE_MS });
  [a, b, c] = await Promise.all(['node-a', 'node-b', 'node-c'].map((id) => cluster.start(id)));
  await signUpOwner(cluster, a);
}, 180_000);

afterAll(() => cluster?.close(), 60_000);

const byId = (nodeId: string) => cluster.nodes.get(nodeId)!;

/** Waits until every path is stored; answers the stored counts. */
async function storedAll(paths: Iterable<string>, timeoutMs = 30_000): Promise<Map<string, number>> {
  const wanted = [...paths];
  let stored = new Map<string, number>();
  await waitFor(
    async () => {
      stored = await cluster.storedPaths();
      return wanted.every((p) => stored.has(p));
    },
    timeoutMs,
    () => `missing: ${wanted.filter((p) => !stored.has(p)).slice(0, 10).join(', ')} (${wanted.filter((p) => !stored.has(p)).length} of ${wanted.length})`,
  );
  return stored;
}

const duplicates = (stored: Map<string, number>) => [...stored].filter(([, n]) => n !== 1);

describe('a three-node cluster', () => {
  it('has exactly one leader, which every node names, with the epoch claimed in PostgreSQL', async () => {
    const leader = await cluster.agreedLeader([a, b, c], 30_000);
    const views = await Promise.all([a, b, c].map((n) => cluster.view(n)));
    expect(views.map((v) => v.mode)).toEqual(['cluster', 'cluster', 'cluster']);
    expect(views.filter((v) => v.this_node.leader).map((v) => v.node_id)).toEqual([leader]);
    expect(new Set(views.map((v) => v.leader.node_id))).toEqual(new Set([leader]));
    const leaderView = views.find((v) => v.this_node.leader)!;
    // The leader's drain claimed the fencing row with its own epoch.
    await waitFor(async () => (await cluster.view(a)).leader.epoch === leaderView.this_node.epoch, 10_000, () => 'leader_epoch was not claimed');
    for (const view of views) expect(view.nodes.map((n) => n.node_id)).toEqual(['node-a', 'node-b', 'node-c']);
  });

  it('runs every node on the ClickHouse server without loading the embedded engine', () => {
    for (const node of [a, b, c]) expect(readFileSync(`/proc/${node.child.pid}/maps`, 'utf8')).not.toContain('libchdb');
  });

  it('stores server ingest sent to both followers exactly once, through the leader', async () => {
    const leader = await cluster.agreedLeader([a, b, c], 30_000);
    const followers = ['node-a', 'node-b', 'node-c'].filter((id) => id !== leader).map(byId);
    const before = await cluster.view(byId(leader));
    const paths: string[] = [];
    const statuses = await Promise.all(
      followers.flatMap((follower, f) =>
        Array.from({ length: 40 }, (_, i) => {
          const path = `/forwarded/${f}/${i}`;
          paths.push(path);
          return cluster.sendPageview(follower, path);
        }),
      ),
    );
    expect(statuses.every((s) => s === 202)).toBe(true);
    const stored = await storedAll(paths);
    expect(duplicates(stored)).toEqual([]);

    const after = await cluster.view(byId(leader));
    expect(after.forwarding!.received - before.forwarding!.received).toBe(80);
    for (const follower of followers) {
      const view = await cluster.view(follower);
      expect(view.forwarding).toMatchObject({ forwarded: 40, buffered: 0 });
    }
  });

  it('forwards a server batch larger than one NATS message (1,000 pageviews, ~1.6 MB) and stores it once', async () => {
    const leader = await cluster.agreedLeader([a, b, c], 30_000);
    const follower = [a, b, c].find((n) => n !== byId(leader))!;
    const before = (await cluster.view(follower)).forwarding!;
    // Paths are kept up to 1,024 characters; each of these is just under.
    const padding = 'x'.repeat(1000);
    const paths = Array.from({ length: 1000 }, (_, i) => `/big/${i}/${padding}`);
    const res = await fetch(`${follower.url}/api/ingest/server/batch`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${cluster.seeded.token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        items: paths.map((path) => ({
          type: 'pageview',
          url: `https://${cluster.seeded.domain}${path}`,
          timestamp: new Date().toISOString(),
          visitor_ip: '192.0.2.30',
          user_agent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0',
        })),
      }),
    });
    expect(res.status).toBe(202);
    expect(await res.json()).toMatchObject({ accepted: 1000, rejected: 0 });
    expect(duplicates(await storedAll(paths))).toEqual([]);
    const after = (await cluster.view(follower)).forwarding!;
    expect(after.forwarded - before.forwarded).toBe(1000);
    expect(after.buffered).toBe(before.buffered);
  });

  it('stores tracker ingest from every node exactly once, through the JetStream stream', async () => {
    const paths = ['node-a', 'node-b', 'node-c'].flatMap((id) => Array.from({ length: 5 }, (_, i) => `/tracked/${id}/${i}`));
    const statuses = await Promise.all(
      paths.map(async (path) => {
        const res = await fetch(`${byId(path.split('/')[2]).url}/ingest`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Origin: `https://${cluster.seeded.domain}`, 'User-Agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0' },
          body: JSON.stringify({ url: `https://${cluster.seeded.domain}${path}` }),
        });
        await res.arrayBuffer();
        return res.status;
      }),
    );
    expect(statuses).toEqual(paths.map(() => 202));
    expect(duplicates(await storedAll(paths))).toEqual([]);
  });

  it('shares rate limits through Redis, so a client cannot multiply its budget by the number of nodes', async () => {
    // Sign-in attempts: 10 a minute plus a burst of 10 per IP (defaults). 45 attempts, 15 to each
    // node, would all pass per-node buckets; the shared bucket holds 20 and refills one every 6 s,
    // so at most 30 pass even on a slow run (first run spent one attempt too).
    const statuses: number[] = [];
    for (let i = 0; i < 45; i++) {
      const res = await fetch(`${[a, b, c][i % 3].url}/api/login`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ email: 'nobody@example.com', password: 'wrong password' }),
      });
      await res.arrayBuffer();
      statuses.push(res.status);
    }
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(30);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(15);
    expect(statuses.filter((s) => s !== 401 && s !== 429)).toEqual([]);
  });

  it('lets a node that joins late converge on the same leader and forward to it', async () => {
    const leader = await cluster.agreedLeader([a, b, c], 30_000);
    const d = await cluster.start('node-d');
    expect(await cluster.agreedLeader([a, b, c, d], 30_000)).toBe(leader);
    const paths = Array.from({ length: 10 }, (_, i) => `/late/${i}`);
    expect(await Promise.all(paths.map((p) => cluster.sendPageview(d, p)))).toEqual(paths.map(() => 202));
    expect(duplicates(await storedAll(paths))).toEqual([]);
    expect((await cluster.view(d)).forwarding).toMatchObject({ forwarded: 10, buffered: 0 });
  });

  it('hands over within one renewal interval when the leader stops gracefully, answering every request 202 and storing each once', async () => {
    const members = ['node-a', 'node-b', 'node-c', 'node-d'].map(byId);
    const leader = await cluster.agreedLeader(members, 30_000);
    const run = await leaderChangeUnderIngest(members, leader, async () => {
      expect((await byId(leader).stop('SIGTERM')).code).toBe(0);
    });
    process.stdout.write(`cluster handover: new leader ${run.successor} ${run.failoverMs} ms after SIGTERM of ${leader}; ${run.acknowledged.size} acknowledged, answers ${JSON.stringify(run.answers)}\n`);
    // The stopping leader releases the lease: no waiting for the TTL.
    expect(run.failoverMs).toBeLessThanOrEqual(RENEW_MS + 1000);
    expect(Object.keys(run.answers)).toEqual(['202']);
  });

  it('elects a new leader within the lease plus one renewal after the leader is SIGKILLed, and keeps every acknowledged event once', async () => {
    const members = [...cluster.nodes.values()].filter((n) => n.child.exitCode === null && n.child.signalCode === null);
    expect(members).toHaveLength(3);
    const leader = await cluster.agreedLeader(members, 30_000);
    const run = await leaderChangeUnderIngest(members, leader, async () => {
      await byId(leader).stop('SIGKILL');
    });
    process.stdout.write(
      `cluster failover: new leader ${run.successor} ${run.failoverMs} ms after SIGKILL of ${leader}; ${run.acknowledged.size} events acknowledged, answers ${JSON.stringify(run.answers)}\n`,
    );
    expect(run.failoverMs).toBeLessThanOrEqual(LEASE_MS + RENEW_MS + 1000);
  });
});

/**
 * Steady server ingest to every node but the leader, then `change` (which ends the leader), then
 * more ingest until the new leader has taken some: answers the new leader, how long after the
 * change its term began, and what was acknowledged, after checking every acknowledged event is
 * stored exactly once and the survivors agree on the new leader.
 */
async function leaderChangeUnderIngest(members: Instance[], leader: string, change: () => Promise<void>) {
  const survivors = members.filter((m) => m !== byId(leader));
  const acknowledged = new Set<string>();
  const answers: Record<string, number> = {};
  let sending = true;
  let sent = 0;
  const sender = async (node: Instance) => {
    while (sending) {
      const path = `/steady/${leader}/${sent++}`;
      const status = await cluster.sendPageview(node, path).catch(() => 0);
      answers[status] = (answers[status] ?? 0) + 1;
      if (status === 202) acknowledged.add(path);
    }
  };
  const lanes = survivors.flatMap((node) => [sender(node), sender(node)]);
  await waitFor(async () => acknowledged.size >= 50, 20_000, () => 'steady ingest did not start');

  const changedAt = Date.now();
  await change();
  let successor = '';
  await waitFor(
    async () => {
      const views = await Promise.all(survivors.map((s) => cluster.view(s).catch(() => undefined)));
      successor = views.find((v) => v?.this_node.leader)?.node_id ?? '';
      return successor !== '';
    },
    LEASE_MS + RENEW_MS + 10_000,
    () => 'no new leader',
  );
  const view = await cluster.view(byId(successor));
  const failoverMs = Date.parse(view.this_node.terms.at(-1)!.started_at) - changedAt;
  const acknowledgedAtChange = acknowledged.size;
  // Keep the stream going until the new leader has taken forwarded batches.
  await waitFor(async () => acknowledged.size >= acknowledgedAtChange + 50, 20_000, () => 'ingest did not resume');
  sending = false;
  await Promise.all(lanes);

  const stored = await storedAll(acknowledged, 60_000);
  expect(duplicates(stored)).toEqual([]);
  expect(await cluster.agreedLeader(survivors, 30_000)).toBe(successor);
  return { successor, failoverMs, acknowledged, answers };
}
