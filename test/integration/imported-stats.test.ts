// Imported data in the stats: a Plausible export of 60 days (test/support/plausible-export.ts) is
// validated and run through the Plausible source into a site's tenant, next to a few days of
// native visits (one of them also in the export), and the stats API must show the export's own
// totals: KPIs, timeseries, every breakdown that has an imported table, native data winning on
// the day both have, with_imported=false, filters that leave imported data out, comparisons.
// The same statements run once more on the ClickHouse HTTP transport, against the test server.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { siteBreakdown, siteStats, type StatsSite } from '../../lib/analytics/query/stats.ts';
import { rebuildVisits } from '../../lib/analytics/visits.ts';
import type { ImportContext, ImportManifest, StagedFile } from '../../lib/imports/source.ts';
import { plausibleSource } from '../../lib/imports/sources/plausible.ts';
import { silentLog } from '../../lib/log.ts';
import { createSite, type Site } from '../../lib/sites/sites.ts';
import { type AnalyticsStore, openAnalyticsStore } from '../../lib/stores/analytics/index.ts';
import { countOlderSiteRows } from '../../lib/stores/archive.ts';
import { as, type Person, person } from '../support/accounts.ts';
import { startTestNode, type TestNode } from '../support/node.ts';
import { days, type ExportRow, exportFiles, exportRows, stagingDir, total } from '../support/plausible-export.ts';
import { zipOf } from '../support/zip.ts';

const TZ = 'Europe/Berlin';
const IMPORT_ID = '0f0f0f0f-1111-4222-8333-444444444444';

// ---- Native visits: three a day on 2024-02-28 (a day the export also has), 03-01 and 03-02 ----
const NATIVE_DAYS = ['2024-02-28', '2024-03-01', '2024-03-02'];
/** Each visit: '/' then '/pricing' a minute later, from Google, on a desktop Chrome in Berlin. */
function nativeHits(siteId: string) {
  return NATIVE_DAYS.flatMap((day, d) =>
    [0, 1, 2].flatMap((v) => {
      const start = Date.parse(`${day}T09:00:00Z`) + v * 3_600_000;
      const who = { session_id: String(5_000 + d * 10 + v), visitor_id: String(7_000 + d * 10 + v), site_id: siteId, hostname: 'stats.example', screen_width: 1280, is_entry: 0, source: 'tracker' };
      const origin = { referrer: 'google.com', referrer_source: 'Google', channel: 'search', country: 'DE', region: 'Berlin', browser: 'Chrome', os: 'macOS', device: 'desktop' };
      return [
        { ...who, ...origin, ts: new Date(start), path: '/', hit_id: crypto.randomUUID() },
        { ...who, ...origin, ts: new Date(start + 60_000), path: '/pricing', hit_id: crypto.randomUUID() },
      ];
    }),
  );
}
/** What one native day adds: 3 visitors and visits, 6 pageviews, no bounce, 3 minutes in all. */
const NATIVE_DAY = { visitors: 3, visits: 3, pageviews: 6, bounces: 0, duration_s: 180 };

// ---- True answers, from the export's rows in plain JS ----
type Figures = { visitors: number; visits: number; pageviews: number; bounces: number; duration_s: number };
const ZERO: Figures = { visitors: 0, visits: 0, pageviews: 0, bounces: 0, duration_s: 0 };
const plus = (a: Figures, b: Figures): Figures => ({ visitors: a.visitors + b.visitors, visits: a.visits + b.visits, pageviews: a.pageviews + b.pageviews, bounces: a.bounces + b.bounces, duration_s: a.duration_s + b.duration_s });
const round = (value: number, decimals: number) => Math.round(value * 10 ** decimals) / 10 ** decimals;

/** imported_visitors over some days. */
function importedFigures(over: string[]): Figures {
  const rows = exportRows(over).imported_visitors;
  return { visitors: total(rows, 'visitors'), visits: total(rows, 'visits'), pageviews: total(rows, 'pageviews'), bounces: total(rows, 'bounces'), duration_s: total(rows, 'visit_duration') };
}
function kpis(f: Figures, engagement_time = 0) {
  return {
    visitors: f.visitors,
    visits: f.visits,
    pageviews: f.pageviews,
    views_per_visit: f.visits ? round(f.pageviews / f.visits, 2) : 0,
    bounce_rate: f.visits ? round((100 * f.bounces) / f.visits, 1) : 0,
    visit_duration: f.visits ? Math.round(f.duration_s / f.visits) : 0,
    engagement_time,
  };
}

/**
 * A breakdown's rows from one imported table over some days: rows grouped by `plumbValue`, visits
 * from `visitsColumn`; `rated` false for page rows, which have no bounces or duration.
 */
function importedBreakdown(table: string, over: string[], plumbValue: (row: ExportRow) => string, visitsColumn = 'visits', rated = true) {
  const groups = new Map<string, ExportRow[]>();
  for (const row of exportRows(over)[table]) groups.set(plumbValue(row), [...(groups.get(plumbValue(row)) ?? []), row]);
  return [...groups.entries()]
    .map(([value, rows]) => {
      const visits = total(rows, visitsColumn);
      return {
        value,
        visitors: total(rows, 'visitors'),
        visits,
        pageviews: total(rows, 'pageviews'),
        bounce_rate: rated ? round((100 * total(rows, 'bounces')) / visits, 1) : 0,
        visit_duration: rated ? Math.round(total(rows, 'visit_duration') / visits) : 0,
      };
    })
    .sort((a, b) => b.visitors - a.visitors || (a.value < b.value ? -1 : 1));
}

const JANUARY = days('2024-01-01', 31);
const FEBRUARY = days('2024-02-01', 29);
/** Plausible's spelling → Plumb's, as the tests expect them written. */
const SOURCE: Record<string, string> = { Google: 'Google', 'Direct / None': '', Newsletter: 'Newsletter' };
const DEVICE: Record<string, string> = { Desktop: 'desktop', Laptop: 'desktop', Mobile: 'mobile', Tablet: 'tablet' };
const BROWSER: Record<string, string> = { Chrome: 'Chrome', 'Microsoft Edge': 'Edge', Safari: 'Safari' };
const OS: Record<string, string> = { Mac: 'macOS', Windows: 'Windows', 'GNU/Linux': 'Linux' };
const COUNTRY: Record<string, string> = { DE: 'DE', US: 'US', ZZ: '' };
const REGION: Record<string, string> = { 'DE-BE': 'DE-BE', 'US-CA': 'US-CA', '(not set)': '' };
const REFERRER: Record<string, string> = { 'www.google.com/search': 'google.com', '': '' };

/** dimension, imported table, the row's value in Plumb's spelling, the column counting visits, whether rows carry bounces and duration. */
const BREAKDOWNS: [string, string, (r: ExportRow) => string, string, boolean][] = [
  ['sources', 'imported_sources', (r) => SOURCE[r.source], 'visits', true],
  ['referrers', 'imported_sources', (r) => REFERRER[r.referrer], 'visits', true],
  ['utm_source', 'imported_sources', (r) => String(r.utm_source), 'visits', true],
  ['utm_medium', 'imported_sources', (r) => String(r.utm_medium), 'visits', true],
  ['utm_campaign', 'imported_sources', (r) => String(r.utm_campaign), 'visits', true],
  ['utm_content', 'imported_sources', (r) => String(r.utm_content), 'visits', true],
  ['utm_term', 'imported_sources', (r) => String(r.utm_term), 'visits', true],
  ['pages', 'imported_pages', (r) => String(r.page), 'visits', false],
  ['entry_pages', 'imported_entry_pages', (r) => String(r.entry_page), 'entrances', true],
  ['exit_pages', 'imported_exit_pages', (r) => String(r.exit_page), 'exits', true],
  ['countries', 'imported_locations', (r) => COUNTRY[r.country], 'visits', true],
  ['regions', 'imported_locations', (r) => REGION[r.region], 'visits', true],
  ['devices', 'imported_devices', (r) => DEVICE[r.device], 'visits', true],
  ['browsers', 'imported_browsers', (r) => BROWSER[r.browser], 'visits', true],
  ['os', 'imported_operating_systems', (r) => OS[r.operating_system], 'visits', true],
];

// ---- Loading: the export through the source, the native visits straight into hits ----
function context(store: AnalyticsStore, site: StatsSite & { domain: string }): ImportContext {
  return { site: { id: site.id, domain: site.domain, timezone: site.timezone, tenant: site.tenant }, importId: IMPORT_ID, store, now: new Date(), signal: new AbortController().signal, progress: () => undefined };
}

async function load(store: AnalyticsStore, site: StatsSite & { domain: string }, files: StagedFile[]): Promise<{ validated: ImportManifest; ran: ImportManifest }> {
  await store.insert('hits', nativeHits(site.id), { database: site.tenant });
  await rebuildVisits(store, site.tenant);
  const validated = await plausibleSource.validate(files, context(store, site));
  const ran = await plausibleSource.run(files, context(store, site));
  return { validated, ran };
}

let staging: Awaited<ReturnType<typeof stagingDir>>;
let files: StagedFile[];
beforeAll(async () => {
  staging = await stagingDir();
  files = [await staging.stage('plausible-export.zip', await zipOf(exportFiles()))];
});
afterAll(() => staging.remove());

// ---- Through the API, on the embedded store ----
describe('stats with imported Plausible data', () => {
  let t: TestNode;
  let site: Site;
  let viewer: Person;
  let manifests: { validated: ImportManifest; ran: ImportManifest };

  beforeAll(async () => {
    t = await startTestNode({ PLUMB_API_RATE_PER_SECOND: '100000', PLUMB_API_BURST: '100000' });
    site = await createSite(t.node.runtime.metadata(), { teamId: t.team.id, domain: 'stats.example', timezone: TZ });
    viewer = await person(t);
    for (const id of [site.id, t.site.id]) await t.node.runtime.metadata().query('INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, $3)', [id, viewer.id, 'viewer']);
    const analytics = t.node.runtime.analytics();
    manifests = await load(analytics, { ...site, tenant: analytics.tenantDatabase(t.team.id) }, files);
    // What the import's run leaves in the metadata store once it has written its rows.
    await t.node.runtime.metadata().query("INSERT INTO imports (id, site_id, source, state, created_by, completed_at) VALUES ($1, $2, 'plausible', 'completed', $3, now())", [IMPORT_ID, site.id, viewer.id]);
  }, 60_000);

  afterAll(() => t.stop());

  // biome-ignore lint/suspicious/noExplicitAny: response bodies are checked field by field
  async function get(path: string, query: Record<string, string | string[]>, siteId = site.id): Promise<any> {
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) for (const v of [value].flat()) search.append(key, v);
    const res = await as(t, viewer, 'GET', `/api/sites/${siteId}/${path}?${search}`);
    expect(res.status).toBe(200);
    return res.body;
  }
  const breakdown = (dimension: string, query: Record<string, string | string[]>) => get('stats/breakdown', { dimension, limit: '100', ...query });

  describe('the import', () => {
    it('validates and runs the whole export, and sees the one day it shares with native data', () => {
      for (const manifest of [manifests.validated, manifests.ran]) {
        expect([manifest.rows_accepted, manifest.rows_skipped, manifest.from, manifest.to]).toEqual([1500, 0, '2024-01-01', '2024-02-29']);
        expect(manifest.overlap).toEqual({ days: 1, from: '2024-02-28', to: '2024-02-28' });
      }
    });

    it('lets retention count a site’s imported days by their date', async () => {
      const analytics = t.node.runtime.analytics();
      const tenant = analytics.tenantDatabase(t.team.id);
      expect(await countOlderSiteRows(analytics, tenant, site.id, 'imported_visitors', new Date('2024-01-11T00:00:00Z'))).toBe(10);
      expect(await countOlderSiteRows(analytics, tenant, site.id, 'imported_devices', new Date('2024-01-11T00:00:00Z'))).toBe(40);
    });
  });

  describe('GET /api/sites/:id/stats', () => {
    it('answers the KPIs of imported days as the export’s totals, visitors summed over the days', async () => {
      const body = await get('stats', { from: '2024-01-01', to: '2024-01-31' });
      expect(body.kpis).toEqual({ ...kpis(importedFigures(JANUARY)), live_visitors: expect.any(Number) });
      expect(body.imported).toEqual({ included: true, ranges: [{ from: '2024-01-01', to: '2024-01-31' }] });
    });

    it('fills each day of the timeseries with that day’s imported figures', async () => {
      const body = await get('stats', { from: '2024-01-01', to: '2024-01-31' });
      expect(body.range.interval).toBe('day');
      expect(body.timeseries).toHaveLength(31);
      expect(body.timeseries.map((p: { visitors: number; visits: number; pageviews: number }) => [p.visitors, p.visits, p.pageviews])).toEqual(
        JANUARY.map((day) => {
          const f = importedFigures([day]);
          return [f.visitors, f.visits, f.pageviews];
        }),
      );
      expect(body.timeseries[0].bucket).toBe('2023-12-31T23:00:00.000Z');
    });

    it('sums the imported days of a week in its bucket', async () => {
      const body = await get('stats', { from: '2024-01-01', to: '2024-02-29', interval: 'week' });
      const mondays = days('2024-01-01', 63).filter((_, i) => i % 7 === 0); // 2024-01-01 is a Monday
      expect(body.timeseries.map((p: { visitors: number }) => p.visitors)).toEqual(
        mondays.map((monday) => {
          const week = days(monday, 7).filter((d) => d <= '2024-02-29' && d !== '2024-02-28');
          return importedFigures(week).visitors + (monday === '2024-02-26' ? NATIVE_DAY.visitors : 0);
        }),
      );
    });

    it('lets native data win on the day both have, and lists the imported days as ranges', async () => {
      const body = await get('stats', { from: '2024-02-20', to: '2024-03-02' });
      const imported = [...days('2024-02-20', 8), '2024-02-29'];
      let native = ZERO;
      for (let i = 0; i < 3; i++) native = plus(native, NATIVE_DAY);
      expect(body.kpis).toEqual({ ...kpis(plus(importedFigures(imported), native)), live_visitors: expect.any(Number) });
      expect(body.imported).toEqual({ included: true, ranges: [{ from: '2024-02-20', to: '2024-02-27' }, { from: '2024-02-29', to: '2024-02-29' }] });
      const byDay = Object.fromEntries(body.timeseries.map((p: { bucket: string; visitors: number; pageviews: number }, i: number) => [days('2024-02-20', 12)[i], [p.visitors, p.pageviews]]));
      expect(byDay['2024-02-28']).toEqual([3, 6]);
      expect(byDay['2024-02-29']).toEqual([importedFigures(['2024-02-29']).visitors, importedFigures(['2024-02-29']).pageviews]);
      expect(byDay['2024-03-01']).toEqual([3, 6]);
    });

    it('leaves imported data out with with_imported=false', async () => {
      const body = await get('stats', { from: '2024-01-01', to: '2024-01-31', with_imported: 'false' });
      expect(body.kpis).toEqual({ ...kpis(ZERO), live_visitors: expect.any(Number) });
      expect(body.timeseries.every((p: { visits: number }) => p.visits === 0)).toBe(true);
      expect(body.imported).toEqual({ included: false, ranges: [] });
      const kept = await get('stats', { from: '2024-01-01', to: '2024-01-31', with_imported: 'true' });
      expect(kept.imported.included).toBe(true);
    });

    it('leaves imported data out under any filter, and says so', async () => {
      const body = await get('stats', { from: '2024-02-20', to: '2024-03-02', filter: 'device:is:desktop' });
      let native = ZERO;
      for (let i = 0; i < 3; i++) native = plus(native, NATIVE_DAY);
      expect(body.kpis).toEqual({ ...kpis(native), live_visitors: expect.any(Number) });
      expect(body.imported).toEqual({ included: false, ranges: [] });
    });

    it('adds imported figures to the KPIs of a day but not to its hourly buckets', async () => {
      const body = await get('stats', { from: '2024-01-10', to: '2024-01-10' });
      expect(body.range.interval).toBe('hour');
      expect(body.kpis.visitors).toBe(importedFigures(['2024-01-10']).visitors);
      expect(body.timeseries.every((p: { visitors: number }) => p.visitors === 0)).toBe(true);
      expect(body.imported.ranges).toEqual([{ from: '2024-01-10', to: '2024-01-10' }]);
    });

    it('counts only whole local days of a range given as instants', async () => {
      const body = await get('stats', { from: '2024-01-10T12:00:00Z', to: '2024-01-12T23:00:00Z' });
      expect(body.imported.ranges).toEqual([{ from: '2024-01-11', to: '2024-01-12' }]);
      expect(body.kpis.visitors).toBe(importedFigures(['2024-01-11', '2024-01-12']).visitors);
    });

    it('compares with a range of imported days by the same rule', async () => {
      const body = await get('stats', { from: '2024-02-01', to: '2024-02-29', compare: 'previous_period' });
      const previous = days('2024-01-03', 29);
      expect(body.comparison.kpis).toEqual(kpis(importedFigures(previous)));
      expect(body.comparison.imported).toEqual({ included: true, ranges: [{ from: '2024-01-03', to: '2024-01-31' }] });
      expect(body.kpis.visitors).toBe(importedFigures(FEBRUARY.filter((d) => d !== '2024-02-28')).visitors + NATIVE_DAY.visitors);
    });

    it('answers a site without a completed import as before, saying it holds none, without reading its imported tables', async () => {
      const analytics = t.node.runtime.analytics();
      const original = analytics.query.bind(analytics);
      const statements: string[] = [];
      analytics.query = ((sql: string, params?: Record<string, unknown>) => {
        statements.push(sql);
        return original(sql, params);
      }) as typeof analytics.query;
      try {
        const body = await get('stats', { from: '2024-01-01', to: '2024-01-31' }, t.site.id);
        expect(body.kpis).toEqual({ ...kpis(ZERO), live_visitors: expect.any(Number) });
        expect(body.imported).toEqual({ included: false, ranges: [] });
        const sources = await get('stats/breakdown', { dimension: 'sources', from: '2024-01-01', to: '2024-01-31' }, t.site.id);
        expect([sources.rows, sources.imported]).toEqual([[], { included: false, ranges: [] }]);
      } finally {
        analytics.query = original;
      }
      expect(statements.filter((sql) => sql.includes('imported_') || sql.includes('NOT IN'))).toEqual([]);
    });

    it('leaves out the rows of an import that has not completed', async () => {
      const setState = (state: string) => t.node.runtime.metadata().query('UPDATE imports SET state = $2 WHERE id = $1', [IMPORT_ID, state]);
      // Validated, not running: the node's import runner takes an unclaimed running import for one
      // a stopped leader left, and would delete its rows to run it again.
      await setState('validated');
      try {
        const body = await get('stats', { from: '2024-01-01', to: '2024-01-31' });
        expect(body.kpis).toEqual({ ...kpis(ZERO), live_visitors: expect.any(Number) });
        expect(body.imported).toEqual({ included: false, ranges: [] });
      } finally {
        await setState('completed');
      }
      expect((await get('stats', { from: '2024-01-01', to: '2024-01-31' })).imported.included).toBe(true);
    });
  });

  describe('GET /api/sites/:id/stats/kpis and /stats/timeseries', () => {
    it('add the imported days the same way', async () => {
      const k = await get('stats/kpis', { from: '2024-01-01', to: '2024-01-31' });
      expect(k.kpis).toEqual(kpis(importedFigures(JANUARY)));
      expect(k.imported.ranges).toEqual([{ from: '2024-01-01', to: '2024-01-31' }]);
      const ts = await get('stats/timeseries', { from: '2024-01-01', to: '2024-01-31', interval: 'month' });
      expect(ts.timeseries).toEqual([{ bucket: '2023-12-31T23:00:00.000Z', visitors: importedFigures(JANUARY).visitors, visits: importedFigures(JANUARY).visits, pageviews: importedFigures(JANUARY).pageviews }]);
    });
  });

  describe('GET /api/sites/:id/stats/breakdown', () => {
    it.each(BREAKDOWNS)('answers %s of imported days from %s, in Plumb’s values', async (dimension, table, plumbValue, visits, rated) => {
      const body = await breakdown(dimension, { from: '2024-01-01', to: '2024-01-31' });
      expect(body.rows).toEqual(importedBreakdown(table, JANUARY, plumbValue, visits, rated));
      expect(body.total).toBe(body.rows.length);
      expect(body.imported).toEqual({ included: true, ranges: [{ from: '2024-01-01', to: '2024-01-31' }] });
    });

    it('adds native rows to imported ones of the same value, native winning on the shared day', async () => {
      const body = await breakdown('sources', { from: '2024-02-20', to: '2024-03-02' });
      const expected = importedBreakdown('imported_sources', [...days('2024-02-20', 8), '2024-02-29'], (r) => SOURCE[r.source]);
      const google = expected.find((r) => r.value === 'Google')!;
      const visits = google.visits + 9;
      const googleRow = { ...google, visitors: google.visitors + 9, visits, pageviews: google.pageviews + 18 };
      const importedGoogle = exportRows([...days('2024-02-20', 8), '2024-02-29']).imported_sources.filter((r) => r.source === 'Google');
      googleRow.bounce_rate = round((100 * total(importedGoogle, 'bounces')) / visits, 1);
      googleRow.visit_duration = Math.round((total(importedGoogle, 'visit_duration') + 9 * 60) / visits);
      expect(body.rows).toEqual([googleRow, ...expected.filter((r) => r.value !== 'Google')].sort((a, b) => b.visitors - a.visitors || (a.value < b.value ? -1 : 1)));
    });

    it('pages its merged rows and counts them all', async () => {
      const first = await get('stats/breakdown', { dimension: 'pages', from: '2024-01-01', to: '2024-01-31', limit: '2' });
      const rest = await get('stats/breakdown', { dimension: 'pages', from: '2024-01-01', to: '2024-01-31', limit: '2', offset: '2' });
      const all = importedBreakdown('imported_pages', JANUARY, (r) => String(r.page), 'visits', false);
      expect([first.rows, first.total, first.has_more]).toEqual([all.slice(0, 2), 3, true]);
      expect([rest.rows, rest.total, rest.has_more]).toEqual([all.slice(2), 3, false]);
    });

    it('keeps imported rows under a filter on the breakdown’s own table', async () => {
      const body = await breakdown('pages', { from: '2024-01-01', to: '2024-01-31', filter: 'page:is:/pricing' });
      expect(body.rows).toEqual(importedBreakdown('imported_pages', JANUARY, (r) => String(r.page), 'visits', false).filter((r) => r.value === '/pricing'));
      expect(body.imported.included).toBe(true);
      const campaigns = await breakdown('utm_campaign', { from: '2024-01-01', to: '2024-01-31', filter: 'utm_medium:is:email' });
      expect(campaigns.rows.map((r: { value: string }) => r.value)).toEqual(['winter']);
    });

    it('leaves imported rows out under a filter on another table, and says so', async () => {
      const body = await breakdown('sources', { from: '2024-01-01', to: '2024-01-31', filter: 'country:is:DE' });
      expect(body.rows).toEqual([]);
      expect(body.imported).toEqual({ included: false, ranges: [] });
    });

    it.each(['hostnames', 'channels', 'ai_assistants'])('has no imported rows for %s', async (dimension) => {
      const body = await breakdown(dimension, { from: '2024-01-01', to: '2024-01-31' });
      expect(body.rows).toEqual([]);
      expect(body.imported).toEqual({ included: false, ranges: [] });
    });

    it('leaves imported rows out with with_imported=false', async () => {
      const body = await breakdown('devices', { from: '2024-01-01', to: '2024-01-31', with_imported: 'false' });
      expect(body.rows).toEqual([]);
      expect(body.imported.included).toBe(false);
    });

    it('compares each row with the imported days of the comparison range', async () => {
      const body = await breakdown('devices', { from: '2024-02-01', to: '2024-02-10', compare: 'previous_period' });
      const previous = importedBreakdown('imported_devices', days('2024-01-22', 10), (r) => DEVICE[r.device]);
      expect(body.rows.map((r: { value: string; comparison: { visitors: number } }) => [r.value, r.comparison.visitors])).toEqual(
        importedBreakdown('imported_devices', days('2024-02-01', 10), (r) => DEVICE[r.device]).map((r) => [r.value, previous.find((p) => p.value === r.value)!.visitors]),
      );
    });
  });
});

// ---- The same statements on the ClickHouse HTTP transport ----
describe('stats with imported data on ClickHouse over HTTP', () => {
  const root = new URL('../../', import.meta.url).pathname;
  const dataDir = mkdtempSync(join(tmpdir(), 'plumb-imported-http-'));
  let server: ChildProcessWithoutNullStreams | undefined;
  let store: AnalyticsStore;
  const site = { id: '21212121-3434-4565-8787-909090909090', domain: 'stats.example', timezone: TZ, tenant: '' };

  beforeAll(async () => {
    const child = spawn(join(root, 'node_modules/.bin/node'), [join(root, 'test/support/clickhouse-test-server.ts'), '--port', '0', '--data-dir', dataDir], { stdio: ['pipe', 'pipe', 'pipe'] });
    server = child;
    const url = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`test server exited with ${code}`)));
    });
    store = await openAnalyticsStore({ dataDir: '/nonexistent', clickhouseUrl: url, log: silentLog });
    site.tenant = await store.ensureTenant('abababab-1212-4343-8565-787878787878');
    await load(store, site, files);
  }, 60_000);

  afterAll(async () => {
    await store?.close();
    if (server && server.exitCode === null) {
      const exited = once(server, 'exit');
      server.kill('SIGTERM');
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  }, 30_000);

  it('answers KPIs, the imported ranges and a breakdown as on chDB', async () => {
    const stats = await siteStats(store, site, { from: '2024-02-20', to: '2024-03-02' });
    let native = ZERO;
    for (let i = 0; i < 3; i++) native = plus(native, NATIVE_DAY);
    expect(stats.kpis).toEqual({ ...kpis(plus(importedFigures([...days('2024-02-20', 8), '2024-02-29']), native)), live_visitors: 0 });
    expect(stats.imported.ranges).toEqual([{ from: '2024-02-20', to: '2024-02-27' }, { from: '2024-02-29', to: '2024-02-29' }]);
    const devices = await siteBreakdown(store, site, { dimension: 'devices', from: '2024-01-01', to: '2024-01-31', limit: 100, offset: 0 });
    expect(devices.rows).toEqual(importedBreakdown('imported_devices', JANUARY, (r) => DEVICE[r.device]));
  });
});
