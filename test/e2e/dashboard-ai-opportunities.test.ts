// The AI plugin's opportunities on a site dashboard in real Chromium: a site admin presses
// "Generate opportunities" above the plugin's panel, which asks for a run of the dashboard's range
// (the stand-in provider on loopback answers); the runs panel shows the run's state, and the
// opportunities panel each opportunity as text written from its approved key and params, with
// buttons that change its status. A viewer of the site reads the opportunities, without buttons.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import { as, type Person, person } from '../support/accounts.ts';
import { type ProviderStub, startProviderStub } from '../support/ai-provider.ts';
import { launchChromium } from '../support/browser.ts';
import { BROWSER_DRIVEN_ENV, REVIEW_VIEWPORTS, signInAs } from '../support/dashboard.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

/** The opportunities panel reads its route again every 10 s: a run's results show within that. */
const WAIT = { timeout: 30_000 };
/** A path that tries markup: the dashboard must show it as text. */
const PATH = '/guide/<b>bold</b>';
const RANGE = { from: '2026-03-08', to: '2026-03-14' };
const SENTENCE = `AI crawlers fetched ${PATH} 4 times (distinct crawlers: 1), yet no visitor from an AI assistant reached it: make it easier to cite and link to.`;

let stub: ProviderStub;
let t: TestNode;
let admin: Person;
let viewer: Person;
let browser: Browser;

const dashboardOf = async (who: Person) => {
  const context = await browser.newContext({ locale: 'en-US', timezoneId: 'UTC', viewport: REVIEW_VIEWPORTS[0] });
  const page = await signInAs(await context.newPage(), who, t.url);
  await page.goto(`${t.url}/sites/${t.site.id}?period=custom&from=${RANGE.from}&to=${RANGE.to}`);
  return page;
};

beforeAll(async () => {
  stub = await startProviderStub();
  t = await startTestNode({
    ...BROWSER_DRIVEN_ENV,
    PLUMB_PLUGINS: 'ai',
    PLUMB_AI_ENABLED: 'true',
    PLUMB_AI_MODEL: 'stub-model-1',
    PLUMB_AI_BASE_URL: `${stub.url}/v1`,
    PLUMB_AI_ALLOW_PRIVATE_BASE_URL: 'true',
  });
  admin = await person(t);
  viewer = await person(t);
  const db = t.node.runtime.metadata();
  await db.query("INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, 'admin'), ($1, $3, 'viewer')", [t.site.id, admin.id, viewer.id]);
  const analytics = t.node.runtime.analytics();
  const fetched = [1, 2, 3, 4].map((hour) => ({
    ts: new Date(`2026-03-13T0${hour}:00:00Z`),
    site_id: t.site.id,
    fetch_id: randomUUID(),
    path: PATH,
    url: `https://example.com${PATH}`,
    status_code: 200,
    content_type: 'text/html',
    bytes: 1000,
    user_agent: 'GPTBot',
    assistant_name: 'GPTBot',
    assistant_family: 'OpenAI',
    assistant_category: 'training crawler',
    resource_type: 'html',
  }));
  await analytics.insert('ai_fetches', fetched, { database: analytics.tenantDatabase(t.team.id) });
  browser = await launchChromium();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await t?.stop();
  await stub?.close();
});

describe('the Opportunities panel', () => {
  let page: Page;

  it('lets a site admin generate opportunities for the dashboard’s range, shows the run’s state, then the opportunities as text', async () => {
    page = await dashboardOf(admin);
    const panel = page.getByTestId('plugin-ai-opportunities');
    await panel.getByText('No new opportunities.', { exact: false }).waitFor(WAIT);
    await panel.getByRole('button', { name: 'Generate opportunities' }).click();
    // The message stays after the run ends, so it says nothing a finished run makes untrue.
    await panel.getByRole('status').filter({ hasText: `Run asked for ${RANGE.from} to ${RANGE.to}: its state shows under Opportunity runs` }).waitFor(WAIT);
    const runs = page.getByTestId('plugin-ai-site-runs');
    await runs.getByRole('cell', { name: 'completed' }).waitFor(WAIT);
    await expect(panel.getByRole('status').textContent()).resolves.not.toMatch(/looking|within a minute/i);
    // The first column heads its row.
    await panel.getByRole('rowheader', { name: SENTENCE }).waitFor(WAIT);
    // The markup in the path is text on the page, not an element.
    expect(await panel.locator('b').count()).toBe(0);
    const asked = await as(t, admin, 'GET', `/api/sites/${t.site.id}/plugins/ai/runs`);
    expect(asked.body.runs).toEqual([expect.objectContaining({ status: 'completed', range_from: RANGE.from, range_to: RANGE.to, opportunities: 1 })]);
  }, 60_000);

  it('shows a viewer the opportunities, without the Generate button, the runs or the buttons that change them', async () => {
    const seen = await dashboardOf(viewer);
    const panel = seen.getByTestId('plugin-ai-opportunities');
    await panel.getByRole('rowheader', { name: SENTENCE }).waitFor(WAIT);
    expect(await panel.getByRole('button').count()).toBe(0);
    expect(await seen.getByTestId('plugin-ai-site-runs').count()).toBe(0);
    await seen.context().close();
  }, 45_000);

  it('takes an opportunity off the list with Dismiss', async () => {
    const panel = page.getByTestId('plugin-ai-opportunities');
    await panel.getByRole('button', { name: 'Dismiss' }).click();
    await panel.getByText('No new opportunities.', { exact: false }).waitFor(WAIT);
    const dismissed = await as(t, admin, 'GET', `/api/sites/${t.site.id}/plugins/ai/opportunities?status=dismissed`);
    expect((dismissed.body.opportunities as { params: { path: string } }[]).map((o) => o.params.path)).toEqual([PATH]);
  }, 45_000);

  it('shows a run that failed with its safe error category, never the provider’s words', async () => {
    stub.behaviour = 'error';
    await page.getByTestId('plugin-ai-opportunities').getByRole('button', { name: 'Generate opportunities' }).click();
    const runs = page.getByTestId('plugin-ai-site-runs');
    const failed = runs.getByRole('row').filter({ has: page.getByRole('cell', { name: 'failed' }) });
    await failed.getByRole('cell', { name: 'provider_error' }).waitFor(WAIT);
    expect(await runs.getByText('provider internals').count()).toBe(0);
  }, 45_000);
});

describe('the AI page', () => {
  it('shows instance administrators the settings without the key, the usage against the limiter and the recent runs', async () => {
    const instanceAdmin = await person(t, 'admin');
    const context = await browser.newContext({ locale: 'en-US', timezoneId: 'UTC', viewport: REVIEW_VIEWPORTS[0] });
    const page = await signInAs(await context.newPage(), instanceAdmin, t.url);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'AI' }).click();
    const settings = page.getByTestId('plugin-ai-settings');
    await settings.getByRole('row').filter({ hasText: 'model' }).filter({ hasText: 'stub-model-1' }).waitFor(WAIT);
    // This node's provider needs no key: the row says whether one is set, never what it is.
    await settings.getByRole('row').filter({ hasText: 'api_key_set' }).filter({ hasText: 'no' }).waitFor(WAIT);
    await page.getByText('Tokens per day allowed').waitFor(WAIT);
    await page.getByRole('heading', { name: 'Recent runs' }).waitFor(WAIT);
    await context.close();
  }, 45_000);
});
