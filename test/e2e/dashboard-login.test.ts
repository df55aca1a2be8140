// Every way into the dashboard in real Chromium: turning on an authenticator app and a passkey on
// the account page, then signing in with password + TOTP code, with password + a recovery code,
// and with the passkey alone (Chromium's virtual authenticator, which verifies its user).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from '../support/browser.ts';
import { type AxeFinding, foreignRequests, logRequests, reviewPage } from '../support/dashboard.ts';
import { type Instance, request, startInstance } from '../support/instance.ts';
import { totpAt } from '../support/totp.ts';

const OWNER = { email: 'owner@example.com', password: 'correct horse battery' };
const WAIT = { timeout: 15_000 };

let instance: Instance;
let base: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let secret: string;
let recoveryCodes: string[];
const requests: string[] = [];
const findings: AxeFinding[] = [];

async function signInWithPassword() {
  await page.goto(`${base}/login`);
  await page.getByLabel('Email').fill(OWNER.email);
  await page.getByLabel('Password').fill(OWNER.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

const signedIn = () => page.getByRole('heading', { name: 'Sites', level: 1 }).waitFor(WAIT);

async function signOut() {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByTestId('login-reason').waitFor(WAIT);
}

beforeAll(async () => {
  // The sign-in bucket is not under test here; this file signs in many times within a minute.
  instance = await startInstance({ env: { PLUMB_LOGIN_RATE_PER_MINUTE: '1000', PLUMB_LOGIN_BURST: '1000' } });
  // Passkeys are bound to the public URL's host name, which defaults to localhost.
  base = instance.url.replace('127.0.0.1', 'localhost');
  const created = await request(`${instance.url}/api/initial-user`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(OWNER) });
  expect(created.status).toBe(201);
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  logRequests(context, requests);
  page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await instance?.destroy();
});

describe('signing in to the dashboard', () => {
  it('turns on an authenticator app on the account page and shows the recovery codes once', async () => {
    await signInWithPassword();
    await signedIn();
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
    const key = page.locator('p', { hasText: 'Key:' }).locator('code');
    await key.waitFor(WAIT);
    secret = (await key.textContent()) ?? '';
    expect(secret).toMatch(/^[A-Z2-7]{16,}$/);
    await expect(page.getByRole('img', { name: 'QR code of the authenticator key' }).locator('svg').count()).resolves.toBe(1);
    await page.getByLabel('Code from your app').fill(totpAt(secret, Date.now() / 1000));
    await page.getByRole('button', { name: 'Turn on' }).click();
    await page.getByTestId('recovery-codes').waitFor(WAIT);
    recoveryCodes = await page.getByTestId('recovery-codes').locator('code').allTextContents();
    expect(recoveryCodes).toHaveLength(10);
    await page.getByText('Authenticator app: on').waitFor(WAIT);
    await reviewPage(page, 'account-two-factor', findings);
  }, 60_000);

  it('adds a passkey on the account page', async () => {
    await page.getByLabel('Name (optional)').fill('Test laptop');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.locator('section[aria-labelledby="passkeys"]').getByText('Test laptop').waitFor(WAIT);
  }, 30_000);

  it('asks for the authenticator code after the password', async () => {
    await signOut();
    await signInWithPassword();
    await page.getByRole('heading', { name: 'Second factor' }).waitFor(WAIT);
    await reviewPage(page, 'login-second-factor', findings);
    await page.getByLabel('Code from your authenticator app').fill('000000');
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('alert').waitFor(WAIT);
    // Enrolment used the current 30-second step; the next step's code is within the accepted drift.
    await page.getByLabel('Code from your authenticator app').fill(totpAt(secret, Date.now() / 1000 + 30));
    await page.getByRole('button', { name: 'Verify' }).click();
    await signedIn();
  }, 30_000);

  it('takes a recovery code instead, once', async () => {
    await signOut();
    await signInWithPassword();
    await page.getByRole('button', { name: 'Use a recovery code instead' }).click();
    await page.getByLabel('One of your recovery codes').fill(recoveryCodes[0]);
    await page.getByRole('button', { name: 'Verify' }).click();
    await signedIn();
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByText('9 recovery codes left').waitFor(WAIT);
  }, 30_000);

  it('signs in with the passkey alone', async () => {
    await signOut();
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await signedIn();
    const session = await page.evaluate(async () => (await fetch('/api/auth/session')).json());
    expect(session.user.email).toBe(OWNER.email);
  }, 30_000);

  it('invites a team member by email, whose invitation link creates the account and signs it in', async () => {
    const teamLink = page.getByRole('link', { name: 'Team' });
    await teamLink.click();
    const add = page.locator('form[aria-label="Add a member"]');
    await add.getByLabel('Email').fill('colleague@example.com');
    await add.getByRole('button', { name: 'Invite' }).click();
    const invite = await page.getByLabel('Invitation link').inputValue();
    expect(invite).toMatch(new RegExp(`^${base}/invite/[A-Za-z0-9_-]{20,}$`));
    await page.getByText('colleague@example.com (member').waitFor(WAIT);

    const colleague = await browser.newContext();
    logRequests(colleague, requests);
    const tab = await colleague.newPage();
    await tab.goto(invite);
    await tab.getByLabel(/^Password/).fill('another long password');
    await tab.getByRole('button', { name: 'Create account and join' }).click();
    await tab.getByRole('heading', { name: 'Sites', level: 1 }).waitFor(WAIT);
    await expect(tab.getByTestId('session-remaining').count()).resolves.toBe(1);
    await colleague.close();
  }, 30_000);

  it('invites someone who already has an account: nothing changes until they accept on their Sites page', async () => {
    const partner = { email: 'partner@example.com', password: 'partner long password' };
    const made = await page.evaluate(async (body) => (await fetch('/api/admin/users', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ ...body, role: 'user' }) })).status, partner);
    expect(made).toBe(201);
    await page.getByRole('link', { name: 'Team' }).click();
    const add = page.locator('form[aria-label="Add a member"]');
    await add.getByLabel('Email').fill(partner.email);
    await add.getByRole('button', { name: 'Invite' }).click();
    await page.getByText(`${partner.email} (member`).waitFor(WAIT);

    const other = await browser.newContext();
    logRequests(other, requests);
    const tab = await other.newPage();
    await tab.goto(`${base}/login`);
    await tab.getByLabel('Email').fill(partner.email);
    await tab.getByLabel('Password').fill(partner.password);
    await tab.getByRole('button', { name: 'Sign in', exact: true }).click();
    const invitations = tab.getByTestId('pending-invitations');
    await invitations.getByText(`${OWNER.email} invites you to join the team`).waitFor(WAIT);
    expect(await tab.evaluate(async () => (await (await fetch('/api/user/teams')).json()).items.length)).toBe(0);
    await invitations.getByRole('button', { name: 'Accept' }).click();
    await invitations.waitFor({ state: 'detached', ...WAIT });
    expect(await tab.evaluate(async () => (await (await fetch('/api/user/teams')).json()).items.map((t: { role: string }) => t.role))).toEqual(['member']);
    await other.close();
  }, 30_000);

  it('has no serious accessibility violations, and made no request elsewhere', () => {
    expect(findings).toEqual([]);
    expect(foreignRequests(requests, base)).toEqual([]);
  });
});
