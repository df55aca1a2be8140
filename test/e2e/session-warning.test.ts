// The session warning in real Chromium: with a 1-minute session and a 30-second lead, the
// dashboard announces the coming end in a live region, offers a focusable "Stay signed in"
// button, and that one action extends the session on the server; left alone, the session ends
// and the login screen says so.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/browser.ts';
import { signInAs } from '../support/dashboard.ts';
import { type Instance, request, startInstance } from '../support/instance.ts';

const OWNER = { email: 'owner@example.com', password: 'correct horse battery' };

let instance: Instance;
let browser: Browser;
let page: Page;

interface SessionAnswer {
  expires_at: string;
  warning_seconds: number;
  duration_seconds: number;
}

/** The session as the server reports it to the signed-in page. */
const sessionOf = (p: Page) =>
  p.evaluate(async () => {
    const res = await fetch('/api/auth/session', { credentials: 'same-origin' });
    return (await res.json()) as SessionAnswer;
  });

beforeAll(async () => {
  instance = await startInstance({ env: { PLUMB_AUTH_SESSION_MINUTES: '1', PLUMB_AUTH_SESSION_WARNING_SECONDS: '30' } });
  const created = await request(`${instance.url}/api/initial-user`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(OWNER) });
  expect(created.status).toBe(201);
  browser = await launchChromium();
  page = await browser.newPage();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await instance?.destroy();
});

describe('the session warning', () => {
  it('is announced before the session ends, and "Stay signed in" extends the session', async () => {
    await signInAs(page, OWNER, instance.url);

    const before = await sessionOf(page);
    expect(before).toMatchObject({ duration_seconds: 60, warning_seconds: 30 });
    const signedInAt = Date.now();
    // The countdown is on screen from the start, the warning is not.
    await expect(page.getByTestId('session-remaining').textContent()).resolves.toMatch(/^Signed out in (0:[3-5]\d|1:00)$/);
    await expect(page.getByRole('alert').count()).resolves.toBe(0);

    const alert = page.getByRole('alert');
    await alert.waitFor({ timeout: 45_000 });
    const shownAfter = (Date.now() - signedInAt) / 1000;
    // About 30 s before expiry: 60 s − 30 s after signing in, give or take the page's timing.
    expect(shownAfter).toBeGreaterThan(20);
    expect(shownAfter).toBeLessThan(40);
    await expect(alert.textContent()).resolves.toContain('Your session is about to end.');
    // Inside a live region that existed before the warning, so screen readers announce it.
    await expect(alert.evaluate((el) => el.parentElement?.getAttribute('aria-live'))).resolves.toBe('assertive');

    const stay = alert.getByRole('button', { name: 'Stay signed in' });
    await stay.focus();
    await expect(stay.evaluate((el) => el === document.activeElement)).resolves.toBe(true);
    await page.keyboard.press('Enter');
    await alert.waitFor({ state: 'detached', timeout: 10_000 });

    const after = await sessionOf(page);
    const left = (Date.parse(after.expires_at) - Date.now()) / 1000;
    expect(Date.parse(after.expires_at)).toBeGreaterThan(Date.parse(before.expires_at));
    expect(left).toBeGreaterThan(50);
    expect(left).toBeLessThanOrEqual(61);
    await expect(page.getByTestId('session-remaining').textContent()).resolves.toMatch(/^Signed out in (0:5\d|1:00)$/);
  }, 90_000);

  it('ends at expiry when nobody stays: the login screen says the session ended', async () => {
    const { expires_at } = await sessionOf(page);
    const left = Date.parse(expires_at) - Date.now();
    await page.getByRole('alert').waitFor({ timeout: left });
    await page.waitForURL(`${instance.url}/login`, { timeout: left + 15_000 });
    // Not before the end: the countdown asks the server only once it reaches zero.
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(expires_at) - 1000);
    await expect(page.getByTestId('login-reason').textContent()).resolves.toBe('Your session has ended. Sign in again to continue.');
    const res = await page.evaluate(async () => (await fetch('/api/auth/session')).status);
    expect(res).toBe(401);
  }, 90_000);
});
