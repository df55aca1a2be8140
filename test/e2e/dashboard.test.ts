// The dashboard in real Chromium against a real `plumb serve`, as a new owner meets it: first-run
// setup, a site, visits tracked by /plumb.js on the owner's own page, the numbers on the
// dashboard, filtering, the events explorer's two-filter rule, a goal and a funnel (created, then
// edited in place), a share link opened without signing in, and the login screen after signing
// out and after the session ended.
// Over the whole run every request the dashboard makes is logged (none may leave the instance's
// origin), main pages are scanned with axe-core, and screenshots (light and dark) are written to
// test-output/screenshots for review.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { launchChromium } from '../support/browser.ts';
import { type CustomerSite, DESKTOP_USER_AGENTS, serveCustomerSite, trackingSnippet } from '../support/customer-site.ts';
import { type AxeFinding, BROWSER_DRIVEN_ENV, foreignRequests, logRequests, reviewPage } from '../support/dashboard.ts';
import { type Instance, request, startInstance } from '../support/instance.ts';

const OWNER = { email: 'owner@example.com', password: 'correct horse battery' };
const WAIT = { timeout: 15_000 };

let instance: Instance;
let browser: Browser;
let shop: CustomerSite;
let context: BrowserContext;
let page: Page;
let siteId: string;
let shareUrl: string;
const requests: string[] = [];
const findings: AxeFinding[] = [];

function shopPage(plumbUrl: string, path: string): string {
  return `<!doctype html><html lang="en"><head><title>Shop ${path}</title>${trackingSnippet(plumbUrl)}</head>
<body><h1>Shop</h1>
<button id="pro" onclick="plumb('event', 'Signup', { plan: 'pro' })">Pro</button>
<button id="free" onclick="plumb('event', 'Signup', { plan: 'free' })">Free</button>
</body></html>`;
}

/** One visitor (own user agent, so own visitor id) who opens `paths` in order and then signs up. */
async function visit(userAgent: string, paths: string[], plan: 'pro' | 'free') {
  const visitor = await browser.newContext({ userAgent });
  const tab = await visitor.newPage();
  for (const path of paths) {
    const sent = tab.waitForResponse((r) => r.url() === `${instance.url}/ingest` && r.status() === 202);
    await tab.goto(`${shop.origin}${path}`);
    await sent;
  }
  const sent = tab.waitForResponse((r) => r.url() === `${instance.url}/ingest/event` && r.status() === 202);
  await tab.click(`#${plan}`);
  await sent;
  await visitor.close();
}

/** Reads until the value is the expected one (queries land in any order) or time is up; answers the last read. */
async function settled<T>(read: () => Promise<T>, expected: T, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (JSON.stringify(value) !== JSON.stringify(expected) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    value = await read();
  }
  return value;
}

/** The elements' texts, once they are the expected ones or the wait is over. */
async function expectTexts(locator: Locator, expected: string[]) {
  expect(await settled(() => locator.allTextContents(), expected)).toEqual(expected);
}

const kpi = (name: string) => page.getByTestId(`kpi-${name}`);
const panel = (title: string) => page.locator(`[data-panel="${title}"]`);

beforeAll(async () => {
  instance = await startInstance({ env: { ...BROWSER_DRIVEN_ENV } });
  shop = await serveCustomerSite('shop', (req) => shopPage(instance.url, req.url ?? '/'));
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  logRequests(context, requests);
  page = await context.newPage();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await shop?.close();
  await instance?.destroy();
});

describe('the dashboard, from first run to sign-out', () => {
  it('sets up the first owner account on a fresh instance', async () => {
    await page.goto(`${instance.url}/`);
    await page.waitForURL(`${instance.url}/setup`, WAIT);
    await reviewPage(page, 'setup', findings);
    await page.getByLabel('Email').fill(OWNER.email);
    await page.getByLabel(/^Password/).fill(OWNER.password);
    await page.getByRole('button', { name: 'Create owner account' }).click();
    await page.getByRole('heading', { name: 'Sites', level: 1 }).waitFor(WAIT);
    expect(new URL(page.url()).pathname).toBe('/');
    await expect(page.getByTestId('session-remaining').textContent()).resolves.toMatch(/^Signed out in 1[45]:\d\d$/);
  }, 60_000);

  it('creates a site and shows its tracking snippet', async () => {
    await page.getByRole('button', { name: 'Add a site' }).click();
    await page.getByLabel('Domain').fill(shop.hostname);
    await page.getByLabel(/^Time zone/).fill('UTC');
    await page.getByRole('button', { name: 'Add site', exact: true }).click();
    await page.waitForURL(/\/sites\/[0-9a-f-]{36}\/settings$/, WAIT);
    siteId = new URL(page.url()).pathname.split('/')[2];
    await expect(page.getByTestId('snippet').textContent()).resolves.toContain(`<script defer src="${instance.url}/plumb.js"></script>`);
    await reviewPage(page, 'site-settings', findings);
  }, 60_000);

  it('shows visits tracked through /plumb.js with the right numbers', async () => {
    await visit(DESKTOP_USER_AGENTS[0], ['/', '/pricing'], 'pro');
    await visit(DESKTOP_USER_AGENTS[1], ['/'], 'free');
    await visit(DESKTOP_USER_AGENTS[2], ['/docs'], 'pro');

    await page.getByRole('link', { name: 'Dashboard' }).click();
    // The writer stores accepted events within a moment; reload until they are counted.
    for (let i = 0; i < 30 && (await kpi('pageviews').textContent().catch(() => null)) !== '4'; i++) {
      await page.waitForTimeout(500);
      await page.reload();
      await kpi('pageviews').waitFor(WAIT);
    }
    await expect(kpi('visitors').textContent()).resolves.toBe('3');
    await expect(kpi('visits').textContent()).resolves.toBe('3');
    await expect(kpi('pageviews').textContent()).resolves.toBe('4');
    await page.getByTestId('chart').locator('canvas').first().waitFor(WAIT);
    const pages = panel('Pages').locator('.rows li');
    await expectTexts(pages, ['/2 visitors', '/docs1 visitor', '/pricing1 visitor']);
    await expectTexts(panel('Devices').locator('.rows li'), ['desktop3 visitors']);
    // The comparison is the 30 days right before the range (the site's clock is UTC), asked separately in
    // buckets of the range's interval; a new site has nothing there, which every card says.
    await page.waitForFunction(() => document.querySelectorAll('[data-kpi] .kpi-change[title^="No visits"]').length === 6, undefined, WAIT);
    const asked = (path: string) => requests.filter((url) => url.startsWith(`${instance.url}/api/sites/${siteId}/${path}?`)).map((url) => new URL(url).searchParams);
    const shown = asked('stats').find((q) => /^\d{4}-\d{2}-\d{2}$/.test(q.get('from') ?? ''))!;
    const before = asked('stats').find((q) => (q.get('from') ?? '').includes('T') && q.get('interval') === 'day')!;
    expect(before.get('to')).toBe(`${shown.get('from')}T00:00:00.000Z`);
    expect(Date.parse(before.get('to')!) - Date.parse(before.get('from')!)).toBe(30 * 86_400_000);
    await reviewPage(page, 'dashboard', findings);

    // Readable on a small phone: nothing wider than the screen.
    await page.setViewportSize({ width: 360, height: 780 });
    await page.waitForTimeout(300);
    await expect(page.evaluate(() => document.documentElement.scrollWidth)).resolves.toBeLessThanOrEqual(360);
    await reviewPage(page, 'dashboard-360px', findings);
    await page.setViewportSize({ width: 1280, height: 900 });
  }, 90_000);

  it('filters the whole dashboard by a clicked page, in the URL', async () => {
    // Keyboard only: focus the row and press Enter.
    await panel('Pages').getByRole('button', { name: /^\/pricing 1 visitor$/ }).focus();
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.searchParams.getAll('filter').join() === 'page:is:/pricing', WAIT);
    await page.getByRole('button', { name: 'Remove filter: Page is /pricing' }).waitFor(WAIT);
    await page.waitForFunction(() => document.querySelector('[data-testid="kpi-visitors"]')?.textContent === '1', undefined, WAIT);
    // A filter keeps whole visits: the one visit that saw /pricing had two pageviews.
    await expect(kpi('pageviews').textContent()).resolves.toBe('2');
    await expectTexts(panel('Pages').locator('.rows li'), ['/1 visitor', '/pricing1 visitor']);

    // The state survives a reload, and the chip removes the filter.
    await page.reload();
    await page.waitForFunction(() => document.querySelector('[data-testid="kpi-visitors"]')?.textContent === '1', undefined, WAIT);
    await page.getByRole('button', { name: 'Remove filter: Page is /pricing' }).click();
    await page.waitForFunction(() => document.querySelector('[data-testid="kpi-visitors"]')?.textContent === '3', undefined, WAIT);
    expect(new URL(page.url()).searchParams.has('filter')).toBe(false);

    // Realtime: everyone was here in the last five minutes.
    await page.getByRole('button', { name: 'Realtime' }).click();
    await page.waitForFunction(() => document.querySelector('[data-testid="live-visitors"]')?.textContent === '3', undefined, WAIT);
    expect(new URL(page.url()).searchParams.get('period')).toBe('realtime');

    // A custom range that ended the day before yesterday (safe around midnight) has none of the visits.
    const dayOffset = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10);
    const [from, to] = [dayOffset(9), dayOffset(2)];
    await page.getByRole('button', { name: 'Custom' }).click();
    await page.getByLabel('From', { exact: true }).fill(from);
    await page.getByLabel('To', { exact: true }).fill(to);
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL((url) => url.searchParams.get('period') === 'custom' && url.searchParams.get('from') === from && url.searchParams.get('to') === to, WAIT);
    await page.waitForFunction(() => document.querySelector('[data-testid="kpi-visitors"]')?.textContent === '0', undefined, WAIT);

    await page.getByRole('button', { name: 'Last 7 days' }).click();
    await page.waitForURL((url) => url.searchParams.get('period') === '7d' && !url.searchParams.has('from'), WAIT);
    await page.waitForFunction(() => document.querySelector('[data-testid="kpi-visitors"]')?.textContent === '3', undefined, WAIT);
  }, 60_000);

  it('explores events with one property and one audience filter, and cannot add a third', async () => {
    await page.getByRole('link', { name: 'Events' }).click();
    await page.waitForURL((url) => url.pathname === `/sites/${siteId}/events` && url.searchParams.get('period') === '7d', WAIT);
    await page.getByRole('heading', { name: 'Signup', level: 2 }).waitFor(WAIT);
    const props = page.locator('section[aria-labelledby="event-props"]');
    await props.getByRole('button', { name: /^pro 2 sessions/ }).waitFor(WAIT);
    await expectTexts(props.locator('.rows li'), ['pro2 sessions', 'free1 session']);

    await props.getByRole('button', { name: /^pro 2 sessions/ }).click();
    await page.getByRole('button', { name: 'Remove filter: property plan is pro' }).waitFor(WAIT);
    const pages = page.locator('section[aria-labelledby="aud-path"]');
    await pages.getByRole('button', { name: /^\/docs 1 session$/ }).waitFor(WAIT);
    await expectTexts(pages.locator('.rows li'), ['/docs1 session', '/pricing1 session']);

    await pages.getByRole('button', { name: /^\/docs 1 session$/ }).click();
    await page.getByRole('button', { name: 'Remove filter: page is /docs' }).waitFor(WAIT);
    const url = new URL(page.url());
    expect([url.searchParams.get('pk'), url.searchParams.get('pv'), url.searchParams.get('dk'), url.searchParams.get('dv')]).toEqual(['plan', 'pro', 'path', '/docs']);
    await page.waitForFunction(() => document.querySelectorAll('section[aria-labelledby="aud-device"] .rows li').length === 1, undefined, WAIT);
    await expectTexts(page.locator('section[aria-labelledby="aud-device"] .rows li'), ['desktop1 session']);

    // Two filters are the limit: every control that could add one is now disabled.
    await page.getByTestId('filter-limit').waitFor(WAIT);
    await expect(page.getByRole('button', { name: 'Add filter' }).isDisabled()).resolves.toBe(true);
    const adders = page.locator('section[aria-labelledby="event-props"] button.row, section[aria-labelledby^="aud-"] button.row');
    expect(await adders.count()).toBeGreaterThan(0);
    for (const button of await adders.all()) await expect(button.isDisabled()).resolves.toBe(true);
    await page.getByRole('button', { name: /^desktop 1 session$/ }).click({ force: true });
    expect(new URL(page.url()).searchParams.get('dv')).toBe('/docs');
    await expect(page.locator('.event-filters .chip').count()).resolves.toBe(2);
    await reviewPage(page, 'events', findings);
  }, 60_000);

  it('creates a goal and a funnel and shows their figures', async () => {
    await page.getByRole('link', { name: 'Goals' }).click();
    await page.getByLabel('Goal name').fill('Signed up');
    await page.getByLabel('Event name').fill('Signup');
    await page.getByRole('button', { name: 'Add goal' }).click();
    const goal = page.getByTestId('goals').getByRole('row', { name: /Signed up/ });
    await goal.waitFor(WAIT);
    await page.waitForFunction(() => document.querySelector('[data-testid="goals"] tbody tr')?.textContent?.includes('100%'), undefined, WAIT);
    await expectTexts(goal.locator('td'), ['Event Signup', '3', '100%', '']);
    // A goal with a property condition counts only the visitors whose event had that value.
    await page.getByLabel('Goal name').fill('Pro signup');
    await page.getByLabel('Event name').fill('Signup');
    await page.getByLabel('Only when property (optional)').fill('plan');
    await page.getByLabel('equals').fill('pro');
    await page.getByRole('button', { name: 'Add goal' }).click();
    await expectTexts(page.getByTestId('goals').getByRole('row', { name: /Pro signup/ }).locator('td'), ['Event Signup where plan = pro', '2', '66.7%', '']);
    // Figures line up on the right as on the dashboard's panels; the range names the site's clock.
    const alignments = await page.getByTestId('goals').locator('thead th').evaluateAll((cells) => cells.map((cell) => getComputedStyle(cell).textAlign));
    expect(alignments.slice(0, 4)).toEqual(['left', 'left', 'right', 'right']);
    await expect(page.getByTestId('time-zone').textContent()).resolves.toMatch(/^Times in /);
    await reviewPage(page, 'goals', findings);

    await page.getByRole('link', { name: 'Funnels' }).click();
    await page.getByLabel('Funnel name').fill('Home to pricing');
    await page.getByLabel('Step 1 path').fill('/');
    await page.getByLabel('Step 2 path').fill('/pricing');
    await page.getByRole('button', { name: 'Create funnel' }).click();
    const chart = page.locator('[data-funnel="Home to pricing"]').getByTestId('funnel-chart');
    await chart.waitFor(WAIT);
    await expectTexts(chart.locator('li .funnel-label'), ['1. /2 visitors · 100%', '2. /pricing1 visitor · 50% · 1 dropped off']);
    await reviewPage(page, 'funnels', findings);
  }, 60_000);

  it('edits a goal and a funnel in place, by keyboard, PATCHing only what changed and showing the server’s field errors', async () => {
    /** Waits until the focus is on `target`: a button's label, or "form name › field name". */
    const focusOn = (target: string) =>
      page.waitForFunction(
        (want) => {
          const el = document.activeElement;
          const form = el?.closest('form');
          const formName = form?.getAttribute('aria-label') ?? form?.querySelector('h2, h3')?.textContent;
          return (form ? `${formName} › ${el?.getAttribute('name')}` : el?.getAttribute('aria-label')) === want;
        },
        target,
        WAIT,
      );
    const read = <T,>(path: string) => page.evaluate(async (url) => (await fetch(url, { headers: { Accept: 'application/json' } })).json(), `${instance.url}${path}`) as Promise<T>;
    const patch = (path: string) => (r: { method(): string; url(): string }) => r.method() === 'PATCH' && r.url() === `${instance.url}${path}`;
    type Goal = { id: string; name: string; event_name?: string; property_conditions?: { key: string; value: string }[] };
    const goalNamed = async (name: string) => (await read<{ items: Goal[] }>(`/api/sites/${siteId}/goals`)).items.find((g) => g.name === name);

    await page.getByRole('link', { name: 'Goals' }).click();
    const goals = page.getByTestId('goals');
    await goals.getByRole('row', { name: /Pro signup/ }).waitFor(WAIT);
    const goalId = (await goalNamed('Pro signup'))!.id;
    const goalPath = `/api/sites/${siteId}/goals/${goalId}`;

    // Edit opens the create form in the row, filled in, with the focus on its first field.
    await goals.getByRole('button', { name: 'Edit goal Pro signup' }).focus();
    await page.keyboard.press('Enter');
    const goalForm = page.getByRole('form', { name: 'Edit goal Pro signup' });
    await goalForm.waitFor(WAIT);
    await focusOn('Edit goal Pro signup › goal-name');
    expect(
      await Promise.all(['name', 'type', 'target', 'property-key', 'property-value', 'currency'].map((field) => goalForm.locator(`[name="goal-${field}"]`).inputValue())),
    ).toEqual(['Pro signup', 'event', 'Signup', 'plan', 'pro', '']);

    // A blank name passes the browser's `required` but not the server: its answer shows under the field, nothing is saved.
    await goalForm.getByLabel('Goal name', { exact: true }).fill('   ');
    const refused = page.waitForResponse((r) => patch(goalPath)(r.request()));
    await goalForm.getByRole('button', { name: 'Save goal' }).click();
    const answer = await refused;
    expect([answer.status(), ((await answer.json()) as { code: string }).code]).toEqual([400, 'validation_failed']);
    const nameInput = goalForm.getByLabel('Goal name', { exact: true });
    await page.waitForFunction(() => document.querySelector('form[aria-label="Edit goal Pro signup"] [name="goal-name"]')?.getAttribute('aria-invalid') === 'true', undefined, WAIT);
    const describedBy = (await nameInput.getAttribute('aria-describedby'))!;
    // Under the field, the server's message without the field's name in front.
    await expect(page.locator(`[id="${describedBy}"]`).textContent()).resolves.toMatch(/^must not be (empty|blank)/);
    await expect(goalForm.getByRole('alert').textContent()).resolves.toBe('Not saved: correct the marked fields.');
    await focusOn('Edit goal Pro signup › goal-name');
    expect((await read<{ goal: Goal }>(goalPath)).goal.name).toBe('Pro signup');
    // The open form with its error, on a small phone and in both schemes.
    await page.setViewportSize({ width: 360, height: 780 });
    await page.waitForTimeout(300);
    await expect(page.evaluate(() => document.documentElement.scrollWidth)).resolves.toBeLessThanOrEqual(360);
    await reviewPage(page, 'goal-edit-360px', findings);
    await page.setViewportSize({ width: 1280, height: 900 });

    // Cancel (Escape) puts the row back as it was, and the focus on its Edit button.
    await page.keyboard.press('Escape');
    await goalForm.waitFor({ state: 'detached', ...WAIT });
    await expectTexts(goals.getByRole('row', { name: /Pro signup/ }).locator('td'), ['Event Signup where plan = pro', '2', '66.7%', '']);
    await focusOn('Edit goal Pro signup');

    // A new name: the PATCH carries the name alone, the row and the API show it, the focus returns.
    await page.keyboard.press('Enter');
    await page.getByRole('form', { name: 'Edit goal Pro signup' }).getByLabel('Goal name', { exact: true }).fill('Pro plan signup');
    const saved = page.waitForRequest(patch(goalPath));
    await page.keyboard.press('Enter');
    expect((await saved).postDataJSON()).toEqual({ name: 'Pro plan signup' });
    await page.getByRole('form', { name: 'Edit goal Pro signup' }).waitFor({ state: 'detached', ...WAIT });
    await expectTexts(goals.getByRole('row', { name: /Pro plan signup/ }).locator('td'), ['Event Signup where plan = pro', '2', '66.7%', '']);
    await expectTexts(goals.locator('tbody th'), ['Signed up', 'Pro plan signup']);
    await focusOn('Edit goal Pro plan signup');
    const stored = (await read<{ goal: Goal }>(goalPath)).goal;
    expect([stored.name, stored.event_name, stored.property_conditions]).toEqual(['Pro plan signup', 'Signup', [{ key: 'plan', value: 'pro' }]]);

    // The funnel: a step path the server refuses, then a third step (a custom event).
    await page.getByRole('link', { name: 'Funnels' }).click();
    const card = page.locator('[data-funnel="Home to pricing"]');
    await card.getByTestId('funnel-chart').waitFor(WAIT);
    const funnelId = (await read<{ items: { id: string; name: string }[] }>(`/api/sites/${siteId}/funnels`)).items.find((f) => f.name === 'Home to pricing')!.id;
    const funnelPath = `/api/sites/${siteId}/funnels/${funnelId}`;
    await card.getByRole('button', { name: 'Edit funnel Home to pricing' }).focus();
    await page.keyboard.press('Enter');
    const funnelForm = page.getByRole('form', { name: 'Edit funnel Home to pricing' });
    await funnelForm.waitFor(WAIT);
    await focusOn('Edit funnel Home to pricing › funnel-name');
    expect(
      await Promise.all(['Funnel name', 'Step 1 path', 'Step 2 path', 'Within (hours)'].map((label) => funnelForm.getByLabel(label, { exact: true }).inputValue())),
    ).toEqual(['Home to pricing', '/', '/pricing', '24']);

    await funnelForm.getByLabel('Step 2 path', { exact: true }).fill('pricing');
    const badStep = page.waitForResponse((r) => patch(funnelPath)(r.request()));
    await funnelForm.getByRole('button', { name: 'Save funnel' }).click();
    expect((await badStep).status()).toBe(400);
    await focusOn('Edit funnel Home to pricing › step-2-value');
    const stepError = (await funnelForm.getByLabel('Step 2 path', { exact: true }).getAttribute('aria-describedby'))!;
    await expect(page.locator(`[id="${stepError}"]`).textContent()).resolves.toMatch(/^must start with '\/'/);
    expect((await read<{ funnel: { steps: unknown[] } }>(funnelPath)).funnel.steps).toEqual([
      { type: 'path', path_pattern: '/' },
      { type: 'path', path_pattern: '/pricing' },
    ]);
    await reviewPage(page, 'funnel-edit', findings);

    await funnelForm.getByLabel('Step 2 path', { exact: true }).fill('/pricing');
    await funnelForm.getByRole('button', { name: 'Add step' }).click();
    await funnelForm.locator('[name="step-3-type"]').selectOption('event');
    await funnelForm.getByLabel('Step 3 event name', { exact: true }).fill('Signup');
    const steps = [
      { type: 'path', path_pattern: '/' },
      { type: 'path', path_pattern: '/pricing' },
      { type: 'event', event_name: 'Signup' },
    ];
    const savedFunnel = page.waitForRequest(patch(funnelPath));
    await funnelForm.getByRole('button', { name: 'Save funnel' }).click();
    expect((await savedFunnel).postDataJSON()).toEqual({ steps });
    await funnelForm.waitFor({ state: 'detached', ...WAIT });
    await focusOn('Edit funnel Home to pricing');
    await expectTexts(card.getByTestId('funnel-chart').locator('li .funnel-label'), [
      '1. /2 visitors · 100%',
      '2. /pricing1 visitor · 50% · 1 dropped off',
      '3. Signup1 visitor · 50% · 0 dropped off',
    ]);
    const funnel = (await read<{ funnel: { name: string; steps: unknown[]; window_seconds: number } }>(funnelPath)).funnel;
    expect([funnel.name, funnel.steps, funnel.window_seconds]).toEqual(['Home to pricing', steps, 86_400]);
  }, 90_000);

  it('opens a share link without signing in', async () => {
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('button', { name: 'Create share link' }).click();
    const field = page.getByTestId('share-url');
    await field.waitFor(WAIT);
    shareUrl = await field.inputValue();
    expect(shareUrl).toMatch(new RegExp(`^${instance.url}/share/[A-Za-z0-9_-]{20,}$`));

    const stranger = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    logRequests(stranger, requests);
    const shared = await stranger.newPage();
    await shared.goto(shareUrl);
    await shared.getByRole('heading', { name: shop.hostname }).waitFor(WAIT);
    await shared.waitForFunction(() => document.querySelector('[data-testid="kpi-visitors"]')?.textContent === '3', undefined, WAIT);
    await shared.getByTestId('goal-conversions').waitFor(WAIT);
    await expectTexts(shared.getByTestId('goal-conversions').locator('tbody tr'), ['Signed up3100%', 'Pro plan signup266.7%']);
    expect(await stranger.cookies()).toEqual([]);
    await reviewPage(shared, 'share', findings);

    // A link with a password asks for it first.
    await page.getByLabel('Password (optional)').fill('open sesame');
    await page.getByRole('button', { name: 'Create share link' }).click();
    await page.waitForFunction((first) => (document.querySelector('[data-testid="share-url"]') as HTMLInputElement | null)?.value !== first, shareUrl, WAIT);
    await shared.goto(await field.inputValue());
    await shared.getByRole('heading', { name: 'This dashboard is protected' }).waitFor(WAIT);
    await shared.getByLabel('Password').fill('open sesame');
    await shared.getByRole('button', { name: 'Open dashboard' }).click();
    await shared.waitForFunction(() => document.querySelector('[data-testid="kpi-visitors"]')?.textContent === '3', undefined, WAIT);
    await stranger.close();
  }, 60_000);

  it('shows the team with its audit log, instance users, site roles, a second team the site moves to, and the account', async () => {
    await page.getByRole('link', { name: 'Team' }).click();
    await page.getByRole('heading', { name: 'Audit log' }).waitFor(WAIT);
    await page.getByTestId('audit').getByText('Site added').waitFor(WAIT);
    await reviewPage(page, 'team', findings);

    // Instance users: the owner creates an account, which then gets a role on the site alone.
    await page.getByRole('link', { name: 'Users' }).click();
    const newAccount = page.locator('form[aria-label="New account"]');
    await newAccount.getByLabel('Email').fill('analyst@example.com');
    await newAccount.getByLabel(/^Password/).fill('an analyst password');
    await newAccount.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('row', { name: /analyst@example\.com/ }).waitFor(WAIT);
    await reviewPage(page, 'users', findings);
    await page.goto(`${instance.url}/sites/${siteId}/settings`);
    const grant = page.locator('form[aria-label="Give someone a role on this site"]');
    await grant.getByLabel('Person').selectOption({ label: 'analyst@example.com' });
    await grant.getByLabel('Role').selectOption('viewer');
    await grant.getByRole('button', { name: 'Give role' }).click();
    await page.getByLabel('Site role of analyst@example.com').waitFor(WAIT);
    await expect(page.getByLabel('Site role of analyst@example.com').inputValue()).resolves.toBe('viewer');

    // A second team, and the site moved into it with its analytics.
    await page.getByRole('link', { name: 'Team' }).click();
    await page.getByLabel('New team').fill('Marketing');
    await page.getByRole('button', { name: 'Create team' }).click();
    await page.getByRole('heading', { name: 'Marketing', level: 1 }).waitFor(WAIT);
    await page.goto(`${instance.url}/sites/${siteId}/settings`);
    await page.locator('section[aria-labelledby="transfer"]').getByLabel('Team').selectOption({ label: 'Marketing' });
    await page.getByRole('button', { name: 'Move site' }).click();
    await page.waitForURL(`${instance.url}/sites/${siteId}`, { timeout: 30_000 });
    await page.waitForFunction(() => document.querySelector('[data-testid="kpi-visitors"]')?.textContent === '3', undefined, WAIT);

    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByText('Authenticator app: off').waitFor(WAIT);
    await reviewPage(page, 'account', findings);

    // An API client made here reads the site's stats with its token, and nothing else.
    const clients = page.locator('form[aria-label="New API client"]');
    await clients.getByLabel('Name').fill('Reporting');
    await clients.getByLabel(shop.hostname).check();
    await clients.getByRole('button', { name: 'Create API client' }).click();
    const token = await page.getByLabel('API token').inputValue();
    expect(token).toMatch(/^plumb_/);
    const stats = await request(`${instance.url}/api/sites/${siteId}/stats`, { headers: { Authorization: `Bearer ${token}` } });
    expect([stats.status, (stats.body.kpis as { visitors: number }).visitors]).toEqual([200, 3]);
    expect((await request(`${instance.url}/api/user/teams`, { headers: { Authorization: `Bearer ${token}` } })).status).toBe(403);

    // The theme switch overrides the system's preference and is remembered.
    await page.getByRole('button', { name: 'Switch to dark mode' }).click();
    await expect(page.evaluate(() => document.documentElement.dataset.theme)).resolves.toBe('dark');
    await page.reload();
    await page.getByRole('button', { name: 'Switch to light mode' }).waitFor(WAIT);
    await page.getByRole('button', { name: 'Switch to light mode' }).click();
    await expect(page.evaluate(() => document.documentElement.dataset.theme)).resolves.toBe('light');
    // Back to following the system, which the screenshots that follow switch between.
    await page.evaluate(() => localStorage.removeItem('plumb-theme'));
    await page.reload();
  }, 60_000);

  it('says "signed out" after signing out, "session ended" after the session ended, and nothing on a direct visit', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${instance.url}/login`, WAIT);
    await expect(page.getByTestId('login-reason').textContent()).resolves.toBe('You have signed out.');
    await reviewPage(page, 'login', findings);

    await page.getByLabel('Email').fill(OWNER.email);
    await page.getByLabel('Password').fill(OWNER.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Sites', level: 1 }).waitFor(WAIT);
    await page.locator('.site-card').first().waitFor(WAIT);
    await reviewPage(page, 'sites', findings);

    // The server forgets the session (as at expiry): the next call answers 401.
    await context.clearCookies();
    await page.getByRole('link', { name: new RegExp(shop.hostname) }).click();
    await page.waitForURL(`${instance.url}/login`, WAIT);
    await expect(page.getByTestId('login-reason').textContent()).resolves.toBe('Your session has ended. Sign in again to continue.');

    await page.goto(`${instance.url}/login`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor(WAIT);
    await expect(page.getByTestId('login-reason').count()).resolves.toBe(0);
  }, 60_000);

  it('has no serious accessibility violations on the pages it visited', () => {
    expect(findings).toEqual([]);
  });

  it('made no request outside the instance’s origin, and loaded its font from it', () => {
    expect(requests.length).toBeGreaterThan(50);
    expect(foreignRequests(requests, instance.url)).toEqual([]);
    expect(requests.some((url) => url.startsWith(`${instance.url}/assets/`) && url.endsWith('.woff2'))).toBe(true);
    expect(requests.some((url) => url.startsWith(`${instance.url}/api/favicon/`))).toBe(true);
  });
});
