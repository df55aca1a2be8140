// The archives plugin in a three-node cluster sharing one backup folder: a backup asked for on any
// node is made by the leader alone; when the leader is killed midway through one, the next leader
// records that backup as interrupted and makes the next; and a backup of the cluster restores into
// an empty PostgreSQL database and ClickHouse server, where one plain node serves the same figures.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { cookiesOf } from '../support/accounts.ts';
import { type ClickHouseEndpoint, POSTGRES_URL, signUpOwner, startClickHouse, startCluster, type TestCluster } from '../support/cluster.ts';
import { type HoldingProxy, startHoldingProxy } from '../support/holding-proxy.ts';
import { type Instance, request, runPlumb, startInstance, waitFor } from '../support/instance.ts';

const DAY = 86_400_000;
const PASSWORD = 'a long enough password';
const tempDir = (prefix: string) => mkdtempSync(join(tmpdir(), prefix));
const range = { from: new Date(Date.now() - 7 * DAY).toISOString().slice(0, 10), to: new Date(Date.now() + DAY).toISOString().slice(0, 10) };

/** The folder every node backs up into: on one machine, a local folder is a fair shared target. */
const target = tempDir('plumb-cluster-archives-');
/** The cluster's instance secret: the restore is told it, as the operator of a cluster would be. */
const jwtSecret = randomBytes(32).toString('hex');

let cluster: TestCluster;
let clickhouseProxy: HoldingProxy;
let a: Instance;
let b: Instance;
let c: Instance;
let admin: pg.Client;

type Backup = { id: string; status: string; error: string | null; rows: number };

async function call(node: Instance, cookie: string, method: string, path: string) {
  return request(`${node.url}${path}`, { method, headers: { Cookie: cookie } });
}

async function backups(node: Instance): Promise<Backup[]> {
  const res = await call(node, cluster.seeded.cookie, 'GET', '/api/plugins/archives/backups');
  expect(res.status).toBe(200);
  return res.body.backups as Backup[];
}

/** Asks `node` for a backup once none is under way; answers the id of the one asked for. */
async function askForBackup(node: Instance): Promise<string> {
  await waitFor(async () => (await backups(node)).every((b) => b.status !== 'running' && b.status !== 'requested'), 60_000, () => 'a backup stayed under way');
  const asked = await call(node, cluster.seeded.cookie, 'POST', '/api/plugins/archives/backups');
  expect(asked.status).toBe(202);
  return (asked.body.backup as Backup).id;
}

/** Waits until backup `id` has completed or failed, as `node` lists it; answers it. */
async function finished(node: Instance, id: string): Promise<Backup> {
  let found: Backup | undefined;
  await waitFor(
    async () => {
      found = (await backups(node)).find((b) => b.id === id && (b.status === 'completed' || b.status === 'failed'));
      return found !== undefined;
    },
    120_000,
    () => `backup ${id} did not finish`,
  );
  return found!;
}

/** The backup lines a node logged (the plugin's JSON log lines "backup started" / "completed" / "failed"), in order. */
function backupLog(node: Instance): { msg: string; backup: string }[] {
  return node
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { plugin?: string; msg?: string; backup?: string })
    .filter((line) => line.plugin === 'archives' && /^backup (started|completed|failed)$/.test(line.msg ?? ''))
    .map((line) => ({ msg: line.msg!, backup: line.backup! }));
}

/**
 * Waits until `node` has logged the end of backup `id`. The leader logs it just after it commits
 * the backup's status, so another node can list the backup as finished a moment before the line
 * has come through the leader's output.
 */
async function loggedEnd(node: Instance, id: string): Promise<void> {
  await waitFor(
    async () => backupLog(node).some((line) => line.backup === id && line.msg !== 'backup started'),
    10_000,
    () => `the node at ${node.url} never logged the end of backup ${id}:\n${node.output().slice(-3000)}`,
  );
}

/** What the dashboard shows of the seeded site over the test's range: what a restore must give back identical. */
async function figures(node: Instance, cookie: string) {
  const q = new URLSearchParams(range).toString();
  const get = async (path: string) => {
    const res = await call(node, cookie, 'GET', `/api/sites/${cluster.seeded.siteId}${path}`);
    expect(res.status).toBe(200);
    return res.body;
  };
  return {
    kpis: await get(`/stats/kpis?${q}`),
    timeseries: await get(`/stats/timeseries?${q}&interval=day`),
    pages: await get(`/stats/breakdown?${q}&dimension=pages&limit=100`),
    sources: await get(`/stats/breakdown?${q}&dimension=sources&limit=100`),
  };
}

/** The owner (signed up through first run) signs in on `node` with their password; answers the session cookie. */
async function signInOwner(node: Instance): Promise<string> {
  const res = await request(`${node.url}/api/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ email: `owner-${cluster.namespace}@example.com`, password: PASSWORD }),
  });
  expect(res.status).toBe(200);
  return cookiesOf(res);
}

/** A PostgreSQL database of its own on the shared server, and its URL. */
async function createDatabase(name: string): Promise<string> {
  await admin.query(`CREATE DATABASE ${name}`);
  return Object.assign(new URL(POSTGRES_URL), { pathname: `/${name}` }).toString();
}

beforeAll(async () => {
  admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  cluster = await startCluster({ env: { PLUMB_PLUGINS: 'archives', PLUMB_ARCHIVES_TARGET: target, PLUMB_JWT_SECRET: jwtSecret } });
  // node-a starts alone, so it leads, and reaches ClickHouse through a proxy that can hold its
  // Parquet exports: a backup it runs can be caught midway, at a known point, and killed there.
  clickhouseProxy = await startHoldingProxy(cluster.clickhouseUrl);
  a = await cluster.start('node-a', { PLUMB_CLICKHOUSE_URL: clickhouseProxy.url });
  await signUpOwner(cluster, a);
  await cluster.agreedLeader([a], 30_000);
  [b, c] = await Promise.all(['node-b', 'node-c'].map((id) => cluster.start(id)));
  const leader = await cluster.agreedLeader([a, b, c], 30_000);
  if (leader !== 'node-a') throw new Error(`node-a started first but ${leader} leads`);

  // Pageviews of several visitors, pages and sources over a few days, sent to every node.
  const items = Array.from({ length: 60 }, (_, i) => ({
    type: 'pageview',
    url: `https://${cluster.seeded.domain}/page-${i % 6}`,
    referrer: i % 3 === 0 ? 'https://news.ycombinator.com/' : undefined,
    visitor_ip: `198.51.100.${i % 11}`,
    user_agent: 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0',
    timestamp: new Date(Date.now() - (i % 5) * DAY - i * 60_000).toISOString(),
  }));
  const nodes = [a, b, c];
  for (let n = 0; n < nodes.length; n++) {
    const res = await fetch(`${nodes[n].url}/api/ingest/server/batch`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${cluster.seeded.token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ items: items.filter((_, i) => i % 3 === n) }),
    });
    expect(await res.json()).toMatchObject({ accepted: 20, rejected: 0 });
  }
  await waitFor(
    async () => [...(await cluster.storedPaths()).values()].reduce((sum, n) => sum + n, 0) === 60,
    30_000,
    () => 'the pageviews were not all stored',
  );
}, 240_000);

afterAll(async () => {
  await cluster?.close();
  await clickhouseProxy?.close();
  await admin?.end();
  rmSync(target, { recursive: true, force: true });
}, 60_000);

describe('archives in a cluster', () => {
  it('makes a backup asked for on a follower on the leader, and on no other node', async () => {
    const id = await askForBackup(b);
    expect(await finished(c, id)).toMatchObject({ id, status: 'completed', error: null });
    expect(existsSync(join(target, 'backups', id, 'manifest.json'))).toBe(true);
    await loggedEnd(a, id);
    expect(backupLog(a)).toEqual(
      expect.arrayContaining([
        { msg: 'backup started', backup: id },
        { msg: 'backup completed', backup: id },
      ]),
    );
    // Not even the backup the first leader makes when there is none: followers never back up.
    expect(backupLog(b)).toEqual([]);
    expect(backupLog(c)).toEqual([]);
  }, 180_000);

  it('records the backup a killed leader was making as interrupted, and the next leader makes the next one', async () => {
    clickhouseProxy.holdWhen((req) => (req.url ?? '').includes('output_format_parquet'));
    const interrupted = await askForBackup(c);
    await waitFor(async () => clickhouseProxy.held.length > 0, 60_000, () => `node-a never began exporting analytics:\n${a.output().slice(-3000)}`);
    // Midway: the metadata files are in the shared folder, no analytics file and no manifest yet.
    expect((await backups(b)).find((backup) => backup.id === interrupted)).toMatchObject({ status: 'running' });
    expect(readdirSync(join(target, 'backups', interrupted))).toEqual(['metadata']);

    await a.stop('SIGKILL');
    clickhouseProxy.holdWhen(null);
    const successor = await cluster.agreedLeader([b, c], 30_000);
    await waitFor(async () => (await backups(b)).find((backup) => backup.id === interrupted)?.status === 'failed', 30_000, () => 'the interrupted backup was not marked failed');
    expect((await backups(c)).find((backup) => backup.id === interrupted)).toMatchObject({ status: 'failed', error: 'interrupted: the node running it stopped' });

    const [leader, follower] = successor === 'node-b' ? [b, c] : [c, b];
    const next = await askForBackup(follower);
    expect(await finished(follower, next)).toMatchObject({ id: next, status: 'completed', error: null });
    await loggedEnd(leader, next);
    expect(backupLog(leader)).toEqual([
      { msg: 'backup started', backup: next },
      { msg: 'backup completed', backup: next },
    ]);
    expect(backupLog(follower)).toEqual([]);
    // The new backup is complete, so the unfinished folder of the interrupted one went.
    expect(readdirSync(join(target, 'backups'))).not.toContain(interrupted);
    expect(existsSync(join(target, 'backups', next, 'manifest.json'))).toBe(true);
  }, 240_000);

  it('refuses to restore into the cluster’s own PostgreSQL database, which is not empty, and leaves it as it was', async () => {
    const before = await figures(b, cluster.seeded.cookie);
    const refused = await runPlumb(['restore', '--from', target], {
      PLUMB_DATABASE_URL: cluster.databaseUrl,
      PLUMB_CLICKHOUSE_URL: cluster.clickhouseUrl,
      PLUMB_PLUGINS: 'archives',
      PLUMB_ARCHIVES_TARGET: target,
      PLUMB_JWT_SECRET: jwtSecret,
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/the PostgreSQL database at 127\.0\.0\.1:5432 is not empty: a restore goes only into an empty store/);
    expect(await figures(c, cluster.seeded.cookie)).toEqual(before);
  }, 60_000);

  describe('restored into an empty PostgreSQL database and an empty ClickHouse server', () => {
    const database = `plumb_restored_${randomBytes(4).toString('hex')}`;
    const clickhouseDir = tempDir('plumb-restored-ch-');
    const dataDir = tempDir('plumb-restored-node-');
    let databaseUrl: string;
    let clickhouse: ClickHouseEndpoint;
    let restored: Instance | undefined;

    beforeAll(async () => {
      databaseUrl = await createDatabase(database);
      clickhouse = await startClickHouse(clickhouseDir);
    }, 60_000);

    afterAll(async () => {
      await restored?.destroy();
      await clickhouse?.close();
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      rmSync(clickhouseDir, { recursive: true, force: true });
      rmSync(dataDir, { recursive: true, force: true });
    }, 60_000);

    it('restores the newest backup, and a plain node on those stores serves the cluster’s figures to the owner', async () => {
      const survivors = [b, c].filter((node) => node.child.exitCode === null && node.child.signalCode === null);
      const newest = (await backups(survivors[0])).find((backup) => backup.status === 'completed')!;
      const before = await figures(survivors[0], cluster.seeded.cookie);
      expect((before.kpis as { kpis: { pageviews: number } }).kpis.pageviews).toBe(60);

      const stores = { PLUMB_DATABASE_URL: databaseUrl, PLUMB_CLICKHOUSE_URL: clickhouse.url, PLUMB_JWT_SECRET: jwtSecret };
      const restore = await runPlumb(['restore', '--from', target], { ...stores, PLUMB_DATA_DIR: dataDir, PLUMB_PLUGINS: 'archives', PLUMB_ARCHIVES_TARGET: target });
      expect(restore.stderr).toBe('');
      expect(restore.code).toBe(0);
      expect(restore.stdout).toContain(`restored backup ${newest.id}`);

      // One node on external stores, no transporter and no Redis: it leads alone. It backs up
      // elsewhere, so it cannot touch the cluster's backups.
      const elsewhere = tempDir('plumb-restored-target-');
      try {
        restored = await startInstance({ dataDir, env: { ...stores, PLUMB_PLUGINS: 'archives', PLUMB_ARCHIVES_TARGET: elsewhere } });
        const owner = await signInOwner(restored);
        expect(await figures(restored, owner)).toEqual(before);
        // The cluster's record of backups came along, the interrupted one included.
        const listed = await call(restored, owner, 'GET', '/api/plugins/archives/backups');
        expect((listed.body.backups as Backup[]).map(({ id, status }) => ({ id, status }))).toEqual((await backups(survivors[0])).map(({ id, status }) => ({ id, status })));
      } finally {
        await restored?.stop();
        rmSync(elsewhere, { recursive: true, force: true });
      }
    }, 240_000);
  });
});
