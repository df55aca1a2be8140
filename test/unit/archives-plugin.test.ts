// The archives plugin's own rules, without a node: what a manifest must hold, which backups a
// target keeps, where a site's retention cuts, and that the archive capability is the plugin's only
// by declaration. End to end: test/integration/archives.test.ts and test/cluster/archives.test.ts.
import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { definePlugin, PLUGIN_API_VERSION } from '../../lib/plugins/api.ts';
import { createPluginHost } from '../../lib/plugins/host.ts';
import { definitionProblem } from '../../lib/plugins/loader.ts';
import { pluginHelpText } from '../../lib/plugins/help.ts';
import { deleteBackup, parquetRows, pruneBackups, readManifest, storedBackups } from '../../plugins/archives/backup.ts';
import { BACKUP_ID, compareVersions, manifestKey, newBackupId, parseManifest } from '../../plugins/archives/manifest.ts';
import { retentionCutoff } from '../../plugins/archives/retention.ts';
import { localTarget } from '../../plugins/archives/targets.ts';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'plumb-archives-unit-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const SHA = 'a'.repeat(64);
const manifestOf = (id: string, extra: Record<string, unknown> = {}) => ({
  format: 1,
  id,
  plumb_version: '0.1.0',
  started_at: '2026-11-24T03:00:00.000Z',
  completed_at: '2026-11-24T03:00:05.000Z',
  stores: { metadata: 'pglite', analytics: 'chdb' },
  migrations: { metadata: [1, 2], plugins: {} },
  metadata: [{ schema: 'public', table: 'users', rows: 2, file: 'metadata/public.users.ndjson', bytes: 10, sha256: SHA }],
  analytics: [{ database: 'tenant_x', tables: [{ name: 'hits', ddl: 'CREATE TABLE tenant_x.hits (x UInt8) ENGINE = MergeTree ORDER BY x', rows: 3, file: 'analytics/tenant_x/hits.parquet', bytes: 20, sha256: SHA }] }],
  secret: null,
  totals: { files: 2, bytes: 30, rows: 5 },
  ...extra,
});

describe('a backup manifest', () => {
  it('is read back whole', () => {
    const id = newBackupId(new Date('2026-11-24T03:00:00.250Z'));
    expect(id).toMatch(/^2026-11-24T03-00-00\.250Z-[0-9a-f]{8}$/);
    expect(parseManifest(JSON.stringify(manifestOf(id)), 'm').analytics[0].tables[0].rows).toBe(3);
  });

  it('has an id that sorts by start time even for two backups started in the same second', () => {
    const ids = Array.from({ length: 20 }, (_, i) => newBackupId(new Date(Date.UTC(2026, 10, 24, 3, 0, 0, 999 - i * 50))));
    expect([...ids].sort()).toEqual([...ids].reverse());
    for (const id of ids) expect(id).toMatch(BACKUP_ID);
    expect('2026-11-24T03-00-00Z-0e202f9a').toMatch(BACKUP_ID);
    expect('2026-11-24T03-00-00Z-../x').not.toMatch(BACKUP_ID);
  });

  it('is refused when it is not JSON, of another format, or lacks a checksum or a file', () => {
    const id = newBackupId(new Date());
    expect(() => parseManifest('{"format":1', 'backups/x/manifest.json')).toThrow('backups/x/manifest.json is not JSON');
    expect(() => parseManifest(JSON.stringify(manifestOf(id, { format: 2 })), 'm')).toThrow('m has format 2; this Plumb reads format 1');
    const bad = manifestOf(id);
    bad.metadata[0].sha256 = 'not a checksum';
    expect(() => parseManifest(JSON.stringify(bad), 'm')).toThrow('m is not a complete backup manifest');
    expect(() => parseManifest(JSON.stringify(manifestOf('../../etc')), 'm')).toThrow('m is not a complete backup manifest');
    expect(() => parseManifest(JSON.stringify(manifestOf(id, { analytics: [{ database: 'tenant_x', tables: [{ name: 'hits' }] }] })), 'm')).toThrow('not a complete backup manifest');
  });

  it('compares Plumb versions by number, not by text', () => {
    expect(compareVersions('0.10.0', '0.9.9')).toBeGreaterThan(0);
    expect(compareVersions('1.2.3', '1.2.3')).toBe(0);
    expect(compareVersions('1.2.3-beta.1', '1.2.4')).toBeLessThan(0);
  });
});

describe('the backups a target holds', () => {
  const put = async (target: ReturnType<typeof localTarget>, id: string, complete: boolean) => {
    await target.putBytes(`backups/${id}/metadata/public.users.ndjson`, '{}\n');
    if (complete) await target.putBytes(manifestKey(id), JSON.stringify(manifestOf(id)));
  };

  it('counts only folders with a manifest as backups, and restores the newest unless told which', async () => {
    const target = localTarget(tempDir());
    await put(target, '2026-11-20T03-00-00Z-00000001', true);
    await put(target, '2026-11-21T03-00-00Z-00000002', true);
    await put(target, '2026-11-22T03-00-00Z-00000003', false);
    expect((await storedBackups(target)).map((b) => [b.id, b.complete])).toEqual([
      ['2026-11-20T03-00-00Z-00000001', true],
      ['2026-11-21T03-00-00Z-00000002', true],
      ['2026-11-22T03-00-00Z-00000003', false],
    ]);
    expect((await readManifest(target)).id).toBe('2026-11-21T03-00-00Z-00000002');
    expect((await readManifest(target, '2026-11-20T03-00-00Z-00000001')).id).toBe('2026-11-20T03-00-00Z-00000001');
    await expect(readManifest(target, '2026-11-22T03-00-00Z-00000003')).rejects.toThrow(
      'holds no complete backup 2026-11-22T03-00-00Z-00000003 (complete backups: 2026-11-20T03-00-00Z-00000001, 2026-11-21T03-00-00Z-00000002)',
    );
    await expect(readManifest(localTarget(tempDir()))).rejects.toThrow('holds no complete backup');
  });

  it('keeps the newest complete backups and the one being written, and removes the rest', async () => {
    const target = localTarget(tempDir());
    await put(target, '2026-11-20T03-00-00Z-00000001', true);
    await put(target, '2026-11-21T03-00-00Z-00000002', false);
    await put(target, '2026-11-22T03-00-00Z-00000003', true);
    await put(target, '2026-11-23T03-00-00Z-00000004', true);
    await put(target, '2026-11-24T03-00-00Z-00000005', false);
    const removed = await pruneBackups(target, 2, '2026-11-24T03-00-00Z-00000005');
    expect(removed.sort()).toEqual(['2026-11-20T03-00-00Z-00000001', '2026-11-21T03-00-00Z-00000002']);
    expect((await storedBackups(target)).map((b) => b.id)).toEqual(['2026-11-22T03-00-00Z-00000003', '2026-11-23T03-00-00Z-00000004', '2026-11-24T03-00-00Z-00000005']);
    await deleteBackup(target, '2026-11-22T03-00-00Z-00000003');
    expect((await storedBackups(target)).map((b) => b.id)).toEqual(['2026-11-23T03-00-00Z-00000004', '2026-11-24T03-00-00Z-00000005']);
  });
});

describe('where a site’s retention cuts', () => {
  it('is midnight in the site’s time zone, that many days ago', () => {
    const now = new Date('2026-11-24T10:00:00Z');
    expect(retentionCutoff(now, 'UTC', 30).toISOString()).toBe('2026-10-25T00:00:00.000Z');
    expect(retentionCutoff(now, 'Europe/Berlin', 1).toISOString()).toBe('2026-11-22T23:00:00.000Z');
    // Already the 25th in Tokyo.
    expect(retentionCutoff(new Date('2026-11-24T20:00:00Z'), 'Asia/Tokyo', 1).toISOString()).toBe('2026-11-23T15:00:00.000Z');
  });

  it('takes the offset of that midnight, not of today, across a daylight-saving change', () => {
    // Berlin is UTC+1 on 24 November and was UTC+2 on 1 October.
    expect(retentionCutoff(new Date('2026-11-24T10:00:00Z'), 'Europe/Berlin', 54).toISOString()).toBe('2026-09-30T22:00:00.000Z');
    expect(retentionCutoff(new Date('2026-11-24T10:00:00Z'), 'America/New_York', 30).toISOString()).toBe('2026-10-25T04:00:00.000Z');
  });
});

describe('the archive capability', () => {
  const plain = definePlugin({ name: 'plain', version: '1', apiVersion: PLUGIN_API_VERSION, description: 'd' });
  const runtime = {} as Parameters<typeof createPluginHost>[0];

  it('is given only to a plugin that declares it', () => {
    expect(createPluginHost(runtime, 'plain', {}, { events: [], notifyWebhooks() {} }).archive).toBeUndefined();
    const host = createPluginHost(runtime, 'keeper', {}, { events: [], capabilities: ['archive'], notifyWebhooks() {} });
    expect(host.archive?.siteTables.map((t) => t.table)).toEqual([
      'hits', 'events', 'web_vitals', 'ai_fetches', 'visits',
      'imported_visitors', 'imported_sources', 'imported_pages', 'imported_entry_pages', 'imported_exit_pages',
      'imported_custom_events', 'imported_locations', 'imported_devices', 'imported_browsers', 'imported_operating_systems',
    ]);
  });

  it('refuses a capability this Plumb does not grant, naming it', () => {
    expect(definitionProblem({ ...plain, capabilities: ['root'] })).toBe('it asks for the capability "root", and this Plumb grants only archive');
    expect(definitionProblem({ ...plain, capabilities: ['archive'] })).toBeNull();
  });

  it('lists the archives plugin’s settings in plumb --help', async () => {
    const text = await pluginHelpText(['--help'], {});
    expect(text).toContain('  archives 1.0.0: Scheduled backups of both stores');
    expect(text).toContain('  -archives-target\n      env PLUMB_ARCHIVES_TARGET; default (required)');
    expect(text).toContain('  -archives-s3-secret-access-key\n');
  });
});

describe('counting a Parquet file’s rows', () => {
  it('reads the footer, and refuses what is not Parquet', async () => {
    const dir = tempDir();
    const notParquet = join(dir, 'x.parquet');
    writeFileSync(notParquet, 'hello');
    await expect(parquetRows(notParquet)).rejects.toThrow();
    // A file ClickHouse wrote: three rows.
    const file = join(dir, 'three.parquet');
    execFileSync(process.execPath, ['--input-type=module', '-e', `import { Session } from 'chdb'; const s = new Session(); await s.queryAsync("INSERT INTO FUNCTION file('${file}', 'Parquet') SELECT number AS n FROM numbers(3)"); s.close();`], {
      cwd: new URL('../../', import.meta.url).pathname,
    });
    expect(await parquetRows(file)).toBe(3);
  });
});
