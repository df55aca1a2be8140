// A Plausible CSV export built in the test: every table of the export for 60 days (2024-01-01 …
// 2024-02-29), with figures that are plain functions of the day, so a test can sum what any set
// of days should show. Values are spelled as Plausible spells them ("Direct / None", "Microsoft
// Edge", "Mac", "Laptop"); the tests write out the spellings Plumb shows.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StagedFile } from '../../lib/imports/source.ts';

export type ExportRow = Record<string, string | number>;

const DAY_MS = 86_400_000;
export const days = (first: string, count: number) => Array.from({ length: count }, (_, i) => new Date(Date.parse(`${first}T00:00:00Z`) + i * DAY_MS).toISOString().slice(0, 10));
export const EXPORT_DAYS = days('2024-01-01', 60);

/** The columns of each file, in the export's order. */
export const EXPORT_COLUMNS: Record<string, string[]> = {
  imported_visitors: ['date', 'visitors', 'pageviews', 'bounces', 'visits', 'visit_duration'],
  imported_sources: ['date', 'source', 'referrer', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_content', 'utm_term', 'pageviews', 'visitors', 'visits', 'visit_duration', 'bounces'],
  imported_pages: ['date', 'hostname', 'page', 'visits', 'visitors', 'pageviews', 'scroll_depth', 'pageleave_visitors'],
  imported_entry_pages: ['date', 'entry_page', 'visitors', 'entrances', 'visit_duration', 'bounces', 'pageviews'],
  imported_exit_pages: ['date', 'exit_page', 'visitors', 'visit_duration', 'exits', 'bounces', 'pageviews'],
  imported_custom_events: ['date', 'name', 'link_url', 'path', 'visitors', 'events'],
  imported_locations: ['date', 'country', 'region', 'city', 'visitors', 'visits', 'visit_duration', 'bounces', 'pageviews'],
  imported_operating_systems: ['date', 'operating_system', 'operating_system_version', 'visitors', 'visits', 'visit_duration', 'bounces', 'pageviews'],
  imported_devices: ['date', 'device', 'visitors', 'visits', 'visit_duration', 'bounces', 'pageviews'],
  imported_browsers: ['date', 'browser', 'browser_version', 'visitors', 'visits', 'visit_duration', 'bounces', 'pageviews'],
};

const NO_UTM = { utm_source: '', utm_medium: '', utm_campaign: '', utm_content: '', utm_term: '' };
/** visitors, visits, visit_duration, bounces, pageviews of a row. */
const figures = (visitors: number, visits: number, visit_duration: number, bounces: number, pageviews: number) => ({ visitors, visits, visit_duration, bounces, pageviews });

/** The rows of every table for one day (i: the day's index from the first). */
function dayRows(date: string, i: number): Record<string, ExportRow[]> {
  const b = i % 10;
  return {
    imported_visitors: [{ date, visitors: 100 + i, pageviews: 300 + 2 * i, bounces: 40 + b, visits: 120 + i, visit_duration: 6000 + 10 * i }],
    imported_sources: [
      { date, source: 'Google', referrer: 'www.google.com/search', ...NO_UTM, ...figures(50, 60, 3000, 20, 150) },
      { date, source: 'Direct / None', referrer: '', ...NO_UTM, ...figures(40 + i, 50 + i, 2000 + 10 * i, 15 + b, 100 + 2 * i) },
      { date, source: 'Newsletter', referrer: '', ...NO_UTM, utm_source: 'newsletter', utm_medium: 'email', utm_campaign: 'winter', ...figures(10, 10, 1000, 5, 50) },
    ],
    imported_pages: [
      { date, hostname: 'stats.example', page: '/', visits: 100 + i, visitors: 90 + i, pageviews: 200 + 2 * i, scroll_depth: i % 2 === 0 ? '' : 60, pageleave_visitors: 80 },
      { date, hostname: 'stats.example', page: '/pricing', visits: 40, visitors: 30, pageviews: 60, scroll_depth: 45, pageleave_visitors: 25 },
      { date, hostname: 'stats.example', page: '/blog/a, "quoted" title', visits: 20, visitors: 10, pageviews: 40, scroll_depth: '', pageleave_visitors: 5 },
    ],
    imported_entry_pages: [
      { date, entry_page: '/', visitors: 70 + i, entrances: 80 + i, visit_duration: 4000 + 10 * i, bounces: 30 + b, pageviews: 200 + 2 * i },
      { date, entry_page: '/pricing', visitors: 30, entrances: 40, visit_duration: 2000, bounces: 10, pageviews: 100 },
    ],
    imported_exit_pages: [
      { date, exit_page: '/', visitors: 60 + i, visit_duration: 3000 + 10 * i, exits: 70 + i, bounces: 25 + b, pageviews: 180 + 2 * i },
      { date, exit_page: '/pricing', visitors: 40, visit_duration: 3000, exits: 50, bounces: 15, pageviews: 120 },
    ],
    imported_custom_events: [{ date, name: 'Signup', link_url: '', path: '/pricing', visitors: 5, events: 6 }],
    imported_locations: [
      { date, country: 'DE', region: 'DE-BE', city: 2950159, ...figures(60 + i, 70 + i, 4000 + 10 * i, 25 + b, 200 + 2 * i) },
      { date, country: 'US', region: 'US-CA', city: 5391959, ...figures(30, 35, 1500, 10, 70) },
      { date, country: 'ZZ', region: '(not set)', city: 0, ...figures(10, 15, 500, 5 + (b % 2), 30) },
    ],
    imported_operating_systems: [
      { date, operating_system: 'Mac', operating_system_version: '14.2', ...figures(50 + i, 60 + i, 3500 + 10 * i, 20 + b, 160 + 2 * i) },
      { date, operating_system: 'Windows', operating_system_version: '10', ...figures(35, 40, 1800, 12, 90) },
      { date, operating_system: 'GNU/Linux', operating_system_version: '(not set)', ...figures(15, 20, 700, 8, 50) },
    ],
    imported_devices: [
      { date, device: 'Desktop', ...figures(45 + i, 55 + i, 3000 + 10 * i, 20 + b, 150 + 2 * i) },
      { date, device: 'Laptop', ...figures(5, 5, 500, 2, 10) },
      { date, device: 'Mobile', ...figures(40, 45, 2000, 14, 100) },
      { date, device: 'Tablet', ...figures(10, 15, 500, 4, 40) },
    ],
    imported_browsers: [
      { date, browser: 'Chrome', browser_version: '120.0.6099', ...figures(60 + i, 70 + i, 4000 + 10 * i, 25 + b, 200 + 2 * i) },
      { date, browser: 'Microsoft Edge', browser_version: '120.0', ...figures(25, 30, 1200, 9, 60) },
      { date, browser: 'Safari', browser_version: '17.2', ...figures(15, 20, 800, 6, 40) },
    ],
  };
}

/** Every table's rows over the days. */
export function exportRows(over: readonly string[] = EXPORT_DAYS): Record<string, ExportRow[]> {
  const tables: Record<string, ExportRow[]> = Object.fromEntries(Object.keys(EXPORT_COLUMNS).map((t) => [t, []]));
  for (const date of over) {
    const i = EXPORT_DAYS.indexOf(date);
    for (const [table, rows] of Object.entries(dayRows(date, i))) tables[table].push(...rows);
  }
  return tables;
}

const cell = (value: string | number) => {
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
};

/** CSVWithNames, as ClickHouse writes it for Plausible. */
export function csvOf(columns: readonly string[], rows: readonly ExportRow[]): string {
  return [columns.join(','), ...rows.map((row) => columns.map((c) => cell(row[c] ?? '')).join(','))].join('\n') + '\n';
}

/** The export's files: `imported_<table>_20240101_20240229.csv`; devices without the prefix, as Plausible also accepts. */
export function exportFiles(): [string, string][] {
  const rows = exportRows();
  return Object.entries(EXPORT_COLUMNS).map(([table, columns]) => {
    const name = table === 'imported_devices' ? 'devices_20240101_20240229.csv' : `${table}_20240101_20240229.csv`;
    return [name, csvOf(columns, rows[table])];
  });
}


/** A folder for staged files, removed by `remove`. */
export async function stagingDir(): Promise<{ stage(name: string, bytes: string | Buffer): Promise<StagedFile>; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'plumb-plausible-'));
  let n = 0;
  return {
    async stage(name, bytes) {
      const path = join(dir, `staged-${n++}`);
      await writeFile(path, bytes);
      return { name, path, size: Buffer.byteLength(bytes) };
    },
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

/** Sum of a field over rows. */
export const total = (rows: readonly ExportRow[], field: string) => rows.reduce((sum, row) => sum + Number(row[field]), 0);
