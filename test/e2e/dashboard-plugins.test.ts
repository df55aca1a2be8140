// The plugins a node runs, as an instance owner finds them in the dashboard: the example plugin,
// loaded by path, listed on the administration page with its version, source and routes; its
// panels, their rows' buttons and its settings on a site; its page for administrators with its
// button; and its API-client scope offered in the account's token form.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/browser.ts';
import { type AxeFinding, BROWSER_DRIVEN_ENV, reviewPage, signInAs } from '../support/dashboard.ts';
import { type Instance, request, startInstance } from '../support/instance.ts';

const OWNER = { email: 'owner@example.com', password: 'correct horse battery' };
const WAIT = { timeout: 15_000 };

let instance: Instance;
let browser: Browser;
let page: Page;
let siteId: string;
const findings: AxeFinding[] = [];

/** Runs in the page, signed in: JSON calls to the instance, as the dashboard makes them. */
const call = (method: string, path: string, body?: unknown) =>
  page.evaluate(
    async ([method, path, body]) => {
      const res = await fetch(path, { method, headers: body === undefined ? {} : { 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: res.status, body: res.status === 204 ? null : ((await res.json()) as Record<string, unknown>) };
    },
    [method, path, body] as const,
  );

beforeAll(async () => {
  instance = await startInstance({ env: { ...BROWSER_DRIVEN_ENV, PLUMB_PLUGINS: './plugins/examples/notes' } });
  const created = await request(`${instance.url}/api/initial-user`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(OWNER) });
  expect(created.status).toBe(201);
  browser = await launchChromium();
  page = await (await browser.newContext({ viewport: { width: 1366, height: 900 } })).newPage();
  await signInAs(page, OWNER, instance.url);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await instance?.destroy();
});

describe('the administration page', () => {
  it('lists the running plugin with its version, where it was loaded from and its routes', async () => {
    await page.getByRole('link', { name: 'Users' }).click();
    const card = page.getByTestId('plugins-card');
    await card.getByRole('rowheader', { name: /notes/ }).waitFor(WAIT);
    const row = card.getByRole('row', { name: /notes/ });
    await expect(row.textContent()).resolves.toContain('Running');
    await expect(row.textContent()).resolves.toContain('1.0.0 (plugin API 1)');
    await expect(row.textContent()).resolves.toContain('./plugins/examples/notes');
    await expect(row.textContent()).resolves.toContain('POST /api/sites/:id/plugins/notes/notes');
    await reviewPage(page, 'admin-plugins', findings);
    expect(findings).toEqual([]);
  }, 30_000);
});

describe('the site dashboard', () => {
  it('draws the plugin’s panels from its routes: its KPI cards and its table of the range', async () => {
    siteId = await page.evaluate(async () => {
      const json = async (res: Response) => (await res.json()) as Record<string, unknown>;
      const teams = await json(await fetch('/api/user/teams'));
      const teamId = (teams.items as { id: string }[])[0].id;
      const post = (path: string, body: unknown) => fetch(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
      const site = await json(await post('/api/sites', { domain: 'notes.example', team_id: teamId, timezone: 'UTC' }));
      const id = (site.site as { id: string }).id;
      await post(`/api/sites/${id}/plugins/notes/notes`, { text: 'Spring launch' });
      return id;
    });
    await page.goto(`${instance.url}/sites/${siteId}`);
    const counts = page.getByTestId('plugin-notes-count');
    await counts.getByText('Authors').waitFor(WAIT);
    await expect(counts.locator('.kpi-value').allTextContents()).resolves.toEqual(['1', '1', '0']);
    const list = page.getByTestId('plugin-notes-list');
    await list.getByRole('cell', { name: 'Spring launch' }).waitFor(WAIT);
    await expect(list.getByRole('cell', { name: OWNER.email }).count()).resolves.toBe(1);
    await reviewPage(page, 'site-dashboard-plugin-panels', findings);
    expect(findings).toEqual([]);

    // The plugin's settings section, generated from its schema, among the site's settings.
    await page.goto(`${instance.url}/sites/${siteId}/settings`);
    await page.getByRole('navigation', { name: 'Settings sections' }).getByRole('link', { name: 'Notes' }).waitFor(WAIT);
    const section = page.getByTestId('plugin-settings-notes-settings');
    const days = section.getByLabel('Keep notes for (days)');
    await days.waitFor(WAIT);
    expect(await days.inputValue()).toBe('');
    await days.fill('0');
    await section.getByRole('button', { name: 'Save' }).click();
    await section.locator('.field-error').waitFor(WAIT);
    await days.fill('90');
    await section.getByRole('button', { name: 'Save' }).click();
    await section.getByRole('status').getByText('Saved.').waitFor(WAIT);
    expect(await page.evaluate(async (id) => (await (await fetch(`/api/sites/${id}/plugins/notes/settings`)).json()) as unknown, siteId)).toEqual({ retention_days: 90 });
    page.once('dialog', (dialog) => void dialog.accept());
    await section.getByRole('button', { name: 'Delete all notes' }).click();
    await section.getByRole('status').getByText('Deleted 1 note.').waitFor(WAIT);
    await reviewPage(page, 'site-settings-plugin-section', findings);
    expect(findings).toEqual([]);
  }, 45_000);

  it('deletes a note from its row after asking, then draws the table again; a refusal shows beside the table', async () => {
    const notes = `/api/sites/${siteId}/plugins/notes/notes`;
    const kept = (await call('POST', notes, { text: 'Keep me' })).body?.note as { id: string };
    expect((await call('POST', notes, { text: 'Typo' })).status).toBe(201);
    await page.goto(`${instance.url}/sites/${siteId}`);
    const list = page.getByTestId('plugin-notes-list');
    const typo = list.getByRole('row').filter({ hasText: 'Typo' });
    await typo.waitFor(WAIT);
    let asked = '';
    page.once('dialog', (dialog) => {
      asked = dialog.message();
      void dialog.accept();
    });
    await typo.getByRole('button', { name: 'Delete' }).click();
    await typo.waitFor({ state: 'detached', ...WAIT });
    expect(asked).toBe('Delete this note?');
    await expect(list.getByRole('row').allTextContents()).resolves.toEqual([expect.stringContaining('Written'), expect.stringContaining('Keep me')]);
    // The row went with its button: the panel's heading has the focus.
    await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe('Notes of the range');

    // Deleted meanwhile elsewhere: the plugin's answer shows beside the table, which stays as it was.
    expect((await call('DELETE', `${notes}/${kept.id}`)).status).toBe(204);
    page.once('dialog', (dialog) => void dialog.accept());
    const deleteKept = list.getByRole('row').filter({ hasText: 'Keep me' }).getByRole('button', { name: 'Delete' });
    await deleteKept.click();
    await list.getByRole('alert').getByText('Note not found').waitFor(WAIT);
    await list.getByRole('cell', { name: 'Keep me' }).waitFor(WAIT);
    await expect(deleteKept.evaluate((element) => element === document.activeElement)).resolves.toBe(true);
    await reviewPage(page, 'site-dashboard-plugin-row-actions', findings);
    expect(findings).toEqual([]);
  }, 45_000);
});

describe('the plugin’s page for administrators', () => {
  it('is an entry of the main menu, drawn from the plugin’s routes, whose button deletes the notes of deleted sites', async () => {
    // A site with a note, then deleted: the note is counted, its site no longer listed.
    const teams = (await call('GET', '/api/user/teams')).body?.items as { id: string }[];
    const gone = (await call('POST', '/api/sites', { domain: 'gone.example', team_id: teams[0].id, timezone: 'UTC' })).body?.site as { id: string };
    expect((await call('POST', `/api/sites/${gone.id}/plugins/notes/notes`, { text: 'Soon gone' })).status).toBe(201);
    expect((await call('DELETE', `/api/sites/${gone.id}`)).status).toBe(204);

    await page.goto(`${instance.url}/`);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Notes' }).click();
    await page.getByRole('heading', { name: 'Notes on every site', level: 1 }).waitFor(WAIT);
    const summary = page.getByTestId('plugin-notes-summary');
    await summary.getByText('Sites with notes').waitFor(WAIT);
    await expect(summary.locator('.kpi-value').allTextContents()).resolves.toEqual(['1', '1']);
    await page.getByTestId('plugin-notes-sites').getByText('No site has notes yet.').waitFor(WAIT);

    let asked = '';
    page.once('dialog', (dialog) => {
      asked = dialog.message();
      void dialog.accept();
    });
    const button = page.getByRole('button', { name: 'Delete notes of deleted sites' });
    await button.click();
    await page.getByRole('status').getByText('Deleted 1 note.').waitFor(WAIT);
    expect(asked).toBe('Delete the notes of every deleted site? They cannot be restored.');
    await summary.locator('.kpi-value', { hasText: /^0$/ }).nth(1).waitFor(WAIT);
    await expect(button.evaluate((element) => element === document.activeElement)).resolves.toBe(true);
    await reviewPage(page, 'plugin-admin-page', findings);
    expect(findings).toEqual([]);
  }, 30_000);
});

describe('the API-client form', () => {
  it('offers the plugin’s scope beside Plumb’s own, described', async () => {
    await page.getByRole('link', { name: 'Account' }).click();
    const scopes = page.getByRole('group', { name: 'Scopes' });
    await scopes.getByRole('checkbox', { name: 'notes:write' }).waitFor(WAIT);
    const names = await scopes.locator('label').allTextContents();
    expect(names.map((n) => n.trim())).toEqual(['stats:read', 'ingest:write', 'ai-fetch:write', 'mcp', 'notes:write']);
    await expect(scopes.locator('label', { hasText: 'notes:write' }).getAttribute('title')).resolves.toBe('Write and delete notes on the token’s sites');
  }, 30_000);
});
