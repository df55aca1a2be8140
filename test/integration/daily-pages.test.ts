// The daily pages table (lib/analytics/daily-pages.ts, lib/analytics/query/daily-pages.ts): each
// closed UTC day's figures per page, summed by the pages breakdown for the days where they are
// current. The specification is the visits: for every range, page and comparison the breakdown
// gives exactly the rows breakdownStatement gives from the visits table, before a day is counted,
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
import { countDailyPages, dailyPagesJob } from '../../lib/analytics/daily-pages.ts';
import { countedDaysStatement, dailyPagesBreakdownStatement } from '../../lib/analytics/query/daily-pages.ts';
import { FILTER_SOURCES } from '../../lib/analytics/query/plan.ts';
import { type BreakdownPage, breakdownStatement, type Scope, type Statement } from '../../lib/analytics/query/sql.ts';
import { siteBreakdown } from '../../lib/analytics/query/stats.ts';
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
const [SEC, MIN] = [1000, 60_000];

/** Hits and events of a site: per UTC day 30 visits of 18 visitors, 1–6 pageviews, a third with a custom event, the last ones starting before midnight and running past it. */
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
      let ts = v >= 27 && length === 86_400_000 ? midnight + length - int(1, 5) * MIN : midnight + Math.floor(rand() * length);
      const start = ts;
      for (let p = int(1, 6); p > 0; p--) {
        hits.push({ ts: new Date(ts), site_id: siteId, session_id, visitor_id, hit_id: crypto.randomUUID(), path: PAGES[int(0, PAGES.length - 1)], hostname: 'stats.example' });
        ts += int(20, 400) * SEC;
      }
      if (rand() < 0.33) events.push({ ts: new Date(start + 5 * SEC), site_id: siteId, session_id, visitor_id, event_id: crypto.randomUUID(), name: 'signup' });
    }
  });
  return { hits, events };
}

/** A scope of the site's pages, from local dates or instants as the API takes them. */
function scopeOf(db: string, site: string, from: string, to: string): Scope {
  const range = checkRange({ from, to }, TZ, [], NOW);
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
const PAGINGS: BreakdownPage[] = [
  { limit: 100, offset: 0 },
  { limit: 3, offset: 0 },
  { limit: 3, offset: 3 },
  { limit: 5, offset: 100 },
  { limit: 100, offset: 0, only: ['/docs', '/a:b', '/nowhere'] },
];

/** The rows of a statement, numbers as numbers. */
async function rowsOf(store: AnalyticsStore, statement: Statement): Promise<Record<string, unknown>[]> {
  const rows = await store.query<Record<string, unknown>>(statement.sql, statement.params);
  return rows.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, k === 'value' ? v : Number(v)])));
}
async function countedDays(store: AnalyticsStore, scope: Scope): Promise<{ day: string; fingerprint: string }[]> {
  return (await store.query<{ day: string; fingerprint: string }>(countedDaysStatement(scope).sql, countedDaysStatement(scope).params)).map((r) => ({ day: r.day, fingerprint: r.fingerprint }));
}

/** For every range and paging: the daily statement over the days counted now gives breakdownStatement's rows. Answers how many ranges read counted days. */
async function expectSameAsVisits(store: AnalyticsStore, db: string, site: string): Promise<number> {
  let summed = 0;
  for (const [from, to] of RANGES) {
    const scope = scopeOf(db, site, from, to);
    const counted = await countedDays(store, scope);
    if (counted.length > 0) summed++;
    for (const page of PAGINGS) {
      const expected = await rowsOf(store, breakdownStatement(scope, FILTER_SOURCES.page, page));
      expect({ range: [from, to], page, rows: await rowsOf(store, dailyPagesBreakdownStatement(scope, counted, page)) }).toEqual({ range: [from, to], page, rows: expected });
    }
  }
  return summed;
}

function describeOn(transport: string, open: () => Promise<{ store: AnalyticsStore; close(): Promise<void> }>) {
  describe(`daily pages on ${transport}`, () => {
    const site = { id: '7a7a7a7a-1b1b-4c2c-8d3d-4e4e4e4e4e4e', timezone: TZ, tenant: '' };
    const other = '9c9c9c9c-2d2d-4e3e-8f4f-505050505050';
    let store: AnalyticsStore;
    let close: () => Promise<void>;
    const db = () => site.tenant;

    beforeAll(async () => {
      ({ store, close } = await open());
      site.tenant = await store.ensureTenant('3b3b3b3b-4c4c-4d5d-8e6e-7f7f7f7f7f7f');
      for (const [id, seed] of [[site.id, 20250612], [other, 20250613]] as const) {
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
      expect(await countDailyPages(store, db(), NOW)).toEqual({ counted: 2 * CLOSED_DAYS.length, moved: 0, forgotten: 0 });
      expect(await countDailyPages(store, db(), NOW)).toEqual({ counted: 0, moved: 0, forgotten: 0 });
      const whole = scopeOf(db(), site.id, '2025-06-02T00:00:00Z', '2025-06-09T00:00:00Z');
      expect((await countedDays(store, whole)).map((c) => c.day)).toEqual(DAYS.slice(1, 8));
      const withToday = scopeOf(db(), site.id, '2025-06-01T00:00:00Z', '2025-06-13T00:00:00Z');
      expect((await countedDays(store, withToday)).map((c) => c.day)).toEqual(CLOSED_DAYS);
      // A local day of Berlin is parts of two UTC days: neither is whole in it.
      expect(await countedDays(store, scopeOf(db(), site.id, '2025-06-03', '2025-06-03'))).toEqual([]);
    });

    it('sums the counted days into the same rows as the visits give, for every range, page and paging', async () => {
      expect(await expectSameAsVisits(store, db(), site.id)).toBe(5);
    });

    it('reads the counted days from daily_pages, through the stats API', async () => {
      const [day] = await countedDays(store, scopeOf(db(), site.id, '2025-06-05T00:00:00Z', '2025-06-06T00:00:00Z'));
      const planted = { site_id: site.id, day: day.day, fingerprint: day.fingerprint, page: '/planted', visitors: 7, visits: 7, pageviews: 9, bounces: 0, duration_ms: 0 };
      await store.insert('daily_pages', [planted], { database: db() });
      const request = { dimension: 'pages' as const, from: '2025-06-01', to: '2025-06-12', limit: 100, offset: 0 };
      const answer = await siteBreakdown(store, site, request, NOW);
      expect(answer.rows.find((row) => row.value === '/planted')).toMatchObject({ visitors: 7, visits: 7, pageviews: 9 });
      await store.command("DELETE FROM {db:Identifier}.daily_pages WHERE page = '/planted'", { db: db() });
      expect((await siteBreakdown(store, site, request, NOW)).rows.map((row) => row.value)).not.toContain('/planted');
    });

    it('gives each row the visitors of the comparison period as the visits do', async () => {
      const request = { dimension: 'pages' as const, from: '2025-06-07', to: '2025-06-11', compare: 'previous_period' as const, limit: 100, offset: 0 };
      const answer = await siteBreakdown(store, site, request, NOW);
      const previous = scopeOf(db(), site.id, '2025-06-02', '2025-06-06');
      expect((await countedDays(store, previous)).length).toBeGreaterThan(0);
      const expected = new Map((await rowsOf(store, breakdownStatement(previous, FILTER_SOURCES.page, { limit: 100, offset: 0 }))).map((r) => [r.value, r.visitors]));
      expect(answer.rows.length).toBeGreaterThan(0);
      for (const row of answer.rows) expect({ page: row.value, visitors: row.comparison?.visitors }).toEqual({ page: row.value, visitors: expected.get(row.value) ?? 0 });
    });

    it('reads a day whose visits changed from the visits until it is counted again, then forgets the old count', async () => {
      const scope = scopeOf(db(), site.id, '2025-06-02T00:00:00Z', '2025-06-09T00:00:00Z');
      const before = await countedDays(store, scope);
      // A late pageview of a new visit on 2025-06-04, by a visitor of that day.
      await store.insert(
        'visits',
        [{ site_id: site.id, session_id: '999001', sign: 1, version: 1, visitor_id: '5000305', start: new Date('2025-06-04T12:00:00Z'), first_ts: new Date('2025-06-04T12:00:00Z'), last_ts: new Date('2025-06-04T12:00:00Z'), visit_pageviews: 1, events: 0, entry_page: '/late', exit_page: '/late', pages: ['/late'], page_hits: [1] }],
        { database: db() },
      );
      expect((await countedDays(store, scope)).map((c) => c.day)).toEqual(DAYS.slice(1, 8).filter((day) => day !== '2025-06-04'));
      expect(await expectSameAsVisits(store, db(), site.id)).toBe(5);
      expect((await rowsOf(store, breakdownStatement(scope, FILTER_SOURCES.page, { limit: 100, offset: 0, only: ['/late'] })))[0]).toMatchObject({ value: '/late', visitors: 1 });

      expect(await countDailyPages(store, db(), NOW)).toEqual({ counted: 1, moved: 0, forgotten: 1 });
      const after = await countedDays(store, scope);
      expect(after.map((c) => c.day)).toEqual(DAYS.slice(1, 8));
      const old = before.find((c) => c.day === '2025-06-04')?.fingerprint;
      const [left] = await store.query<{ rows: string }>('SELECT count() AS rows FROM {db:Identifier}.daily_pages WHERE site_id = {site:UUID} AND fingerprint = {old:Int64}', {
        db: db(),
        site: site.id,
        old: BigInt(old ?? '0'),
      });
      expect(Number(left.rows)).toBe(0);
      expect(await expectSameAsVisits(store, db(), site.id)).toBe(5);
    });

    it('never counts a day with imported visits, and forgets its count', async () => {
      await store.insert(
        'visits',
        [{ import_id: '11111111-2222-4333-8444-555555555555', site_id: site.id, session_id: '999002', sign: 1, version: 1, visitor_id: '5000301', start: new Date('2025-06-06T08:00:00Z'), first_ts: new Date('2025-06-06T08:00:00Z'), last_ts: new Date('2025-06-06T08:05:00Z'), visit_pageviews: 2, events: 0, entry_page: '/', exit_page: '/docs', pages: ['/', '/docs'], page_hits: [1, 1] }],
        { database: db() },
      );
      const scope = scopeOf(db(), site.id, '2025-06-06T00:00:00Z', '2025-06-07T00:00:00Z');
      expect(await countedDays(store, scope)).toEqual([]);
      expect(await countDailyPages(store, db(), NOW)).toEqual({ counted: 0, moved: 0, forgotten: 1 });
      const [listed] = await store.query<{ days: string }>("SELECT count() AS days FROM {db:Identifier}.daily_pages_days WHERE site_id = {site:UUID} AND day = '2025-06-06'", { db: db(), site: site.id });
      expect(Number(listed.days)).toBe(0);
      expect(await expectSameAsVisits(store, db(), site.id)).toBe(5);
    });

    it('forgets the days whose visits are gone', async () => {
      await store.command("DELETE FROM {db:Identifier}.visits WHERE site_id = {site:UUID} AND toDate(start) = '2025-06-08'", { db: db(), site: other });
      expect(await countDailyPages(store, db(), NOW)).toEqual({ counted: 0, moved: 0, forgotten: 1 });
      const [left] = await store.query<{ rows: string }>("SELECT count() AS rows FROM {db:Identifier}.daily_pages WHERE site_id = {site:UUID} AND day = '2025-06-08'", { db: db(), site: other });
      expect(Number(left.rows)).toBe(0);
    });

    it('gives one answer when two leaders count the same day at once', async () => {
      await store.command('TRUNCATE TABLE {db:Identifier}.daily_pages_days', { db: db() });
      await store.command('TRUNCATE TABLE {db:Identifier}.daily_pages', { db: db() });
      const [first, second] = await Promise.all([countDailyPages(store, db(), NOW), countDailyPages(store, db(), NOW)]);
      expect(first.counted + first.moved).toBe(2 * CLOSED_DAYS.length - 2);
      expect(second.counted + second.moved).toBe(2 * CLOSED_DAYS.length - 2);
      expect(await expectSameAsVisits(store, db(), site.id)).toBe(5);
    });

    it('is counted by the leader job at once when it starts', async () => {
      await store.command('TRUNCATE TABLE {db:Identifier}.daily_pages_days', { db: db() });
      const teams = { query: async () => ({ rows: [{ id: '3b3b3b3b-4c4c-4d5d-8e6e-7f7f7f7f7f7f' }] }) };
      const runtime = { metadata: () => teams, analytics: () => store, log: silentLog } as unknown as Parameters<typeof dailyPagesJob>[0];
      const job = dailyPagesJob(runtime);
      const listed = async () => Number((await store.query<{ days: string }>('SELECT count() AS days FROM {db:Identifier}.daily_pages_days', { db: db() }))[0].days);
      job.start(1);
      try {
        // Every day of both sites but the two emptied or imported into above: the job's now is the
        // clock's, for which this data set's today is closed too.
        await waitFor(async () => (await listed()) === 2 * DAYS.length - 2, 20_000, () => 'the job to count every day');
      } finally {
        await job.stop();
      }
      expect(await expectSameAsVisits(store, db(), site.id)).toBe(5);
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
