// The site dashboard's figures in real Chromium, to the standard of Plausible's: a legend with the
// range's totals or the hovered bucket, the previous period as a second line, a change on every
// KPI card, current visitors on the dashboard itself, times on the site's clock (and said so), one
// "(none)", source names, plurals, dates in the reader's locale, and panels whose tabs sit the
// same way on every panel. (Where the axis labels go is pure logic: test/unit/dashboard-ticks.)
// The browser runs in another time zone (Los Angeles) than the site (Tokyo), so a time shown on
// the browser's clock is caught.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createSite } from '../../lib/sites/sites.ts';
import { as, type Person, person } from '../support/accounts.ts';
import { launchChromium } from '../support/browser.ts';
import { DESKTOP_USER_AGENTS } from '../support/customer-site.ts';
import { type AxeFinding, reviewPage } from '../support/dashboard.ts';
import { waitFor } from '../support/instance.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

const WAIT = { timeout: 15_000 };
const SITE_ZONE = 'Asia/Tokyo';
const BROWSER_ZONE = 'America/Los_Angeles';
const MOBILE_UA = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';
const DAY_MS = 86_400_000;
interface Visitor {
  visitor_ip: string;
  user_agent: string;
  session_id: string;
}
const LIVE: Visitor[] = [0, 1, 2].map((v) => ({ visitor_ip: `193.0.6.${240 + v}`, user_agent: DESKTOP_USER_AGENTS[v], session_id: `live-${v}` }));

let t: TestNode;
let owner: Person;
let token: string;
let browser: Browser;
let context: BrowserContext | undefined;
let page: Page;
let siteId: string;
/** When the live visitors' Signup (the latest event) happened. */
let recentEventAt: number;
const findings: AxeFinding[] = [];

interface Item {
  type: 'pageview' | 'event';
  url: string;
  timestamp: string;
  visitor_ip: string;
  user_agent: string;
  session_id: string;
  referrer?: string;
  name?: string;
  properties?: Record<string, string>;
}

/**
 * Visits over the last 60 days (the 30 shown by default and the 30 before them, the comparison)
 * from Google, Hacker News, a blog and nowhere; one visit reads /about alone (a row of "1
 * visitor"). Three visitors, who came from nowhere, are on the site now and signed up 30 minutes ago.
 */
function history(now: number): Item[] {
  const items: Item[] = [];
  const referrers = ['https://www.google.com/', 'https://news.ycombinator.com/item?id=1', 'https://blog.example.org/post', undefined];
  let n = 0;
  for (let day = 1; day < 60; day++) {
    const visits = 1 + ((day * 7) % 4) + (day < 30 ? 1 : 0);
    for (let v = 0; v < visits; v++, n++) {
      const at = now - day * DAY_MS + v * 600_000;
      const visit = { visitor_ip: `193.0.6.${10 + (n % 200)}`, user_agent: n % 3 === 0 ? MOBILE_UA : DESKTOP_USER_AGENTS[n % 3], session_id: `visit-${n}` };
      const referrer = referrers[n % referrers.length];
      items.push({ type: 'pageview', url: 'https://tokyo.example/', timestamp: new Date(at).toISOString(), ...visit, ...(referrer ? { referrer } : {}) });
      items.push({ type: 'pageview', url: 'https://tokyo.example/pricing', timestamp: new Date(at + 60_000).toISOString(), ...visit });
      if (n % 2 === 0) items.push({ type: 'event', name: 'Signup', properties: { plan: n % 4 === 0 ? 'pro' : 'free' }, url: 'https://tokyo.example/pricing', timestamp: new Date(at + 90_000).toISOString(), ...visit });
    }
  }
  const about = new Date(now - 3 * DAY_MS).toISOString();
  items.push({ type: 'pageview', url: 'https://tokyo.example/about', timestamp: about, visitor_ip: '193.0.6.250', user_agent: DESKTOP_USER_AGENTS[0], session_id: 'visit-about' });
  recentEventAt = now - 30 * 60_000;
  for (const visitor of LIVE) {
    items.push({ type: 'pageview', url: 'https://tokyo.example/live', timestamp: new Date(recentEventAt - 1000).toISOString(), ...visitor });
    items.push({ type: 'event', name: 'Signup', properties: { plan: 'pro' }, url: 'https://tokyo.example/live', timestamp: new Date(recentEventAt).toISOString(), ...visitor });
  }
  return items.sort((a, b) => a.timestamp.localeCompare(b.timestamp));
}

async function ingest(items: Item[]) {
  for (let i = 0; i < items.length; i += 500) {
    const res = await fetch(`${t.url}/api/ingest/server/batch`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
      body: JSON.stringify({ items: items.slice(i, i + 500) }),
    });
    expect(res.status).toBe(202);
  }
}

/** The three live visitors view a page now, so they stay "current" however long the run takes. */
async function stillHere(visitors = LIVE) {
  await ingest(visitors.map((v) => ({ type: 'pageview', url: 'https://tokyo.example/live', timestamp: new Date().toISOString(), ...v })));
  await waitFor(async () => (await api<{ kpis: { live_visitors: number } }>('stats', { from: new Date(Date.now() - 60_000).toISOString(), to: new Date().toISOString() })).kpis.live_visitors === visitors.length, 10_000, () => 'the live visitors were not counted');
}

async function api<T>(path: string, query: Record<string, string>): Promise<T> {
  const res = await as(t, owner, 'GET', `/api/sites/${siteId}/${path}?${new URLSearchParams(query)}`);
  expect(res.status).toBe(200);
  return res.body as T;
}

async function open(path: string, options: { locale?: string; width?: number; signedIn?: boolean } = {}): Promise<Page> {
  await context?.close();
  context = await browser.newContext({ viewport: { width: options.width ?? 1366, height: 900 }, locale: options.locale ?? 'en-US', timezoneId: BROWSER_ZONE });
  if (options.signedIn !== false) {
    const [name, value] = owner.cookie.split(';')[0].split('=');
    await context.addCookies([{ name, value, url: t.url }]);
  }
  page = await context.newPage();
  await page.goto(`${t.url}${path}`);
  return page;
}

/** Today's calendar date on a clock, days moved. */
function dateIn(zone: string, days = 0): string {
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: zone }).format(new Date());
  return new Date(Date.parse(`${today}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}
/** A calendar date as the test expects to read it, by Intl directly. */
const written = (date: string, locale: string, options: Intl.DateTimeFormatOptions) => new Intl.DateTimeFormat(locale, { ...options, timeZone: 'UTC' }).format(new Date(`${date}T00:00:00Z`));
const plain = (text: string | null) => (text ?? '').replace(/\s/g, ' ').trim();

const legend = () => page.getByTestId('chart-legend');
/**
 * Points at the chart `fraction` of the way across, once it has its last data (the previous
 * period's line comes after the range's and redraws it), until the legend follows the pointer.
 */
async function hoverChart(fraction: number) {
  await legend().locator('[data-series="previous"]').waitFor(WAIT);
  const box = (await page.locator('.u-over').boundingBox())!;
  await page.mouse.move(box.x + Math.max(1, box.width * fraction), box.y + 40);
  await page.waitForFunction(() => document.querySelector('[data-testid="chart-legend"]')?.getAttribute('data-hovered') === 'true', undefined, WAIT);
}
const legendValue = async (series: string) => plain(await legend().locator(`[data-series="${series}"] strong`).textContent());

beforeAll(async () => {
  t = await startTestNode({ PLUMB_INGEST_RATE_PER_SECOND: '10000', PLUMB_INGEST_BURST: '10000', PLUMB_API_RATE_PER_SECOND: '1000', PLUMB_API_BURST: '1000' });
  siteId = (await createSite(t.node.runtime.metadata(), { teamId: t.team.id, domain: 'tokyo.example', timezone: SITE_ZONE })).id;
  owner = await person(t, 'owner');
  token = await t.token(['ingest:write'], [{ siteId, role: 'editor' }]);
  const items = history(Date.now());
  await ingest(items);
  const pageviews = items.filter((i) => i.type === 'pageview').length;
  const analytics = t.node.runtime.analytics();
  await waitFor(
    async () => {
      const [row] = await analytics.query<{ n: string }>('SELECT sum(sign * visit_pageviews) AS n FROM {db:Identifier}.visits WHERE site_id = {site:UUID}', {
        db: analytics.tenantDatabase(t.team.id),
        site: siteId,
      });
      return Number(row.n) === pageviews;
    },
    20_000,
    () => 'the seeded visits were never all stored',
  );
  expect((await as(t, owner, 'POST', `/api/sites/${siteId}/goals`, { name: 'Signed up', type: 'event', event_name: 'Signup' })).status).toBe(201);
  browser = await launchChromium();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await t?.stop();
});

describe('the chart', () => {
  it('gives the range’s totals in its legend, and the hovered bucket’s values while the pointer is on it', async () => {
    await open(`/sites/${siteId}`);
    await page.getByTestId('kpi-visitors').waitFor(WAIT);
    const range = { from: dateIn(SITE_ZONE, -29), to: dateIn(SITE_ZONE) };
    const shown = await api<{ kpis: { visitors: number; pageviews: number }; timeseries: { visitors: number; pageviews: number }[] }>('stats', range);
    await expect(legend().getAttribute('data-hovered')).resolves.toBe('false');
    expect(plain(await legend().locator('.chart-legend-when').textContent())).toBe(plain(await page.locator('.range-label > span').first().textContent()));
    expect([await legendValue('Visitors'), await legendValue('Pageviews')]).toEqual([String(shown.kpis.visitors), String(shown.kpis.pageviews)]);

    // The first bucket: the range's first day, on the site's clock.
    await hoverChart(0);
    expect(plain(await legend().locator('.chart-legend-when').textContent())).toBe(written(range.from, 'en-US', { weekday: 'short', day: 'numeric', month: 'short', year: 'numeric' }));
    expect([await legendValue('Visitors'), await legendValue('Pageviews')]).toEqual([String(shown.timeseries[0].visitors), String(shown.timeseries[0].pageviews)]);

    await page.mouse.move(5, 5);
    await page.waitForFunction(() => document.querySelector('[data-testid="chart-legend"]')?.getAttribute('data-hovered') === 'false', undefined, WAIT);
    expect(await legendValue('Visitors')).toBe(String(shown.kpis.visitors));
  }, 60_000);

  it('draws the period before as a second line, from the server’s own bounds in buckets of the same interval', async () => {
    const asked: URL[] = [];
    await open(`/sites/${siteId}?period=7d`);
    page.on('request', (r) => asked.push(new URL(r.url())));
    await page.reload();
    await legend().locator('[data-series="previous"]').waitFor(WAIT);
    const stats = asked.filter((u) => u.pathname === `/api/sites/${siteId}/stats`);
    const current = stats.find((u) => u.searchParams.get('from') === dateIn(SITE_ZONE, -6))!;
    const before = stats.find((u) => u.searchParams.get('interval') !== null)!;
    // Seven whole days in Tokyo (UTC+9, no DST) before the range's first local midnight.
    const firstMidnight = Date.parse(`${current.searchParams.get('from')}T00:00:00+09:00`);
    expect([before.searchParams.get('from'), before.searchParams.get('to'), before.searchParams.get('interval')]).toEqual([
      new Date(firstMidnight - 7 * DAY_MS).toISOString(),
      new Date(firstMidnight).toISOString(),
      'day',
    ]);
    const previous = await api<{ kpis: { visitors: number }; timeseries: { visitors: number }[] }>('stats', { from: dateIn(SITE_ZONE, -13), to: dateIn(SITE_ZONE, -7) });
    expect(await legendValue('previous')).toBe(String(previous.kpis.visitors));

    // Hovering the range's third day shows the third day before it too, and names that day.
    await hoverChart(2 / 6);
    expect(await legendValue('previous')).toBe(String(previous.timeseries[2].visitors));
    expect(plain(await legend().locator('[data-series="previous"] .muted').textContent())).toBe(
      written(dateIn(SITE_ZONE, -11), 'en-US', { weekday: 'short', day: 'numeric', month: 'short', year: 'numeric' }),
    );
  }, 60_000);
});

describe('the KPI cards', () => {
  it('give every card its change against the previous period', async () => {
    await open(`/sites/${siteId}`);
    await page.waitForFunction(() => document.querySelectorAll('[data-kpi] .kpi-change[title]').length === 6, undefined, WAIT);
    const changes = (await page.locator('[data-kpi] .kpi-change').allTextContents()).map(plain);
    expect(changes).toHaveLength(6);
    for (const text of changes) expect(text).toMatch(/^[↑↓→] (\d+(\.\d)?%|from .+?)\s/);
    // Visitors rose from the previous 30 days' count, which the card names on hover.
    const previous = await api<{ kpis: { visitors: number } }>('stats', { from: dateIn(SITE_ZONE, -59), to: dateIn(SITE_ZONE, -30) });
    await expect(page.locator('[data-kpi="visitors"] .kpi-change').getAttribute('title')).resolves.toMatch(new RegExp(`: ${previous.kpis.visitors}$`));
  }, 60_000);

  it('say "No previous data" on every card when the period before had no visits', async () => {
    const range = { from: dateIn(SITE_ZONE, -62), to: dateIn(SITE_ZONE, -50) };
    await open(`/sites/${siteId}?period=custom&from=${range.from}&to=${range.to}`);
    await page.waitForFunction(() => document.querySelectorAll('[data-kpi] .kpi-change[title]').length === 6, undefined, WAIT);
    expect(Number(await page.getByTestId('kpi-visits').textContent())).toBeGreaterThan(0);
    expect((await page.locator('[data-kpi] .kpi-change').allTextContents()).map((text) => plain(text).split(' (')[0])).toEqual(Array(6).fill('No previous data'));
  }, 60_000);
});

describe('times', () => {
  it('are on the site’s clock on realtime and today’s chart, which say which clock', async () => {
    await stillHere();
    await open(`/sites/${siteId}?period=realtime`);
    await page.getByTestId('live-visitors').filter({ hasText: '3' }).waitFor(WAIT);
    await expect(page.getByTestId('time-zone').textContent()).resolves.toBe('Times in Asia/Tokyo (GMT+9)');
    const latest = page.locator('section[aria-labelledby="rt-events"] li').first();
    // Half an hour ago: a time of today in Tokyo, or of yesterday (with its day) just after midnight there.
    const sameDay = dateIn(SITE_ZONE) === new Intl.DateTimeFormat('en-CA', { timeZone: SITE_ZONE }).format(recentEventAt);
    const tokyo = new Intl.DateTimeFormat('en-US', { ...(sameDay ? {} : { day: 'numeric', month: 'short' }), hour: 'numeric', minute: '2-digit', second: '2-digit', timeZone: SITE_ZONE });
    expect(plain(await latest.locator('time').textContent())).toBe(plain(tokyo.format(recentEventAt)));

    await open(`/sites/${siteId}?period=today`);
    await expect(page.getByTestId('time-zone').textContent()).resolves.toBe('Times in Asia/Tokyo (GMT+9)');
    await hoverChart(0);
    // The first hour of today is midnight in Tokyo (in Los Angeles it is the afternoon before).
    expect(plain(await legend().locator('.chart-legend-when').textContent())).toBe(`${written(dateIn(SITE_ZONE), 'en-US', { weekday: 'short', day: 'numeric', month: 'short', year: 'numeric' })}, 12:00 AM`);
  }, 60_000);
});

describe('values, sources and counts', () => {
  it('write "(none)" for no value and name sources, with their icons, on every page', async () => {
    await open(`/sites/${siteId}`);
    const sources = page.locator('[data-panel="Sources"] .rows li');
    await sources.first().waitFor(WAIT);
    expect((await sources.locator('.row-text').allTextContents()).sort()).toEqual(['(none)', 'Google', 'Hacker News', 'blog.example.org']);
    await expect(sources.filter({ hasText: 'blog.example.org' }).locator('img.source-icon').getAttribute('src')).resolves.toBe('/api/favicon/blog.example.org');
    await expect(sources.filter({ hasText: 'Hacker News' }).locator('img.source-icon').getAttribute('src')).resolves.toBe('/api/favicon/source/Hacker%20News');
    await expect(sources.locator('.source-icon').count()).resolves.toBe(4);
    await page.locator('[data-panel="Campaigns"] .rows li').first().waitFor(WAIT);
    await expect(page.locator('[data-panel="Campaigns"] .rows li .row-text').allTextContents()).resolves.toEqual(['(none)']);

    await open(`/sites/${siteId}/events`);
    const eventSources = page.locator('section[aria-labelledby="aud-referrer"] .rows li');
    await eventSources.first().waitFor(WAIT);
    for (const name of await eventSources.locator('.row-text').allTextContents()) expect(['(none)', 'Google', 'Hacker News', 'blog.example.org']).toContain(name);
    await expect(eventSources.locator('.source-icon').count()).resolves.toBe(await eventSources.count());

    await stillHere();
    await open(`/sites/${siteId}?period=realtime`);
    const live = page.locator('section[aria-labelledby="rt-sources"] .rows li');
    await live.first().waitFor(WAIT);
    await expect(live.locator('.row-text').allTextContents()).resolves.toEqual(['(none)']);
    await expect(page.locator('section[aria-labelledby="rt-events"] li').first().locator('.row-text.muted').textContent()).resolves.toBe('on /live · from (none)');
  }, 60_000);

  it('say "1 visitor" and "3 visitors"', async () => {
    await stillHere();
    await open(`/sites/${siteId}`);
    const pages = page.locator('[data-panel="Pages"]');
    await pages.getByRole('button', { name: '/about 1 visitor', exact: true }).waitFor(WAIT);
    // Visitor ids are salted per UTC day: when the run crosses midnight UTC after the live visitors'
    // first pageviews, the same three people count once on each day.
    const sameUtcDay = new Date(recentEventAt).toISOString().slice(0, 10) === new Date().toISOString().slice(0, 10);
    const live = sameUtcDay ? '/live 3 visitors' : '/live 6 visitors';
    await expect(pages.getByRole('button', { name: live, exact: true }).count()).resolves.toBe(1);
  }, 60_000);
});

describe('the layout', () => {
  it('puts every panel’s tabs in one row under its title at 1366 px, and numbers right-aligned in tabular digits', async () => {
    await open(`/sites/${siteId}`);
    await page.locator('[data-panel="Devices"] .rows li').first().waitFor(WAIT);
    const panels = await page.locator('[data-panel]').evaluateAll((sections) =>
      sections.map((section) => {
        const top = section.getBoundingClientRect().top;
        const title = section.querySelector('h2')!.getBoundingClientRect();
        const tabs = section.querySelector('.tabs')!;
        const buttons = [...tabs.querySelectorAll('button')].map((b) => b.getBoundingClientRect());
        return {
          panel: section.getAttribute('data-panel'),
          rows: new Set(buttons.map((b) => Math.round(b.top))).size,
          hidden: tabs.scrollWidth > tabs.clientWidth,
          below: Math.round(tabs.getBoundingClientRect().top - top) > Math.round(title.bottom - top),
          offset: Math.round(tabs.getBoundingClientRect().top - top),
        };
      }),
    );
    expect(panels.map((p) => [p.panel, p.rows, p.hidden, p.below])).toEqual(['Pages', 'Sources', 'Campaigns', 'Locations', 'Devices'].map((p) => [p, 1, false, true]));
    expect(new Set(panels.map((p) => p.offset)).size).toBe(1);

    const numbers = await page.locator('[data-panel] .rows li').evaluateAll((items) =>
      items.map((li) => {
        const row = li.querySelector('.row')!.getBoundingClientRect();
        const value = li.querySelector('.row-value')!;
        return { gap: Math.round(row.right - value.getBoundingClientRect().right), digits: getComputedStyle(value).fontVariantNumeric };
      }),
    );
    expect(new Set(numbers.map((n) => n.gap)).size).toBe(1);
    for (const n of numbers) expect(n.digits).toBe('tabular-nums');
    // The column names stand right over the labels and the counts.
    const columns = await page.locator('[data-panel]').evaluateAll((sections) =>
      sections.map((section) => {
        const [name, count] = [...section.querySelector('.panel-columns')!.children].map((c) => c.getBoundingClientRect());
        const label = section.querySelector('.rows li .row-label')!.getBoundingClientRect();
        const value = section.querySelector('.rows li .row-value')!.getBoundingClientRect();
        return [Math.round(name.left - label.left), Math.round(count.right - value.right)];
      }),
    );
    expect(columns).toEqual(Array(5).fill([0, 0]));

    const goals = page.getByTestId('goal-conversions');
    await goals.waitFor(WAIT);
    const cells = await goals.locator('th, td').evaluateAll((all) => all.map((c) => [c.textContent, getComputedStyle(c).textAlign]));
    expect(cells).toEqual([
      ['Goal', 'left'],
      ['Visitors converted', 'right'],
      ['Rate', 'right'],
      ['Signed up', 'left'],
      [expect.any(String), 'right'],
      [expect.any(String), 'right'],
    ]);
  }, 60_000);

  it('fits a 360 px phone: dashboard, realtime and events, light and dark', async () => {
    for (const [name, path] of [
      ['figures-dashboard', `/sites/${siteId}`],
      ['figures-realtime', `/sites/${siteId}?period=realtime`],
      ['figures-events', `/sites/${siteId}/events`],
    ]) {
      for (const width of [1366, 360]) {
        await open(path, { width });
        await page.locator(name === 'figures-realtime' ? '[data-testid="realtime-status"]:not(:has-text("Connecting"))' : '[data-testid="chart-legend"]').waitFor(WAIT);
        await page.waitForTimeout(500);
        await expect(page.evaluate(() => document.documentElement.scrollWidth)).resolves.toBeLessThanOrEqual(width);
        await reviewPage(page, `${name}-${width}px`, findings);
      }
    }
    expect(findings).toEqual([]);
  }, 120_000);
});

describe('the reader’s locale', () => {
  it('writes dates the reader’s way, one day format from the range to the chart', async () => {
    await open(`/sites/${siteId}`, { locale: 'de-DE' });
    await legend().waitFor(WAIT);
    const from = dateIn(SITE_ZONE, -29);
    const to = dateIn(SITE_ZONE);
    const day = { day: 'numeric', month: 'short', year: 'numeric' } as const;
    const range = new Intl.DateTimeFormat('de-DE', { ...day, timeZone: 'UTC' }).formatRange(new Date(`${from}T00:00:00Z`), new Date(`${to}T00:00:00Z`));
    expect(plain(await page.locator('.range-label > span').first().textContent())).toBe(plain(range));
    expect(plain(await legend().locator('.chart-legend-when').textContent())).toBe(plain(range));
    await hoverChart(0);
    expect(plain(await legend().locator('.chart-legend-when').textContent())).toBe(plain(written(from, 'de-DE', { weekday: 'short', ...day })));
  }, 60_000);
});

describe('current visitors', () => {
  it('show on a share link too, without the link to realtime', async () => {
    await stillHere();
    const created = await as(t, owner, 'POST', `/api/sites/${siteId}/share`, {});
    expect(created.status).toBe(201);
    await open(new URL((created.body.share as { url: string }).url).pathname, { signedIn: false });
    await expect(page.getByTestId('current-visitors').textContent({ timeout: 15_000 })).resolves.toBe('3 current visitors');
    await expect(page.locator('a.live-visitors').count()).resolves.toBe(0);
  }, 60_000);

  it('show beside the range as "3 current visitors", linking to realtime, and are asked again every 30 seconds', async () => {
    await stillHere();
    await open(`/sites/${siteId}`);
    await page.clock.install();
    await page.reload();
    const current = page.getByTestId('current-visitors');
    await expect(current.textContent({ timeout: 15_000 })).resolves.toBe('3 current visitors');

    // A fourth visitor arrives; half a minute later the dashboard says so, without a reload.
    await stillHere([...LIVE, { visitor_ip: '193.0.6.239', user_agent: MOBILE_UA, session_id: 'live-3' }]);
    await page.clock.fastForward('00:31');
    await page.waitForFunction(() => document.querySelector('[data-testid="current-visitors"]')?.textContent === '4 current visitors', undefined, WAIT);

    await page.getByRole('link', { name: '4 current visitors' }).click();
    await page.waitForURL((url) => url.searchParams.get('period') === 'realtime', WAIT);
    await page.waitForFunction(() => document.querySelector('[data-testid="live-visitors"]')?.textContent === '4', undefined, WAIT);
  }, 60_000);
});
