// Takeouts on a real node: GET /api/sites/:id/takeout (a site's settings, goals, funnels, share
// links and every analytics table) and GET /api/user/takeout (a person's own account data), in
// every format, each read back by a reader of its own (csv-parse, JSON.parse, hyparquet,
// exceljs's streaming reader, yauzl for the zip) and compared with what the stores hold; the
// xlsx export of pageviews; the sheet split past the row limit; audit entries; who may take one
// out; no secret in an account's takeout; a client that hangs up midway.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readdirSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { PassThrough } from 'node:stream';
import { parse } from 'csv-parse/sync';
import { parquetReadObjects } from 'hyparquet';
import { createApiClient } from '../../lib/auth/api-clients.ts';
import { siteTakeout } from '../../lib/exports/site-takeout.ts';
import { ANALYTICS_TAKEOUT_TABLES } from '../../lib/exports/takeout-tables.ts';
import { writeWorkbook } from '../../lib/exports/xlsx.ts';
import type { AnalyticsStore } from '../../lib/stores/analytics/index.ts';
import { type Person, person } from '../support/accounts.ts';
import { waitFor } from '../support/instance.ts';
import { startTestNode, type TestNode } from '../support/node.ts';
import { AWKWARD_PATH, BIG_VISITOR, FORMULA_REFERRER, readWorkbook, readZip, type SeededSite, seedTakeoutSite } from '../support/takeout.ts';

const TABLES = ['site', 'goals', 'funnels', 'share_links', ...ANALYTICS_TAKEOUT_TABLES.map((table) => table.name)];
const ZIP_FORMATS = ['csv', 'ndjson', 'json', 'parquet'] as const;

let t: TestNode;
let seeded: SeededSite;
let instanceOwner: Person;

const takeoutUrl = (format?: string) => `${t.url}/api/sites/${seeded.site.id}/takeout${format ? `?format=${format}` : ''}`;
const download = async (url: string, who: Person) => {
  const res = await fetch(url, { headers: { Cookie: who.cookie } });
  return { res, bytes: Buffer.from(await res.arrayBuffer()) };
};

/** A table file of a takeout as row objects, whatever its format, read without Plumb's code. */
async function rowsOf(format: (typeof ZIP_FORMATS)[number], bytes: Buffer): Promise<Record<string, unknown>[]> {
  if (format === 'csv') return parse(bytes, { columns: true, bom: true });
  if (format === 'ndjson') return bytes.toString().split('\n').filter(Boolean).map((line) => JSON.parse(line));
  if (format === 'json') return JSON.parse(bytes.toString());
  const copy = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  return parquetReadObjects({ file: copy });
}

/** The store's rows of a table for the seeded site, as the text formats write them. */
const stored = (sql: string) => t.node.runtime.analytics().query<Record<string, unknown>>(sql, { db: seeded.site.tenant, site: seeded.site.id });

beforeAll(async () => {
  t = await startTestNode();
  seeded = await seedTakeoutSite(t, 'takeout.example');
  instanceOwner = await person(t, 'owner');
}, 60_000);

afterAll(() => t?.stop());

describe('GET /api/sites/:id/takeout', () => {
  const zips = new Map<string, { manifest: Record<string, unknown> & { tables: { name: string; file: string; rows: number; columns: { name: string; type: string }[] }[] }; entries: Map<string, Buffer> }>();

  beforeAll(async () => {
    for (const format of ZIP_FORMATS) {
      const { res, bytes } = await download(takeoutUrl(format), seeded.admin);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/zip');
      expect(res.headers.get('content-disposition')).toBe(`attachment; filename="takeout.example-takeout-${new Date().toISOString().slice(0, 10)}.zip"`);
      const entries = await readZip(bytes);
      zips.set(format, { manifest: JSON.parse(entries.get('manifest.json')!.toString()), entries });
    }
  }, 60_000);

  it.each(ZIP_FORMATS)('writes a %s zip with one file per table and a manifest counting the rows written', async (format) => {
    const { manifest, entries } = zips.get(format)!;
    expect(manifest).toMatchObject({ kind: 'plumb-takeout', version: 1, format, site: { id: seeded.site.id, domain: 'takeout.example', timezone: 'Europe/Berlin' } });
    expect(typeof manifest.plumb_version).toBe('string');
    expect(Date.parse(manifest.created_at as string)).toBeGreaterThan(Date.now() - 120_000);
    expect(manifest.tables.map((table) => table.name)).toEqual(TABLES);
    expect([...entries.keys()].sort()).toEqual([...TABLES.map((name) => `${name}.${format}`), 'manifest.json'].sort());
    for (const table of manifest.tables) {
      const rows = await rowsOf(format, entries.get(table.file)!);
      expect({ table: table.name, rows: rows.length }).toEqual({ table: table.name, rows: seeded.counts[table.name] });
      expect(table.rows).toBe(rows.length);
      if (rows.length > 0) expect(Object.keys(rows[0])).toEqual(table.columns.map((c) => c.name));
    }
  });

  it.each(ZIP_FORMATS)('keeps every value of the pageviews as stored (%s)', async (format) => {
    const { entries } = zips.get(format)!;
    const rows = await rowsOf(format, entries.get(`pageviews.${format}`)!);
    const expected = await stored(
      `SELECT concat(replaceOne(toString(ts), ' ', 'T'), 'Z') AS ts, toString(session_id) AS session_id, toString(visitor_id) AS visitor_id, hit_id, path, referrer, screen_width
         FROM {db:Identifier}.hits WHERE site_id = {site:UUID} ORDER BY ts, hit_id`,
    );
    const text = (value: unknown) => (value instanceof Date ? value.toISOString() : String(value));
    expect(rows.map((r) => [text(r.ts), text(r.session_id), text(r.visitor_id), r.hit_id, r.path, r.referrer, text(r.screen_width)])).toEqual(
      expected.map((r) => [r.ts, r.session_id, r.visitor_id, r.hit_id, r.path, r.referrer, text(r.screen_width)]),
    );
    expect(rows.some((r) => r.path === AWKWARD_PATH)).toBe(true);
    expect(rows.some((r) => r.referrer === FORMULA_REFERRER)).toBe(true);
    expect(rows.some((r) => text(r.visitor_id) === BIG_VISITOR)).toBe(true);
    expect(Object.keys(rows[0])).not.toContain('site_id');
    expect(Object.keys(rows[0])).not.toContain('import_id');
  });

  it.each(ZIP_FORMATS)('writes one live state per visit, maps as JSON text, an absent revenue or scroll depth as empty (%s)', async (format) => {
    const { entries } = zips.get(format)!;
    const visits = await rowsOf(format, entries.get(`visits.${format}`)!);
    expect(new Set(visits.map((v) => String(v.session_id))).size).toBe(visits.length);
    expect(visits.find((v) => String(v.session_id) === '1')?.visit_engagement_ms?.toString()).toBe('123456');
    expect(Object.keys(visits[0])).not.toEqual(expect.arrayContaining(['sign']));
    expect(Object.keys(visits[0])).not.toContain('version');
    expect(JSON.parse(String(visits[0].pages))).toEqual(expect.any(Array));

    const events = await rowsOf(format, entries.get(`events.${format}`)!);
    const signups = events.filter((e) => e.name === 'Signup');
    expect(signups.length).toBeGreaterThan(0);
    for (const signup of signups) {
      const { plan } = JSON.parse(String(signup.props));
      expect(String(signup.revenue)).toBe(plan === 'pro' ? '49.99' : '');
    }
    const pages = await rowsOf(format, entries.get(`imported_pages.${format}`)!);
    expect(pages.map((p) => String(p.scroll_depth))).toEqual(['', '41', '42']);
    const days = await rowsOf(format, entries.get(`imported_visitors.${format}`)!);
    const day = (value: unknown) => (value instanceof Date ? value.toISOString().slice(0, 10) : String(value));
    expect(days.map((d) => day(d.date))).toEqual(['2025-12-01', '2025-12-02', '2025-12-03']);
  });

  it('writes the site’s settings, goals, funnels and share links without a secret', async () => {
    const { entries } = zips.get('ndjson')!;
    const [site] = await rowsOf('ndjson', entries.get('site.ndjson')!);
    expect(site).toMatchObject({ id: seeded.site.id, domain: 'takeout.example', timezone: 'Europe/Berlin', hostnames: '["shop.takeout.example"]' });
    const goals = await rowsOf('ndjson', entries.get('goals.ndjson')!);
    expect(goals.map((g) => [g.name, g.type, g.path_pattern, g.event_name, g.revenue_currency])).toEqual([
      ['Pricing', 'path', '/pricing', null, null],
      ['Pro signup', 'event', null, 'Signup', 'USD'],
    ]);
    const [funnel] = await rowsOf('ndjson', entries.get('funnels.ndjson')!);
    expect(JSON.parse(String(funnel.steps))).toEqual([expect.objectContaining({ type: 'path', path_pattern: '/' }), expect.objectContaining({ type: 'event', event_name: 'Signup' })]);
    const [link] = await rowsOf('ndjson', entries.get('share_links.ndjson')!);
    expect(link).toMatchObject({ name: 'Board', password_protected: true });
    const { rows } = await t.node.runtime.metadata().query<{ token_hash: Buffer; password_hash: string }>('SELECT token_hash, password_hash FROM share_links WHERE site_id = $1', [seeded.site.id]);
    const everything = [...entries.values()].map((bytes) => bytes.toString()).join('\n');
    expect(everything).not.toContain(rows[0].password_hash);
    expect(everything).not.toContain(rows[0].token_hash.toString('hex'));
    expect(everything).not.toContain(rows[0].token_hash.toString('base64url'));
  });

  it('answers a spreadsheet by default: a manifest sheet, then one sheet per table with the same rows', async () => {
    const { res, bytes } = await download(takeoutUrl(), seeded.admin);
    expect(res.headers.get('content-type')).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    expect(res.headers.get('content-disposition')).toContain('takeout.example-takeout-');
    expect(res.headers.get('content-disposition')).toContain('.xlsx"');
    const sheets = await readWorkbook(bytes);
    expect(sheets.map((s) => s.name)).toEqual(['manifest', ...TABLES]);
    const manifest = Object.fromEntries(sheets[0].rows.filter((r) => r[0] !== 'table').map((r) => [r[0], r[1]]));
    expect(manifest).toMatchObject({ field: 'value', kind: 'plumb-takeout', version: 1, format: 'xlsx', 'site.domain': 'takeout.example', 'site.id': seeded.site.id });
    const listed = sheets[0].rows.filter((r) => r[0] === 'table');
    expect(listed.map((r) => r[1])).toEqual(TABLES);
    expect(listed.find((r) => r[1] === 'pageviews')?.[2]).toContain('ts:timestamp, session_id:int64');
    const { entries } = zips.get('csv')!;
    for (const sheet of sheets.slice(1)) {
      expect({ sheet: sheet.name, rows: sheet.rows.length - 1 }).toEqual({ sheet: sheet.name, rows: seeded.counts[sheet.name] });
      // Cell for cell what the CSV holds (as text: a sheet keeps numbers as numbers, 64-bit ids as text).
      const csv = (await rowsOf('csv', entries.get(`${sheet.name}.csv`)!)).map((row) => Object.values(row));
      const header = sheet.rows[0];
      const cells = sheet.rows.slice(1).map((row) => header.map((_, i) => (row[i] === undefined || row[i] === null ? '' : String(row[i]))));
      expect(cells).toEqual(csv);
    }
    const pageviews = sheets.find((s) => s.name === 'pageviews')!;
    const visitorColumn = pageviews.rows[0].indexOf('visitor_id');
    expect(pageviews.rows.some((row) => row[visitorColumn] === BIG_VISITOR)).toBe(true);
  }, 30_000);

  it('writes an audit entry naming the site and the format', async () => {
    const { rows } = await t.node.runtime.metadata().query<{ actor_user_id: string; site_id: string; details: string }>(
      "SELECT actor_user_id, site_id, details FROM audit_log WHERE action = 'site.takeout' ORDER BY seq",
    );
    expect(rows.length).toBeGreaterThanOrEqual(5);
    expect(rows.map((r) => r.details)).toEqual(expect.arrayContaining(['took out takeout.example as parquet', 'took out takeout.example as xlsx']));
    expect(rows.every((r) => r.actor_user_id === seeded.admin.id && r.site_id === seeded.site.id)).toBe(true);
  });

  it('refuses a site viewer (403), any token, and an unknown format', async () => {
    expect((await fetch(takeoutUrl('csv'), { headers: { Cookie: seeded.viewer.cookie } })).status).toBe(403);
    const token = (await createApiClient(t.node.runtime.metadata(), { name: 'reader', scopes: ['stats:read'], sites: [{ siteId: seeded.site.id, role: 'admin' }], ownerUserId: seeded.admin.id })).token;
    expect((await fetch(takeoutUrl('csv'), { headers: { Authorization: `Bearer ${token}` } })).status).toBe(403);
    const bad = await fetch(takeoutUrl('xml'), { headers: { Cookie: seeded.admin.cookie } });
    expect(bad.status).toBe(400);
    expect((await bad.json()).fields).toEqual([expect.objectContaining({ field: 'format', message: 'format must be one of: csv, ndjson, json, parquet, xlsx' })]);
  });
});

describe('spreadsheets past the row limit', () => {
  it('continue a table on `<name> (2)`, `<name> (3)`…, each with the header', async () => {
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (chunk: Buffer) => chunks.push(chunk));
    async function* rows() {
      for (let i = 1; i <= 7; i++) yield [`row ${i}`, i];
    }
    const counts = await writeWorkbook(out, [{ name: 'pageviews', columns: ['path', 'n'], rows: rows() }, { name: 'events', columns: ['name'], rows: (async function* () {})() }], 4);
    expect(counts).toEqual(new Map([['pageviews', 7], ['events', 0]]));
    const sheets = await readWorkbook(Buffer.concat(chunks));
    expect(sheets).toEqual([
      { name: 'pageviews', rows: [['path', 'n'], ['row 1', 1], ['row 2', 2], ['row 3', 3]] },
      { name: 'pageviews (2)', rows: [['path', 'n'], ['row 4', 4], ['row 5', 5], ['row 6', 6]] },
      { name: 'pageviews (3)', rows: [['path', 'n'], ['row 7', 7]] },
      { name: 'events', rows: [['name']] },
    ]);
  });

  it('split a site’s pageviews the same way in its takeout', async () => {
    const deps = { metadata: t.node.runtime.metadata(), analytics: t.node.runtime.analytics() };
    const file = await siteTakeout(deps, seeded.admin, seeded.site, 'xlsx', { maxSheetRows: 101 });
    const chunks: Buffer[] = [];
    for await (const chunk of file.body) chunks.push(chunk as Buffer);
    const sheets = await readWorkbook(Buffer.concat(chunks));
    const parts = sheets.filter((s) => s.name === 'pageviews' || s.name.startsWith('pageviews ('));
    expect(parts.map((s) => s.name)).toEqual(['pageviews', 'pageviews (2)', 'pageviews (3)'].slice(0, Math.ceil(seeded.counts.pageviews / 100)));
    expect(parts.reduce((sum, s) => sum + s.rows.length - 1, 0)).toBe(seeded.counts.pageviews);
  });
});

describe('GET /api/sites/:id/hits/export?format=xlsx', () => {
  it('answers the range’s pageviews as one sheet, timestamps and 64-bit ids as text', async () => {
    const res = await fetch(`${t.url}/api/sites/${seeded.site.id}/hits/export?from=2026-01-01&to=2026-01-31&format=xlsx`, { headers: { Cookie: seeded.viewer.cookie } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="takeout.example-pageviews-2026-01-01-to-2026-01-31.xlsx"');
    const [sheet, ...more] = await readWorkbook(Buffer.from(await res.arrayBuffer()));
    expect(more).toEqual([]);
    expect(sheet.name).toBe('pageviews');
    const expected = await stored(
      `SELECT concat(replaceOne(toString(ts), ' ', 'T'), 'Z') AS ts, toString(visitor_id) AS visitor_id, path FROM {db:Identifier}.hits WHERE site_id = {site:UUID} ORDER BY ts, hit_id`,
    );
    const [header, ...rows] = sheet.rows;
    const at = (name: string) => header.indexOf(name);
    expect(rows.map((r) => [r[at('ts')], r[at('visitor_id')], r[at('path')]])).toEqual(expected.map((r) => [r.ts, r.visitor_id, r.path]));
    expect(typeof rows[0][at('screen_width')]).toBe('number');
  });
});

describe('GET /api/user/takeout', () => {
  it('holds the person’s profile, teams, sites, API clients, sign-in methods and audit entries, and no secret', async () => {
    const me = seeded.admin;
    await createApiClient(t.node.runtime.metadata(), { name: 'deploy bot', scopes: ['stats:read'], sites: [{ siteId: seeded.site.id, role: 'viewer' }], ownerUserId: me.id });
    const { res, bytes } = await download(`${t.url}/api/user/takeout?format=ndjson`, me);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toContain(`${me.email}-takeout-`);
    const entries = await readZip(bytes);
    const manifest = JSON.parse(entries.get('manifest.json')!.toString());
    expect(manifest).toMatchObject({ kind: 'plumb-account-takeout', version: 1, format: 'ndjson', user: { id: me.id, email: me.email } });
    expect(manifest.tables.map((table: { name: string }) => table.name)).toEqual(['profile', 'teams', 'sites', 'api_clients', 'sign_in', 'passkeys', 'sign_in_providers', 'audit']);
    const table = (name: string) => rowsOf('ndjson', entries.get(`${name}.ndjson`)!);
    expect(await table('profile')).toEqual([expect.objectContaining({ id: me.id, email: me.email, role: 'user' })]);
    expect(await table('sites')).toEqual([{ id: seeded.site.id, domain: 'takeout.example', team_id: seeded.site.team_id, timezone: 'Europe/Berlin', role: 'admin' }]);
    const client = (await table('api_clients')).find((c) => c.name === 'deploy bot')!;
    expect(JSON.parse(String(client.scopes))).toEqual(['stats:read']);
    expect(JSON.parse(String(client.sites))).toEqual([{ site_id: seeded.site.id, role: 'viewer' }]);
    expect(await table('sign_in')).toEqual([{ password_set: true, totp_enabled: false, totp_enabled_at: null, recovery_codes_left: 0, passkeys: 0 }]);
    // The goals and share link the seed created in this person's name.
    const audit = await table('audit');
    expect(audit.map((entry) => entry.action)).toEqual(expect.arrayContaining(['goal.created', 'funnel.created', 'site.share.created', 'site.takeout']));

    const everything = [...entries.values()].map((b) => b.toString()).join('\n');
    const { rows } = await t.node.runtime.metadata().query<{ password_hash: string; token_hash: Buffer }>(
      'SELECT u.password_hash, c.token_hash FROM users u JOIN api_clients c ON c.owner_user_id = u.id WHERE u.id = $1',
      [me.id],
    );
    expect(everything).not.toContain(rows[0].password_hash);
    expect(everything).not.toContain(rows[0].token_hash.toString('hex'));
    expect(everything).not.toMatch(/password_hash|token_hash|totp_secret|public_key/);

    const { rows: logged } = await t.node.runtime.metadata().query<{ actor_user_id: string; target_user_id: string }>("SELECT actor_user_id, target_user_id FROM instance_audit_log WHERE action = 'user.takeout'");
    expect(logged).toEqual([{ actor_user_id: me.id, target_user_id: me.id }]);
  });

  it('answers a spreadsheet by default, and an account with nothing yet', async () => {
    const { res, bytes } = await download(`${t.url}/api/user/takeout`, instanceOwner);
    expect(res.status).toBe(200);
    const sheets = await readWorkbook(bytes);
    expect(sheets.map((s) => s.name)).toEqual(['manifest', 'profile', 'teams', 'sites', 'api_clients', 'sign_in', 'passkeys', 'sign_in_providers', 'audit']);
    expect(sheets[1].rows[1]).toEqual(expect.arrayContaining([instanceOwner.id, instanceOwner.email, 'owner']));
    expect((await fetch(`${t.url}/api/user/takeout`)).status).toBe(401);
  });
});

describe('a client that hangs up midway through a takeout', () => {
  const hangUp = (url: string, who: Person) =>
    new Promise<void>((resolve, reject) => {
      const req = get(url, { headers: { Cookie: who.cookie } }, (res) => {
        if (res.statusCode !== 200) reject(new Error(`answered ${res.statusCode}`));
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', (error) => (req.destroyed ? undefined : reject(error)));
    });

  beforeAll(async () => {
    const analytics = t.node.runtime.analytics();
    await analytics.command(
      `INSERT INTO {db:Identifier}.hits (ts, site_id, session_id, visitor_id, hit_id, path, hostname, is_entry, source)
       SELECT toDateTime64('2026-02-01 00:00:00', 3, 'UTC') + toIntervalSecond(number), {site:UUID}, number % 5000, number % 3000,
              generateUUIDv4(number), concat('/page/', toString(number % 400)), 'takeout.example', 1, 'server'
       FROM numbers(300000)`,
      { db: seeded.site.tenant, site: seeded.site.id },
    );
  }, 60_000);

  it.each(['csv', 'xlsx'])('stops the store’s stream (%s)', async (format) => {
    const store: AnalyticsStore = t.node.runtime.analytics();
    const originals = { streamBytes: store.streamBytes.bind(store), stream: store.stream.bind(store) };
    let open = 0;
    let pageviewRows = 0;
    const counted = <T>(source: AsyncIterable<T>, sql: string): AsyncIterable<T> => ({
      async *[Symbol.asyncIterator]() {
        open++;
        try {
          for await (const item of source) {
            if (sql.includes('.hits')) pageviewRows++;
            yield item;
          }
        } finally {
          open--;
        }
      },
    });
    store.streamBytes = (sql, params, rowFormat) => counted(originals.streamBytes(sql, params, rowFormat), sql);
    store.stream = (sql, params) => counted(originals.stream(sql, params), sql);
    try {
      await hangUp(takeoutUrl(format), seeded.admin);
      await waitFor(async () => open === 0, 10_000, () => 'a store stream is still open');
      // Blocks (csv) or rows (xlsx) of the pageviews read before the writer noticed: far from all.
      expect(pageviewRows).toBeLessThan(format === 'csv' ? 20 : 200_000);
    } finally {
      store.streamBytes = originals.streamBytes;
      store.stream = originals.stream;
    }
  }, 60_000);

  it('leaves no temporary file behind (parquet)', async () => {
    const temporary = () => readdirSync(tmpdir()).filter((name) => name.startsWith('plumb-takeout-'));
    const before = new Set(temporary());
    await hangUp(takeoutUrl('parquet'), seeded.admin);
    await waitFor(async () => temporary().every((name) => before.has(name)), 10_000, () => `left behind: ${temporary().join(', ')}`);
    // The node still answers a whole takeout afterwards.
    expect((await download(takeoutUrl('json'), seeded.admin)).res.status).toBe(200);
  }, 60_000);
});
