// The System page as an instance owner and a plain user meet it: the owner reaches it from the
// main menu and reads the same figures the API gives (each team's rows, the archives plugin's
// last backup as a time for people, how long the journal's fsyncs took after a visitor's pageview,
// the settings with the metrics token masked); a plain user has
// no menu entry and is told the page is not theirs. Scanned with axe-core and checked for layout
// faults in light and dark mode at 1366 and 360 px, screenshotted into test-output/screenshots/system-*.png.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/browser.ts';
import { BROWSER_DRIVEN_ENV, type PasswordAccount, REVIEW_VIEWPORTS, reviewLayouts, signInAs } from '../support/dashboard.ts';
import { type Instance, request, startInstance, waitFor } from '../support/instance.ts';

const OWNER = { email: 'owner@example.com', password: 'correct horse battery' };
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
const PLAIN = { email: 'plain@example.com', password: 'a plain user password' };
const METRICS_TOKEN = 'scrape-token-never-shown';
const READER = { locale: 'en-US', timezoneId: 'UTC' } as const;
const WAIT = { timeout: 15_000 };
/** A time as the page writes it for people ("Nov 24, 2026, 11:42 PM"). */
const PEOPLE_TIME = /^[A-Z][a-z]{2} \d{1,2}, \d{4}, \d{1,2}:\d\d [AP]M$/;

interface SystemAnswer {
  stores: { analytics: { teams: { name: string | null; rows: number }[] } };
  plugins: { name: string; status: { label: string; value: unknown }[] }[];
}

let instance: Instance;
let target: string;
let browser: Browser;

/** Runs in a signed-in page: a JSON call as the dashboard makes it. */
const call = (on: Page, method: string, path: string, body?: unknown) =>
  on.evaluate(
    async ([method, path, body]) => {
      const res = await fetch(path, { method, headers: body === undefined ? {} : { 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    },
    [method, path, body] as const,
  );

/** A new browser window (own cookies) with `who` signed in. */
async function signIn(who: PasswordAccount): Promise<Page> {
  const context = await browser.newContext({ ...READER, viewport: REVIEW_VIEWPORTS[0] });
  return signInAs(await context.newPage(), who, instance.url);
}

beforeAll(async () => {
  target = mkdtempSync(join(tmpdir(), 'plumb-system-target-'));
  instance = await startInstance({ env: { ...BROWSER_DRIVEN_ENV, PLUMB_PLUGINS: 'archives', PLUMB_ARCHIVES_TARGET: target, PLUMB_METRICS_TOKEN: METRICS_TOKEN } });
  expect((await request(`${instance.url}/api/initial-user`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(OWNER) })).status).toBe(201);
  browser = await launchChromium();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await instance?.destroy();
  if (target) rmSync(target, { recursive: true, force: true });
});

describe('the System page', () => {
  let owner: Page;

  it('is in the main menu of an owner and shows the figures the API gives', async () => {
    owner = await signIn(OWNER);
    const teams = (await call(owner, 'GET', '/api/user/teams')).body.items as { id: string; name: string }[];
    const site = await call(owner, 'POST', '/api/sites', { domain: 'system.example', team_id: teams[0].id, timezone: 'UTC' });
    expect(site.status).toBe(201);
    // A visitor's pageview, which waits for an fsync of the journal: the page shows how long those take.
    const pageview = await request(`${instance.url}/ingest`, {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain', Origin: 'https://system.example', 'User-Agent': FIREFOX },
      body: JSON.stringify({ url: 'https://system.example/pricing' }),
    });
    expect(pageview.status).toBe(202);
    // Its hit is stored first and its visit after it: the rows the API and the page count are
    // compared once both are in, or a row stored between the two readings tells them apart.
    const today = new URLSearchParams({ from: new Date(Date.now() - 3_600_000).toISOString(), to: new Date(Date.now() + 60_000).toISOString() });
    await waitFor(
      async () => ((await call(owner, 'GET', `/api/sites/${(site.body.site as { id: string }).id}/stats?${today}`)).body.kpis as { visits?: number } | undefined)?.visits === 1,
      30_000,
      () => 'the pageview and its visit were not stored',
    );
    expect((await call(owner, 'POST', '/api/admin/users', { ...PLAIN, role: 'user' })).status).toBe(201);
    // The archives plugin backs up once at start: wait until the API says so.
    let api: SystemAnswer | undefined;
    await waitFor(
      async () => {
        api = (await call(owner, 'GET', '/api/admin/system')).body as unknown as SystemAnswer;
        return api.plugins.find((p) => p.name === 'archives')?.status.some((line) => line.label === 'Last complete backup' && line.value !== null) ?? false;
      },
      45_000,
      () => 'the first backup never completed',
    );

    await owner.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'System' }).click();
    await owner.getByRole('heading', { name: 'System', level: 1 }).waitFor(WAIT);
    const teamRows = owner.getByTestId('system-teams').locator('tbody tr');
    await teamRows.first().waitFor(WAIT);
    const shown = await teamRows.evaluateAll((rows) => rows.map((row) => [...row.querySelectorAll('th, td')].slice(0, 2).map((cell) => cell.textContent)));
    const expected = api!.stores.analytics.teams.map((team) => [team.name, team.rows.toLocaleString('en-US')]);
    expect(shown).toEqual(expected);

    await expect(owner.getByTestId('system-journal-fsync').textContent()).resolves.toMatch(/^\d+(\.\d+)? (ms|s)$/);

    const archives = owner.getByRole('region', { name: /archives/ });
    const lastBackup = archives.locator('dt', { hasText: 'Last complete backup' }).locator('xpath=following-sibling::dd');
    await expect(lastBackup.textContent()).resolves.toMatch(PEOPLE_TIME);
    await expect(archives.locator('dt', { hasText: 'Last failed backup' }).locator('xpath=following-sibling::dd').textContent()).resolves.toBe('never');

    const settings = owner.getByTestId('system-settings');
    const setting = async (flag: string) => {
      const entry = settings.locator(`[data-setting="${flag}"]`);
      return [await entry.locator('[data-env]').textContent(), await entry.locator('dd').textContent()];
    };
    await expect(setting('-metrics-token')).resolves.toEqual(['PLUMB_METRICS_TOKEN', '********']);
    await expect(setting('-database-url')).resolves.toEqual(['PLUMB_DATABASE_URL', '(unset)']);
    await expect(owner.content()).resolves.not.toContain(METRICS_TOKEN);
    expect(await reviewLayouts(owner, 'system')).toEqual([]);
  }, 120_000);

  it('is not in the menu of a plain user, and tells one who opens it that it is for administrators', async () => {
    const plain = await signIn(PLAIN);
    await expect(plain.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'System' }).count()).resolves.toBe(0);
    await plain.goto(`${instance.url}/admin/system`);
    await plain.getByRole('heading', { name: 'System', level: 1 }).waitFor(WAIT);
    await plain.locator('.error').filter({ hasText: /administrator|permission|not allowed|owner/i }).waitFor(WAIT);
  }, 60_000);
});
