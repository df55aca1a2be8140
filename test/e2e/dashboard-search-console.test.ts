// The search-console plugin as a site's owner uses it in the dashboard, against a local double of
// Google: the site's settings connect it (the button sends the browser through Google's consent and
// back), offers the buttons that fit the connection's state, the property is chosen there among
// the account's, and once the leader has synced, the site's dashboard shows
// the figures in the plugin's panels.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/browser.ts';
import { type AxeFinding, BROWSER_DRIVEN_ENV, reviewPage, signInAs } from '../support/dashboard.ts';
import { type GoogleDouble, type PropertyData, searchConsoleEnv, startGoogleDouble } from '../support/google-search-console-double.ts';
import { freePort, type Instance, request, startInstance, waitFor } from '../support/instance.ts';

const OWNER = { email: 'owner@example.com', password: 'correct horse battery' };
const WAIT = { timeout: 15_000 };
const DAY_MS = 86_400_000;
const PROPERTY = 'sc-domain:search.example';
/** Another property the account can read, so the choice is a real one. */
const OTHER_PROPERTY = 'https://other.example/';
/** The five days before today (UTC), each with the same rows: the panels show five times a day's figures. */
const DAYS = Array.from({ length: 5 }, (_, i) => new Date(Date.now() - (5 - i) * DAY_MS).toISOString().slice(0, 10));
const A_DAY = {
  query: [
    { key: 'plumb analytics', clicks: 4, impressions: 40, position: 1.5 },
    { key: 'cookie-free analytics', clicks: 1, impressions: 60, position: 6 },
  ],
  page: [{ key: 'https://search.example/', clicks: 5, impressions: 100, position: 4 }],
  country: [{ key: 'fra', clicks: 5, impressions: 100, position: 4 }],
  device: [
    { key: 'DESKTOP', clicks: 3, impressions: 50, position: 3 },
    { key: 'MOBILE', clicks: 2, impressions: 50, position: 5 },
  ],
};
const DATA: PropertyData = Object.fromEntries(DAYS.map((day) => [day, A_DAY]));

let google: GoogleDouble;
let instance: Instance;
let base: string;
let browser: Browser;
let page: Page;
let siteId: string;
const findings: AxeFinding[] = [];

beforeAll(async () => {
  google = await startGoogleDouble({ [OTHER_PROPERTY]: {}, [PROPERTY]: DATA });
  // Google sends the browser back to the public URL: the one the browser uses, so its session goes along.
  const port = await freePort();
  base = `http://localhost:${port}`;
  instance = await startInstance({
    port,
    env: {
      ...BROWSER_DRIVEN_ENV,
      PLUMB_PUBLIC_URL: base,
      ...searchConsoleEnv(google),
      PLUMB_SEARCH_CONSOLE_BACKFILL_DAYS: '5',
      PLUMB_SEARCH_CONSOLE_CHECK_EVERY_SECONDS: '1',
    },
  });
  const created = await request(`${instance.url}/api/initial-user`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(OWNER) });
  expect(created.status).toBe(201);
  browser = await launchChromium();
  page = await (await browser.newContext({ viewport: { width: 1366, height: 900 } })).newPage();
  await signInAs(page, OWNER, base);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await instance?.destroy();
  await google?.close();
});

describe('Google Search Console on a site', () => {
  it('connects through Google’s consent from the site’s settings, offering the buttons that fit, and takes the property chosen there', async () => {
    siteId = await page.evaluate(async () => {
      const teams = (await (await fetch('/api/user/teams')).json()) as { items: { id: string }[] };
      const res = await fetch('/api/sites', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ domain: 'search.example', team_id: teams.items[0].id, timezone: 'UTC' }) });
      return ((await res.json()) as { site: { id: string } }).site.id;
    });
    // Before any data, no rate and no position: a dash, not a 0 that reads as a figure.
    await page.goto(`${base}/sites/${siteId}`);
    const overview = page.getByTestId('plugin-search-console-overview');
    await overview.getByText('Average position').waitFor(WAIT);
    await expect(overview.locator('.kpi-value').allTextContents()).resolves.toEqual(['0', '0', '—', '—']);
    await page.goto(`${base}/sites/${siteId}/settings`);
    const section = page.getByTestId('plugin-settings-search-console-connection');
    await section.getByText('Not connected').waitFor(WAIT);
    // Nothing to sync or disconnect yet: connecting is all there is to do.
    await expect(section.getByRole('button').allTextContents()).resolves.toEqual(['Save', 'Connect to Google']);
    await section.getByRole('button', { name: 'Connect to Google' }).click();
    // Through the double's consent and the callback, back on the site's settings.
    await page.waitForURL(`${base}/sites/${siteId}/settings`, WAIT);
    await section.getByText('Connected: choose the property to sync').waitFor(WAIT);
    const listed = section.locator('.readout-value', { hasText: PROPERTY });
    await listed.waitFor(WAIT);
    // A text readout is set in the text's own figures: tabular ones would space out its hyphens.
    await expect(listed.evaluate((readout) => getComputedStyle(readout).fontVariantNumeric)).resolves.toBe('normal');
    await expect(section.getByRole('button').allTextContents()).resolves.toEqual(['Save', 'Sync now', 'Disconnect']);
    // What the buttons and the choices read (connected, the list to choose from) is not shown.
    await expect(section.locator('.readout dt').allTextContents()).resolves.toEqual(['Status', 'Connected by', 'Properties of the account', 'Synced through', 'Last sync', 'Last error']);
    // The property is one of the account's, chosen from them, not typed.
    const property = section.getByLabel('Property');
    await expect(property.evaluate((select) => select.tagName)).resolves.toBe('SELECT');
    await expect(property.locator('option').allTextContents()).resolves.toEqual(['—', OTHER_PROPERTY, PROPERTY]);
    await property.selectOption(PROPERTY);
    await section.getByRole('button', { name: 'Save' }).click();
    await section.getByRole('status').getByText('Saved.').waitFor(WAIT);
    await reviewPage(page, 'site-settings-search-console', findings);
    expect(findings).toEqual([]);
  }, 60_000);

  it('shows the synced figures in the site dashboard’s panels', async () => {
    await waitFor(
      async () => {
        const connection = await page.evaluate(async (id) => (await (await fetch(`/api/sites/${id}/plugins/search-console/connection`)).json()) as { synced_through: string | null }, siteId);
        return connection.synced_through === DAYS[DAYS.length - 1];
      },
      60_000,
      () => 'the sync did not finish',
    );
    await page.goto(`${base}/sites/${siteId}`);
    const overview = page.getByTestId('plugin-search-console-overview');
    await overview.getByText('Average position').waitFor(WAIT);
    // Five days of 5 clicks in 100 impressions, half at position 3 and half at 5.
    await expect(overview.locator('.kpi-value').allTextContents()).resolves.toEqual(['25', '500', '5', '4']);
    const queries = page.getByTestId('plugin-search-console-queries');
    await queries.getByRole('rowheader', { name: 'plumb analytics' }).waitFor(WAIT);
    await expect(queries.getByRole('row').allTextContents()).resolves.toEqual([
      expect.stringContaining('Query'),
      expect.stringMatching(/^plumb analytics\s*20\s*200\s*10\s*1\.5$/),
      expect.stringMatching(/^cookie-free analytics\s*5\s*300\s*1\.67\s*6$/),
    ]);
    await page.getByTestId('plugin-search-console-devices').getByRole('rowheader', { name: 'mobile', exact: true }).waitFor(WAIT);
    // Google's "fra" named as Plumb's own Locations panel names countries, in the browser's language.
    const france = await page.evaluate(() => new Intl.DisplayNames(undefined, { type: 'region' }).of('FR'));
    await page.getByTestId('plugin-search-console-countries').getByRole('rowheader', { name: france, exact: true }).waitFor(WAIT);
    await reviewPage(page, 'site-dashboard-search-console', findings);
    expect(findings).toEqual([]);
  }, 90_000);

  it('offers connecting again, and only that, once disconnected', async () => {
    await page.goto(`${base}/sites/${siteId}/settings`);
    const section = page.getByTestId('plugin-settings-search-console-connection');
    await section.getByRole('button', { name: 'Disconnect' }).waitFor(WAIT);
    page.once('dialog', (dialog) => void dialog.accept());
    await section.getByRole('button', { name: 'Disconnect' }).click();
    await section.getByText('Not connected').waitFor(WAIT);
    await section.getByRole('button', { name: 'Connect to Google' }).waitFor(WAIT);
    await expect(section.getByRole('button').allTextContents()).resolves.toEqual(['Save', 'Connect to Google']);
  }, 60_000);
});
