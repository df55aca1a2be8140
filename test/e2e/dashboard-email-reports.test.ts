// Email reports in the dashboard, in real Chromium against a node with an SMTP server: the Account
// page lists the person's sites with an off / weekly / monthly choice, and a choice is saved.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import { unsubscribeToken } from '../../lib/email-reports/subscriptions.ts';
import { launchChromium } from '../support/browser.ts';
import { type AxeFinding, BROWSER_DRIVEN_ENV, foreignRequests, logRequests, reviewPage, signInAs } from '../support/dashboard.ts';
import { type Instance, request, startInstance } from '../support/instance.ts';
import { type SmtpCapture, startSmtpCapture } from '../support/smtp-capture.ts';

const OWNER = { email: 'owner@example.com', password: 'correct horse battery' };
const WAIT = { timeout: 15_000 };
const JWT_SECRET = 'a test secret of the email reports page, 32+ bytes';

let smtp: SmtpCapture;
let instance: Instance;
let browser: Browser;
let page: Page;
const requests: string[] = [];
const findings: AxeFinding[] = [];

const call = (method: string, path: string, body?: unknown) =>
  page.evaluate(
    async ([method, path, body]) => {
      const res = await fetch(path, { method, headers: body === undefined ? {} : { 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    },
    [method, path, body] as const,
  );

beforeAll(async () => {
  smtp = await startSmtpCapture();
  instance = await startInstance({ env: { ...BROWSER_DRIVEN_ENV, PLUMB_SMTP_URL: smtp.url, PLUMB_MAIL_FROM: 'plumb@example.org', PLUMB_JWT_SECRET: JWT_SECRET } });
  const created = await request(`${instance.url}/api/initial-user`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(OWNER) });
  expect(created.status).toBe(201);
  browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  logRequests(context, requests);
  page = await context.newPage();
  await signInAs(page, OWNER, instance.url);
  const teams = (await call('GET', '/api/user/teams')).body.items as { id: string }[];
  for (const domain of ['reports.example', 'quiet.example']) expect((await call('POST', '/api/sites', { domain, team_id: teams[0].id, timezone: 'Europe/Paris' })).status).toBe(201);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await instance?.destroy();
  await smtp?.close();
});

describe('email reports on the Account page', () => {
  it('lists every site as off, saves weekly for one of them, and shows it again after a reload', async () => {
    await page.goto(`${instance.url}/account`);
    await page.getByRole('heading', { name: 'Email reports', level: 2 }).waitFor(WAIT);
    const reports = choice('reports.example');
    await reports.waitFor(WAIT);
    expect(await reports.inputValue()).toBe('off');
    expect(await choice('quiet.example').inputValue()).toBe('off');
    await reviewPage(page, 'account-email-reports', findings);

    await reports.selectOption('weekly');
    await page.getByTestId('email-report-saved-reports.example').waitFor(WAIT);
    const listed = await call('GET', '/api/user/email-reports');
    expect((listed.body.items as { site_domain: string; frequency: string }[]).map((s) => [s.site_domain, s.frequency])).toEqual([['reports.example', 'weekly']]);

    await page.reload();
    await choice('reports.example').waitFor(WAIT);
    // The choices appear once the subscriptions have loaded, with their saved values.
    expect(await choice('reports.example').inputValue()).toBe('weekly');
    expect(await choice('quiet.example').inputValue()).toBe('off');
  }, 60_000);

  it('opens the link of a report whose subscription has ended on a page that says so, and a forged link on its error', async () => {
    const ended = unsubscribeToken(new Uint8Array(Buffer.from(JWT_SECRET, 'utf8')), randomUUID());
    await page.goto(`${instance.url}/email-reports/unsubscribe?token=${encodeURIComponent(ended)}`);
    await page.getByTestId('unsubscribed').filter({ hasText: 'This report is already off' }).waitFor(WAIT);
    await reviewPage(page, 'email-report-unsubscribe', findings);
    await page.goto(`${instance.url}/email-reports/unsubscribe?token=${encodeURIComponent(`${randomUUID()}.forged`)}`);
    await page.getByText('This unsubscribe link is not valid').waitFor(WAIT);
    expect(await page.getByRole('button', { name: 'Unsubscribe' }).isDisabled()).toBe(true);
  }, 60_000);

  it('breaks no accessibility rule and asks nothing of another origin', () => {
    expect(findings).toEqual([]);
    expect(foreignRequests(requests, instance.url)).toEqual([]);
  });
});

/** A site's choice: the select named by its domain (the API clients form has checkboxes named so too). */
const choice = (domain: string) => page.getByRole('combobox', { name: domain, exact: true });
