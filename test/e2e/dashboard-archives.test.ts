// The archives plugin as an instance owner and a site viewer meet it in the dashboard: the
// "Backups" page (its menu entry, the backup made at start, "Back up now" followed to completion
// by the page itself, deleting a backup with its files), the site's "Data retention" settings
// section with what retention has archived, and what a viewer is shown instead.
// Both pages are scanned with axe-core and checked for layout faults in light and dark mode,
// 1366 px and 360 px wide, and screenshotted into test-output/screenshots/archives-*.png.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, BrowserContext, Page, Request } from 'playwright-core';
import { launchChromium } from '../support/browser.ts';
import { BROWSER_DRIVEN_ENV, REVIEW_VIEWPORTS, reviewLayouts, SCREENSHOTS, signInAs } from '../support/dashboard.ts';
import { type Instance, request, startInstance, waitFor } from '../support/instance.ts';

const OWNER = { email: 'owner@example.com', password: 'correct horse battery' };
const VIEWER = { email: 'viewer@example.com', password: 'another long password' };
/** How the browser writes dates and times: the page's words for them are checked. */
const READER = { locale: 'en-US', timezoneId: 'UTC' } as const;
const WAIT = { timeout: 15_000 };
/** A backup of a fresh instance takes a second or two; a busy machine may take several times that. */
const BACKUP_DONE_MS = 45_000;

interface Backup {
  id: string;
  status: string;
  location: string;
  started_at: string | null;
  bytes: number;
}

let instance: Instance;
let target: string;
let browser: Browser;
let owner: BrowserContext;
let page: Page;
let siteId: string;

/** Runs in a signed-in page: JSON calls to the instance, as the dashboard makes them. */
const call = (on: Page, method: string, path: string, body?: unknown) =>
  on.evaluate(
    async ([method, path, body]) => {
      const res = await fetch(path, { method, headers: body === undefined ? {} : { 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: res.status, body: res.status === 204 ? null : ((await res.json()) as Record<string, unknown>) };
    },
    [method, path, body] as const,
  );

const backups = async () => ((await call(page, 'GET', '/api/plugins/archives/backups')).body?.backups ?? []) as Backup[];

/** Waits until the instance lists `count` completed backups (the plugin's leader job makes them). */
async function completedBackups(count: number): Promise<Backup[]> {
  let listed: Backup[] = [];
  await waitFor(
    async () => {
      listed = await backups();
      return listed.filter((b) => b.status === 'completed').length === count && listed.every((b) => b.status === 'completed');
    },
    BACKUP_DONE_MS,
    () => `expected ${count} completed backups, the instance lists ${JSON.stringify(listed)}`,
  );
  return listed;
}

/**
 * Makes the page believe its tab was hidden or shown again, as the browser says it when another
 * tab comes to the front: document.visibilityState and a visibilitychange event.
 */
const setVisibility = (on: Page, state: 'hidden' | 'visible') =>
  on.evaluate((state) => {
    Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => state });
    Object.defineProperty(document, 'hidden', { configurable: true, get: () => state === 'hidden' });
    document.dispatchEvent(new Event('visibilitychange', { bubbles: true }));
  }, state);

/** Whether a request is the Backups page reading one of its panels. */
const panelRead = (req: Request) => req.method() === 'GET' && /^\/api\/plugins\/archives\/(summary|backups)$/.test(new URL(req.url()).pathname);

/** A time as the page writes it for people ("Nov 24, 2026, 11:42 PM", in the reader's zone: UTC here), never as the API's RFC 3339 string. */
const PEOPLE_TIME = /^[A-Z][a-z]{2} \d{1,2}, \d{4}, \d{1,2}:\d\d [AP]M$/;
/** The minute a time the page wrote names, as the API writes it. */
const minuteOf = (written: string) => new Date(`${written} UTC`).toISOString();
const sameMinute = (iso: string | null | undefined) => `${iso?.slice(0, 16)}:00.000Z`;

const backupFolders = () => (existsSync(join(target, 'backups')) ? readdirSync(join(target, 'backups')).sort() : []);

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  target = mkdtempSync(join(tmpdir(), 'plumb-archives-target-'));
  instance = await startInstance({ env: { ...BROWSER_DRIVEN_ENV, PLUMB_PLUGINS: 'archives', PLUMB_ARCHIVES_TARGET: target } });
  const created = await request(`${instance.url}/api/initial-user`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(OWNER) });
  expect(created.status).toBe(201);
  browser = await launchChromium();
  owner = await browser.newContext({ ...READER, viewport: REVIEW_VIEWPORTS[0] });
  page = await signInAs(await owner.newPage(), OWNER, instance.url);
  const teams = (await call(page, 'GET', '/api/user/teams')).body?.items as { id: string }[];
  const site = await call(page, 'POST', '/api/sites', { domain: 'archives.example', team_id: teams[0].id, timezone: 'UTC' });
  expect(site.status).toBe(201);
  const made = site.body?.site as { id: string };
  siteId = made.id;
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await instance?.destroy();
  if (target) rmSync(target, { recursive: true, force: true });
});

describe('the Backups page', () => {
  it('is an entry of the main menu and lists the backup made at start, completed, with when it started, its size and rows', async () => {
    const [first] = await completedBackups(1);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Backups' }).click();
    await page.getByRole('heading', { name: 'Backups', level: 1 }).waitFor(WAIT);
    const summary = page.getByTestId('plugin-archives-summary');
    // The cards are drawn once the panel's route has answered, after the page's heading.
    await summary.locator('.kpi-label').first().waitFor(WAIT);
    await expect(summary.locator('.kpi-label').allTextContents()).resolves.toEqual(['Complete backups', 'Rows in the last', 'Size of the last']);
    await summary.locator('.kpi-value').first().filter({ hasText: /^1$/ }).waitFor(WAIT);

    const table = page.getByTestId('plugin-archives-backups');
    const rows = table.locator('tbody tr');
    await rows.first().waitFor(WAIT);
    await expect(table.locator('thead th').allTextContents()).resolves.toEqual(['Started', 'Status', 'Size', 'Rows', 'Error', 'Actions']);
    await expect(rows.count()).resolves.toBe(1);
    const cells = await rows.first().locator('th, td').allTextContents();
    expect(cells[0]).toMatch(PEOPLE_TIME);
    expect(minuteOf(cells[0])).toBe(sameMinute(first.started_at));
    // A fresh instance's backup is tens of KiB: its bytes in KiB, with one decimal.
    expect(first.bytes).toBeGreaterThan(1024);
    expect(first.bytes).toBeLessThan(1000 * 1024);
    const size = `${(first.bytes / 1024).toFixed(1)} KiB`;
    expect(cells.slice(1)).toEqual(['completed', size, expect.stringMatching(/^[\d,.]+[KMB]?$/), '—', 'Delete']);
    // The last complete backup is this one: the summary says its size the same way.
    await expect(summary.locator('.kpi-value').allTextContents()).resolves.toEqual(['1', cells[3], size]);
  }, 90_000);

  it('asks for a backup with "Back up now", says the leader starts it soon, and follows it to completed by itself: no reload, no flicker, the focus kept', async () => {
    const table = page.getByTestId('plugin-archives-backups');
    // Notes it if the table ever leaves the page while it is read again.
    await table.evaluate((panel) => {
      new MutationObserver(() => {
        if (!panel.querySelector('tbody tr')) document.documentElement.dataset.backupsTableLeft = 'yes';
      }).observe(panel, { childList: true, subtree: true });
    });
    const button = page.getByRole('button', { name: 'Back up now' });
    await button.click();
    await page.getByRole('status').getByText('Backup requested: it starts within a few seconds.').waitFor(WAIT);
    const rows = table.locator('tbody tr');
    // The table is read again after the button: the new backup is its first row, as asked for or already running.
    await rows.nth(1).waitFor(WAIT);
    await expect(rows.first().locator('td').first().textContent()).resolves.toMatch(/^(requested|running|completed)$/);

    await completedBackups(2);
    // The panels read their routes every 5 seconds: both rows come to say completed, and the count 2.
    await rows.locator('td:nth-of-type(1)').filter({ hasText: /^completed$/ }).nth(1).waitFor(WAIT);
    await expect(rows.locator('td:nth-of-type(1)').allTextContents()).resolves.toEqual(['completed', 'completed']);
    await page.getByTestId('plugin-archives-summary').locator('.kpi-value').first().filter({ hasText: /^2$/ }).waitFor(WAIT);
    await expect(page.evaluate(() => document.documentElement.dataset.backupsTableLeft ?? 'never')).resolves.toBe('never');
    await expect(button.evaluate((element) => element === document.activeElement)).resolves.toBe(true);
    expect(await reviewLayouts(page, 'archives-backups')).toEqual([]);
  }, 120_000);

  it('reads its panels no more while the tab is hidden, and at once when it is shown again', async () => {
    const reads: string[] = [];
    const onRequest = (req: Request) => {
      if (panelRead(req)) reads.push(new URL(req.url()).pathname);
    };
    await setVisibility(page, 'hidden');
    // A read already under way when the tab was hidden may still be sent.
    await page.waitForTimeout(500);
    page.on('request', onRequest);
    try {
      // Longer than the panels' 5 seconds between reads.
      await page.waitForTimeout(7_000);
      expect(reads).toEqual([]);
      const shown = page.waitForRequest(panelRead, { timeout: 3_000 });
      await setVisibility(page, 'visible');
      await shown;
      await page.waitForTimeout(500);
      expect([...new Set(reads)].sort()).toEqual(['/api/plugins/archives/backups', '/api/plugins/archives/summary']);
    } finally {
      page.off('request', onRequest);
    }
  }, 30_000);

  it('deletes a backup from its row after asking: the row leaves the table and its folder leaves the target', async () => {
    const [newer, older] = await backups();
    expect(backupFolders()).toEqual([older.id, newer.id]);
    const rows = page.getByTestId('plugin-archives-backups').locator('tbody tr');
    let asked = '';
    page.once('dialog', (dialog) => {
      asked = dialog.message();
      void dialog.accept();
    });
    // Newest first: the last row is the backup made at start.
    await rows.nth(1).getByRole('button', { name: 'Delete' }).click();
    await rows.nth(1).waitFor({ state: 'detached', ...WAIT });
    expect(asked).toBe('Delete this backup and its files? It cannot be restored afterwards.');
    await expect(rows.count()).resolves.toBe(1);
    expect((await backups()).map((b) => b.id)).toEqual([newer.id]);
    expect(backupFolders()).toEqual([newer.id]);
    await page.getByTestId('plugin-archives-summary').locator('.kpi-value').first().filter({ hasText: /^1$/ }).waitFor(WAIT);
  }, 60_000);
});

describe('the site’s "Data retention" settings', () => {
  const retention = () => call(page, 'GET', `/api/sites/${siteId}/plugins/archives/retention`);
  const pageviews = async () => {
    const whole = new URLSearchParams({ from: new Date(Date.now() - 400 * 86_400_000).toISOString().slice(0, 10), to: new Date(Date.now() + 86_400_000).toISOString().slice(0, 10) });
    return ((await call(page, 'GET', `/api/sites/${siteId}/stats/kpis?${whole}`)).body?.kpis as { pageviews: number } | undefined)?.pageviews;
  };

  beforeAll(async () => {
    // Three pageviews from 100 days ago, which a retention of 30 days archives, and one of today, which it keeps.
    const client = await call(page, 'POST', '/api/user/api-clients', { name: 'importer', scopes: ['ingest:write'], sites: [{ site_id: siteId, role: 'editor' }] });
    expect(client.status).toBe(201);
    const at = (daysAgo: number, hours: number) => new Date(Date.now() - daysAgo * 86_400_000 - hours * 3_600_000).toISOString();
    const items = [...[0, 1, 2].map((i) => ({ path: `/old-${i}`, timestamp: at(100, i) })), { path: '/today', timestamp: at(0, 0) }].map(({ path, timestamp }, i) => ({
      type: 'pageview',
      url: `https://archives.example${path}`,
      visitor_ip: `198.51.100.${i + 1}`,
      user_agent: 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0',
      timestamp,
    }));
    const sent = await request(`${instance.url}/api/ingest/server/batch`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${client.body?.token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ items }),
    });
    expect(sent.body.rejected).toBe(0);
    await waitFor(async () => (await pageviews()) === 4, 30_000, () => 'the pageviews were not counted');
  }, 60_000);

  it('shows what retention has archived beside the days, never sending it: nothing at first, the old rows once 30 days are kept', async () => {
    await page.goto(`${instance.url}/sites/${siteId}/settings`);
    await page.getByRole('navigation', { name: 'Settings sections' }).getByRole('link', { name: 'Data retention' }).waitFor(WAIT);
    const section = page.getByTestId('plugin-settings-archives-retention');
    const days = section.getByLabel('Keep analytics for (days)');
    await days.waitFor(WAIT);
    expect(await days.inputValue()).toBe('');
    const reported = section.getByRole('definition');
    await expect(section.getByRole('term').allTextContents()).resolves.toEqual(['Rows archived so far', 'Last archived']);
    await expect(reported.allTextContents()).resolves.toEqual(['0', '—']);
    // Shown, not fields a person edits.
    await expect(section.getByRole('textbox').count()).resolves.toBe(0);
    await expect(section.getByRole('spinbutton').count()).resolves.toBe(1);

    await days.fill('30');
    const put = page.waitForRequest((req) => req.method() === 'PUT' && req.url().endsWith(`/api/sites/${siteId}/plugins/archives/retention`));
    await section.getByRole('button', { name: 'Save' }).click();
    expect((await put).postDataJSON()).toEqual({ retention_days: 30 });
    await section.getByRole('status').getByText('Saved.').waitFor(WAIT);

    // The leader archives the three old pageviews (their hits and visits) within seconds of the change.
    let archived: Record<string, unknown> | null = null;
    await waitFor(
      async () => {
        archived = (await retention()).body;
        return archived?.archived_rows === 6;
      },
      60_000,
      () => `retention archived ${JSON.stringify(archived)}`,
    );
    await expect(pageviews()).resolves.toBe(1);
    await page.reload();
    await days.waitFor(WAIT);
    await expect(days.inputValue()).resolves.toBe('30');
    await reported.first().waitFor(WAIT);
    const [rows, when] = await reported.allTextContents();
    expect(rows).toBe('6');
    expect(when).toMatch(PEOPLE_TIME);
    expect(minuteOf(when)).toBe(sameMinute((await retention()).body?.last_archived_at as string));
    expect(await reviewLayouts(page, 'archives-retention-archived')).toEqual([]);
  }, 120_000);

  it('shows the server’s refusal of 0 under the field, keeping 30 days, and saves an empty field as keeping everything', async () => {
    const section = page.getByTestId('plugin-settings-archives-retention');
    const days = section.getByLabel('Keep analytics for (days)');
    await days.waitFor(WAIT);
    await expect(days.inputValue()).resolves.toBe('30');
    expect((await retention()).body).toMatchObject({ retention_days: 30 });

    await days.fill('0');
    await section.getByRole('button', { name: 'Save' }).click();
    const error = section.locator('.field-error');
    await error.waitFor(WAIT);
    await expect(error.textContent()).resolves.toBe('must be at least 1');
    // Said under the field, and read out with it.
    await expect(days.getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(days.getAttribute('aria-describedby')).resolves.toBe(await error.getAttribute('id'));
    expect((await retention()).body).toMatchObject({ retention_days: 30 });
    expect(await reviewLayouts(page, 'archives-retention-refused')).toEqual([]);

    await days.fill('');
    await section.getByRole('button', { name: 'Save' }).click();
    await section.getByRole('status').getByText('Saved.').waitFor(WAIT);
    expect((await retention()).body).toMatchObject({ retention_days: null });
    await page.reload();
    await days.waitFor(WAIT);
    await expect(days.inputValue()).resolves.toBe('');
    // What was archived stays archived: keeping everything from now on does not bring it back.
    await section.getByRole('definition').first().waitFor(WAIT);
    await expect(section.getByRole('definition').first().textContent()).resolves.toBe('6');
    expect(await reviewLayouts(page, 'archives-retention')).toEqual([]);
  }, 120_000);
});

describe('a site viewer', () => {
  let viewer: BrowserContext;
  let seen: Page;

  beforeAll(async () => {
    const account = await call(page, 'POST', '/api/admin/users', { ...VIEWER, role: 'user' });
    expect(account.status).toBe(201);
    const user = account.body?.user as { id: string };
    expect((await call(page, 'PUT', `/api/sites/${siteId}/members/${user.id}`, { role: 'viewer' })).status).toBe(200);
    viewer = await browser.newContext({ ...READER, viewport: REVIEW_VIEWPORTS[0] });
    seen = await signInAs(await viewer.newPage(), VIEWER, instance.url);
  }, 30_000);

  afterAll(() => viewer?.close());

  it('sees the site, and finds no Backups entry in the menu', async () => {
    await seen.getByRole('link', { name: /archives\.example/ }).first().waitFor(WAIT);
    const menu = seen.getByRole('navigation', { name: 'Main' });
    await menu.getByRole('link', { name: 'Account' }).waitFor(WAIT);
    await expect(menu.getByRole('link').allTextContents()).resolves.toEqual(['Sites', 'Account']);
  });

  it('is told at /plugins/archives that the page is for the instance’s administrators, with none of its buttons', async () => {
    await seen.goto(`${instance.url}/plugins/archives`);
    await seen.getByRole('heading', { name: 'Backups', level: 1 }).waitFor(WAIT);
    await seen.getByText('This page is for the administrators of this Plumb instance.').waitFor(WAIT);
    await expect(seen.getByRole('button', { name: 'Back up now' }).count()).resolves.toBe(0);
    await expect(seen.locator('table').count()).resolves.toBe(0);
    expect(await reviewLayouts(seen, 'archives-viewer')).toEqual([]);
  }, 60_000);
});
