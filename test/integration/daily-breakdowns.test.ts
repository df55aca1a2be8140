// The daily breakdowns (lib/analytics/daily-breakdowns.ts, lib/analytics/query/daily-breakdowns.ts):
// each closed UTC day's figures per value of every dimension, summed by the unfiltered breakdowns
// for the days where they are current. The specification is the visits: for every dimension,
// range, paging and comparison, and for panels asked for together, the answer is exactly the rows
// breakdownStatement (breakdownSetsStatement) gives from the visits table, before a day is counted,
// once it is, after its visits change and after it is counted again. The data set: twelve UTC days
// of a Berlin site's visits (ids of one UTC day each, as Plumb's are), some running past midnight,
// today among them. Run on chDB and on the ClickHouse HTTP transport.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { countDailyBreakdowns, dailyBreakdownsJob } from '../../lib/analytics/daily-breakdowns.ts';
import { StatsQueries } from '../../lib/analytics/query/batch.ts';
import { bucketsHoldUtcDays, dailyBreakdownStatement, dailyKpiStatement, dailySetsStatement, dailyStatsStatement } from '../../lib/analytics/query/daily-breakdowns.ts';
import { FILTER_SOURCES } from '../../lib/analytics/query/plan.ts';
import { type BreakdownPage, breakdownSetsStatement, breakdownStatement, kpiStatement, type Scope, type Statement, statsStatement, type VisitSource } from '../../lib/analytics/query/sql.ts';
import { siteBreakdown, siteKpis, siteStats } from '../../lib/analytics/query/stats.ts';
import { checkRange } from '../../lib/analytics/range.ts';
import { rebuildVisits } from '../../lib/analytics/visits.ts';
import { silentLog } from '../../lib/log.ts';
import { type AnalyticsStore, openAnalyticsStore } from '../../lib/stores/analytics/index.ts';
import { waitFor } from '../support/instance.ts';
import { seededRandom } from '../support/seeded-random.ts';

const TZ = 'Europe/Berlin';
const NOW = new Date('2025-06-12T10:00:00Z');
const DAYS = Array.from({ length: 12 }, (_, i) => `2025-06-${String(i + 1).padStart(2, '0')}`);
const CLOSED_DAYS = DAYS.slice(0, 11);
const PAGES = ['/', '/pricing', '/blog', '/blog/launch', '/docs', '/docs/api', '/about', '/a:b'];
const ORIGINS = [
  { referrer: '', referrer_source: '', channel: 'direct', utm_source: '' },
  { referrer: 'https://www.google.com/', referrer_source: 'Google', channel: 'search', utm_source: '' },
  { referrer: 'https://chatgpt.com/', referrer_source: 'ChatGPT', channel: 'ai', utm_source: '' },
  { referrer: '', referrer_source: 'Newsletter', channel: 'email', utm_source: 'newsletter' },
];
const CLIENTS = [
  { country: 'DE', region: 'Berlin', browser: 'Firefox', os: 'Linux', device: 'desktop' },
  { country: 'FR', region: 'Normandy', browser: 'Safari', os: 'iOS', device: 'mobile' },
  { country: 'US', region: 'California', browser: 'Chrome', os: 'Android', device: 'tablet' },
];
const [SEC, MIN] = [1000, 60_000];

/**
 * Hits and events of a site: per UTC day 30 visits of 18 visitors, 1–6 pageviews on two
 * hostnames, a third with a custom event, the last ones starting before midnight and running past it.
 */
function dataSet(siteId: string, seed: number) {
  const rand = seededRandom(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
  const hits: Record<string, unknown>[] = [];
  const events: Record<string, unknown>[] = [];
  let sessions = 0;
  DAYS.forEach((day, d) => {
    const midnight = Date.parse(`${day}T00:00:00Z`);
    const length = day === DAYS.at(-1) ? 10 * 3_600_000 : 86_400_000;
    for (let v = 0; v < 30; v++) {
      const session_id = String(100_000 + ++sessions);
      const visitor_id = String(5_000_000 + d * 100 + int(0, 17));
      const origin = ORIGINS[int(0, ORIGINS.length - 1)];
      const client = CLIENTS[int(0, CLIENTS.length - 1)];
      let ts = v >= 27 && length === 86_400_000 ? midnight + length - int(1, 5) * MIN : midnight + Math.floor(rand() * length);
      const start = ts;
      for (let p = int(1, 6); p > 0; p--) {
        const hostname = rand() < 0.2 ? 'shop.stats.example' : 'stats.example';
        hits.push({ ts: new Date(ts), site_id: siteId, session_id, visitor_id, hit_id: crypto.randomUUID(), path: PAGES[int(0, PAGES.length - 1)], hostname, ...origin, ...client });
        ts += int(20, 400) * SEC;
      }
      if (rand() < 0.33) events.push({ ts: new Date(start + 5 * SEC), site_id: siteId, session_id, visitor_id, event_id: crypto.randomUUID(), name: 'signup' });
    }
  });
  return { hits, events };
}

/** A scope of the site, from local dates (of `timezone`) or instants as the API takes them. */
function scopeOf(db: string, site: string, from: string, to: string, timezone = TZ): Scope {
  const range = checkRange({ from, to }, timezone, [], NOW);
  if (!range) throw new Error(`${from}…${to} is not a range`);
  return { db, site, from: range.from, to: range.to, filters: [] };
}
/** Ranges with partial UTC days at both ends (local dates), none whole, exactly whole UTC days, odd instants, today, and days without data. */
const RANGES: [string, string][] = [
  ['2025-06-01', '2025-06-12'],
  ['2025-06-03', '2025-06-03'],
  ['2025-06-02T00:00:00Z', '2025-06-09T00:00:00Z'],
  ['2025-06-02T05:00:00Z', '2025-06-09T17:30:00Z'],
  ['2025-05-20', '2025-06-12'],
  ['2025-06-10', '2025-06-12'],
];
/** The ranges above that hold whole closed UTC days. */
const RANGES_WITH_COUNTED_DAYS = 5;
const FIRST_PAGE: BreakdownPage = { limit: 100, offset: 0 };
const PAGINGS: BreakdownPage[] = [FIRST_PAGE, { limit: 3, offset: 0 }, { limit: 3, offset: 3 }, { limit: 5, offset: 100 }];
/** Every dimension a breakdown groups by: pages and hostnames, and each visit column. */
const SOURCES = [...new Set(Object.values(FILTER_SOURCES))];
const VISIT_SOURCES = SOURCES.filter((source): source is VisitSource => source.kind === 'visit');

/** The rows of a statement, numbers as numbers, in a stable order. */
async function rowsOf(store: AnalyticsStore, statement: Statement): Promise<Record<string, unknown>[]> {
  const rows = await store.query<Record<string, unknown>>(statement.sql, statement.params);
  return rows.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, k === 'value' ? v : Number(v)])));
}
const bySetAndValue = (a: Record<string, unknown>, b: Record<string, unknown>) => Number(a.set_index) - Number(b.set_index) || String(a.value).localeCompare(String(b.value));
const countedDays = (store: AnalyticsStore, scope: Scope) => new StatsQueries(store).countedDays(scope, NOW);

/**
 * For every range: each dimension's daily statement over the days counted now gives
 * breakdownStatement's rows (pages and sources under several pagings and `only`), and the
 * per-visit panels together give breakdownSetsStatement's. Answers how many ranges read counted days.
 */
async function expectSameAsVisits(store: AnalyticsStore, db: string, site: string): Promise<number> {
  let summed = 0;
  for (const [from, to] of RANGES) {
    const scope = scopeOf(db, site, from, to);
    const counted = await countedDays(store, scope);
    if (counted.length > 0) summed++;
    for (const source of SOURCES) {
      const pagings = source === FILTER_SOURCES.page || source === FILTER_SOURCES.source ? [...PAGINGS, { ...FIRST_PAGE, only: ['/docs', '/a:b', 'Google', '/nowhere'] }] : [FIRST_PAGE];
      for (const page of pagings) {
        const expected = await rowsOf(store, breakdownStatement(scope, source, page));
        const rows = await rowsOf(store, dailyBreakdownStatement(scope, source, counted, page));
        expect({ range: [from, to], column: source.column, page, rows }).toEqual({ range: [from, to], column: source.column, page, rows: expected });
      }
    }
    const sets = (await rowsOf(store, dailySetsStatement(scope, VISIT_SOURCES, counted))).sort(bySetAndValue);
    expect({ range: [from, to], sets }).toEqual({ range: [from, to], sets: (await rowsOf(store, breakdownSetsStatement(scope, VISIT_SOURCES))).sort(bySetAndValue) });
    // The KPIs, and the chart's buckets where they hold whole UTC days (in UTC, not in Berlin).
    for (const timezone of ['UTC', TZ]) {
      const local = scopeOf(db, site, from, to, timezone);
      const countedThere = await countedDays(store, local);
      expect({ range: [from, to], timezone, kpis: await rowsOf(store, dailyKpiStatement(local, countedThere)) }).toEqual({
        range: [from, to],
        timezone,
        kpis: await rowsOf(store, kpiStatement(local)),
      });
      expect(bucketsHoldUtcDays(local, timezone)).toBe(timezone === 'UTC');
      if (timezone !== 'UTC') continue;
      for (const interval of ['day', 'week', 'month'] as const) {
        const buckets = await rowsOf(store, dailyStatsStatement(local, interval, timezone, countedThere));
        expect({ range: [from, to], timezone, interval, buckets }).toEqual({ range: [from, to], timezone, interval, buckets: await rowsOf(store, statsStatement(local, interval, timezone)) });
      }
    }
  }
  return summed;
}

const count = async (store: AnalyticsStore, sql: string, params: Record<string, unknown>) => Number((await store.query<{ n: string }>(sql, params))[0].n);
/** How many expressions and aggregations the engine has compiled to machine code so far. */
const compiledStatements = (store: AnalyticsStore) => count(store, "SELECT sum(value) AS n FROM system.metrics WHERE metric = 'CompiledExpressionCacheCount'", {});

function describeOn(transport: string, open: () => Promise<{ store: AnalyticsStore; close(): Promise<void> }>) {
  describe(`daily breakdowns on ${transport}`, () => {
    const TEAM = '3b3b3b3b-4c4c-4d5d-8e6e-7f7f7f7f7f7f';
    const site = { id: '7a7a7a7a-1b1b-4c2c-8d3d-4e4e4e4e4e4e', timezone: TZ, tenant: '' };
    const other = '9c9c9c9c-2d2d-4e3e-8f4f-505050505050';
    let store: AnalyticsStore;
    let close: () => Promise<void>;
    const db = () => site.tenant;

    beforeAll(async () => {
      ({ store, close } = await open());
      site.tenant = await store.ensureTenant(TEAM);
      for (const [id, seed] of [
        [site.id, 20250612],
        [other, 20250613],
      ] as const) {
        const { hits, events } = dataSet(id, seed);
        await store.insert('hits', hits, { database: site.tenant });
        await store.insert('events', events, { database: site.tenant });
      }
      await rebuildVisits(store, site.tenant);
    }, 120_000);

    afterAll(async () => {
      await close?.();
    }, 30_000);

    it('answers from the visits alone before any day is counted', async () => {
      expect(await expectSameAsVisits(store, db(), site.id)).toBe(0);
    });

    it('counts every closed UTC day of every site once, and not today', async () => {
      const compiledBefore = await compiledStatements(store);
      expect(await countDailyBreakdowns(store, db(), NOW)).toEqual({ counted: 2 * CLOSED_DAYS.length, moved: 0, forgotten: 0 });
      // The same statements, day after day, are never compiled to machine code (LLVM stays out of the node).
      expect(await compiledStatements(store)).toBe(compiledBefore);
      expect(await countDailyBreakdowns(store, db(), NOW)).toEqual({ counted: 0, moved: 0, forgotten: 0 });
      const whole = scopeOf(db(), site.id, '2025-06-02T00:00:00Z', '2025-06-09T00:00:00Z');
      expect((await countedDays(store, whole)).map((c) => c.day)).toEqual(DAYS.slice(1, 8));
      const withToday = scopeOf(db(), site.id, '2025-06-01T00:00:00Z', '2025-06-13T00:00:00Z');
      expect((await countedDays(store, withToday)).map((c) => c.day)).toEqual(CLOSED_DAYS);
      // A local day of Berlin is parts of two UTC days: neither is whole in it.
      expect(await countedDays(store, scopeOf(db(), site.id, '2025-06-03', '2025-06-03'))).toEqual([]);
      // Every dimension of a day is counted, and its KPIs.
      const dimensions = await store.query<{ dimension: string }>('SELECT DISTINCT dimension FROM {db:Identifier}.daily_breakdowns ORDER BY dimension', { db: db() });
      expect(dimensions.map((d) => d.dimension)).toEqual([...SOURCES.map((source) => source.column), 'visits'].sort());
    });

    it('sums the counted days into the same rows as the visits give, for every dimension, range and paging', async () => {
      expect(await expectSameAsVisits(store, db(), site.id)).toBe(RANGES_WITH_COUNTED_DAYS);
    });

    it('reads the counted days from daily_breakdowns through the stats API, one panel or several at once', async () => {
      const [day] = await countedDays(store, scopeOf(db(), site.id, '2025-06-05T00:00:00Z', '2025-06-06T00:00:00Z'));
      const planted = (dimension: string, value: string) => ({ site_id: site.id, day: day.day, count_id: day.count, dimension, value, visitors: 7, visits: 7, pageviews: 9, bounces: 0, duration_ms: 0 });
      await store.insert('daily_breakdowns', [planted('pages', '/planted'), planted('country', 'PL'), planted('device', 'watch')], { database: db() });
      const ask = (dimension: 'pages' | 'countries' | 'devices') => siteBreakdown(store, site, { dimension, from: '2025-06-01', to: '2025-06-12', limit: 100, offset: 0 }, NOW);
      const planted7 = { visitors: 7, visits: 7, pageviews: 9 };
      expect((await ask('pages')).rows.find((row) => row.value === '/planted')).toMatchObject(planted7);
      // Asked together, the per-visit panels wait for the pages and go as one statement.
      const [pages, countries, devices] = await Promise.all([ask('pages'), ask('countries'), ask('devices')]);
      expect([pages, countries, devices].map((answer) => answer.rows.find((row) => ['/planted', 'PL', 'watch'].includes(row.value)))).toEqual([
        expect.objectContaining(planted7),
        expect.objectContaining(planted7),
        expect.objectContaining(planted7),
      ]);
      await store.command("DELETE FROM {db:Identifier}.daily_breakdowns WHERE value IN ('/planted', 'PL', 'watch')", { db: db() });
      expect((await ask('countries')).rows.map((row) => row.value)).not.toContain('PL');
    });

    it("reads the counted days' KPIs from daily_breakdowns through the stats API, and the chart's buckets where the site's days are UTC days", async () => {
      const inUtc = { ...site, timezone: 'UTC' };
      const request = { from: '2025-06-01', to: '2025-06-11' };
      const before = await siteStats(store, inUtc, request, NOW);
      const [day] = await countedDays(store, scopeOf(db(), site.id, '2025-06-05T00:00:00Z', '2025-06-06T00:00:00Z'));
      await store.insert('daily_breakdowns', [{ site_id: site.id, day: day.day, count_id: day.count, dimension: 'visits', value: 'planted', visitors: 7, visits: 7, pageviews: 9, bounces: 0, duration_ms: 0, engagement_ms: 0 }], {
        database: db(),
      });
      try {
        const after = await siteStats(store, inUtc, request, NOW);
        expect(after.kpis.visitors - before.kpis.visitors).toBe(7);
        const bucket = (stats: typeof after) => stats.timeseries.find((point) => point.bucket === '2025-06-05T00:00:00.000Z');
        expect((bucket(after)?.visitors ?? 0) - (bucket(before)?.visitors ?? 0)).toBe(7);
        // In Berlin the chart's days are not UTC days: its statement reads the visits, and the KPIs
        // asked for alone sum the counted days.
        const unchanged = (await siteStats(store, site, { ...request, filter: ['page:contains:/'] }, NOW)).kpis.pageviews;
        expect((await siteStats(store, site, request, NOW)).kpis.pageviews).toBe(unchanged);
        expect((await siteKpis(store, site, request, NOW)).kpis.pageviews).toBe(unchanged + 9);
      } finally {
        await store.command("DELETE FROM {db:Identifier}.daily_breakdowns WHERE value = 'planted'", { db: db() });
      }
    });

    it('gives each row the visitors of the comparison period as the visits do', async () => {
      const request = { dimension: 'pages' as const, from: '2025-06-07', to: '2025-06-11', compare: 'previous_period' as const, limit: 100, offset: 0 };
      const answer = await siteBreakdown(store, site, request, NOW);
      const previous = scopeOf(db(), site.id, '2025-06-02', '2025-06-06');
      expect((await countedDays(store, previous)).length).toBeGreaterThan(0);
      const expected = new Map((await rowsOf(store, breakdownStatement(previous, FILTER_SOURCES.page, FIRST_PAGE))).map((r) => [r.value, r.visitors]));
      expect(answer.rows.length).toBeGreaterThan(0);
      for (const row of answer.rows) expect({ page: row.value, visitors: row.comparison?.visitors }).toEqual({ page: row.value, visitors: expected.get(row.value) ?? 0 });
    });

    it('reads a day whose visits changed from the visits until it is counted again, then forgets the old count', async () => {
      const scope = scopeOf(db(), site.id, '2025-06-02T00:00:00Z', '2025-06-09T00:00:00Z');
      const before = await countedDays(store, scope);
      // A late pageview of a new visit on 2025-06-04, by a visitor of that day.
      const at = new Date('2025-06-04T12:00:00Z');
      await store.insert(
        'visits',
        [{ site_id: site.id, session_id: '999001', sign: 1, version: 1, visitor_id: '5000305', start: at, first_ts: at, last_ts: at, visit_pageviews: 1, events: 0, entry_page: '/late', exit_page: '/late', pages: ['/late'], page_hits: [1], country: 'JP' }],
        { database: db() },
      );
      expect((await countedDays(store, scope)).map((c) => c.day)).toEqual(DAYS.slice(1, 8).filter((day) => day !== '2025-06-04'));
      expect(await expectSameAsVisits(store, db(), site.id)).toBe(RANGES_WITH_COUNTED_DAYS);
      expect((await rowsOf(store, breakdownStatement(scope, FILTER_SOURCES.country, { ...FIRST_PAGE, only: ['JP'] })))[0]).toMatchObject({ value: 'JP', visitors: 1 });

      expect(await countDailyBreakdowns(store, db(), NOW)).toEqual({ counted: 1, moved: 0, forgotten: 1 });
      expect((await countedDays(store, scope)).map((c) => c.day)).toEqual(DAYS.slice(1, 8));
      const old = { db: db(), old: BigInt(before.find((c) => c.day === '2025-06-04')?.count ?? '0') };
      expect(await count(store, 'SELECT count() AS n FROM {db:Identifier}.daily_breakdowns WHERE count_id = {old:UInt64}', old)).toBe(0);
      expect(await count(store, 'SELECT count() AS n FROM {db:Identifier}.daily_breakdowns_days WHERE count_id = {old:UInt64}', old)).toBe(0);
      expect(await expectSameAsVisits(store, db(), site.id)).toBe(RANGES_WITH_COUNTED_DAYS);
    });

    it('never counts a day with imported visits, and forgets its count', async () => {
      // One imported visitor on two days: an import's ids are its own, and may span days.
      const importedVisit = (session_id: string, at: Date) => ({
        import_id: '11111111-2222-4333-8444-555555555555',
        site_id: site.id,
        session_id,
        sign: 1,
        version: 1,
        visitor_id: '77000001',
        start: at,
        first_ts: at,
        last_ts: new Date(at.getTime() + 5 * MIN),
        visit_pageviews: 2,
        events: 0,
        entry_page: '/',
        exit_page: '/docs',
        pages: ['/', '/docs'],
        page_hits: [1, 1],
      });
      await store.insert('visits', [importedVisit('999002', new Date('2025-06-06T08:00:00Z')), importedVisit('999003', new Date('2025-06-07T08:00:00Z'))], { database: db() });
      expect((await countedDays(store, scopeOf(db(), site.id, '2025-06-05T00:00:00Z', '2025-06-09T00:00:00Z'))).map((c) => c.day)).toEqual(['2025-06-05', '2025-06-08']);
      expect(await countDailyBreakdowns(store, db(), NOW)).toEqual({ counted: 0, moved: 0, forgotten: 2 });
      expect(await count(store, "SELECT count() AS n FROM {db:Identifier}.daily_breakdowns_days WHERE site_id = {site:UUID} AND day IN ('2025-06-06', '2025-06-07')", { db: db(), site: site.id })).toBe(0);
      expect(await expectSameAsVisits(store, db(), site.id)).toBe(RANGES_WITH_COUNTED_DAYS);
    });

    it('forgets the days whose visits are gone', async () => {
      await store.command("DELETE FROM {db:Identifier}.visits WHERE site_id = {site:UUID} AND toDate(start) = '2025-06-08'", { db: db(), site: other });
      expect(await countDailyBreakdowns(store, db(), NOW)).toEqual({ counted: 0, moved: 0, forgotten: 1 });
      expect(await count(store, "SELECT count() AS n FROM {db:Identifier}.daily_breakdowns WHERE site_id = {site:UUID} AND day = '2025-06-08'", { db: db(), site: other })).toBe(0);
    });

    it('gives one answer when two leaders count the same days at once', async () => {
      await store.command('TRUNCATE TABLE {db:Identifier}.daily_breakdowns_days', { db: db() });
      await store.command('TRUNCATE TABLE {db:Identifier}.daily_breakdowns', { db: db() });
      const both = await Promise.all([countDailyBreakdowns(store, db(), NOW), countDailyBreakdowns(store, db(), NOW)]);
      // Every closed day but the two imported into and the one emptied above, by each of them.
      const countable = 2 * CLOSED_DAYS.length - 3;
      expect(both.map((run) => run.counted + run.moved)).toEqual([countable, countable]);
      expect(await expectSameAsVisits(store, db(), site.id)).toBe(RANGES_WITH_COUNTED_DAYS);
      // The next run keeps one count of each day.
      expect(await countDailyBreakdowns(store, db(), NOW)).toEqual({ counted: 0, moved: 0, forgotten: countable });
      expect(await count(store, 'SELECT count() AS n FROM {db:Identifier}.daily_breakdowns_days', { db: db() })).toBe(countable);
      expect(await expectSameAsVisits(store, db(), site.id)).toBe(RANGES_WITH_COUNTED_DAYS);
    });

    it('is counted by the leader job as soon as it starts', async () => {
      await store.command('TRUNCATE TABLE {db:Identifier}.daily_breakdowns_days', { db: db() });
      const teams = { query: async () => ({ rows: [{ id: TEAM }] }) };
      const runtime = { metadata: () => teams, analytics: () => store, log: silentLog } as unknown as Parameters<typeof dailyBreakdownsJob>[0];
      const job = dailyBreakdownsJob(runtime);
      const listed = () => count(store, 'SELECT count() AS n FROM {db:Identifier}.daily_breakdowns_days', { db: db() });
      job.start(1);
      try {
        // Every day of both sites but the three imported into or emptied above: the job's now is
        // the clock's, for which this data set's today is closed too.
        await waitFor(async () => (await listed()) === 2 * DAYS.length - 3, 30_000, () => 'the job to count every day');
      } finally {
        await job.stop();
      }
      expect(await expectSameAsVisits(store, db(), site.id)).toBe(RANGES_WITH_COUNTED_DAYS);
    });

    it('reads a tenant not yet migrated to the daily tables from its visits', async () => {
      await store.command('DROP TABLE {db:Identifier}.daily_breakdowns_days', { db: db() });
      const answer = await siteBreakdown(store, site, { dimension: 'pages', from: '2025-06-01', to: '2025-06-11', limit: 100, offset: 0 }, NOW);
      const visits = await rowsOf(store, breakdownStatement(scopeOf(db(), site.id, '2025-06-01', '2025-06-11'), FILTER_SOURCES.page, FIRST_PAGE));
      expect(answer.rows.map((row) => [row.value, row.visitors, row.pageviews])).toEqual(visits.map((row) => [row.value, row.visitors, row.pageviews]));
    });
  });
}

describeOn('chDB', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'plumb-daily-pages-'));
  const store = await openAnalyticsStore({ dataDir, log: silentLog });
  return {
    store,
    close: async () => {
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
});

describeOn('ClickHouse over HTTP', async () => {
  const root = new URL('../../', import.meta.url).pathname;
  const dataDir = mkdtempSync(join(tmpdir(), 'plumb-daily-pages-http-'));
  const server: ChildProcessWithoutNullStreams = spawn(join(root, 'node_modules/.bin/node'), [join(root, 'test/support/clickhouse-test-server.ts'), '--port', '0', '--data-dir', dataDir], { stdio: ['pipe', 'pipe', 'pipe'] });
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: server.stdout }).once('line', resolve);
    server.once('exit', (code) => reject(new Error(`test server exited with ${code}`)));
  });
  const store = await openAnalyticsStore({ dataDir: '/nonexistent', clickhouseUrl: url, log: silentLog });
  return {
    store,
    close: async () => {
      await store.close();
      if (server.exitCode === null) {
        const exited = once(server, 'exit');
        server.kill('SIGTERM');
        await exited;
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
});
