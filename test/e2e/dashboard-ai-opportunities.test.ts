// The AI plugin's opportunities on a site dashboard in real Chromium: after a site admin asks for a
// run (the stand-in provider on loopback answers well), the plugin's panel shows each opportunity
// as text written from its approved key and params, with buttons that change its status.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import { as, type Person, person } from '../support/accounts.ts';
import { type ProviderStub, startProviderStub } from '../support/ai-provider.ts';
import { launchChromium } from '../support/browser.ts';
import { BROWSER_DRIVEN_ENV, REVIEW_VIEWPORTS, signInAs } from '../support/dashboard.ts';
import { waitFor } from '../support/instance.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

const WAIT = { timeout: 15_000 };
/** A path that tries markup: the dashboard must show it as text. */
const PATH = '/guide/<b>bold</b>';

let stub: ProviderStub;
let t: TestNode;
let admin: Person;
let browser: Browser;
let page: Page;

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
  await t.node.runtime.metadata().query("INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, 'admin')", [t.site.id, admin.id]);
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

  const asked = await as(t, admin, 'POST', `/api/sites/${t.site.id}/plugins/ai/runs`, { from: '2026-03-08', to: '2026-03-14' });
  expect(asked.status).toBe(202);
  const runId = (asked.body.run as { id: string }).id;
  await waitFor(
    async () => ((await as(t, admin, 'GET', `/api/sites/${t.site.id}/plugins/ai/runs/${runId}`)).body.run as { status: string }).status === 'completed',
    15_000,
    () => 'the run did not complete',
  );
  browser = await launchChromium();
  const context = await browser.newContext({ locale: 'en-US', timezoneId: 'UTC', viewport: REVIEW_VIEWPORTS[0] });
  page = await signInAs(await context.newPage(), admin, t.url);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await t?.stop();
  await stub?.close();
});

describe('the Opportunities panel', () => {
  it('shows a generated opportunity as text from its key and params, and Dismiss takes it off the list', async () => {
    await page.goto(`${t.url}/sites/${t.site.id}`);
    const panel = page.getByTestId('plugin-ai-opportunities');
    const sentence = `AI crawlers fetched ${PATH} 4 times (distinct crawlers: 1), yet no visitor from an AI assistant reached it: make it easier to cite and link to.`;
    // The first column heads its row.
    await panel.getByRole('rowheader', { name: sentence }).waitFor(WAIT);
    // The markup in the path is text on the page, not an element.
    expect(await panel.locator('b').count()).toBe(0);
    await panel.getByRole('button', { name: 'Dismiss' }).click();
    await panel.getByText('No new opportunities.', { exact: false }).waitFor(WAIT);
    const dismissed = await as(t, admin, 'GET', `/api/sites/${t.site.id}/plugins/ai/opportunities?status=dismissed`);
    expect((dismissed.body.opportunities as { params: { path: string } }[]).map((o) => o.params.path)).toEqual([PATH]);
  }, 45_000);
});
