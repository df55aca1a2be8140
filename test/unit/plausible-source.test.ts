// The Plausible import source on its own: which file names it takes, how it maps Plausible's
// spellings onto Plumb's, what validate counts in a whole export, which files it refuses (with the
// file and line) and which rows it skips (with their reasons), and what run hands to the store.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { AnalyticsStore } from '../../lib/stores/analytics/index.ts';
import { type ImportContext, ImportInputError, type StagedFile } from '../../lib/imports/source.ts';
import { exportFileName, plausibleSource } from '../../lib/imports/sources/plausible.ts';
import * as V from '../../lib/imports/sources/plausible-values.ts';
import { csvOf, EXPORT_COLUMNS, exportFiles, stagingDir } from '../support/plausible-export.ts';
import { zipOf } from '../support/zip.ts';

const SITE = { id: '11111111-2222-4333-8444-555555555555', domain: 'stats.example', timezone: 'Europe/Berlin', tenant: 'tenant_test' };
const IMPORT_ID = '99999999-8888-4777-8666-555555555555';

/** A store that records inserts and answers the overlap query with no native days. */
function recordingStore() {
  const inserts: { table: string; rows: Record<string, unknown>[]; database?: string; dedupToken?: string }[] = [];
  const store = {
    async query() {
      return [{ days: '0', first: '1970-01-01', last: '1970-01-01' }];
    },
    async insert(table: string, rows: readonly Record<string, unknown>[], options: { database?: string; dedupToken?: string } = {}) {
      inserts.push({ table, rows: [...rows], ...options });
    },
  } as unknown as AnalyticsStore;
  return { store, inserts };
}

function context(store: AnalyticsStore): ImportContext & { reported: number[] } {
  const reported: number[] = [];
  return { site: SITE, importId: IMPORT_ID, store, now: new Date(), signal: new AbortController().signal, progress: (n: number) => reported.push(n), reported };
}

let staging: Awaited<ReturnType<typeof stagingDir>>;
let whole: StagedFile;
beforeAll(async () => {
  staging = await stagingDir();
  whole = await staging.stage('plausible-export.zip', await zipOf(exportFiles()));
});
afterAll(() => staging.remove());

/** The ImportInputError a promise rejects with. */
async function refusal(promise: Promise<unknown>): Promise<ImportInputError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ImportInputError);
  return err as ImportInputError;
}

const VISITORS_HEADER = EXPORT_COLUMNS.imported_visitors.join(',');

describe('exportFileName', () => {
  it.each([
    ['imported_visitors_20240101_20240229.csv', 'imported_visitors', '2024-01-01', '2024-02-29'],
    ['visitors_20240101_20240229.csv', 'imported_visitors', '2024-01-01', '2024-02-29'],
    ['export/imported_operating_systems_20230105_20230105.csv', 'imported_operating_systems', '2023-01-05', '2023-01-05'],
    ['custom_events_20240101_20240131.csv', 'imported_custom_events', '2024-01-01', '2024-01-31'],
  ])('reads %s as %s from %s to %s', (name, table, first, last) => {
    expect(exportFileName(name)).toMatchObject({ table: { name: table }, first, last });
  });

  it.each(['imported_goals_20240101_20240131.csv', 'visitors_20240101_20240131.txt', 'visitors_20240230_20240301.csv', 'visitors_20240301_20240201.csv', 'visitors.csv', 'notes.md'])(
    'refuses %s',
    (name) => {
      expect(exportFileName(name)).toBeNull();
    },
  );
});

describe("Plausible's values in Plumb's spelling", () => {
  it('maps devices, browsers and operating systems onto the names Plumb collects', () => {
    expect(['Desktop', 'Laptop', 'Mobile', 'Tablet', '(not set)'].map(V.plausibleDevice)).toEqual(['desktop', 'desktop', 'mobile', 'tablet', '']);
    expect(['Microsoft Edge', 'Samsung Browser', 'Chrome', 'Vivaldi', '(not set)'].map(V.plausibleBrowser)).toEqual(['Edge', 'Samsung Internet', 'Chrome', 'Vivaldi', '']);
    expect(['Mac', 'GNU/Linux', 'Chrome OS', 'iOS', 'Windows'].map(V.plausibleOperatingSystem)).toEqual(['macOS', 'Linux', 'ChromeOS', 'iOS', 'Windows']);
    expect(['120.0.6099', '17', '(not set)'].map(V.plausibleBrowserVersion)).toEqual(['120', '17', '']);
    expect(['14.2', '10.0', '10', '17.4.1'].map(V.plausibleOsVersion)).toEqual(['14.2', '10', '10', '17.4']);
  });

  it('keeps country codes, empties unknown ones, and leaves region codes as they are', () => {
    expect(['DE', 'us', 'ZZ', '', 'Germany'].map(V.plausibleCountry)).toEqual(['DE', 'US', '', '', '']);
    expect(['DE-BE', '(not set)'].map(V.plausibleRegion)).toEqual(['DE-BE', '']);
  });

  it('names sources as the referrer catalog does and keeps only the referrer host', () => {
    expect(V.plausibleOrigin('Direct / None', '')).toEqual({ source: '', referrer: '' });
    expect(V.plausibleOrigin('Google', 'www.google.com/search')).toEqual({ source: 'Google', referrer: 'google.com' });
    expect(V.plausibleOrigin('news.ycombinator.com', 'https://news.ycombinator.com/item?id=1')).toEqual({ source: 'Hacker News', referrer: 'news.ycombinator.com' });
    expect(V.plausibleOrigin('Newsletter', '')).toEqual({ source: 'Newsletter', referrer: '' });
    expect(V.plausibleOrigin('blog.example.org', 'blog.example.org/post')).toEqual({ source: 'blog.example.org', referrer: 'blog.example.org' });
  });
});

describe('plausibleSource.validate', () => {
  it('counts every table of a whole export, and writes nothing', async () => {
    const { store, inserts } = recordingStore();
    const manifest = await plausibleSource.validate([whole], context(store));
    expect(inserts).toEqual([]);
    expect(manifest.source).toBe('plausible');
    expect([manifest.from, manifest.to, manifest.rows_scanned, manifest.rows_accepted, manifest.rows_skipped]).toEqual(['2024-01-01', '2024-02-29', 1500, 1500, 0]);
    const counts = Object.fromEntries(manifest.datasets.map((d) => [d.name, [d.rows_accepted, d.from, d.to, d.files]]));
    expect(counts).toEqual({
      imported_visitors: [60, '2024-01-01', '2024-02-29', ['imported_visitors_20240101_20240229.csv']],
      imported_sources: [180, '2024-01-01', '2024-02-29', ['imported_sources_20240101_20240229.csv']],
      imported_pages: [180, '2024-01-01', '2024-02-29', ['imported_pages_20240101_20240229.csv']],
      imported_entry_pages: [120, '2024-01-01', '2024-02-29', ['imported_entry_pages_20240101_20240229.csv']],
      imported_exit_pages: [120, '2024-01-01', '2024-02-29', ['imported_exit_pages_20240101_20240229.csv']],
      imported_custom_events: [60, '2024-01-01', '2024-02-29', ['imported_custom_events_20240101_20240229.csv']],
      imported_locations: [180, '2024-01-01', '2024-02-29', ['imported_locations_20240101_20240229.csv']],
      imported_operating_systems: [180, '2024-01-01', '2024-02-29', ['imported_operating_systems_20240101_20240229.csv']],
      imported_devices: [240, '2024-01-01', '2024-02-29', ['devices_20240101_20240229.csv']],
      imported_browsers: [180, '2024-01-01', '2024-02-29', ['imported_browsers_20240101_20240229.csv']],
    });
    expect(manifest.overlap).toEqual({ days: 0, from: null, to: null });
    expect([manifest.skipped, manifest.warnings]).toEqual([[], []]);
  });

  it('accepts the CSV files loose, and skips a file that is not part of the export with a warning', async () => {
    const { store } = recordingStore();
    const [name, csv] = exportFiles()[0];
    const files = [await staging.stage(name, csv), await staging.stage('README.txt', 'hello')];
    const manifest = await plausibleSource.validate(files, context(store));
    expect(manifest.datasets.map((d) => [d.name, d.rows_accepted])).toEqual([['imported_visitors', 60]]);
    expect(manifest.warnings).toEqual(["README.txt: not a file of Plausible's CSV export (imported_<table>_<YYYYMMDD>_<YYYYMMDD>.csv); skipped"]);
  });

  it('refuses files none of which belongs to the export', async () => {
    const zip = await staging.stage('other.zip', await zipOf([['visits.csv', 'a,b\n1,2\n']]));
    const err = await refusal(plausibleSource.validate([zip], context(recordingStore().store)));
    expect(err.file).toBe('other.zip');
    expect(err.message).toContain("no file of Plausible's CSV export found");
  });

  it.each([
    ['a missing column', 'date,visitors,pageviews,bounces,visits', 'missing visit_duration'],
    ['an extra column', `${VISITORS_HEADER},scroll_depth`, 'unexpected scroll_depth'],
    ['another table’s columns', EXPORT_COLUMNS.imported_devices.join(','), 'unexpected device'],
  ])('refuses a header with %s, naming the file and line 1', async (_what, header, detail) => {
    const file = await staging.stage('imported_visitors_20240101_20240102.csv', `${header}\n`);
    const err = await refusal(plausibleSource.validate([file], context(recordingStore().store)));
    expect([err.file, err.line]).toEqual(['imported_visitors_20240101_20240102.csv', 1]);
    expect(err.message).toContain(detail);
    expect(err.message).toContain('the columns of imported_visitors are date, visitors, pageviews, bounces, visits, visit_duration');
  });

  it('refuses a file whose quoting is broken, naming the line', async () => {
    const file = await staging.stage('imported_visitors_20240101_20240102.csv', `${VISITORS_HEADER}\n2024-01-01,1,1,0,1,5\n"2024-01-02,1,1,0,1,5\n`);
    const err = await refusal(plausibleSource.validate([file], context(recordingStore().store)));
    expect([err.file, err.line]).toEqual(['imported_visitors_20240101_20240102.csv', 3]);
  });

  it('skips rows with a bad date, a date outside the file name’s range, a negative or fractional count, counting each reason with file and line', async () => {
    const rows = [
      '2024-01-01,10,20,3,12,300', // line 2: good
      '2024-13-01,10,20,3,12,300', // line 3: no such day
      '01/02/2024,10,20,3,12,300', // line 4: not YYYY-MM-DD
      '2024-03-01,10,20,3,12,300', // line 5: outside the name's range
      '2024-01-02,-4,20,3,12,300', // line 6: negative
      '2024-01-02,10,2.5,3,12,300', // line 7: fractional
      '2024-01-02,10,20,3,12,', // line 8: empty count
      '2024-01-02,11,21,4,13,310', // line 9: good
    ];
    const name = 'imported_visitors_20240101_20240131.csv';
    const file = await staging.stage(name, `${VISITORS_HEADER}\n${rows.join('\n')}\n`);
    const manifest = await plausibleSource.validate([file], context(recordingStore().store));
    expect([manifest.rows_scanned, manifest.rows_accepted, manifest.rows_skipped, manifest.from, manifest.to]).toEqual([8, 2, 6, '2024-01-01', '2024-01-02']);
    expect(manifest.skipped).toEqual([
      {
        reason: 'date is not a day written YYYY-MM-DD',
        count: 2,
        examples: [
          { file: name, line: 3, message: 'date "2024-13-01" is not a day written YYYY-MM-DD' },
          { file: name, line: 4, message: 'date "01/02/2024" is not a day written YYYY-MM-DD' },
        ],
      },
      { reason: 'date outside the range of its file name', count: 1, examples: [{ file: name, line: 5, message: 'date 2024-03-01 is outside 2024-01-01 … 2024-01-31, the range of the file name' }] },
      {
        reason: 'a count that is not a non-negative integer',
        count: 3,
        examples: [
          { file: name, line: 6, message: 'visitors is "-4", not a non-negative integer' },
          { file: name, line: 7, message: 'pageviews is "2.5", not a non-negative integer' },
          { file: name, line: 8, message: 'visit_duration is "", not a non-negative integer' },
        ],
      },
    ]);
  });

  it('skips a location whose city is not an integer, and a bounce count beyond 32 bits', async () => {
    const name = 'imported_locations_20240101_20240101.csv';
    const columns = EXPORT_COLUMNS.imported_locations;
    const good = { date: '2024-01-01', country: 'DE', region: 'DE-BE', city: 2950159, visitors: 1, visits: 1, visit_duration: 1, bounces: 0, pageviews: 1 };
    const csv = csvOf(columns, [good, { ...good, city: 'Berlin' }, { ...good, bounces: 4_294_967_296 }]);
    const manifest = await plausibleSource.validate([await staging.stage(name, csv)], context(recordingStore().store));
    expect(manifest.skipped.map((s) => [s.reason, s.examples.map((e) => e.line)])).toEqual([
      ['a count that is not a non-negative integer', [3]],
      ['a count too large', [4]],
    ]);
  });
});

describe('plausibleSource.run', () => {
  it('inserts the accepted rows into the tables of their files, stamped with the site and import, in Plumb’s spellings, with deduplication tokens', async () => {
    const { store, inserts } = recordingStore();
    const ctx = context(store);
    const manifest = await plausibleSource.run([whole], ctx);
    expect(manifest.rows_accepted).toBe(1500);
    expect(inserts.map((i) => [i.table, i.rows.length, i.database, i.dedupToken])).toEqual(
      Object.keys(EXPORT_COLUMNS).map((table, index) => [table, manifest.datasets.find((d) => d.name === table)?.rows_accepted, 'tenant_test', `plausible:${IMPORT_ID}:${index}:0`]),
    );
    const all = inserts.flatMap((i) => i.rows);
    expect(all.every((row) => row.site_id === SITE.id && row.import_id === IMPORT_ID)).toBe(true);
    const first = (table: string) => inserts.find((i) => i.table === table)?.rows ?? [];
    expect(first('imported_visitors')[0]).toEqual({ site_id: SITE.id, import_id: IMPORT_ID, date: '2024-01-01', visitors: 100, pageviews: 300, bounces: 40, visits: 120, visit_duration: 6000 });
    expect(new Set(first('imported_devices').map((r) => r.device))).toEqual(new Set(['desktop', 'mobile', 'tablet']));
    expect(new Set(first('imported_sources').map((r) => `${r.source}|${r.referrer}`))).toEqual(new Set(['Google|google.com', '|', 'Newsletter|']));
    expect(first('imported_pages').slice(0, 3).map((r) => [r.page, r.scroll_depth])).toEqual([['/', null], ['/pricing', 45], ['/blog/a, "quoted" title', null]]);
    expect(ctx.reported.at(-1)).toBe(1500);
  });

  it('stops when the import is aborted', async () => {
    const { store, inserts } = recordingStore();
    const controller = new AbortController();
    controller.abort();
    const ctx = { ...context(store), signal: controller.signal };
    await expect(plausibleSource.run([whole], ctx)).rejects.toThrow();
    expect(inserts).toEqual([]);
  });
});
