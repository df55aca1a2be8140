// The AI crawlers page of a site in real Chromium: reached from the site's navigation, it shows the
// figures the AI-fetch reports give (key figures, chart, assistants, breakdowns, fetched pages
// beside AI-referred visits, landings no agent fetched); a site without fetches says how to send
// them. Scanned with axe-core and checked for layout faults in light and dark mode at 1366 and
// 360 px, screenshotted into test-output/screenshots/ai-crawlers-*.png.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import { as, type Person, person } from '../support/accounts.ts';
import { launchChromium } from '../support/browser.ts';
import { BROWSER_DRIVEN_ENV, REVIEW_VIEWPORTS, reviewLayouts, signInAs } from '../support/dashboard.ts';
import { waitFor } from '../support/instance.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

const WAIT = { timeout: 15_000 };
const GPTBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)';
const CLAUDEBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)';
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';

let t: TestNode;
let viewer: Person;
let browser: Browser;
let page: Page;

const hoursAgo = (hours: number) => new Date(Date.now() - hours * 3_600_000).toISOString();
const post = (path: string, token: string, body: unknown) =>
  fetch(`${t.url}${path}`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
const text = async (testId: string) => ((await page.getByTestId(testId).textContent()) ?? '').replace(/\s+/g, ' ').trim();
/** A table's body rows, each as its cells' texts. */
const rows = (testId: string) =>
  page.getByTestId(testId).evaluate((table) => [...table.querySelectorAll('tbody tr')].map((tr) => [...tr.children].map((cell) => (cell.textContent ?? '').trim())));

beforeAll(async () => {
  t = await startTestNode(BROWSER_DRIVEN_ENV);
  const db = t.node.runtime.metadata();
  viewer = await person(t);
  for (const site of [t.site, t.otherSite]) await db.query("INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, 'viewer')", [site.id, viewer.id]);

  const fetches = [
    { path: '/docs', status_code: 200, bytes: 2048, user_agent: GPTBOT, content_type: 'text/html', timestamp: hoursAgo(50) },
    { path: '/docs', status_code: 200, bytes: 2048, user_agent: GPTBOT, content_type: 'text/html', timestamp: hoursAgo(30) },
    { path: '/pricing', status_code: 200, bytes: 1024, user_agent: GPTBOT, content_type: 'text/html', timestamp: hoursAgo(20) },
    { path: '/gone', status_code: 404, bytes: 0, user_agent: CLAUDEBOT, content_type: 'text/html', timestamp: hoursAgo(10) },
  ];
  expect((await post(`/api/sites/${t.site.id}/ingest/ai-fetch`, await t.token(['ai-fetch:write']), { items: fetches })).status).toBe(202);
  const pageview = (ip: string, path: string, timestamp: string, referrer: string) => ({ type: 'pageview', url: `https://example.com${path}`, timestamp, visitor_ip: ip, user_agent: FIREFOX, referrer });
  const items = [pageview('192.0.2.21', '/docs', hoursAgo(12), 'https://chatgpt.com/'), pageview('192.0.2.22', '/blog/launch', hoursAgo(6), 'https://www.perplexity.ai/search')];
  expect((await post('/api/ingest/server/batch', await t.token(['ingest:write']), { items })).status).toBe(202);
  await t.rows('ai_fetches', 4);
  await waitFor(
    async () => {
      const res = await as(t, viewer, 'GET', `/api/sites/${t.site.id}/ai-fetches/pages`);
      return (res.body.unfetched_landings as unknown[] | undefined)?.length === 1;
    },
    10_000,
    () => 'the AI-referred visits were never stored',
  );
  browser = await launchChromium();
  const context = await browser.newContext({ locale: 'en-US', timezoneId: 'UTC', viewport: REVIEW_VIEWPORTS[0] });
  page = await signInAs(await context.newPage(), viewer, t.url);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await t?.stop();
});

describe('the AI crawlers page', () => {
  it('is linked from the site’s navigation and shows the figures of the last 30 days', async () => {
    await page.goto(`${t.url}/sites/${t.site.id}`);
    await page.getByRole('link', { name: 'AI crawlers' }).click();
    await page.getByTestId('ai-kpis').waitFor(WAIT);
    expect(page.url()).toBe(`${t.url}/sites/${t.site.id}/ai-crawlers`);
    expect(await text('ai-kpi-fetches')).toBe('4');
    expect(await text('ai-kpi-assistants')).toBe('2');
    expect(await text('ai-kpi-pages')).toBe('3');
    expect(await text('ai-kpi-errors')).toBe('1');
    expect(await text('ai-kpi-bytes')).toBe('5.0 KiB');
    await page.getByTestId('chart').waitFor(WAIT);
    expect(await page.getByTestId('chart-legend').locator('[data-series="Fetches"] strong').textContent()).toBe('4');
    expect((await rows('ai-assistants')).map((r) => r.slice(0, 6))).toEqual([
      ['GPTBot', 'OpenAI', 'training crawler', '3', '0', '2'],
      ['ClaudeBot', 'Anthropic', 'training crawler', '1', '1', '1'],
    ]);
    expect(await rows('ai-status_class')).toEqual([
      ['2xx', '3', '1'],
      ['4xx', '1', '1'],
    ]);
    expect(await rows('ai-assistant_family')).toEqual([
      ['OpenAI', '3', '1'],
      ['Anthropic', '1', '1'],
    ]);
  });

  it('sets the fetched pages beside the visits AI assistants referred, and lists the landings no agent fetched', async () => {
    await page.getByTestId('ai-fetched-pages').waitFor(WAIT);
    expect(await rows('ai-fetched-pages')).toEqual([
      ['/docs', '2', '1', '1'],
      ['/gone', '1', '1', '0'],
      ['/pricing', '1', '1', '0'],
    ]);
    expect(await rows('ai-unfetched-landings')).toEqual([['/blog/launch', '1']]);
  });

  it('passes the accessibility scan and the layout checks with data', async () => {
    expect(await reviewLayouts(page, 'ai-crawlers')).toEqual([]);
  });

  it('tells how to send AI fetches on a site that has none', async () => {
    await page.goto(`${t.url}/sites/${t.otherSite.id}/ai-crawlers`);
    await page.getByTestId('ai-empty').waitFor(WAIT);
    const empty = await text('ai-empty');
    expect(empty).toContain('No AI crawler fetches in this range');
    expect(empty).toContain(`POST /api/sites/${t.otherSite.id}/ingest/ai-fetch`);
    expect(empty).toContain('see the README, section “Forwarding AI crawler logs”');
    expect(await page.getByTestId('ai-kpis').count()).toBe(0);
    expect(await reviewLayouts(page, 'ai-crawlers-empty')).toEqual([]);
  });
});
