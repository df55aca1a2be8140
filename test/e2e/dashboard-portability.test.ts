// Data portability as a site's people meet it in the dashboard: the dashboard's Export menu (the
// range's raw rows as a file), the site takeout in the site's settings (admins only) and the
// account takeout in Account, the "Import data" section (upload with checksums and progress, the
// dry run's manifest, the run, the list of imports and deleting one), and the chart's imported days.
// Each screen is scanned with axe-core and checked for layout faults in light and dark mode,
// 1366 px and 360 px wide, and screenshotted into test-output/screenshots/portability-*.png.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, BrowserContext, Download, Page, Route } from 'playwright-core';
import { formatDateRange } from '../../web/src/dashboard/dates.ts';
import { formatNumber } from '../../web/src/dashboard/format.ts';
import { launchChromium } from '../support/browser.ts';
import { BROWSER_DRIVEN_ENV, REVIEW_VIEWPORTS, reviewLayouts, signInAs } from '../support/dashboard.ts';
import { type Instance, request, startInstance, waitFor } from '../support/instance.ts';
import { EXPORT_DAYS, exportFiles, exportRows, total } from '../support/plausible-export.ts';
import { zipOf } from '../support/zip.ts';

const OWNER = { email: 'owner@example.com', password: 'correct horse battery' };
const VIEWER = { email: 'viewer@example.com', password: 'another long password' };
const DOMAIN = 'portability.example';
const READER = { locale: 'en-US', timezoneId: 'UTC' } as const;
const WAIT = { timeout: 15_000 };
const DAY_MS = 86_400_000;
const UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
/** Days ago of the seeded pageviews: four in the last 30 days (three of them in the last 7), one long before. */
const SEEDED_DAYS_AGO = [0, 0, 3, 12, 100];

let instance: Instance;
let browser: Browser;
let owner: BrowserContext;
let page: Page;
let siteId: string;

/** Runs in a signed-in page: a call to the instance as the dashboard makes it (the browser's own fetch, with its cookie). */
const call = (on: Page, method: string, path: string, body?: unknown) =>
  on.evaluate(
    async ([method, path, body]) => {
      const res = await fetch(path, { method, headers: body === undefined ? {} : { 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await res.text();
      const json = (res.headers.get('content-type') ?? '').includes('json') && text ? (JSON.parse(text) as Record<string, unknown>) : null;
      return { status: res.status, body: json };
    },
    [method, path, body] as const,
  );

/** Text with its spaces made plain: the browser's date ranges may put thin spaces around their dash. */
const words = (text: string | null) => (text ?? '').replace(/\s+/g, ' ').trim();

/** A range of days as the page writes it (en-US), in plain spaces. */
const written = (range: { from: string; to: string }) => words(formatDateRange(range, 'en-US'));

/** Today's date (UTC, the site's zone) moved by `days`. */
const day = (days = 0) => new Date(Date.now() + days * DAY_MS).toISOString().slice(0, 10);

/** Clicks what starts a download and answers the download once the file is whole. */
async function download(on: Page, click: () => Promise<void>): Promise<{ file: Download; bytes: Buffer }> {
  const [file] = await Promise.all([on.waitForEvent('download', WAIT), click()]);
  const path = await file.path();
  return { file, bytes: readFileSync(path) };
}

/** ClickHouse's CSV as the export writes it: a header line, then one line per row, strings quoted. */
function csvRows(text: string): { header: string[]; rows: string[][] } {
  const split = (line: string) => line.split(',').map((cell) => cell.replace(/^"(.*)"$/, '$1'));
  const [header, ...rows] = text.trimEnd().split('\n');
  return { header: split(header), rows: rows.map(split) };
}


beforeAll(async () => {
  instance = await startInstance({ env: { ...BROWSER_DRIVEN_ENV } });
  const created = await request(`${instance.url}/api/initial-user`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(OWNER) });
  expect(created.status).toBe(201);
  browser = await launchChromium();
  owner = await browser.newContext({ ...READER, viewport: REVIEW_VIEWPORTS[0], acceptDownloads: true });
  page = await signInAs(await owner.newPage(), OWNER, instance.url);
  const teams = (await call(page, 'GET', '/api/user/teams')).body?.items as { id: string }[];
  const site = await call(page, 'POST', '/api/sites', { domain: DOMAIN, team_id: teams[0].id, timezone: 'UTC' });
  expect(site.status).toBe(201);
  siteId = (site.body as { site: { id: string } }).site.id;

  const client = await call(page, 'POST', '/api/user/api-clients', { name: 'seed', scopes: ['ingest:write'], sites: [{ site_id: siteId, role: 'editor' }] });
  expect(client.status).toBe(201);
  // An hour before now on each day: never in the future, whatever the time of the run.
  const items = SEEDED_DAYS_AGO.map((ago, i) => ({
    type: 'pageview',
    url: `https://${DOMAIN}/page-${i}`,
    visitor_ip: `198.51.100.${i + 1}`,
    user_agent: UA,
    timestamp: new Date(Date.now() - ago * DAY_MS - 3_600_000).toISOString(),
  }));
  const sent = await request(`${instance.url}/api/ingest/server/batch`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${client.body?.token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ items }),
  });
  expect(sent.body.rejected).toBe(0);
  const whole = new URLSearchParams({ from: day(-400), to: day(1) });
  await waitFor(
    async () => ((await call(page, 'GET', `/api/sites/${siteId}/stats/kpis?${whole}`)).body?.kpis as { pageviews: number } | undefined)?.pageviews === SEEDED_DAYS_AGO.length,
    30_000,
    () => 'the seeded pageviews were not counted',
  );
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await instance?.destroy();
});

describe('the Export menu of the site dashboard', () => {
  const exportButton = () => page.getByRole('button', { name: 'Export', exact: true });
  const menu = () => page.getByRole('dialog', { name: 'Export raw data' });
  const openMenu = async () => {
    if ((await exportButton().getAttribute('aria-expanded')) !== 'true') await exportButton().click();
    await menu().waitFor(WAIT);
  };

  beforeAll(async () => {
    await page.goto(`${instance.url}/sites/${siteId}`);
    await page.getByTestId('chart').waitFor(WAIT);
  });

  it('offers pageviews or AI fetches in five formats over the dashboard’s range, and downloads the range’s pageviews as CSV', async () => {
    await expect(exportButton().getAttribute('aria-expanded')).resolves.toBe('false');
    await exportButton().click();
    await expect(exportButton().getAttribute('aria-expanded')).resolves.toBe('true');
    // The focus moves into the menu, to its first choice.
    await expect(menu().getByRole('radio', { name: 'Pageviews' }).evaluate((el) => el === document.activeElement)).resolves.toBe(true);
    await expect(menu().getByRole('radio', { name: 'Pageviews' }).isChecked()).resolves.toBe(true);
    await expect(menu().getByRole('radio', { name: 'AI fetches' }).isChecked()).resolves.toBe(false);
    const format = menu().getByLabel('Format');
    await expect(format.inputValue()).resolves.toBe('csv');
    await expect(format.locator('option').allTextContents()).resolves.toEqual(['CSV', 'Excel (xlsx)', 'JSON', 'NDJSON (one JSON object a line)', 'Parquet']);
    // The range is the dashboard's own, in the same words as under the range buttons.
    const shown = await page.locator('.range-label > span').first().textContent();
    await expect(menu().getByTestId('export-range').textContent()).resolves.toBe(`Range: ${shown} (UTC)`);

    const link = menu().getByRole('link', { name: 'Download' });
    await expect(link.getAttribute('href')).resolves.toBe(`/api/sites/${siteId}/hits/export?from=${day(-29)}&to=${day()}&format=csv`);
    const { file, bytes } = await download(page, () => link.click());
    expect(file.suggestedFilename()).toBe(`${DOMAIN}-pageviews-${day(-29)}-to-${day()}.csv`);
    const { header, rows } = csvRows(bytes.toString('utf8'));
    expect(header.slice(0, 5)).toEqual(['ts', 'session_id', 'visitor_id', 'hit_id', 'path']);
    expect(rows).toHaveLength(SEEDED_DAYS_AGO.filter((ago) => ago < 30).length);
    expect(rows.map((row) => row[4]).sort()).toEqual(['/page-0', '/page-1', '/page-2', '/page-3']);
    // The link closes the menu behind it.
    await menu().waitFor({ state: 'detached', ...WAIT });
  }, 60_000);

  it('exports the range chosen on the dashboard: the last 7 days’ pageviews as NDJSON, one row a line', async () => {
    await page.getByRole('button', { name: 'Last 7 days' }).click();
    await openMenu();
    await menu().getByLabel('Format').selectOption('ndjson');
    const link = menu().getByRole('link', { name: 'Download' });
    await expect(link.getAttribute('href')).resolves.toBe(`/api/sites/${siteId}/hits/export?from=${day(-6)}&to=${day()}&format=ndjson`);
    const { file, bytes } = await download(page, () => link.click());
    expect(file.suggestedFilename()).toBe(`${DOMAIN}-pageviews-${day(-6)}-to-${day()}.ndjson`);
    const rows = bytes
      .toString('utf8')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { path: string });
    expect(rows.map((row) => row.path).sort()).toEqual(['/page-0', '/page-1', '/page-2']);
  }, 60_000);

  it('links the AI fetches of the range in the chosen format, and an Excel file when the server writes one', async () => {
    await openMenu();
    await menu().getByRole('radio', { name: 'AI fetches' }).check();
    await menu().getByLabel('Format').selectOption('parquet');
    const link = menu().getByRole('link', { name: 'Download' });
    await expect(link.getAttribute('href')).resolves.toBe(`/api/sites/${siteId}/ai-fetch/export?from=${day(-6)}&to=${day()}&format=parquet`);
    const parquet = await download(page, () => link.click());
    expect(parquet.file.suggestedFilename()).toBe(`${DOMAIN}-ai-fetches-${day(-6)}-to-${day()}.parquet`);
    expect(parquet.bytes.subarray(0, 4).toString('latin1')).toBe('PAR1');

    await openMenu();
    await menu().getByRole('radio', { name: 'Pageviews' }).check();
    await menu().getByLabel('Format').selectOption('xlsx');
    const href = `/api/sites/${siteId}/hits/export?from=${day(-6)}&to=${day()}&format=xlsx`;
    await expect(link.getAttribute('href')).resolves.toBe(href);
    const xlsx = await download(page, () => link.click());
    expect(xlsx.file.suggestedFilename()).toBe(`${DOMAIN}-pageviews-${day(-6)}-to-${day()}.xlsx`);
    // An xlsx workbook is a zip.
    expect(xlsx.bytes.subarray(0, 2).toString('latin1')).toBe('PK');
  }, 60_000);

  it('closes with Escape, giving the focus back to its button, and with a click elsewhere', async () => {
    await openMenu();
    await page.keyboard.press('Escape');
    await menu().waitFor({ state: 'detached', ...WAIT });
    await expect(exportButton().evaluate((el) => el === document.activeElement)).resolves.toBe(true);
    await expect(exportButton().getAttribute('aria-expanded')).resolves.toBe('false');
    // Opened from the keyboard too.
    await page.keyboard.press('Enter');
    await menu().waitFor(WAIT);
    await page.getByRole('heading', { level: 1 }).click();
    await menu().waitFor({ state: 'detached', ...WAIT });
  }, 30_000);

  it('passes axe and the layout check with the menu open, in light and dark, wide and narrow', async () => {
    expect(await reviewLayouts(page, 'portability-export-menu', openMenu)).toEqual([]);
  }, 60_000);
});

describe('the site takeout and the account takeout', () => {
  const settings = () => page.goto(`${instance.url}/sites/${siteId}/settings`);

  it('offers site admins all of the site’s data in its settings: Excel by default, the other formats as zips', async () => {
    await settings();
    await page.getByRole('navigation', { name: 'Settings sections' }).getByRole('link', { name: 'Download all data' }).waitFor(WAIT);
    const section = page.getByRole('region', { name: 'Download all data' });
    const format = section.getByLabel('Format');
    await expect(format.inputValue()).resolves.toBe('xlsx');
    await expect(format.locator('option').allTextContents()).resolves.toEqual([
      'Excel (xlsx): one sheet per table',
      'CSV files in a zip',
      'JSON files in a zip',
      'NDJSON files in a zip',
      'Parquet files in a zip',
    ]);
    const link = section.getByRole('link', { name: 'Download all data of this site' });
    for (const [choice, ending] of [
      ['xlsx', 'xlsx'],
      ['csv', 'zip'],
    ] as const) {
      await format.selectOption(choice);
      const href = `/api/sites/${siteId}/takeout?format=${choice}`;
      await expect(link.getAttribute('href')).resolves.toBe(href);
      const { file, bytes } = await download(page, () => link.click());
      expect(file.suggestedFilename()).toBe(`${DOMAIN}-takeout-${day()}.${ending}`);
      // Both an xlsx workbook and a zip begin as a zip does.
      expect(bytes.subarray(0, 2).toString('latin1')).toBe('PK');
    }
    await page.getByRole('heading', { name: 'Download all data' }).scrollIntoViewIfNeeded();
    expect(await reviewLayouts(page, 'portability-site-settings-takeout')).toEqual([]);
  }, 60_000);

  it('offers everyone their own account data in Account', async () => {
    await page.goto(`${instance.url}/account`);
    const section = page.getByRole('region', { name: 'Your data' });
    await section.waitFor(WAIT);
    const link = section.getByRole('link', { name: 'Download my account data' });
    await expect(section.getByLabel('Format').inputValue()).resolves.toBe('xlsx');
    await expect(link.getAttribute('href')).resolves.toBe('/api/user/takeout?format=xlsx');
    await section.getByLabel('Format').selectOption('json');
    await expect(link.getAttribute('href')).resolves.toBe('/api/user/takeout?format=json');
    const { file, bytes } = await download(page, () => link.click());
    expect(file.suggestedFilename()).toMatch(/\.zip$/);
    expect(bytes.subarray(0, 2).toString('latin1')).toBe('PK');
    expect(await reviewLayouts(page, 'portability-account')).toEqual([]);
  }, 60_000);
});

describe('a site viewer', () => {
  let viewer: BrowserContext;
  let seen: Page;

  beforeAll(async () => {
    const account = await call(page, 'POST', '/api/admin/users', { ...VIEWER, role: 'user' });
    expect(account.status).toBe(201);
    const user = account.body?.user as { id: string };
    expect((await call(page, 'PUT', `/api/sites/${siteId}/members/${user.id}`, { role: 'viewer' })).status).toBe(200);
    viewer = await browser.newContext({ ...READER, viewport: REVIEW_VIEWPORTS[0], acceptDownloads: true });
    seen = await signInAs(await viewer.newPage(), VIEWER, instance.url);
  }, 30_000);

  afterAll(() => viewer?.close());

  it('exports the dashboard’s pageviews, as anyone who sees the site may', async () => {
    await seen.goto(`${instance.url}/sites/${siteId}`);
    await seen.getByRole('button', { name: 'Export', exact: true }).click();
    const { file } = await download(seen, () => seen.getByRole('dialog', { name: 'Export raw data' }).getByRole('link', { name: 'Download' }).click());
    expect(file.suggestedFilename()).toBe(`${DOMAIN}-pageviews-${day(-29)}-to-${day()}.csv`);
  }, 30_000);

  it('is offered neither the site’s takeout nor its imports, even at the settings’ address', async () => {
    await expect(seen.getByRole('navigation', { name: 'Site' }).getByRole('link', { name: 'Settings' }).count()).resolves.toBe(0);
    await seen.goto(`${instance.url}/sites/${siteId}/settings`);
    await seen.getByRole('navigation', { name: 'Settings sections' }).waitFor(WAIT);
    await expect(seen.getByRole('link', { name: 'Download all data of this site' }).count()).resolves.toBe(0);
    await expect(seen.getByRole('heading', { name: 'Import data' }).count()).resolves.toBe(0);
    await expect(seen.getByRole('heading', { name: 'Download all data' }).count()).resolves.toBe(0);
  }, 30_000);
});

/**
 * A GoatCounter CSV export (format version 2, as GoatCounter writes it): three sessions' five
 * pageviews and one event between 50 and 45 days ago, and one bot request, which is left out.
 */
function goatCounterExport(): { csv: string; from: string; to: string } {
  const at = (daysAgo: number, time: string) => `${day(-daysAgo)}T${time}Z`;
  const rows = [
    ['/', 'Home', 'false', '', 'Firefox 133', 'Linux', '1', '0', 'https://news.ycombinator.com/', 'h', '1920,1080,1', 'DE', 'true', at(50, '10:00:00')],
    ['/about', 'About', 'false', '', 'Firefox 133', 'Linux', '1', '0', '', '', '1920,1080,1', 'DE', 'false', at(50, '10:01:00')],
    ['/', 'Home', 'false', '', 'Chrome 131', 'Windows 10', '2', '0', '', '', '1366,768,1', 'FR', 'true', at(48, '09:00:00')],
    ['/pricing', 'Pricing', 'false', '', 'Chrome 131', 'Windows 10', '2', '0', '', '', '1366,768,1', 'FR', 'false', at(48, '09:02:00')],
    ['/', 'Home', 'false', '', 'Safari 18', 'macOS 15', '3', '0', '', '', '', 'US-CA', 'true', at(45, '12:00:00')],
    ['signup', '', 'true', '', 'Safari 18', 'macOS 15', '3', '0', '', '', '', 'US-CA', 'false', at(45, '12:05:00')],
    ['/', 'Home', 'false', '', '', '', '4', '1', '', '', '', '', 'true', at(45, '13:00:00')],
  ];
  const quote = (cell: string) => (/[",\n]/.test(cell) ? `"${cell.replace(/"/g, '""')}"` : cell);
  const header = '2Path,Title,Event,UserAgent,Browser,System,Session,Bot,Referrer,Referrer scheme,Screen size,Location,FirstVisit,Date';
  return { csv: `${[header, ...rows.map((row) => row.map(quote).join(','))].join('\n')}\n`, from: day(-50), to: day(-45) };
}

const pageviewsBetween = async (from: string, to: string) =>
  ((await call(page, 'GET', `/api/sites/${siteId}/stats/kpis?${new URLSearchParams({ from, to })}`)).body?.kpis as { pageviews: number } | undefined)?.pageviews;

describe('Import data in the site’s settings', () => {
  const section = () => page.getByRole('region', { name: 'Import data' });
  const openImport = () => section().getByTestId('open-import');
  const pastRows = () => section().getByTestId('past-imports').locator('tbody tr');
  const exported = goatCounterExport();

  beforeAll(async () => {
    await page.goto(`${instance.url}/sites/${siteId}/settings#imports`);
    await section().waitFor(WAIT);
  });

  it('lists the importers with what each takes, and refuses files of another kind before sending anything', async () => {
    const goat = section().getByRole('radio', { name: /GoatCounter/ });
    await goat.waitFor(WAIT);
    const listed = (await call(page, 'GET', `/api/sites/${siteId}/importers`)).body?.importers as { label: string; extensions: string[] }[];
    await expect(section().getByRole('group', { name: 'Import from' }).getByRole('radio').count()).resolves.toBe(listed.length);
    const goatCounter = listed.find((i) => i.label === 'GoatCounter')!;
    await section().getByText(goatCounter.extensions.join(', '), { exact: false }).first().waitFor(WAIT);
    await goat.check();

    const sent: string[] = [];
    const onRequest = (req: { method(): string; url(): string }) => {
      if (req.method() !== 'GET') sent.push(req.url());
    };
    page.on('request', onRequest);
    await section().getByLabel('Files', { exact: true }).setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hello') });
    await section().getByRole('button', { name: 'Upload and check' }).click();
    await section().getByText('notes.txt is not one of the accepted files', { exact: false }).waitFor(WAIT);
    await expect(section().getByLabel('Files', { exact: true }).getAttribute('aria-invalid')).resolves.toBe('true');
    page.off('request', onRequest);
    expect(sent).toEqual([]);
  }, 30_000);

  it('uploads a GoatCounter export with a bar per file, resumes after a dropped connection, and shows the dry run’s manifest', async () => {
    // The first piece of the file never reaches the server, as when the connection drops.
    let dropped = 0;
    const drop = (route: Route) => {
      dropped += 1;
      return route.abort('connectionreset');
    };
    await page.route(/\/api\/sites\/[^/]+\/imports\/[^/]+\/files\/0\?offset=/, drop);
    await section().getByLabel('Files', { exact: true }).setInputFiles({ name: 'goatcounter-export.csv', mimeType: 'text/csv', buffer: Buffer.from(exported.csv) });
    await section().getByRole('button', { name: 'Upload and check' }).click();
    await openImport().getByRole('alert').filter({ hasText: 'The upload stopped' }).waitFor(WAIT);
    expect(dropped).toBe(1);
    await expect(openImport().getByRole('progressbar', { name: 'Upload of goatcounter-export.csv' }).getAttribute('value')).resolves.toBe('0');
    expect(await reviewLayouts(page, 'portability-settings-upload-stopped')).toEqual([]);

    await page.unroute(/\/api\/sites\/[^/]+\/imports\/[^/]+\/files\/0\?offset=/, drop);
    const resumed = page.waitForRequest((req) => req.method() === 'PUT' && /\/files\/0\?offset=0$/.test(req.url()));
    await openImport().getByRole('button', { name: 'Retry upload' }).click();
    await resumed;
    const manifest = section().getByTestId('import-manifest');
    await manifest.waitFor({ timeout: 30_000 });
    await expect(openImport().getAttribute('data-state')).resolves.toBe('validated');
    expect(words(await manifest.locator('p').first().textContent())).toBe(`6 rows to import, ${written(exported)}; 1 left out.`);
    const accepted = await manifest.getByTestId('import-datasets').locator('tbody td:nth-of-type(2)').allTextContents();
    expect(accepted.reduce((sum, n) => sum + Number(n), 0)).toBe(6);
    // The bot's row, line 8 of the file (the header is line 1), is the example of its reason.
    await manifest.getByTestId('import-skipped').getByText('goatcounter-export.csv, line 8', { exact: false }).waitFor(WAIT);
    await expect(pageviewsBetween(exported.from, exported.to)).resolves.toBe(0);
    expect(await reviewLayouts(page, 'portability-settings-import-manifest')).toEqual([]);
  }, 90_000);

  it('starts the import and follows it to completed; the past imports list it with its dates and rows, and its pageviews count', async () => {
    await openImport().getByRole('button', { name: 'Start import' }).click();
    await openImport().waitFor({ state: 'detached', timeout: 60_000 });
    const row = pastRows().first();
    await expect(row.getAttribute('data-state')).resolves.toBe('completed');
    const cells = (await row.locator('td').allTextContents()).map(words);
    expect(cells.slice(1)).toEqual(['GoatCounter', 'completed', written(exported), '6', '—', 'Delete']);
    await expect(pageviewsBetween(exported.from, exported.to)).resolves.toBe(5);
    expect(await reviewLayouts(page, 'portability-settings')).toEqual([]);
  }, 90_000);

  it('says where a file failed the check: the file and the line', async () => {
    await section().getByRole('radio', { name: /GoatCounter/ }).check();
    await section().getByLabel('Files', { exact: true }).setInputFiles({ name: 'broken.csv', mimeType: 'text/csv', buffer: Buffer.from('Path,Title\n/,Home\n') });
    await section().getByRole('button', { name: 'Upload and check' }).click();
    const failed = pastRows().and(page.locator('[data-state="failed"]'));
    await failed.waitFor({ timeout: 30_000 });
    await expect(failed.locator('td.import-problem').textContent()).resolves.toMatch(/^broken\.csv, line 1: /);
    await expect(openImport().count()).resolves.toBe(0);
  }, 60_000);

  it('deletes an import after saying that its data goes with it: the row leaves the list and the pageviews leave the figures', async () => {
    const completed = pastRows().and(page.locator('[data-state="completed"]'));
    let asked = '';
    page.once('dialog', (dialog) => {
      asked = dialog.message();
      void dialog.accept();
    });
    await completed.getByRole('button', { name: 'Delete' }).click();
    await completed.waitFor({ state: 'detached', ...WAIT });
    expect(words(asked)).toBe(`Delete this import from GoatCounter? Every figure it added (${written(exported)}) is removed from the site’s statistics. This cannot be undone.`);
    await expect(pageviewsBetween(exported.from, exported.to)).resolves.toBe(0);
  }, 60_000);
});

describe('imported days in the dashboard’s chart', () => {
  // The days the server names as imported (the stats answer's `imported`), here set by the test
  // over the server's real answer, so the chart is checked on its own.
  const IMPORTED = { from: day(-25), to: day(-20) };
  const statsAsked: string[] = [];
  /** False: the answers carry no `imported` at all, as a server without imports answers. */
  let naming = true;
  const withImported = async (route: Route) => {
    const url = new URL(route.request().url());
    statsAsked.push(url.search);
    const answer = await route.fetch();
    const { imported: _, ...body } = (await answer.json()) as Record<string, unknown>;
    const left = url.searchParams.get('with_imported') === 'false';
    await route.fulfill({ response: answer, json: naming ? { ...body, imported: { included: !left, ranges: left ? [] : [IMPORTED] } } : body });
  };
  /** Pixels of the chart's plot, along a line near its top, painted in the imported days' shade. */
  const shadedPixels = () =>
    page.locator('[data-testid="chart"] canvas').evaluate((canvas: HTMLCanvasElement) => {
      const data = canvas.getContext('2d')!.getImageData(0, Math.round(canvas.height * 0.15), canvas.width, 1).data;
      let shaded = 0;
      // The light theme's shade, rgba(120, 113, 108, 0.16): no line, fill or grid of the chart has its colour.
      const near = (value: number, wanted: number) => Math.abs(value - wanted) <= 8;
      for (let i = 0; i < data.length; i += 4) if (near(data[i], 120) && near(data[i + 1], 113) && near(data[i + 2], 108) && data[i + 3] > 25 && data[i + 3] < 60) shaded += 1;
      return { shaded, width: canvas.width };
    });

  beforeAll(async () => {
    await page.route(new RegExp(`/api/sites/${siteId}/stats\\?`), withImported);
  });
  // Waits for answers still being rewritten: none is left half handled when the page closes.
  afterAll(() => page.unrouteAll({ behavior: 'wait' }));

  it('shades the imported days behind the lines, says which they are, and marks them in the data table', async () => {
    await page.goto(`${instance.url}/sites/${siteId}`);
    const note = page.getByTestId('imported-note');
    await note.waitFor(WAIT);
    expect(words(await note.locator('p').textContent())).toBe(`Includes imported data: ${written(IMPORTED)}`);
    await expect(note.getByRole('checkbox', { name: 'Show imported data' }).isChecked()).resolves.toBe(true);
    await page.getByTestId('chart-legend').locator('[data-series="imported"]').waitFor(WAIT);
    const marks = await page.locator('[data-testid="chart"] table tbody tr td:last-child').allTextContents();
    // 30 days, today last: days 25 to 20 ago are the 5th to the 10th.
    expect(marks).toEqual(Array.from({ length: 30 }, (_, i) => (i >= 4 && i <= 9 ? 'included' : '—')));
    const { shaded, width } = await shadedPixels();
    // Six days of thirty: about a fifth of the plot's width.
    expect(shaded / width).toBeGreaterThan(0.12);
    expect(shaded / width).toBeLessThan(0.25);
    expect(await reviewLayouts(page, 'portability-chart-imported')).toEqual([]);
  }, 60_000);

  it('leaves imported data out when switched off: with_imported=false in the address and in every stats request, kept over a reload', async () => {
    statsAsked.length = 0;
    // A click, then the outcome: the switch changes with the address, which the router updates in a transition.
    await page.getByRole('checkbox', { name: 'Show imported data' }).click();
    await page.getByTestId('imported-note').getByText('Imported data is left out of these figures.').waitFor(WAIT);
    expect(new URL(page.url()).searchParams.get('with_imported')).toBe('false');
    expect(statsAsked.length).toBeGreaterThan(0);
    expect(statsAsked.every((search) => new URLSearchParams(search).get('with_imported') === 'false')).toBe(true);
    await expect(page.getByTestId('chart-legend').locator('[data-series="imported"]').count()).resolves.toBe(0);
    await expect(shadedPixels().then((p) => p.shaded)).resolves.toBe(0);

    const breakdown = page.waitForRequest((req) => req.url().includes('/stats/breakdown?') && new URL(req.url()).searchParams.get('with_imported') === 'false');
    await page.reload();
    await breakdown;
    const box = page.getByRole('checkbox', { name: 'Show imported data' });
    await box.waitFor(WAIT);
    await expect(box.isChecked()).resolves.toBe(false);
    await box.click();
    await page.getByTestId('imported-note').getByText('Includes imported data', { exact: false }).waitFor(WAIT);
    expect(new URL(page.url()).searchParams.has('with_imported')).toBe(false);
  }, 60_000);

  it('says nothing of imports when the answer has no `imported` field', async () => {
    naming = false;
    await page.reload();
    await page.getByTestId('chart').waitFor(WAIT);
    await page.waitForTimeout(300);
    await expect(page.getByTestId('imported-note').count()).resolves.toBe(0);
    await expect(page.getByTestId('chart-legend').locator('[data-series="imported"]').count()).resolves.toBe(0);
    await expect(shadedPixels().then((p) => p.shaded)).resolves.toBe(0);
  }, 30_000);
});

describe('a Plausible export imported from the dashboard', () => {
  const section = () => page.getByRole('region', { name: 'Import data' });
  const rows = exportRows();
  const range = { from: EXPORT_DAYS[0], to: EXPORT_DAYS.at(-1)! };

  it('is uploaded, checked and imported from the site’s settings', async () => {
    await page.goto(`${instance.url}/sites/${siteId}/settings#imports`);
    await section().getByRole('radio', { name: /Plausible/ }).check();
    await section().getByLabel('Files', { exact: true }).setInputFiles({ name: 'plausible-export.zip', mimeType: 'application/zip', buffer: await zipOf(exportFiles()) });
    await section().getByRole('button', { name: 'Upload and check' }).click();
    const open = section().getByTestId('open-import');
    await section().getByTestId('import-manifest').waitFor({ timeout: 60_000 });
    await open.getByRole('button', { name: 'Start import' }).click();
    await open.waitFor({ state: 'detached', timeout: 60_000 });
    const row = section().getByTestId('past-imports').locator('tbody tr').first();
    await expect(row.getAttribute('data-state')).resolves.toBe('completed');
    expect((await row.locator('td').allTextContents()).map(words).slice(1, 4)).toEqual(['Plausible', 'completed', written(range)]);
  }, 120_000);

  it('shows the export’s own totals on the dashboard over its range, and names the imported days', async () => {
    await page.goto(`${instance.url}/sites/${siteId}?period=custom&from=${range.from}&to=${range.to}`);
    const figure = (key: string) => page.getByTestId(`kpi-${key}`);
    await figure('visitors').filter({ hasText: formatNumber(total(rows.imported_visitors, 'visitors')) }).waitFor(WAIT);
    await expect(figure('visits').textContent()).resolves.toBe(formatNumber(total(rows.imported_visitors, 'visits')));
    await expect(figure('pageviews').textContent()).resolves.toBe(formatNumber(total(rows.imported_visitors, 'pageviews')));
    expect(words(await page.getByTestId('imported-note').locator('p').textContent())).toBe(`Includes imported data: ${written(range)}`);
    // The pages panel lists the export's pages, /pricing among them.
    await page.locator('[data-panel="Pages"]').getByText('/pricing', { exact: true }).first().waitFor(WAIT);
  }, 60_000);
});
