// Mail in the dashboard, in real Chromium against a real SMTP server on loopback: a forgotten
// password (the link on the login page, the mail read from the server, the reset page, signing in
// with the new password), and an email address change confirmed from its mail.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from '../support/browser.ts';
import { type AxeFinding, foreignRequests, logRequests, reviewPage, signInAs } from '../support/dashboard.ts';
import { type Instance, request, startInstance } from '../support/instance.ts';
import { linkIn, type SmtpCapture, startSmtpCapture } from '../support/smtp-capture.ts';

const OWNER = { email: 'owner@example.com', password: 'correct horse battery' };
const NEW_PASSWORD = 'a brand new staple';
const NEW_EMAIL = 'owner@example.net';
const WAIT = { timeout: 15_000 };

let smtp: SmtpCapture;
let instance: Instance;
let base: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const requests: string[] = [];
const findings: AxeFinding[] = [];

beforeAll(async () => {
  smtp = await startSmtpCapture();
  instance = await startInstance({
    env: { PLUMB_SMTP_URL: smtp.url, PLUMB_MAIL_FROM: 'plumb@example.org', PLUMB_MAIL_SWEEP_SECONDS: '1', PLUMB_LOGIN_RATE_PER_MINUTE: '1000', PLUMB_LOGIN_BURST: '1000' },
  });
  // The mailed links name the public URL, which defaults to localhost and the port.
  base = instance.url.replace('127.0.0.1', 'localhost');
  const created = await request(`${instance.url}/api/initial-user`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(OWNER) });
  expect(created.status).toBe(201);
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  logRequests(context, requests);
  page = await context.newPage();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await instance?.destroy();
  await smtp?.close();
});

describe('a forgotten password in the dashboard', () => {
  it('asks for a link on the login page, sets a new password from the mailed link, and signs in with it', async () => {
    await page.goto(`${base}/login`);
    await page.getByRole('link', { name: 'Forgot password?' }).click();
    await page.getByRole('heading', { name: 'Forgot password', level: 1 }).waitFor(WAIT);
    await reviewPage(page, 'forgot-password', findings);
    await page.getByLabel('Email').fill(OWNER.email);
    await page.getByRole('button', { name: 'Send reset link' }).click();
    await page.getByTestId('forgot-sent').waitFor(WAIT);

    const [mail] = await smtp.waitFor(OWNER.email, 1);
    expect(mail.subject).toBe('Reset your Plumb password');
    const link = linkIn(mail, '/reset-password?token=');
    expect(link.startsWith(`${base}/reset-password?token=`)).toBe(true);

    await page.goto(link);
    await page.getByRole('heading', { name: 'Choose a new password', level: 1 }).waitFor(WAIT);
    await reviewPage(page, 'reset-password', findings);
    await page.getByLabel('Password (at least 10 characters)').fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByTestId('reset-done').waitFor(WAIT);

    await signInAs(page, { email: OWNER.email, password: NEW_PASSWORD }, base);
    const notice = await smtp.waitFor(OWNER.email, 2);
    expect(notice.map((m) => m.subject)).toContain('Your Plumb password was changed');
  }, 90_000);

  it('says a used link is used', async () => {
    const [mail] = await smtp.waitFor(OWNER.email, 1);
    const fresh = await context.newPage();
    await fresh.goto(linkIn(mail, '/reset-password?token='));
    await fresh.getByLabel('Password (at least 10 characters)').fill('yet another password');
    await fresh.getByRole('button', { name: 'Set password' }).click();
    await fresh.getByRole('alert').filter({ hasText: 'token is invalid, used or expired' }).waitFor(WAIT);
    await fresh.close();
  }, 30_000);
});

describe('changing the email address in the dashboard', () => {
  it('sends a confirmation to the new address and changes it once the mailed link is opened', async () => {
    await page.goto(`${base}/account`);
    await page.getByRole('heading', { name: 'Email address', level: 2 }).waitFor(WAIT);
    await page.getByLabel('New email address').fill(NEW_EMAIL);
    await page.locator('input[name="email-password"]').fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Change email' }).click();
    await page.getByText(`A confirmation link was sent to ${NEW_EMAIL}.`).waitFor(WAIT);

    const [mail] = await smtp.waitFor(NEW_EMAIL, 1);
    await page.goto(linkIn(mail, '/confirm-email?token='));
    await page.getByRole('button', { name: 'Confirm this address' }).click();
    await page.getByTestId('email-confirmed').waitFor(WAIT);
    // The session goes on, under the new address; signing in again takes the new address.
    await page.goto(`${base}/account`);
    await page.getByText(`${NEW_EMAIL} · instance owner`).waitFor(WAIT);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByTestId('login-reason').waitFor(WAIT);
    await signInAs(page, { email: NEW_EMAIL, password: NEW_PASSWORD }, base);
  }, 60_000);

});

describe('the system page, and every page seen', () => {
  it('shows the mail queue on the system page', async () => {
    await page.goto(`${base}/admin/system`);
    const figure = page.getByTestId('system-mail');
    await figure.waitFor(WAIT);
    expect(await page.locator('.kpi', { has: figure }).locator('.kpi-label').textContent()).toBe('Mail queued');
    expect(await figure.textContent()).toMatch(/^\d+$/);
  }, 30_000);

  it('breaks no accessibility rule and asks nothing of another origin', () => {
    expect(findings).toEqual([]);
    expect(foreignRequests(requests, base)).toEqual([]);
  });
});
