// The visual check of the dashboard: every main screen of a lived-in instance, in light and dark
// mode, 1366 px and 360 px wide, screenshotted into test-output/screenshots/<screen>-<theme>-<width>.png
// for review, and failed on horizontal overflow, overlapping text-bearing elements, text cut off
// by its own box, table cells out of line with their row, short labels on two lines and separators
// starting a line (test/support/layout-check.ts). The check is first proved on a page built to fail it.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, BrowserContext, Page, Request } from 'playwright-core';
import { launchChromium } from '../support/browser.ts';
import { BROWSER_DRIVEN_ENV, SCREENSHOTS } from '../support/dashboard.ts';
import { describeProblems, layoutProblems } from '../support/layout-check.ts';
import { type Instance, startInstance } from '../support/instance.ts';
import { OWNER, SHARE_PASSWORD, type SeededInstance, seedInstance } from '../support/seeded-instance.ts';

const VIEWPORTS = [
  { width: 1366, height: 900 },
  { width: 360, height: 780 },
] as const;
const THEMES = ['light', 'dark'] as const;
const WAIT = { timeout: 15_000 };

let browser: Browser;

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  browser = await launchChromium();
}, 30_000);

afterAll(async () => {
  await browser?.close();
});

describe('the layout check', () => {
  let page: Page;
  beforeAll(async () => {
    page = await browser.newPage({ viewport: { width: 800, height: 600 } });
  });
  afterAll(() => page.close());

  it('names a box wider than the window, two buttons on top of each other, a button over a field’s text, text cut off by its box, a cell out of line with its row, a button name on two lines, and a separator left at the start of a line', async () => {
    await page.setContent(`<!doctype html><html><body style="margin:0;font:16px sans-serif">
      <div class="banner" style="width:900px;height:40px">Too wide</div>
      <div style="position:relative;height:60px">
        <button id="save" style="position:absolute;left:10px;top:10px;width:120px;height:30px">Save</button>
        <button id="delete" style="position:absolute;left:60px;top:20px;width:120px;height:30px">Delete</button>
      </div>
      <span class="name" style="display:block;width:80px;overflow:hidden;white-space:nowrap">A name far too long for its box</span>
      <div style="position:relative;width:200px;height:30px"><input id="zone" value="Europe/Berlin" style="width:200px;height:30px;padding:0 4px;border:0;box-sizing:border-box"><button id="toggle" style="position:absolute;right:0;top:0;width:30px;height:30px;border:0"></button></div>
      <table style="border-collapse:collapse"><tr><th style="height:40px;padding:0">Goal</th><td class="actions" style="display:flex"><button>Edit</button></td></tr></table>
      <button class="narrow" style="width:60px">Add a member</button>
      <style>.meta > span + span::before { content: "·"; margin-right: 4px; }</style>
      <p class="meta" style="display:flex;flex-wrap:wrap;gap:0 4px;width:200px;margin:0"><span>Oct 26 – Nov 24, 2026</span><span class="zone">Times in Europe/Berlin</span></p>
    </body></html>`);
    const messages = describeProblems('sample · light · 800px', await layoutProblems(page));
    expect(messages).toEqual([
      'sample · light · 800px: page-overflow: the page is 900px wide in a 800px window',
      'sample · light · 800px: beyond-edge: div.banner "Too wide" [0,0 900×40] — ends 100px beyond the 800px window',
      'sample · light · 800px: overlap: button#save "Save" [10,50 120×30] ⟷ button#delete "Delete" [60,60 120×30] — these two share pixels',
      'sample · light · 800px: overlap: input#zone "Europe/Berlin" [4,118 192×30] ⟷ button#toggle [170,118 30×30] — these two share pixels',
      expect.stringMatching(/^sample · light · 800px: clipped-text: span\.name "A name far too long for its box" \[0,100 80×\d+\] — its text needs (1\d\d|2\d\d)px and gets 80px$/),
      expect.stringMatching(/^sample · light · 800px: misaligned-cell: table > tbody > tr > td\.actions "Edit" \[\d+,\d+ \d+×\d+\] — the cell is display: flex, not a table cell, so its border is out of line$/),
      expect.stringMatching(/^sample · light · 800px: wrapped-label: button\.narrow "Add a member" \[0,\d+ 60×\d+\] — its text takes [23] lines$/),
      expect.stringMatching(/^sample · light · 800px: dangling-separator: p\.meta > span\.zone "Times in Europe\/Berlin" \[0,\d+ \d+×\d+\] — the "·" before it starts a line$/),
    ]);
  });

  it('lets pass what is meant: a table that scrolls sideways, a tooltip over a button, an ellipsis, a label around its input, a button in a field’s padding, an icon button named for screen readers, a separator within a line', async () => {
    await page.setContent(`<!doctype html><html><body style="margin:0;font:16px sans-serif">
      <div style="overflow-x:auto"><table style="width:1200px;border-collapse:collapse"><tr><th style="border:1px solid">Page</th><td style="border:1px solid">1,204</td></tr></table></div>
      <div style="position:relative;height:60px">
        <button>Details</button>
        <span role="tooltip" style="position:absolute;left:0;top:5px">Opens the details</span>
      </div>
      <p style="width:80px;overflow:hidden;white-space:nowrap;text-overflow:ellipsis">A long name shortened with an ellipsis</p>
      <label>Email <input value="someone@example.com"></label>
      <div style="position:relative;width:240px"><input value="Europe/Berlin" style="width:240px;padding-right:36px;box-sizing:border-box"><button aria-label="Show the list" style="position:absolute;right:2px;top:2px;width:30px;height:20px"></button></div>
      <span style="position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap">Read by screen readers only</span>
      <table style="border-collapse:collapse"><tr><th style="height:40px">Goal</th><td><button>Edit</button> <button>Delete</button></td></tr></table>
      <button style="width:40px;height:40px"><svg width="16" height="16"></svg><span style="position:absolute;width:1px;height:1px;overflow:hidden">Remove the filter Source is Google</span></button>
      <style>.meta > span + span::before { content: "·"; margin-right: 4px; }</style>
      <p class="meta" style="display:flex;gap:0 4px;margin:0"><span>Oct 26 – Nov 24, 2026</span><span>Times in Europe/Berlin</span></p>
    </body></html>`);
    expect(await layoutProblems(page)).toEqual([]);
  });
});

describe('every main screen, light and dark, 1366 and 360 px wide', () => {
  let instance: Instance;
  let seeded: SeededInstance;
  let visitor: BrowserContext;
  let owner: BrowserContext;
  let anonymous: Page;
  let signedIn: Page;
  let setupProblems: string[];
  const inFlight = new Map<Page, number>();

  /** Follows the page's requests, so a screen is judged only once its data has arrived. */
  function track(page: Page) {
    inFlight.set(page, 0);
    const done = () => inFlight.set(page, Math.max(0, (inFlight.get(page) ?? 1) - 1));
    // A live feed (realtime's EventSource) stays open for as long as the screen does.
    const counted = (request: Request) => request.resourceType() !== 'eventsource';
    page.on('request', (request) => counted(request) && inFlight.set(page, (inFlight.get(page) ?? 0) + 1));
    page.on('requestfinished', (request) => counted(request) && done());
    page.on('requestfailed', (request) => counted(request) && done());
  }

  /** Waits for no request in flight and nothing loading for a moment, fonts loaded, and canvases redrawn. */
  async function settle(page: Page) {
    const deadline = Date.now() + 15_000;
    let quietSince = Date.now();
    while (Date.now() < deadline) {
      const loading = await page.evaluate(() => document.querySelector('.loading, [aria-busy="true"]') !== null);
      if ((inFlight.get(page) ?? 0) > 0 || loading) quietSince = Date.now();
      else if (Date.now() - quietSince >= 300) break;
      await page.waitForTimeout(50);
    }
    await page.evaluate(() => document.fonts.ready.then(() => undefined));
    await page.waitForTimeout(150);
  }

  /**
   * Screenshots of the screen as it is in both themes at both widths; answers its layout problems,
   * and those a screen's own `rule` finds (one message per problem, as the check words them).
   */
  async function judge(page: Page, screen: string, rule?: () => Promise<string[]>): Promise<string[]> {
    const messages: string[] = [];
    for (const viewport of VIEWPORTS) {
      await page.setViewportSize(viewport);
      for (const theme of THEMES) {
        await page.emulateMedia({ colorScheme: theme, reducedMotion: 'reduce' });
        await settle(page);
        const where = `${screen} · ${theme} · ${viewport.width}px`;
        messages.push(...describeProblems(where, await layoutProblems(page)));
        if (rule) messages.push(...(await rule()).map((problem) => `${where}: ${problem}`));
        await page.screenshot({ path: join(SCREENSHOTS, `${screen}-${theme}-${viewport.width}.png`), fullPage: true });
      }
    }
    await page.setViewportSize(VIEWPORTS[0]);
    await page.emulateMedia({ colorScheme: 'light' });
    return messages;
  }

  async function open(page: Page, path: string, ready: string) {
    await page.goto(`${instance.url}${path}`);
    await page.locator(ready).first().waitFor(WAIT);
  }

  beforeAll(async () => {
    instance = await startInstance({ env: { ...BROWSER_DRIVEN_ENV } });
    visitor = await browser.newContext({ viewport: VIEWPORTS[0] });
    anonymous = await visitor.newPage();
    track(anonymous);
    // Only a fresh instance shows the setup screen: it is judged before anything is seeded.
    await open(anonymous, '/setup', 'form button[type="submit"]');
    setupProblems = await judge(anonymous, 'setup');
    seeded = await seedInstance(instance);
    owner = await browser.newContext({ viewport: VIEWPORTS[0] });
    await owner.addCookies(seeded.cookies);
    signedIn = await owner.newPage();
    track(signedIn);
  }, 150_000);

  afterAll(async () => {
    await visitor?.close();
    await owner?.close();
    await instance?.destroy();
  });

  it('setup, on a fresh instance', () => {
    expect(setupProblems).toEqual([]);
  });

  it('login, and its second step for an account with an authenticator app', async () => {
    await open(anonymous, '/login', 'input[type="password"]');
    const problems = await judge(anonymous, 'login');
    await anonymous.getByLabel('Email').fill(OWNER.email);
    await anonymous.getByLabel('Password').fill(OWNER.password);
    await anonymous.getByRole('button', { name: 'Sign in', exact: true }).click();
    await anonymous.locator('input[autocomplete="one-time-code"], input[inputmode="numeric"]').first().waitFor(WAIT);
    problems.push(...(await judge(anonymous, 'login-code')));
    expect(problems).toEqual([]);
  }, 60_000);

  it('sites, and the form to add one', async () => {
    await open(signedIn, '/', '.site-card');
    const problems = await judge(signedIn, 'sites');
    await signedIn.getByRole('button', { name: 'Add a site' }).click();
    await signedIn.getByRole('heading', { name: 'Add a site' }).waitFor(WAIT);
    problems.push(...(await judge(signedIn, 'add-site')));
    expect(problems).toEqual([]);
  }, 60_000);

  it('the site dashboard, with the previous period to compare', async () => {
    await open(signedIn, `/sites/${seeded.siteId}`, '[data-testid="kpi-visitors"]');
    await signedIn.locator('.kpi-change').first().waitFor(WAIT);
    expect(await judge(signedIn, 'dashboard')).toEqual([]);
  }, 60_000);

  it('the site dashboard, filtered by a source', async () => {
    await open(signedIn, `/sites/${seeded.siteId}?filter=source:is:Google`, '[data-testid="kpi-visitors"]');
    await signedIn.getByRole('button', { name: /^Remove filter/ }).waitFor(WAIT);
    expect(await judge(signedIn, 'dashboard-filtered')).toEqual([]);
  }, 60_000);

  it('realtime', async () => {
    await open(signedIn, `/sites/${seeded.siteId}?period=realtime`, '[data-testid="live-visitors"]');
    expect(await judge(signedIn, 'realtime')).toEqual([]);
  }, 60_000);

  it('events', async () => {
    await open(signedIn, `/sites/${seeded.siteId}/events`, 'section[aria-labelledby="event-props"] .rows li');
    expect(await judge(signedIn, 'events')).toEqual([]);
  }, 60_000);

  it('goals', async () => {
    await open(signedIn, `/sites/${seeded.siteId}/goals`, '[data-testid="goals"] tbody tr');
    expect(await judge(signedIn, 'goals')).toEqual([]);
  }, 60_000);

  it('funnels, each step’s figures at the right end of its bar however its name wraps', async () => {
    await open(signedIn, `/sites/${seeded.siteId}/funnels`, '[data-testid="funnel-chart"]');
    const figuresOffTheEnd = () =>
      signedIn.evaluate(() =>
        [...document.querySelectorAll('[data-testid="funnel-chart"] > li')].flatMap((step) => {
          const figures = step.querySelector('.funnel-label > :last-child')?.getBoundingClientRect();
          const bar = step.querySelector('.funnel-track')?.getBoundingClientRect();
          if (!figures || !bar || Math.abs(figures.right - bar.right) <= 1) return [];
          return [`funnel step "${step.textContent?.trim().slice(0, 30)}": its figures end ${Math.round(bar.right - figures.right)}px before its bar`];
        }),
      );
    expect(await judge(signedIn, 'funnels', figuresOffTheEnd)).toEqual([]);
  }, 60_000);

  it('site settings', async () => {
    await open(signedIn, `/sites/${seeded.siteId}/settings`, '[data-testid="snippet"]');
    expect(await judge(signedIn, 'site-settings')).toEqual([]);
  }, 60_000);

  it('team, with its members, invitation and audit log', async () => {
    await open(signedIn, `/teams/${seeded.teamId}`, '[data-testid="audit"]');
    expect(await judge(signedIn, 'team')).toEqual([]);
  }, 60_000);

  it('account, with its security and API clients', async () => {
    await open(signedIn, '/account', 'h1');
    await signedIn.getByText('Weekly report').first().waitFor(WAIT);
    expect(await judge(signedIn, 'account')).toEqual([]);
  }, 60_000);

  it('admin users', async () => {
    await open(signedIn, '/admin/users', 'table tbody tr');
    expect(await judge(signedIn, 'admin-users')).toEqual([]);
  }, 60_000);

  it('the 404 page', async () => {
    await open(signedIn, '/no/such/page', 'h1');
    expect(await judge(signedIn, 'not-found')).toEqual([]);
  }, 60_000);

  it('a shared dashboard, and the password screen of a protected one', async () => {
    await anonymous.goto(seeded.shareUrl);
    await anonymous.locator('[data-testid="kpi-visitors"]').waitFor(WAIT);
    const problems = await judge(anonymous, 'share');
    await anonymous.goto(seeded.protectedShareUrl);
    await anonymous.getByRole('heading', { name: 'This dashboard is protected' }).waitFor(WAIT);
    problems.push(...(await judge(anonymous, 'share-password')));
    await anonymous.getByLabel('Password').fill(SHARE_PASSWORD);
    await anonymous.getByRole('button', { name: 'Open dashboard' }).click();
    await anonymous.locator('[data-testid="kpi-visitors"]').waitFor(WAIT);
    expect(problems).toEqual([]);
  }, 60_000);

  it('accepting an invitation', async () => {
    await anonymous.goto(seeded.inviteUrl);
    await anonymous.locator('input[type="password"]').waitFor(WAIT);
    expect(await judge(anonymous, 'accept-invite')).toEqual([]);
  }, 60_000);
});
