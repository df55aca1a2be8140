// Cluster: server-ingest throughput through two followers to one leader, against the same load
// sent straight to the leader and to a standalone single node; then the leader is SIGKILLed under
// a steady stream of server ingest: failover time, and events acknowledged but never stored (must
// be 0). Three `plumb serve` processes over the local NATS, Redis and PostgreSQL, one chDB-backed
// ClickHouse endpoint; load only to 127.0.0.1, bounded by connections and duration.
import { rmSync } from 'node:fs';
import autocannon from 'autocannon';
import { createApiClient } from '../../lib/auth/api-clients.ts';
import { silentLog } from '../../lib/log.ts';
import { createSite, createTeam } from '../../lib/sites/sites.ts';
import { openAnalyticsStore } from '../../lib/stores/analytics/index.ts';
import { openMetadataStore } from '../../lib/stores/metadata/index.ts';
import { signUpOwner, startCluster, type TestCluster } from '../support/cluster.ts';
import { type Instance, startInstance, tempDataDir, waitFor } from '../support/instance.ts';
import type { BenchSuite } from './run.ts';

const DURATION_S = 10;
const CONNECTIONS = 20;
const LEASE_MS = 3000;
const UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

interface Load {
  rps: number;
  p99: number;
  accepted: number;
  other: number;
}

/** Server pageviews for `path` on every node at once, CONNECTIONS split between them. */
async function load(nodes: Instance[], domain: string, token: string, path: string): Promise<Load> {
  const body = JSON.stringify({ url: `https://${domain}${path}`, timestamp: new Date().toISOString(), visitor_ip: '192.0.2.20', user_agent: UA });
  const results = await Promise.all(
    nodes.map((node) =>
      autocannon({
        url: `${node.url}/api/ingest/server/pageview`,
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body,
        connections: Math.max(1, Math.floor(CONNECTIONS / nodes.length)),
        duration: DURATION_S,
      }),
    ),
  );
  return {
    rps: results.reduce((sum, r) => sum + r.requests.average, 0),
    p99: Math.max(...results.map((r) => r.latency.p99)),
    accepted: results.reduce((sum, r) => sum + r['2xx'], 0),
    other: results.reduce((sum, r) => sum + r.non2xx + r.errors + r.timeouts, 0),
  };
}

async function standalone(): Promise<Load & { stored: number }> {
  const dataDir = tempDataDir('plumb-bench-cluster-single-');
  const metadata = await openMetadataStore({ dataDir, log: silentLog });
  const team = await createTeam(metadata, { name: 'bench' });
  const site = await createSite(metadata, { teamId: team.id, domain: 'single.example' });
  const { token } = await createApiClient(metadata, { name: 'bench', scopes: ['ingest:write'], sites: [{ siteId: site.id, role: 'editor' }] });
  await metadata.close();
  const node = await startInstance({ dataDir, env: { PLUMB_INGEST_RATE_PER_SECOND: '1000000', PLUMB_INGEST_BURST: '1000000', PLUMB_LOG_LEVEL: 'warn' } });
  const result = await load([node], 'single.example', token, '/single');
  await node.stop('SIGTERM'); // drains the journal into the store
  const analytics = await openAnalyticsStore({ dataDir, log: silentLog });
  const [{ n }] = await analytics.query<{ n: string }>('SELECT count() AS n FROM {db:Identifier}.hits', { db: analytics.tenantDatabase(team.id) });
  await analytics.close();
  rmSync(dataDir, { recursive: true, force: true });
  return { ...result, stored: Number(n) };
}

/** Waits until `path` has `count` rows stored (or the deadline); answers what is stored. */
async function storedOf(cluster: TestCluster, path: string, count: number): Promise<number> {
  let stored = 0;
  await waitFor(
    async () => {
      stored = (await cluster.storedPaths()).get(path) ?? 0;
      return stored >= count;
    },
    120_000,
    () => `only ${stored} of ${count} events stored for ${path}`,
  ).catch(() => undefined);
  return stored;
}

/** SIGKILL of the leader under steady server ingest to the followers. */
async function failover(cluster: TestCluster, members: Instance[]) {
  const leader = await cluster.agreedLeader(members, 30_000);
  const survivors = members.filter((m) => m !== cluster.nodes.get(leader));
  const acknowledged = new Set<string>();
  let sending = true;
  let sent = 0;
  const lane = async (node: Instance) => {
    while (sending) {
      const path = `/failover/${sent++}`;
      if ((await cluster.sendPageview(node, path).catch(() => 0)) === 202) acknowledged.add(path);
    }
  };
  const lanes = survivors.flatMap((node) => [lane(node), lane(node), lane(node), lane(node)]);
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const killedAt = Date.now();
  await cluster.nodes.get(leader)!.stop('SIGKILL');
  let successor: string | undefined;
  await waitFor(
    async () => {
      const views = await Promise.all(survivors.map((s) => cluster.view(s).catch(() => undefined)));
      successor = views.find((v) => v?.this_node.leader)?.node_id;
      return successor !== undefined;
    },
    60_000,
    () => 'no new leader',
  );
  const view = await cluster.view(cluster.nodes.get(successor!)!);
  const failoverMs = Date.parse(view.this_node.terms.at(-1)!.started_at) - killedAt;
  await new Promise((resolve) => setTimeout(resolve, 5000));
  sending = false;
  await Promise.all(lanes);
  const windowS = (Date.now() - killedAt + 3000) / 1000;
  let stored = new Map<string, number>();
  await waitFor(
    async () => {
      stored = await cluster.storedPaths();
      return [...acknowledged].every((p) => stored.has(p));
    },
    120_000,
    () => 'acknowledged events missing',
  ).catch(() => undefined);
  const lost = [...acknowledged].filter((p) => !stored.has(p)).length;
  const duplicated = [...stored].filter(([p, n]) => p.startsWith('/failover/') && n > 1).length;
  return { failoverMs, acknowledged: acknowledged.size, lost, duplicated, windowS };
}

const suite: BenchSuite = {
  name: 'cluster',
  description: `server ingest, ${CONNECTIONS} connections × ${DURATION_S} s: two followers → leader vs straight to the leader vs a standalone node; leader SIGKILL under load`,
  async run() {
    const single = await standalone();
    const cluster = await startCluster({ leaseMs: LEASE_MS, env: { PLUMB_LOG_LEVEL: 'warn', PLUMB_INGEST_FLUSH_MS: '250' } });
    try {
      const members = await Promise.all(['bench-a', 'bench-b', 'bench-c'].map((id) => cluster.start(id)));
      await signUpOwner(cluster, members[0]);
      const leaderId = await cluster.agreedLeader(members, 30_000);
      const leader = cluster.nodes.get(leaderId)!;
      const followers = members.filter((m) => m !== leader);
      const { domain, token } = cluster.seeded;

      const direct = await load([leader], domain, token, '/direct');
      const forwarded = await load(followers, domain, token, '/forwarded');
      const directStored = await storedOf(cluster, '/direct', direct.accepted);
      const forwardedStored = await storedOf(cluster, '/forwarded', forwarded.accepted);
      const killed = await failover(cluster, members);

      return {
        'standalone node req/s (p99 ms)': `${Math.round(single.rps)} (${single.p99})`,
        'cluster, straight to the leader req/s (p99 ms)': `${Math.round(direct.rps)} (${direct.p99})`,
        'cluster, two followers → leader req/s (p99 ms)': `${Math.round(forwarded.rps)} (${forwarded.p99})`,
        'followers→leader / standalone': `${Math.round((forwarded.rps / single.rps) * 100)}%`,
        'followers→leader / straight to leader': `${Math.round((forwarded.rps / direct.rps) * 100)}%`,
        'non-202 answers (standalone, direct, forwarded)': `${single.other}, ${direct.other}, ${forwarded.other}`,
        // The load tool does not count the requests in flight when it stops; the node still stores them.
        'accepted (counted) vs stored (standalone)': `${single.accepted} / ${single.stored}`,
        'accepted (counted) vs stored (direct, forwarded)': `${direct.accepted} / ${directStored}, ${forwarded.accepted} / ${forwardedStored}`,
        'failover: new leader after SIGKILL (ms)': killed.failoverMs,
        'failover: events acknowledged in the window': killed.acknowledged,
        'failover: acknowledged but lost': killed.lost,
        'failover: lost events/s': (killed.lost / killed.windowS).toFixed(2),
        'failover: stored more than once': killed.duplicated,
      };
    } finally {
      await cluster.close();
    }
  },
};

export default suite;
