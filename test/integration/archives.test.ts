// The archives plugin end to end, through `plumb serve` and `plumb restore` child processes: a
// backup of a lived-in instance restores into a fresh data dir with the same people, sites and
// figures; the same through an S3 server; a backup killed midway is never taken for one; and
// retention moves exactly the expired rows into Parquet archives an independent reader reads back.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { asyncBufferFromFile, parquetReadObjects } from 'hyparquet';
import { s3Target } from '../../plugins/archives/targets.ts';
import { cookiesOf } from '../support/accounts.ts';
import { type HoldingProxy, startHoldingProxy } from '../support/holding-proxy.ts';
import { type Receiver, startReceiver } from '../support/webhook-receiver.ts';
import { type Instance, request, runPlumb, startInstance, tempDataDir, waitFor } from '../support/instance.ts';
import { S3_TEST_CREDENTIALS, type S3TestServer, startS3TestServer } from '../support/s3-test-server.ts';
import { OWNER, type SeededInstance, seedInstance } from '../support/seeded-instance.ts';
import { call, siteFigures } from '../support/site-figures.ts';
import { totpAt } from '../support/totp.ts';

const DAY = 86_400_000;
const tempDir = (prefix: string) => mkdtempSync(join(tmpdir(), prefix));
const cookieOf = (seeded: Pick<SeededInstance, 'cookies'>) => seeded.cookies.map((c) => `${c.name}=${c.value}`).join('; ');

/** Signs the seeded owner in (password, then the authenticator code) and returns the session cookie. */
async function signInOwner(url: string, totpSecret: string): Promise<string> {
  const login = await postJson(url, '/api/login', OWNER);
  expect(login.status).toBe(200);
  expect(login.body.status).toBe('mfa_required');
  // The next step's code: the current one was used when the authenticator was set up, and a used code is refused.
  const code = totpAt(totpSecret, Date.now() / 1000 + 30);
  const verified = await postJson(url, '/api/auth/mfa/totp/verify', { challenge_token: login.body.challenge_token, code });
  expect(verified.status).toBe(200);
  return cookiesOf(verified);
}

const postJson = (url: string, path: string, body: unknown) => request(`${url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

/** First run on a new instance: the owner's session cookie, their team, and a site of it with a token that ingests into it. */
async function ownerWithSite(url: string, site: { domain: string; timezone?: string }) {
  const cookie = cookiesOf(await postJson(url, '/api/initial-user', OWNER));
  const teamId = ((await call(url, cookie, 'GET', '/api/user/teams')).body.items as { id: string }[])[0].id;
  const siteId = ((await call(url, cookie, 'POST', '/api/sites', { ...site, team_id: teamId })).body.site as { id: string }).id;
  const token = (await call(url, cookie, 'POST', '/api/user/api-clients', { name: 'importer', scopes: ['ingest:write'], sites: [{ site_id: siteId, role: 'editor' }] })).body.token as string;
  return { cookie, teamId, siteId, token };
}

type Backup = { id: string; status: string; error: string | null; rows: number; bytes: number; finished_at: string | null };

async function backups(url: string, cookie: string): Promise<Backup[]> {
  const res = await call(url, cookie, 'GET', '/api/plugins/archives/backups');
  expect(res.status).toBe(200);
  return res.body.backups as Backup[];
}

/** Asks for a backup now and waits until it has finished; returns it. */
async function backUpNow(url: string, cookie: string): Promise<Backup> {
  // The backup the leader makes at start, when there is none yet, may still be under way.
  await waitFor(async () => (await backups(url, cookie)).every((b) => b.status !== 'running' && b.status !== 'requested'), 60_000, () => 'a backup stayed under way');
  const asked = await call(url, cookie, 'POST', '/api/plugins/archives/backups');
  expect(asked.status).toBe(202);
  const id = (asked.body.backup as Backup).id;
  let finished: Backup | undefined;
  await waitFor(
    async () => {
      finished = (await backups(url, cookie)).find((b) => b.id === id && (b.status === 'completed' || b.status === 'failed'));
      return finished !== undefined;
    },
    120_000,
    () => `backup ${id} did not finish`,
  );
  expect(finished).toMatchObject({ id, status: 'completed', error: null });
  return finished!;
}

describe('archives: a backup restored into a fresh data dir', () => {
  const target = tempDir('plumb-archives-target-');
  const restoredDir = tempDataDir('plumb-restored-');
  let original: Instance;
  let seeded: SeededInstance;
  let before: Awaited<ReturnType<typeof siteFigures>>;
  let backup: Backup;
  /** The Backups page's summary and the list beside it, read once the backup has finished. */
  let summary: Record<string, unknown>;
  let listed: Backup[];
  const range = { from: new Date(Date.now() - 70 * DAY).toISOString().slice(0, 10), to: new Date(Date.now() + DAY).toISOString().slice(0, 10) };

  beforeAll(async () => {
    original = await startInstance({ env: { PLUMB_PLUGINS: 'archives', PLUMB_ARCHIVES_TARGET: target } });
    seeded = await seedInstance(original);
    before = await siteFigures(original.url, cookieOf(seeded), seeded.siteId, range);
    backup = await backUpNow(original.url, cookieOf(seeded));
    summary = (await call(original.url, cookieOf(seeded), 'GET', '/api/plugins/archives/summary')).body;
    listed = await backups(original.url, cookieOf(seeded));
    await original.stop();
  }, 240_000);

  it('sums up the complete backups: how many, and the rows and bytes of the last', () => {
    expect(backup.bytes).toBeGreaterThan(0);
    expect(summary).toEqual({
      completed: listed.filter((b) => b.status === 'completed').length,
      last_rows: backup.rows,
      last_bytes: backup.bytes,
      last_completed_at: backup.finished_at,
    });
  });

  afterAll(async () => {
    await original?.destroy();
    rmSync(target, { recursive: true, force: true });
    rmSync(restoredDir, { recursive: true, force: true });
  });

  it('writes the backup as a folder whose manifest lists every file with its rows and SHA-256', async () => {
    const folder = join(target, 'backups', backup.id);
    const manifest = JSON.parse(readFileSync(join(folder, 'manifest.json'), 'utf8'));
    expect(manifest).toMatchObject({ format: 1, id: backup.id, stores: { metadata: 'pglite', analytics: 'chdb' } });
    expect(manifest.metadata.map((t: { table: string }) => t.table)).toEqual(expect.arrayContaining(['users', 'teams', 'sites', 'goals', 'funnels', 'api_clients', 'backups']));
    const hits = manifest.analytics.flatMap((db: { tables: { name: string; rows: number; file: string }[] }) => db.tables).find((t: { name: string }) => t.name === 'hits');
    // Both sites' pageviews, counted by a reader independent of the writer.
    const hitsFile = join(folder, hits.file);
    expect(hits.rows).toBeGreaterThan((before.kpis as { kpis: { pageviews: number } }).kpis.pageviews);
    expect((await parquetReadObjects({ file: await asyncBufferFromFile(hitsFile), columns: ['path'] })).length).toBe(hits.rows);
    expect(createHash('sha256').update(readFileSync(hitsFile)).digest('hex')).toBe(hits.sha256);
    expect(manifest.secret).toMatchObject({ file: 'secret/instance-secret' });
    expect(backup.rows).toBe(manifest.totals.rows);
  });

  it('restores into a fresh data dir: the same people sign in, and every figure is identical', async () => {
    const restored = await runPlumb(['restore', '--from', target, '-data-dir', restoredDir]);
    expect(restored.stderr).toBe('');
    expect(restored.code).toBe(0);
    expect(restored.stdout).toContain(`restored backup ${backup.id}`);

    const copy = await startInstance({ dataDir: restoredDir, env: { PLUMB_PLUGINS: 'archives', PLUMB_ARCHIVES_TARGET: tempDir('plumb-archives-second-') } });
    try {
      const owner = await signInOwner(copy.url, seeded.totpSecret);
      expect(await siteFigures(copy.url, owner, seeded.siteId, range)).toEqual(before);
      // Tokens are kept (their hashes are): the importer still reads and writes.
      const byToken = await call(copy.url, `Bearer ${seeded.importerToken}`, 'GET', `/api/sites/${seeded.siteId}/stats/kpis?${new URLSearchParams(range)}`);
      expect(byToken.body).toEqual(before.kpis);
      const analyst = await postJson(copy.url, '/api/login', { email: 'analyst@example.com', password: 'an analyst password' });
      expect(analyst.status).toBe(200);
      // The backup it came from is listed as the complete backup it is.
      expect((await backups(copy.url, owner)).find((b) => b.id === backup.id)).toMatchObject({ status: 'completed' });
    } finally {
      await copy.stop();
    }
  }, 180_000);

  it('refuses a data dir that already holds data', async () => {
    const again = await runPlumb(['restore', '--from', target, '-data-dir', restoredDir]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/is not empty: a restore goes only into an empty store/);
  }, 60_000);

  /**
   * Restores a copy of the target, altered first, into a fresh data dir; returns what the command
   * said and which of the stores' folders it left behind. Both copies are removed afterwards.
   */
  async function restoreAltered(alter: (copy: string, manifest: Record<string, unknown> & { analytics: { tables: { name: string; file: string }[] }[] }) => void) {
    const copy = tempDir('plumb-archives-altered-');
    const fresh = tempDataDir('plumb-restore-refused-');
    try {
      cpSync(target, copy, { recursive: true });
      alter(join(copy, 'backups', backup.id), JSON.parse(readFileSync(join(copy, 'backups', backup.id, 'manifest.json'), 'utf8')));
      const result = await runPlumb(['restore', '--from', copy, '--backup', backup.id, '-data-dir', fresh]);
      return { ...result, left: readdirSync(fresh).filter((name) => name === 'meta' || name === 'analytics' || name === 'jwt-secret') };
    } finally {
      rmSync(copy, { recursive: true, force: true });
      rmSync(fresh, { recursive: true, force: true });
    }
  }

  it('refuses a backup a newer Plumb made, before writing anything', async () => {
    const refused = await restoreAltered((folder, manifest) => writeFileSync(join(folder, 'manifest.json'), JSON.stringify({ ...manifest, plumb_version: '99.0.0' })));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/made by Plumb 99\.0\.0, newer than this Plumb/);
    expect(refused.left).toEqual([]);
  }, 60_000);

  it('refuses a damaged file, and removes what it had restored', async () => {
    const refused = await restoreAltered((folder, manifest) => {
      const hits = manifest.analytics[0].tables.find((t) => t.name === 'hits')!;
      writeFileSync(join(folder, hits.file), 'not the file the manifest names');
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/does not match its manifest/);
    expect(refused.left).toEqual([]);
  }, 120_000);

  it('names the complete backups when asked for one it does not hold, and needs --from', async () => {
    const missing = await runPlumb(['restore', '--from', target, '--backup', '2000-01-01T00-00-00Z-00000000', '-data-dir', tempDataDir('plumb-restore-missing-')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`holds no complete backup 2000-01-01T00-00-00Z-00000000 (complete backups: `);
    expect(missing.stderr).toContain(backup.id);
    const usage = await runPlumb(['restore']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/--from.*is required: plumb restore --from/);
  }, 60_000);
});

describe('archives: backups in S3-compatible storage', () => {
  let s3: S3TestServer;
  let proxy: HoldingProxy;
  let node: Instance;
  let cookie: string;
  let siteId: string;
  let env: Record<string, string>;
  const range = { from: new Date(Date.now() - 10 * DAY).toISOString().slice(0, 10), to: new Date(Date.now() + DAY).toISOString().slice(0, 10) };

  beforeAll(async () => {
    s3 = await startS3TestServer();
    proxy = await startHoldingProxy(s3.endpoint);
    env = {
      PLUMB_PLUGINS: 'archives',
      PLUMB_ARCHIVES_TARGET: `s3://${s3.bucket}/plumb`,
      PLUMB_ARCHIVES_S3_ENDPOINT: proxy.url,
      PLUMB_ARCHIVES_S3_PATH_STYLE: 'true',
      PLUMB_ARCHIVES_S3_ACCESS_KEY_ID: S3_TEST_CREDENTIALS.accessKeyId,
      PLUMB_ARCHIVES_S3_SECRET_ACCESS_KEY: S3_TEST_CREDENTIALS.secretAccessKey,
    };
    node = await startInstance({ env });
    let token: string;
    ({ cookie, siteId, token } = await ownerWithSite(node.url, { domain: 'objects.example' }));
    const items = Array.from({ length: 40 }, (_, i) => ({
      type: i % 4 === 3 ? 'event' : 'pageview',
      ...(i % 4 === 3 ? { name: 'Download', properties: { file: `f${i % 3}.pdf` } } : {}),
      url: `https://objects.example/page-${i % 5}`,
      visitor_ip: `203.0.113.${i % 9}`,
      user_agent: 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0',
      timestamp: new Date(Date.now() - (i % 7) * DAY - i * 60_000).toISOString(),
    }));
    const sent = await call(node.url, `Bearer ${token}`, 'POST', '/api/ingest/server/batch', { items });
    expect(sent.body.rejected).toBe(0);
    await waitFor(
      async () => ((await call(node.url, cookie, 'GET', `/api/sites/${siteId}/stats/kpis?${new URLSearchParams(range)}`)).body.kpis as { pageviews: number }).pageviews === 30,
      30_000,
      () => 'the pageviews were not counted',
    );
  }, 120_000);

  afterAll(async () => {
    await node?.destroy();
    await proxy?.close();
    await s3?.close();
  });

  const stored = () =>
    s3Target({ bucket: s3.bucket, prefix: 'plumb', endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, ...S3_TEST_CREDENTIALS }).list('backups/');

  it('never takes a backup killed midway for one, and the next backup succeeds and removes its files', async () => {
    const first = await backUpNow(node.url, cookie);
    proxy.holdWhen((req) => req.method === 'PUT' && /\/analytics\//.test(req.url ?? ''));
    const asked = await call(node.url, cookie, 'POST', '/api/plugins/archives/backups');
    const killed = (asked.body.backup as Backup).id;
    await waitFor(async () => proxy.held.length > 0, 60_000, () => 'the backup never reached its analytics files');
    // Midway: the metadata files are stored, the analytics are not, and there is no manifest.
    const midway = (await stored()).filter((o) => o.key.startsWith(`backups/${killed}/`)).map((o) => o.key);
    expect(midway.some((key) => key.includes('/metadata/'))).toBe(true);
    expect(midway).not.toContain(`backups/${killed}/manifest.json`);
    await node.stop('SIGKILL');
    proxy.holdWhen(null);

    // A restore takes the last complete backup, not the killed one.
    const fresh = tempDataDir('plumb-restore-s3-');
    try {
      const restored = await runPlumb(['restore', '--from', `s3://${s3.bucket}/plumb`, '-data-dir', fresh], env);
      expect(restored.stderr).toBe('');
      expect(restored.stdout).toContain(`restored backup ${first.id}`);
    } finally {
      rmSync(fresh, { recursive: true, force: true });
    }

    node = await startInstance({ dataDir: node.dataDir, env });
    const listed = await backups(node.url, cookie);
    expect(listed.find((b) => b.id === killed)).toMatchObject({ status: 'failed', error: 'interrupted: the node running it stopped' });
    const next = await backUpNow(node.url, cookie);
    const keys = (await stored()).map((o) => o.key);
    expect(keys).toContain(`backups/${next.id}/manifest.json`);
    expect(keys.filter((key) => key.startsWith(`backups/${killed}/`))).toEqual([]);
  }, 300_000);

  it('restores from S3 into a fresh data dir with identical figures', async () => {
    const before = await siteFigures(node.url, cookie, siteId, range);
    const latest = await backUpNow(node.url, cookie);
    const fresh = tempDataDir('plumb-restore-s3-');
    const restored = await runPlumb(['restore', '--from', `s3://${s3.bucket}/plumb`, '--backup', latest.id, '-data-dir', fresh], env);
    expect(restored.stderr).toBe('');
    expect(restored.code).toBe(0);
    const copy = await startInstance({ dataDir: fresh });
    try {
      const login = await postJson(copy.url, '/api/login', OWNER);
      expect(login.status).toBe(200);
      const owner = cookiesOf(login);
      expect(await siteFigures(copy.url, owner, siteId, range)).toEqual(before);
    } finally {
      await copy.destroy();
    }
  }, 240_000);
});

describe('archives: per-site retention', () => {
  const target = tempDir('plumb-archives-retention-');
  let node: Instance;
  let receiver: Receiver;
  let cookie: string;
  let siteId: string;
  let teamId: string;
  const whole = { from: new Date(Date.now() - 400 * DAY).toISOString().slice(0, 10), to: new Date(Date.now() + DAY).toISOString().slice(0, 10) };
  const pageviews = (range: Record<string, string>) =>
    call(node.url, cookie, 'GET', `/api/sites/${siteId}/stats/kpis?${new URLSearchParams(range)}`).then((res) => (res.body.kpis as { pageviews: number }).pageviews);

  beforeAll(async () => {
    receiver = await startReceiver();
    node = await startInstance({ env: { PLUMB_PLUGINS: 'archives', PLUMB_ARCHIVES_TARGET: target, PLUMB_WEBHOOK_ALLOW_DEVELOPMENT_TARGETS: 'true', PLUMB_WEBHOOK_SWEEP_SECONDS: '1' } });
    let token: string;
    ({ cookie, teamId, siteId, token } = await ownerWithSite(node.url, { domain: 'old.example', timezone: 'UTC' }));
    const at = (daysAgo: number, i: number) => new Date(Date.now() - daysAgo * DAY - i * 3_600_000).toISOString();
    const items = [
      ...[0, 1, 2, 3].map((i) => ({ type: 'pageview', url: `https://old.example/archived-${i}`, visitor_ip: `198.51.100.${i}`, timestamp: at(100, i) })),
      ...[0, 1, 2].map((i) => ({ type: 'pageview', url: `https://old.example/recent-${i}`, visitor_ip: `198.51.100.${10 + i}`, timestamp: at(10, i) })),
    ].map((item) => ({ ...item, user_agent: 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0' }));
    expect((await call(node.url, `Bearer ${token}`, 'POST', '/api/ingest/server/batch', { items })).body.rejected).toBe(0);
    await waitFor(async () => (await pageviews(whole)) === 7, 30_000, () => 'the pageviews were not counted');
  }, 120_000);

  afterAll(async () => {
    await node?.destroy();
    await receiver?.close();
    rmSync(target, { recursive: true, force: true });
  });

  it('stops start-up without a target, or with a bad setting, naming it and never echoing a secret', async () => {
    const dataDir = tempDataDir('plumb-archives-settings-');
    try {
      const serve = (args: string[], env: Record<string, string>) => runPlumb(['serve', '-data-dir', dataDir, ...args], { PLUMB_PLUGINS: 'archives', ...env });
      const missing = await serve([], {});
      expect([missing.code, missing.stderr]).toEqual([2, expect.stringContaining('PLUMB_ARCHIVES_TARGET')]);
      const bad = await serve(['-archives-keep', 'none'], { PLUMB_ARCHIVES_TARGET: target });
      expect([bad.code, bad.stderr]).toEqual([2, expect.stringContaining('-archives-keep')]);
      const secret = await serve([], { PLUMB_ARCHIVES_TARGET: target, PLUMB_ARCHIVES_S3_SECRET_ACCESS_KEY: 'hush-hush', PLUMB_ARCHIVES_INTERVAL_MINUTES: '0' });
      expect([secret.code, secret.stderr]).toEqual([2, expect.stringContaining('PLUMB_ARCHIVES_INTERVAL_MINUTES')]);
      expect(secret.stderr + secret.stdout).not.toContain('hush-hush');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);

  it('tells subscribed webhooks of every completed backup', async () => {
    const created = await call(node.url, cookie, 'POST', '/api/admin/webhooks', { name: 'backups', url: `${receiver.url}/backups`, events: ['archives.backup.completed'] });
    expect(created.status).toBe(201);
    const backup = await backUpNow(node.url, cookie);
    const deliveries = await receiver.waitFor('/backups', 1, 30_000);
    const sent = deliveries.map((d) => JSON.parse(d.raw.toString('utf8'))).find((event) => event.data.backup_id === backup.id);
    expect(sent).toMatchObject({ type: 'archives.backup.completed', data: { backup_id: backup.id, location: target, rows: backup.rows } });
  }, 120_000);

  it('is listed with the archive capability it holds', async () => {
    const listed = await call(node.url, cookie, 'GET', '/api/admin/plugins');
    expect(listed.body.plugins).toEqual([expect.objectContaining({ name: 'archives', status: 'running', capabilities: ['archive'] })]);
  });

  it('refuses a retention that is not a whole number of days from 1 on', async () => {
    const zero = await call(node.url, cookie, 'PUT', `/api/sites/${siteId}/plugins/archives/retention`, { retention_days: 0 });
    expect(zero.status).toBe(400);
    expect(zero.body.fields).toEqual([expect.objectContaining({ field: 'retention_days' })]);
    const text = await call(node.url, cookie, 'PUT', `/api/sites/${siteId}/plugins/archives/retention`, { retention_days: 'thirty' });
    expect(text.status).toBe(400);
    expect((await call(node.url, cookie, 'GET', `/api/sites/${siteId}/plugins/archives/retention`)).body).toEqual({ retention_days: null, archived_rows: 0, last_archived_at: null });
  });

  it('archives exactly the rows past the retention into Parquet, checks them, then deletes them', async () => {
    const set = await call(node.url, cookie, 'PUT', `/api/sites/${siteId}/plugins/archives/retention`, { retention_days: 30 });
    expect(set.status).toBe(200);
    expect(set.body.retention_days).toBe(30);
    await waitFor(async () => (await pageviews(whole)) === 3, 60_000, () => `the expired pageviews were not removed:\n${node.output().slice(-3000)}`);

    const folder = join(target, 'retention', siteId, 'hits');
    const files = readdirSync(folder);
    expect(files).toHaveLength(1);
    const rows = (await parquetReadObjects({ file: await asyncBufferFromFile(join(folder, files[0])) })) as { path: string; ts: unknown; site_id: unknown }[];
    expect(rows.map((row) => row.path).sort()).toEqual(['/archived-0', '/archived-1', '/archived-2', '/archived-3']);
    const cutoff = Date.now() - 30 * DAY;
    for (const row of rows) expect(new Date(String(row.ts instanceof Date ? row.ts.toISOString() : row.ts)).getTime()).toBeLessThan(cutoff);
    // The visits of those pageviews went with them.
    expect(readdirSync(join(target, 'retention', siteId))).toEqual(expect.arrayContaining(['hits', 'visits']));

    const retention = await call(node.url, cookie, 'GET', `/api/sites/${siteId}/plugins/archives/retention`);
    expect(retention.body).toMatchObject({ retention_days: 30, archived_rows: 8 });
    const audit = await call(node.url, cookie, 'GET', `/api/user/teams/${teamId}/audit`);
    const actions = (audit.body.entries as { action: string; details: string }[]).map((entry) => entry.action);
    expect(actions).toEqual(expect.arrayContaining(['archives.retention_changed', 'archives.retention_archived']));
  }, 120_000);
});
