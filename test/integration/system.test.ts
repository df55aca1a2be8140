// GET /api/admin/system on a real node with the archives plugin: who may read it, and that its
// figures are the stores' own: each team's rows as the tables count them, the webhook backlog as
// the deliveries table holds it, refusals as counted, settings with secrets masked.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { as, type Person, person } from '../support/accounts.ts';
import { request, waitFor } from '../support/instance.ts';
import { exposedSamples } from '../support/metrics.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
const target = mkdtempSync(join(tmpdir(), 'plumb-system-archives-'));

let t: TestNode;
let owner: Person;
let admin: Person;
let user: Person;

beforeAll(async () => {
  t = await startTestNode({
    PLUMB_PLUGINS: 'archives',
    PLUMB_ARCHIVES_TARGET: target,
    PLUMB_METRICS_TOKEN: 'a-metrics-token-that-must-not-show',
    PLUMB_API_RATE_PER_SECOND: '100000',
    PLUMB_API_BURST: '100000',
  });
  [owner, admin, user] = await Promise.all([person(t, 'owner'), person(t, 'admin'), person(t, 'user')]);
}, 60_000);

afterAll(async () => {
  await t?.stop();
  rmSync(target, { recursive: true, force: true });
});

describe('GET /api/admin/system', () => {
  it('answers instance owners and admins, and refuses other people and anonymous callers', async () => {
    expect((await as(t, owner, 'GET', '/api/admin/system')).status).toBe(200);
    expect((await as(t, admin, 'GET', '/api/admin/system')).status).toBe(200);
    expect((await as(t, user, 'GET', '/api/admin/system')).status).toBe(403);
    expect((await request(`${t.url}/api/admin/system`)).status).toBe(401);
  });

  it('sizes each team’s analytics as its tables count their rows, and names the team', async () => {
    const token = await t.token(['ingest:write']);
    for (let i = 0; i < 5; i++) {
      const res = await request(`${t.url}/api/ingest/server/pageview`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
        body: JSON.stringify({ url: `https://example.com/system/${i}`, timestamp: new Date().toISOString(), visitor_ip: '193.0.6.139', user_agent: FIREFOX }),
      });
      expect(res.status).toBe(202);
    }
    await t.rows('hits', 5);
    const analytics = t.node.runtime.analytics();
    const database = analytics.tenantDatabase(t.team.id);
    const countRows = async () => {
      let counted = 0;
      for (const { name } of await analytics.query<{ name: string }>("SELECT name FROM system.tables WHERE database = {db:String} AND engine LIKE '%MergeTree'", { db: database })) {
        const [{ n }] = await analytics.query<{ n: string }>('SELECT count() AS n FROM {db:Identifier}.{table:Identifier}', { db: database, table: name });
        counted += Number(n);
      }
      return counted;
    };
    // The pageviews' visit rows may be inserted after their hits: the figures are compared once
    // the store holds still.
    let counted = await countRows();
    await waitFor(
      async () => {
        await new Promise((resolve) => setTimeout(resolve, 200));
        const again = await countRows();
        const settled = again === counted;
        counted = again;
        return settled;
      },
      10_000,
      () => `the team's row count kept changing (last ${counted})`,
    );
    const view = (await as(t, owner, 'GET', '/api/admin/system')).body as {
      stores: { analytics: { rows: number; bytes: number; teams: { team_id: string; name: string; database: string; rows: number; bytes: number }[] } };
      ingest: { accepted_per_second: number; journal_fsync: { fsyncs: number; p50_ms: number; p99_ms: number; max_ms: number } | null };
      memory: { heap_used_bytes: number; heap_limit_bytes: number };
    };
    const team = view.stores.analytics.teams.find((entry) => entry.database === database);
    expect(team).toMatchObject({ team_id: t.team.id, name: 'Test team', rows: counted });
    expect(team!.bytes).toBeGreaterThan(0);
    expect(view.stores.analytics.rows).toBe(view.stores.analytics.teams.reduce((sum, entry) => sum + entry.rows, 0));
    expect(view.ingest.accepted_per_second).toBeGreaterThan(0);
    // Each accepted pageview waited for an fsync of the journal: the last minute's are summed up.
    const fsync = view.ingest.journal_fsync!;
    expect(fsync.fsyncs).toBeGreaterThanOrEqual(1);
    expect(fsync.fsyncs).toBeLessThanOrEqual(exposedSamples((await t.node.runtime.metrics.scrape()).body).get('plumb_ingest_journal_fsync_duration_seconds_count')!);
    expect(0 <= fsync.p50_ms && fsync.p50_ms <= fsync.p99_ms && fsync.p99_ms <= fsync.max_ms).toBe(true);
    expect(view.memory.heap_limit_bytes).toBeGreaterThan(view.memory.heap_used_bytes);
  });

  it('counts the webhook backlog as the deliveries table holds it', async () => {
    const view = (await as(t, owner, 'GET', '/api/admin/system')).body as { webhooks: Record<string, number> };
    const { rows } = await t.node.runtime.metadata().query<{ status: string; n: number }>("SELECT status, count(*)::int AS n FROM webhook_deliveries WHERE status IN ('pending', 'retrying', 'processing') GROUP BY status");
    const held = Object.fromEntries(rows.map((row) => [row.status, row.n]));
    expect(view.webhooks).toEqual({ pending: held.pending ?? 0, retrying: held.retrying ?? 0, processing: held.processing ?? 0 });
  });

  it('shows what the archives plugin reports: no backup yet', async () => {
    const view = (await as(t, owner, 'GET', '/api/admin/system')).body as { plugins: { name: string; status: { label: string; value: unknown }[] }[] };
    const archives = view.plugins.find((plugin) => plugin.name === 'archives');
    expect(archives?.status).toEqual(
      expect.arrayContaining([
        { label: 'Last complete backup', value: null, format: 'datetime' },
        { label: 'Complete backups kept', value: 0, format: 'number' },
      ]),
    );
  });

  it('lists the active settings with every secret masked', async () => {
    const view = (await as(t, owner, 'GET', '/api/admin/system')).body as { settings: unknown[]; version: string; uptime_seconds: number };
    expect(view.settings).toEqual(
      expect.arrayContaining([
        { flag: '-metrics-token', env: 'PLUMB_METRICS_TOKEN', value: '********' },
        { flag: '-plugins', env: 'PLUMB_PLUGINS', value: ['archives'] },
        { flag: '-data-dir', env: 'PLUMB_DATA_DIR', value: t.dataDir },
        { flag: '-database-url', env: 'PLUMB_DATABASE_URL', value: null },
      ]),
    );
    expect(JSON.stringify(view)).not.toContain('a-metrics-token-that-must-not-show');
    expect(JSON.stringify(view)).not.toContain(Buffer.from(t.node.runtime.jwtSecret).toString('base64'));
    expect(view.version).toMatch(/^\d+\.\d+\.\d+/);
  });
});
