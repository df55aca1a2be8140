// Several real `plumb serve` processes as one cluster on loopback: the shared NATS (JetStream),
// Redis and PostgreSQL, and one chDB-backed ClickHouse endpoint they all write to. Every run gets
// its own namespace, database, stream and Redis keys, and removes them afterwards.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import { connect } from 'nats';
import pg from 'pg';
import type { ClusterView } from '../../cluster/status.ts';
import { createApiClient } from '../../lib/auth/api-clients.ts';
import { silentLog } from '../../lib/log.ts';
import { createSite, createTeam } from '../../lib/sites/sites.ts';
import { type AnalyticsStore, openAnalyticsStore } from '../../lib/stores/analytics/index.ts';
import { openMetadataStore } from '../../lib/stores/metadata/index.ts';
import { cookiesOf } from './accounts.ts';
import { type Instance, ROOT, startInstance, waitFor } from './instance.ts';
import { NATS_URL, POSTGRES_URL, REDIS_URL } from './services.ts';

export { NATS_URL, POSTGRES_URL, REDIS_URL };


export interface ClusterOptions {
  /** Redis for election and rate limits (default the shared one). */
  redisUrl?: string;
  leaseMs?: number;
  /** Extra env for every node. */
  env?: Record<string, string>;
}

export interface Seeded {
  domain: string;
  siteId: string;
  teamId: string;
  /** API client token with ingest:write on the site. */
  token: string;
  /** Session cookie of the instance owner. */
  cookie: string;
}

export interface TestCluster {
  namespace: string;
  /** The cluster's PostgreSQL database and ClickHouse endpoint, as every node is given them. */
  databaseUrl: string;
  clickhouseUrl: string;
  nodes: Map<string, Instance>;
  seeded: Seeded;
  /** Starts `plumb serve` as node `nodeId`; `env` overrides the cluster's settings for it. */
  start(nodeId: string, env?: Record<string, string>): Promise<Instance>;
  view(node: Instance): Promise<ClusterView>;
  /** Waits until every given node is up, sees all of `expected` and names the same single leader; returns it. */
  agreedLeader(nodes: Instance[], timeoutMs: number): Promise<string>;
  /** Stored pageviews of the seeded site by path, with how often each is stored. */
  storedPaths(): Promise<Map<string, number>>;
  /** Sends one server pageview for `path`; resolves with the status. */
  sendPageview(node: Instance, path: string): Promise<number>;
  close(): Promise<void>;
}

export interface ClickHouseEndpoint {
  url: string;
  child: ChildProcessWithoutNullStreams;
  /** Stops the server (its data dir stays: it is the caller's). */
  close(): Promise<void>;
}

/** A chDB-backed ClickHouse HTTP endpoint in a child process, keeping its data in `dataDir`. */
export async function startClickHouse(dataDir: string): Promise<ClickHouseEndpoint> {
  const child = spawn(join(ROOT, 'node_modules/.bin/node'), [join(ROOT, 'test/support/clickhouse-test-server.ts'), '--port', '0', '--data-dir', dataDir], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`ClickHouse test server exited with ${code}: ${stderr}`)));
    setTimeout(() => reject(new Error(`ClickHouse test server printed no URL within 30s: ${stderr}`)), 30_000).unref();
  });
  return {
    url,
    child,
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}

export async function startCluster(options: ClusterOptions = {}): Promise<TestCluster> {
  const id = randomBytes(4).toString('hex');
  const namespace = `plumbcl${id}`;
  const database = `plumb_cluster_${id}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect().catch((err: Error) => {
    throw new Error(`PostgreSQL is not reachable at ${POSTGRES_URL} (${err.message}); cluster tests never skip.`);
  });
  await admin.query(`CREATE DATABASE ${database}`);
  const databaseUrl = Object.assign(new URL(POSTGRES_URL), { pathname: `/${database}` }).toString();
  const chDir = mkdtempSync(join(tmpdir(), 'plumb-cluster-ch-'));
  const clickhouse = await startClickHouse(chDir);
  const nodes = new Map<string, Instance>();

  const metadata = await openMetadataStore({ dataDir: chDir, databaseUrl, log: silentLog });
  const analytics: AnalyticsStore = await openAnalyticsStore({ dataDir: chDir, clickhouseUrl: clickhouse.url, log: silentLog });
  const team = await createTeam(metadata, { name: 'Cluster team' });
  const domain = `cluster-${id}.example`;
  const site = await createSite(metadata, { teamId: team.id, domain });
  const { token } = await createApiClient(metadata, { name: 'cluster test', scopes: ['ingest:write'], sites: [{ siteId: site.id, role: 'editor' }] });
  await metadata.close();
  await analytics.ensureTenant(team.id);

  const baseEnv = {
    PLUMB_TRANSPORTER: NATS_URL,
    PLUMB_NAMESPACE: namespace,
    PLUMB_REDIS_URL: options.redisUrl ?? REDIS_URL,
    PLUMB_DATABASE_URL: databaseUrl,
    PLUMB_CLICKHOUSE_URL: clickhouse.url,
    PLUMB_JWT_SECRET: randomBytes(32).toString('hex'),
    PLUMB_LEADER_LEASE_MS: String(options.leaseMs ?? 3000),
    PLUMB_INGEST_FLUSH_MS: '100',
    PLUMB_INGEST_RATE_PER_SECOND: '100000',
    PLUMB_INGEST_BURST: '1000000',
    PLUMB_API_RATE_PER_SECOND: '100000',
    PLUMB_API_BURST: '1000000',
    PLUMB_LOG_LEVEL: 'info',
    ...options.env,
  };

  const cluster: TestCluster = {
    namespace,
    databaseUrl,
    clickhouseUrl: clickhouse.url,
    nodes,
    seeded: { domain, siteId: site.id, teamId: team.id, token, cookie: '' },
    async start(nodeId, env = {}) {
      const instance = await startInstance({ env: { ...baseEnv, PLUMB_NODE_ID: nodeId, ...env }, timeoutMs: 60_000 });
      nodes.set(nodeId, instance);
      return instance;
    },
    async view(node) {
      const res = await fetch(`${node.url}/api/admin/cluster`, { headers: { Cookie: cluster.seeded.cookie } });
      if (res.status !== 200) throw new Error(`GET /api/admin/cluster on ${node.url}: ${res.status} ${await res.text()}`);
      return (await res.json()) as ClusterView;
    },
    async agreedLeader(members, timeoutMs) {
      let views: ClusterView[] = [];
      const expected = members.map((m) => [...nodes].find(([, i]) => i === m)![0]).sort();
      await waitFor(
        async () => {
          views = await Promise.all(members.map((m) => cluster.view(m).catch(() => undefined))).then((v) => v.filter((x): x is ClusterView => !!x));
          if (views.length !== members.length) return false;
          const leaders = new Set(views.map((v) => v.leader.node_id));
          const leading = views.filter((v) => v.this_node.leader);
          const seeAll = views.every((v) => expected.every((nodeId) => v.nodes.some((n) => n.node_id === nodeId && n.available)));
          return leaders.size === 1 && leading.length === 1 && leading[0].node_id === views[0].leader.node_id && seeAll;
        },
        timeoutMs,
        () => `nodes did not agree on one leader: ${JSON.stringify(views.map((v) => ({ node: v.node_id, leader: v.leader, me: v.this_node.leader, nodes: v.nodes.map((n) => `${n.node_id}:${n.available}`) })))}`,
      );
      return views[0].leader.node_id!;
    },
    async storedPaths() {
      const rows = await analytics.query<{ path: string; n: string }>(
        'SELECT path, count() AS n FROM {db:Identifier}.hits WHERE site_id = {site:UUID} GROUP BY path',
        { db: analytics.tenantDatabase(team.id), site: site.id },
      );
      return new Map(rows.map((r) => [r.path, Number(r.n)]));
    },
    async sendPageview(node, path) {
      const res = await fetch(`${node.url}/api/ingest/server/pageview`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ url: `https://${domain}${path}`, timestamp: new Date().toISOString(), visitor_ip: '192.0.2.10', user_agent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0' }),
        signal: AbortSignal.timeout(20_000),
      });
      await res.arrayBuffer();
      return res.status;
    },
    async close() {
      await Promise.all([...nodes.values()].map((n) => n.destroy()));
      await analytics.close();
      await clickhouse.close();
      rmSync(chDir, { recursive: true, force: true });
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await admin.end();
      await removeClusterState(namespace, options.redisUrl ?? REDIS_URL);
    },
  };

  return cluster;
}

/** Signs the instance owner up through first run on `node`; keeps the cookie for admin calls. */
export async function signUpOwner(cluster: TestCluster, node: Instance): Promise<void> {
  const res = await fetch(`${node.url}/api/initial-user`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ email: `owner-${cluster.namespace}@example.com`, password: 'a long enough password' }),
  });
  if (res.status !== 201) throw new Error(`first run failed: ${res.status} ${await res.text()}`);
  cluster.seeded.cookie = cookiesOf(res);
}

/** Deletes the namespace's JetStream stream and Redis keys. */
async function removeClusterState(namespace: string, redisUrl: string): Promise<void> {
  const nc = await connect({ servers: NATS_URL });
  const jsm = await nc.jetstreamManager();
  await jsm.streams.delete(`${namespace}_ingest`).catch(() => undefined);
  await nc.close();
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    const keys = await redis.keys(`${namespace}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  } catch {
    redis.disconnect();
  }
}
