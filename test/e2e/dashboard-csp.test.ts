// The dashboard under its Content Security Policy, in real Chromium: every main screen (sites, a
// site's dashboard, events, goals, funnels, settings with its share links, the team, the account
// with its authenticator QR code, a share page) loads and works with no policy violation and no
// console error; the tracking script still loads on a customer's page of another origin; and a
// page of another origin cannot frame the dashboard, only a share page whose link allows it.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from '../support/browser.ts';
import { type CustomerSite, DESKTOP_USER_AGENTS, serveCustomerSite, trackingSnippet } from '../support/customer-site.ts';
import { BROWSER_DRIVEN_ENV, signInAs } from '../support/dashboard.ts';
import { type Instance, request, startInstance } from '../support/instance.ts';

const OWNER = { email: 'owner@example.com', password: 'correct horse battery' };
const WAIT = { timeout: 15_000 };

let instance: Instance;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let shop: CustomerSite;
/** What the framing page embeds: set by each test before it loads the customer's page. */
let framed = '';
let siteId: string;
/** Policy violations and console errors of the dashboard's pages, as "page: what". */
const problems: string[] = [];

function watch(tab: Page, label: () => string) {
  tab.on('console', (message) => {
    // A 4xx the app expects (no session yet, an icon it may not have) is network news, not a fault.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(`${label()}: console error: ${message.text()}`);
  });
  tab.on('pageerror', (err) => problems.push(`${label()}: ${err.message}`));
}

/** Every policy violation the page reports, collected before any of its own scripts run. */
const recordViolations = () => {
  const seen: string[] = [];
  (window as unknown as { __violations: string[] }).__violations = seen;
  document.addEventListener('securitypolicyviolation', (e) => seen.push(`${e.violatedDirective} blocked ${e.blockedURI || 'inline'} (${e.sourceFile}:${e.lineNumber})`));
};

async function violationsOf(tab: Page): Promise<string[]> {
  return tab.evaluate(() => (window as unknown as { __violations?: string[] }).__violations ?? []);
}

/** Opens a dashboard path, waits for its heading, and records what it violated. */
async function open(path: string, heading: string | RegExp) {
  await page.goto(`${instance.url}${path}`);
  await page.getByRole('heading', { name: heading, level: 1 }).waitFor(WAIT);
  await page.waitForLoadState('networkidle');
  for (const v of await violationsOf(page)) problems.push(`${path}: ${v}`);
}

const apiInPage = <T>(tab: Page, method: string, path: string, body?: unknown) =>
  tab.evaluate(
    async ([m, p, b]) => {
      const res = await fetch(p as string, { method: m as string, headers: b === undefined ? {} : { 'Content-Type': 'application/json' }, body: b === undefined ? undefined : JSON.stringify(b) });
      return { status: res.status, body: await res.json().catch(() => null) };
    },
    [method, path, body] as const,
  ) as Promise<{ status: number; body: T }>;

beforeAll(async () => {
  instance = await startInstance({ env: { ...BROWSER_DRIVEN_ENV } });
  const created = await request(`${instance.url}/api/initial-user`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(OWNER) });
  expect(created.status).toBe(201);
  shop = await serveCustomerSite('shop', (req) =>
    req.url === '/frame'
      ? `<!doctype html><html lang="en"><head><title>Framing page</title></head><body><iframe id="plumb" title="Plumb" src="${framed}" width="800" height="600"></iframe></body></html>`
      : `<!doctype html><html lang="en"><head><title>Shop</title>${trackingSnippet(instance.url)}</head><body><h1>Shop</h1></body></html>`,
  );
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.addInitScript(recordViolations);
  page = await context.newPage();
  watch(page, () => page.url());
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await shop?.close();
  await instance?.destroy();
});

describe('the dashboard under its Content Security Policy', () => {
  it('signs in and shows every main screen without a violation or a console error', async () => {
    await signInAs(page, OWNER, instance.url);

    const teams = await apiInPage<{ items: { id: string }[] }>(page, 'GET', '/api/user/teams');
    const site = await apiInPage<{ site: { id: string } }>(page, 'POST', '/api/sites', { domain: shop.hostname, team_id: teams.body.items[0].id });
    expect(site.status).toBe(201);
    siteId = site.body.site.id;

    // A visit from the customer's page: the tracking script loads there, on another origin.
    const visitor = await browser.newContext({ userAgent: DESKTOP_USER_AGENTS[0] });
    const tab = await visitor.newPage();
    const sent = tab.waitForResponse((r) => r.url() === `${instance.url}/ingest` && r.status() === 202);
    await tab.goto(`${shop.origin}/`);
    await sent;
    await visitor.close();

    await open('/', 'Sites');
    await open(`/sites/${siteId}`, new RegExp(shop.hostname));
    await page.locator('[data-panel]').first().waitFor(WAIT);
    await open(`/sites/${siteId}/events`, /Events/);
    await open(`/sites/${siteId}/goals`, /Goals/);
    await open(`/sites/${siteId}/funnels`, /Funnels/);
    await open(`/sites/${siteId}/settings`, /Settings|settings/);
    await open(`/teams/${teams.body.items[0].id}`, /./);
    await open('/account', /Account/);
    // The authenticator QR code is SVG put in place as markup: it must render under the policy.
    await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
    await page.locator('.qr svg').waitFor(WAIT);
    for (const v of await violationsOf(page)) problems.push(`/account (QR code): ${v}`);
    expect(problems).toEqual([]);
  }, 120_000);

  it('shows a share page without a violation or a console error', async () => {
    const link = await apiInPage<{ token: string }>(page, 'POST', `/api/sites/${siteId}/share`, {});
    expect(link.status).toBe(201);
    const shared = await browser.newPage();
    await shared.addInitScript(recordViolations);
    watch(shared, () => 'share page');
    await shared.goto(`${instance.url}/share/${link.body.token}`);
    await shared.getByRole('heading', { name: shop.hostname, level: 1 }).waitFor(WAIT);
    await shared.waitForLoadState('networkidle');
    expect([...problems, ...(await violationsOf(shared))]).toEqual([]);
    await shared.close();
  }, 60_000);
});

describe('framing by a page of another origin', () => {
  /** Loads the customer's framing page; answers whether the framed page rendered, and the console's words. */
  async function frameFromShop(src: string): Promise<{ rendered: boolean; console: string[] }> {
    framed = src;
    const outsider = await browser.newPage();
    const said: string[] = [];
    outsider.on('console', (message) => said.push(message.text()));
    outsider.on('pageerror', (err) => said.push(err.message));
    await outsider.goto(`${shop.origin}/frame`);
    const frame = outsider.frameLocator('#plumb');
    const rendered = await frame
      .locator('h1')
      .first()
      .waitFor({ timeout: 5_000 })
      .then(
        () => true,
        () => false,
      );
    await outsider.close();
    return { rendered, console: said };
  }

  it('cannot frame the dashboard', async () => {
    const { rendered, console } = await frameFromShop(`${instance.url}/login`);
    expect(rendered).toBe(false);
    expect(console.join('\n')).toContain("frame-ancestors 'none'");
  }, 30_000);

  it("cannot frame a share page whose link does not list it, and can once the link's owner lists it", async () => {
    const link = await apiInPage<{ token: string }>(page, 'POST', `/api/sites/${siteId}/share`, { name: 'Shop wall' });
    const url = `${instance.url}/share/${link.body.token}`;
    expect((await frameFromShop(url)).rendered).toBe(false);
    // The owner lists the shop in the share link's embedding form.
    await open(`/sites/${siteId}/settings`, /Settings|settings/);
    await page.getByRole('row', { name: /Shop wall/ }).getByRole('button', { name: 'Embedding' }).click();
    await page.getByLabel(/Sites allowed to embed this link/).fill(`${shop.origin}/`);
    await page.getByRole('button', { name: 'Save embedding' }).click();
    await page.getByRole('row', { name: /Shop wall/ }).getByRole('cell', { name: shop.origin, exact: true }).waitFor(WAIT);
    const result = await frameFromShop(url);
    // Framed, it runs as a third party: storage the browser refuses there must not break it.
    expect(result.console.filter((text) => !text.startsWith('Failed to load resource'))).toEqual([]);
    expect(result.rendered).toBe(true);
  }, 60_000);
});
