// The dashboard's forms and settings pages in real Chromium, as a new owner meets them: setup with
// "Keep me signed in", the labelled session countdown, adding a site (a time zone found from a few
// letters by keyboard, a pasted address cleaned to its domain, every problem under its field), the
// site settings in sections with a table of contents, copy buttons that say "Copied", recovery
// codes downloaded as a text file, an audit log that reads in names, and form rows that keep their
// labels whole at 1366 px and stack at 360 px. Screenshots (light and dark, both widths) go to
// test-output/screenshots as forms-*.png; the pages are scanned with axe-core.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from '../support/browser.ts';
import { type AxeFinding, reviewLayouts, reviewPage, signInAs } from '../support/dashboard.ts';
import { type Instance, startInstance } from '../support/instance.ts';
import { totpAt } from '../support/totp.ts';

const OWNER = { email: 'owner@example.com', password: 'correct horse battery' };
const WAIT = { timeout: 15_000 };
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;
const WIDE = { width: 1366, height: 900 };
const PHONE = { width: 360, height: 780 };

let instance: Instance;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let siteId: string;
let teamId: string;
const findings: AxeFinding[] = [];
/** Every POST /api/sites the dashboard sends. */
const siteCreations: string[] = [];

/** A JSON call from the signed-in page, with its session (and the same origin, as the dashboard's). */
async function call<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  return page.evaluate(
    async ([m, p, b]) => {
      const res = await fetch(p as string, { method: m as string, headers: b === undefined ? {} : { 'Content-Type': 'application/json' }, body: b === undefined ? undefined : JSON.stringify(b) });
      return { status: res.status, body: res.status === 204 ? null : await res.json() };
    },
    [method, path, body] as const,
  );
}

/** Light and dark screenshots and axe scans at 1366 px, then at 360 px, back at 1366 px. */
async function review(name: string) {
  await reviewPage(page, `forms-${name}-1366`, findings);
  await page.setViewportSize(PHONE);
  await reviewPage(page, `forms-${name}-360`, findings);
  await page.setViewportSize(WIDE);
}

const clipboard = () => page.evaluate(() => navigator.clipboard.readText());

/** The field's error: the element its aria-describedby names that holds the error. */
async function fieldError(label: string | RegExp): Promise<string | null> {
  const input = page.getByLabel(label, { exact: typeof label === 'string' });
  if ((await input.getAttribute('aria-invalid')) !== 'true') return null;
  const ids = ((await input.getAttribute('aria-describedby')) ?? '').split(' ').filter(Boolean);
  for (const id of ids) {
    const el = page.locator(`[id="${id}"].field-error`);
    if ((await el.count()) > 0) return el.textContent();
  }
  return null;
}

beforeAll(async () => {
  instance = await startInstance({ timeoutMs: 150_000, env: { PLUMB_API_RATE_PER_SECOND: '1000', PLUMB_API_BURST: '1000', PLUMB_LOGIN_RATE_PER_MINUTE: '1000', PLUMB_LOGIN_BURST: '1000' } });
  browser = await launchChromium();
  // The browser's zone is the add-site form's default; Paris is not the zone the test then picks.
  context = await browser.newContext({ viewport: WIDE, timezoneId: 'Europe/Paris', locale: 'en-US', acceptDownloads: true });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: instance.url });
  page = await context.newPage();
  page.on('request', (r) => {
    if (r.method() === 'POST' && new URL(r.url()).pathname === '/api/sites') siteCreations.push(r.postData() ?? '');
  });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await instance?.destroy();
});

describe('setup and the session in the header', () => {
  it('offers "Keep me signed in" on the setup screen, and a remembered owner is told until when', async () => {
    await page.goto(`${instance.url}/`);
    await page.waitForURL(`${instance.url}/setup`, WAIT);
    await page.getByLabel('Email').fill(OWNER.email);
    await page.getByLabel(/^Password/).fill(OWNER.password);
    await page.getByLabel('Keep me signed in on this device').check();
    await review('setup');
    await page.getByRole('button', { name: 'Create owner account' }).click();
    await page.getByRole('heading', { name: 'Sites', level: 1 }).waitFor(WAIT);
    const session = await call<{ remembered: boolean; remember_expires_at: string }>('GET', '/api/auth/session');
    expect(session.body.remembered).toBe(true);
    const until = new Date(session.body.remember_expires_at).toLocaleDateString('en-US', { month: 'short', day: 'numeric', year: 'numeric', timeZone: 'Europe/Paris' });
    await expect(page.getByTestId('session-remaining').textContent()).resolves.toBe(`Signed in until ${until.replace(`, ${new Date().getFullYear()}`, '')}`);
    teamId = (await call<{ items: { id: string }[] }>('GET', '/api/user/teams')).body.items[0].id;
  }, 90_000);

  it('says "Signed out in 14:58" in the header of a session that is not remembered, with a label in words', async () => {
    const plain = await browser.newContext({ viewport: WIDE });
    const tab = await plain.newPage();
    await signInAs(tab, OWNER, instance.url);
    const countdown = tab.getByRole('timer');
    await expect(countdown.textContent()).resolves.toMatch(/^Signed out in 1[45]:\d\d$/);
    await expect(countdown.getAttribute('aria-label')).resolves.toMatch(/^Signed out in 1[45] minutes( \d\d? seconds?)?$/);
    await plain.close();
  }, 60_000);
});

describe('adding a site', () => {
  it("defaults the time zone to the browser's, and finds Europe/Berlin from \"berl\" by keyboard", async () => {
    await page.getByRole('button', { name: 'Add a site' }).click();
    const zone = page.getByRole('combobox', { name: 'Time zone' });
    await expect(zone.inputValue()).resolves.toBe('Europe/Paris');
    await zone.focus();
    await page.keyboard.press('Control+A');
    await page.keyboard.type('berl');
    const list = page.getByRole('listbox', { name: 'Suggestions' });
    await list.waitFor(WAIT);
    const first = list.getByRole('option').first();
    await expect(first.textContent()).resolves.toMatch(/^Europe\/BerlinUTC\+[12]$/);
    await expect(first.getAttribute('aria-selected')).resolves.toBe('true');
    await expect(zone.getAttribute('aria-activedescendant')).resolves.toBe(await first.getAttribute('id'));
    await expect(zone.getAttribute('aria-expanded')).resolves.toBe('true');
    await page.keyboard.press('Enter');
    await expect(zone.inputValue()).resolves.toBe('Europe/Berlin');
    await expect(zone.getAttribute('aria-expanded')).resolves.toBe('false');
    await expect(list.isVisible()).resolves.toBe(false);
    // Enter picked from the list; it did not send the form.
    expect(siteCreations).toEqual([]);

    // The arrow keys walk the list; Escape closes it and goes back to the zone picked before.
    await page.keyboard.press('Control+A');
    await page.keyboard.type('lon');
    await page.keyboard.press('ArrowDown');
    const second = list.getByRole('option').nth(1);
    await expect(second.getAttribute('aria-selected')).resolves.toBe('true');
    await expect(zone.getAttribute('aria-activedescendant')).resolves.toBe(await second.getAttribute('id'));
    await page.keyboard.press('Escape');
    await expect(zone.inputValue()).resolves.toBe('Europe/Berlin');
    await review('add-site');
  }, 90_000);

  it('cleans a pasted address to its domain as the field is left', async () => {
    const domain = page.getByLabel('Domain', { exact: true });
    for (const pasted of ['https://Shop.Example.com/', 'www.shop.example.com', 'shop.example.com/path?q']) {
      await domain.fill(pasted);
      await domain.press('Tab');
      await expect(domain.inputValue()).resolves.toBe('shop.example.com');
    }
  }, 30_000);

  it('shows every problem at once, each under its field, and sends nothing while the form can see them', async () => {
    await page.getByLabel('Domain', { exact: true }).fill('not a domain');
    const zone = page.getByRole('combobox', { name: 'Time zone' });
    await zone.fill('Mars/Olympus');
    await zone.press('Tab');
    await page.getByRole('button', { name: 'Add site', exact: true }).click();
    await expect(fieldError('Domain')).resolves.toBe('“not a domain” is not a domain; enter one like example.com');
    await expect(fieldError('Time zone')).resolves.toBe('Choose a time zone from the list, e.g. Europe/Berlin');
    // Focus goes to the first field to correct.
    await expect(page.evaluate(() => document.activeElement?.getAttribute('name'))).resolves.toBe('domain');
    expect(siteCreations).toEqual([]);
    await review('add-site-errors');
  }, 90_000);

  it('puts each field the server names under that field, all of them at once', async () => {
    // The server answers a bad site with every bad field (validation_failed, fields[]); this one
    // is made up here, so the form's placing is tested whatever the server finds wrong.
    await page.route('**/api/sites', (route) =>
      route.request().method() === 'POST'
        ? route.fulfill({
            status: 400,
            contentType: 'application/json',
            body: JSON.stringify({
              message: 'Invalid request',
              code: 'validation_failed',
              fields: [
                { field: 'domain', message: 'domain is already used by another site' },
                { field: 'timezone', message: 'timezone must be an IANA time zone' },
              ],
            }),
          })
        : route.fallback(),
    );
    await page.getByLabel('Domain', { exact: true }).fill('shop.example.com');
    await page.getByRole('combobox', { name: 'Time zone' }).fill('Europe/Berlin');
    await page.getByRole('combobox', { name: 'Time zone' }).press('Tab');
    await page.getByRole('button', { name: 'Add site', exact: true }).click();
    await page.locator('.field-error', { hasText: 'already used' }).waitFor(WAIT);
    // Under its field, a message does not repeat the field's name.
    await expect(fieldError('Domain')).resolves.toBe('is already used by another site');
    await expect(fieldError('Time zone')).resolves.toBe('must be an IANA time zone');
    await page.unroute('**/api/sites');
  }, 60_000);

  it('creates the site with the cleaned domain and the picked zone', async () => {
    siteCreations.length = 0;
    await page.getByLabel('Domain', { exact: true }).fill('https://Shop.Example.com/pricing?ref=ad');
    await page.getByRole('button', { name: 'Add site', exact: true }).click();
    await page.waitForURL(/\/sites\/[0-9a-f-]{36}\/settings$/, WAIT);
    siteId = new URL(page.url()).pathname.split('/')[2];
    expect(siteCreations.map((body) => JSON.parse(body))).toEqual([{ domain: 'shop.example.com', team_id: teamId, timezone: 'Europe/Berlin' }]);
    const site = await call<{ site: { domain: string; timezone: string } }>('GET', `/api/sites/${siteId}`);
    expect(site.body.site).toMatchObject({ domain: 'shop.example.com', timezone: 'Europe/Berlin' });
  }, 60_000);
});

describe('site settings', () => {
  const SECTIONS = ['Tracking snippet', 'General', 'Goals and funnels', 'Share links', 'People', 'Import data', 'Download all data', 'Move site', 'Delete site'];

  it('is sections with a table of contents that leads to each, beside them and sticky on a wide screen', async () => {
    const toc = page.getByRole('navigation', { name: 'Settings sections' });
    await toc.waitFor(WAIT);
    await expect(toc.getByRole('link').allTextContents()).resolves.toEqual(SECTIONS);
    for (const title of SECTIONS) {
      const href = (await toc.getByRole('link', { name: title, exact: true }).getAttribute('href'))!;
      await expect(page.locator(`h2[id="${href.slice(1)}"]`).textContent()).resolves.toBe(title);
    }
    await toc.getByRole('link', { name: 'Delete site', exact: true }).click();
    await page.waitForURL(/#danger$/, WAIT);
    await page.waitForFunction(() => {
      const top = document.getElementById('danger')!.getBoundingClientRect().top;
      return top >= 0 && top < window.innerHeight;
    }, undefined, WAIT);
    // Scrolled to the last section, the table of contents is still in view, left of the sections.
    const box = (await toc.boundingBox())!;
    expect(box.y).toBeGreaterThanOrEqual(0);
    expect(box.y + box.height).toBeLessThanOrEqual(WIDE.height);
    expect(box.x + box.width).toBeLessThanOrEqual((await page.locator('section[aria-labelledby="tracking"]').boundingBox())!.x);
    await expect(toc.evaluate((el) => getComputedStyle(el).position)).resolves.toBe('sticky');

    // On a phone it sits above the first section and scrolls away with the page.
    await page.setViewportSize(PHONE);
    await page.evaluate(() => window.scrollTo(0, 0));
    await expect(toc.evaluate((el) => getComputedStyle(el).position)).resolves.toBe('static');
    const phoneToc = (await toc.boundingBox())!;
    expect(phoneToc.y + phoneToc.height).toBeLessThanOrEqual((await page.locator('section[aria-labelledby="tracking"]').boundingBox())!.y);
    await page.setViewportSize(WIDE);
  }, 60_000);

  it('links to the Goals and Funnels pages instead of a second editor', async () => {
    await expect(page.getByLabel('Goal name').count()).resolves.toBe(0);
    await expect(page.getByLabel('Funnel name').count()).resolves.toBe(0);
    await expect(page.getByRole('button', { name: /Add goal|Create funnel/ }).count()).resolves.toBe(0);
    const section = page.locator('section[aria-labelledby="goals"]');
    await expect(section.getByRole('link', { name: 'Edit goals' }).getAttribute('href')).resolves.toBe(`/sites/${siteId}/goals`);
    await expect(section.getByRole('link', { name: 'Edit funnels' }).getAttribute('href')).resolves.toBe(`/sites/${siteId}/funnels`);
    await section.getByRole('link', { name: 'Edit goals' }).click();
    await page.getByLabel('Goal name').waitFor(WAIT);
    await page.goBack();
    await page.getByRole('navigation', { name: 'Settings sections' }).waitFor(WAIT);
  }, 60_000);

  it('says in People how to add someone when nobody else has access, with a link to the team', async () => {
    const people = page.locator('section[aria-labelledby="people"]');
    await expect(people.getByText('Only you have access to this site.').isVisible()).resolves.toBe(true);
    await expect(people.getByRole('link', { name: 'invite them by email' }).getAttribute('href')).resolves.toBe(`/teams/${teamId}`);
    await review('site-settings');
  }, 90_000);
});

describe('copy buttons', () => {
  /** Waits until the button named `name` shows "Copied" beside its (hidden) name: the clipboard write is asynchronous. */
  const copied = (name: string) =>
    page.waitForFunction((label) => [...document.querySelectorAll('button')].some((b) => b.textContent === `Copied${label}`), name, { timeout: 5000 });

  it('copy the tracking snippet and say "Copied" for a moment, to screen readers too', async () => {
    const button = page.getByRole('button', { name: 'Copy snippet' });
    await button.click();
    await copied('Copy snippet');
    await expect(button.locator('[aria-hidden="true"]', { hasText: 'Copied' }).isVisible()).resolves.toBe(true);
    await expect(page.getByRole('status').filter({ hasText: /^Copied$/ }).count()).resolves.toBe(1);
    await expect(clipboard()).resolves.toBe(await page.getByTestId('snippet').textContent());
    await page.waitForFunction(() => [...document.querySelectorAll('button')].some((b) => b.textContent === 'Copy snippet'), undefined, { timeout: 5000 });
    await expect(page.getByRole('status').filter({ hasText: /^Copied$/ }).count()).resolves.toBe(0);
  }, 30_000);

  it('copy a new share link and a new API token', async () => {
    await page.getByRole('button', { name: 'Create share link' }).click();
    const url = await page.getByTestId('share-url').inputValue();
    await page.getByRole('button', { name: 'Copy link' }).click();
    await expect(clipboard()).resolves.toBe(url);
    expect(url).toMatch(new RegExp(`^${instance.url}/share/`));

    await page.getByRole('link', { name: 'Account' }).click();
    const clients = page.locator('form[aria-label="New API client"]');
    await clients.getByLabel('Name').fill('Reporting');
    await clients.getByRole('button', { name: 'Create API client' }).click();
    const token = await page.getByLabel('API token').inputValue();
    await page.getByRole('button', { name: 'Copy token' }).click();
    await copied('Copy token');
    await expect(clipboard()).resolves.toBe(token);
    expect(token).toMatch(/^plumb_/);
  }, 60_000);

  it('copy the recovery codes, and download them as a text file with the account and the date on top', async () => {
    await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
    const key = page.locator('p', { hasText: 'Key:' }).locator('code');
    await key.waitFor(WAIT);
    await page.getByLabel('Code from your app').fill(totpAt((await key.textContent()) ?? '', Date.now() / 1000));
    await page.getByRole('button', { name: 'Turn on' }).click();
    await page.getByTestId('recovery-codes').waitFor(WAIT);
    const codes = await page.getByTestId('recovery-codes').locator('code').allTextContents();
    expect(codes).toHaveLength(10);

    await page.getByRole('button', { name: 'Copy codes' }).click();
    await expect(clipboard()).resolves.toBe(codes.join('\n'));

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download as a text file' }).click()]);
    expect(download.suggestedFilename()).toBe('plumb-recovery-codes.txt');
    const text = readFileSync((await download.path())!, 'utf8');
    const today = new Date().toLocaleDateString('en-CA', { timeZone: 'Europe/Paris' });
    const [title, created, blank, ...rest] = text.split('\n');
    expect(title).toBe('Plumb recovery codes for owner@example.com');
    expect(created).toBe(`Created ${today}. Each code signs you in once, instead of a code from your authenticator app.`);
    expect(blank).toBe('');
    expect(rest).toEqual([...codes, '']);
    await review('account');
  }, 90_000);
});

describe('the audit log', () => {
  it('reads in names (goal "Pro signup" on shop.example.com, alice@example.com), with the ids on hover', async () => {
    const goal = await call<{ goal: { id: string } }>('POST', `/api/sites/${siteId}/goals`, { name: 'Pro signup', type: 'event', event_name: 'Signup' });
    expect(goal.status).toBe(201);
    const alice = await call<{ user: { id: string } }>('POST', '/api/admin/users', { email: 'alice@example.com', password: 'alice has a long password', role: 'user' });
    expect(alice.status).toBe(201);
    expect((await call('PUT', `/api/sites/${siteId}/members/${alice.body.user.id}`, { role: 'viewer' })).status).toBe(200);

    await page.getByRole('link', { name: 'Team' }).click();
    const audit = page.getByTestId('audit');
    await audit.getByText('Goal added').waitFor(WAIT);
    const row = (action: string) => audit.locator('tbody tr', { has: page.locator(`td[data-action="${action}"]`) });

    const goalRow = row('goal.created');
    await expect(goalRow.locator('td').allTextContents()).resolves.toEqual([expect.any(String), 'Goal added', 'owner@example.com', 'goal "Pro signup" on shop.example.com']);
    await expect(goalRow.locator('td').nth(1).getAttribute('title')).resolves.toBe('goal.created');
    const goalIds = (await goalRow.locator('td').nth(3).getAttribute('title'))!;
    expect(goalIds.split('\n')).toEqual([`Site shop.example.com: ${siteId}`, `Goal “Pro signup”: ${goal.body.goal.id}`]);

    const roleRow = row('site.member.updated');
    await expect(roleRow.locator('td').nth(3).textContent()).resolves.toBe('alice@example.com: role on shop.example.com: none → viewer');
    await expect(roleRow.locator('td').nth(3).getAttribute('title')).resolves.toBe(`Site shop.example.com: ${siteId}\nPerson alice@example.com: ${alice.body.user.id}`);
    await expect(row('site.created').locator('td').nth(3).textContent()).resolves.toBe('created shop.example.com');

    // Nothing in the log's text is an id.
    expect(await audit.textContent()).not.toMatch(UUID);

    // Long details take the table's spare width; the action beside them stays on one line.
    const longName = 'Pro signup from the pricing page after a thirty-day trial, on the yearly plan, paid by card';
    expect((await call('PATCH', `/api/sites/${siteId}/goals/${goal.body.goal.id}`, { name: longName })).status).toBe(200);
    await page.reload();
    await audit.getByText('Goal changed').waitFor(WAIT);
    expect(await reviewLayouts(page, 'forms-audit-long-details')).toEqual([]);
    await review('team');
  }, 90_000);
});

describe('form rows', () => {
  /** Every field label of the page's forms that is taller than one line of its text. */
  const brokenLabels = () =>
    page.evaluate(() =>
      [...document.querySelectorAll<HTMLElement>('form label.field > span:first-child')]
        .filter((el) => el.offsetParent !== null)
        .filter((el) => el.getBoundingClientRect().height > 1.5 * Number.parseFloat(getComputedStyle(el).lineHeight))
        .map((el) => el.textContent),
    );

  /** Fields of form rows narrower than their row: on a phone each takes the whole width. */
  const sideBySide = () =>
    page.evaluate(() =>
      [...document.querySelectorAll<HTMLElement>('form.inline-form > .field, form.inline-form > label.field, .form-row > .field, .inline-form > .field')]
        .filter((el) => el.offsetParent !== null)
        .filter((el) => {
          const row = el.parentElement!;
          const style = getComputedStyle(row);
          const inner = row.clientWidth - Number.parseFloat(style.paddingLeft) - Number.parseFloat(style.paddingRight);
          return el.getBoundingClientRect().width < inner - 2;
        })
        .map((el) => el.querySelector('span')?.textContent),
    );

  const pages = () => [
    ['team', `/teams/${teamId}`],
    ['account', '/account'],
    ['site settings', `/sites/${siteId}/settings`],
    ['goals', `/sites/${siteId}/goals`],
    ['funnels', `/sites/${siteId}/funnels`],
  ];

  it('keep every label on one line at 1366 px, and a goal\'s property beside its value', async () => {
    for (const [name, path] of pages()) {
      await page.goto(`${instance.url}${path}`);
      await page.locator('form').first().waitFor(WAIT);
      expect({ name, broken: await brokenLabels() }).toEqual({ name, broken: [] });
    }
    // On the Goals page: "Only when property" and "equals" share a row.
    await page.goto(`${instance.url}/sites/${siteId}/goals`);
    const property = page.getByLabel('Only when property (optional)');
    await property.waitFor(WAIT);
    const [a, b] = [(await property.boundingBox())!, (await page.getByLabel('equals').boundingBox())!];
    expect(Math.abs(a.y - b.y)).toBeLessThan(2);
  }, 90_000);

  it('stack at 360 px, each field as wide as its form, with nothing wider than the screen', async () => {
    await page.setViewportSize(PHONE);
    for (const [name, path] of pages()) {
      await page.goto(`${instance.url}${path}`);
      await page.locator('form').first().waitFor(WAIT);
      expect({ name, narrow: await sideBySide() }).toEqual({ name, narrow: [] });
      expect({ name, scrollWidth: await page.evaluate(() => document.scrollingElement!.scrollWidth) }).toEqual({ name, scrollWidth: PHONE.width });
    }
    await page.setViewportSize(WIDE);
  }, 90_000);
});

describe('accessibility', () => {
  it('has no serious accessibility violations on the screens it reviewed', () => {
    expect(findings).toEqual([]);
  });
});
