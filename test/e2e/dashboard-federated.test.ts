// Signing in through other providers in real Chromium, against real providers on loopback: the
// general OpenID provider and the directory (panva's oidc-provider), the GitHub double, and a
// team's own OpenID provider for single sign-on. The person clicks the button on the login page,
// signs in on the provider's page, and lands signed in (or at the TOTP step when enrolled); links
// and unlinks providers on the account page; connects the team's single sign-on in team settings.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/browser.ts';
import { BROWSER_DRIVEN_ENV, reviewLayouts, signInAs } from '../support/dashboard.ts';
import { type GitHubDouble, startGitHubDouble } from '../support/github-double.ts';
import { freePort, type Instance, request, startInstance } from '../support/instance.ts';
import { type OidcTestProvider, startOidcTestProvider } from '../support/oidc-test-provider.ts';
import { totpAt } from '../support/totp.ts';

const OWNER = { email: 'owner@example.com', password: 'correct horse battery' };
const WAIT = { timeout: 15_000 };

let instance: Instance;
let base: string;
let browser: Browser;
let page: Page;
let google: OidcTestProvider;
let entra: OidcTestProvider;
let teamIdp: OidcTestProvider;
let github: GitHubDouble;
let teamId: string;
let inviteUrl: string;

/** A new browser context: nobody signed in. */
async function freshPage() {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
}

const signedIn = () => page.getByRole('heading', { name: 'Sites', level: 1 }).waitFor(WAIT);

/** Signs in at an OpenID test provider's page. */
async function atProvider(account: string) {
  await page.getByLabel('Account').fill(account);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

async function ownerCookie() {
  const res = await fetch(`${instance.url}/api/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(OWNER) });
  return res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
}

beforeAll(async () => {
  const [googlePort, entraPort, githubPort, teamPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  instance = await startInstance({
    env: {
      ...BROWSER_DRIVEN_ENV,
      PLUMB_LOGIN_RATE_PER_MINUTE: '1000',
      PLUMB_LOGIN_BURST: '1000',
      PLUMB_SSO_ALLOW_PRIVATE: 'true',
      PLUMB_OIDC_GOOGLE_ISSUER: `http://127.0.0.1:${googlePort}`,
      PLUMB_OIDC_GOOGLE_CLIENT_ID: 'plumb-google',
      PLUMB_OIDC_GOOGLE_CLIENT_SECRET: 'google-secret',
      PLUMB_OIDC_ENTRA_ISSUER: `http://127.0.0.1:${entraPort}`,
      PLUMB_OIDC_ENTRA_CLIENT_ID: 'plumb-entra',
      PLUMB_OIDC_ENTRA_CLIENT_SECRET: 'entra-secret',
      PLUMB_GITHUB_CLIENT_ID: 'github-test-client',
      PLUMB_GITHUB_CLIENT_SECRET: 'github-test-secret',
      PLUMB_GITHUB_OAUTH_URL: `http://127.0.0.1:${githubPort}`,
      PLUMB_GITHUB_API_URL: `http://127.0.0.1:${githubPort}`,
    },
  });
  // The public URL defaults to localhost: the browser uses that name, so the cookies match.
  base = instance.url.replace('127.0.0.1', 'localhost');
  google = await startOidcTestProvider({ port: googlePort, clientId: 'plumb-google', clientSecret: 'google-secret', redirectUris: [`${base}/api/auth/oauth/google/callback`] });
  entra = await startOidcTestProvider({ port: entraPort, clientId: 'plumb-entra', clientSecret: 'entra-secret', redirectUris: [`${base}/api/auth/oauth/entra/callback`] });
  teamIdp = await startOidcTestProvider({ port: teamPort, clientId: 'plumb-team', clientSecret: 'team-secret', redirectUris: [`${base}/api/auth/sso/callback`] });
  github = await startGitHubDouble(githubPort);
  const created = await request(`${instance.url}/api/initial-user`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(OWNER) });
  expect(created.status).toBe(201);
  const teams = await fetch(`${instance.url}/api/user/teams`, { headers: { Cookie: await ownerCookie() } });
  teamId = ((await teams.json()) as { items: { id: string }[] }).items[0].id;
  const invited = await fetch(`${instance.url}/api/user/teams/${teamId}/members`, {
    method: 'POST',
    headers: { Cookie: await ownerCookie(), 'Content-Type': 'application/json' },
    body: JSON.stringify({ email: 'newcomer@example.com', role: 'member' }),
  });
  inviteUrl = ((await invited.json()) as { invite_url: string }).invite_url.replace('127.0.0.1', 'localhost');
  browser = await launchChromium();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await instance?.destroy();
  await Promise.all([google?.close(), entra?.close(), teamIdp?.close(), github?.close()]);
});

describe('signing in with other providers', () => {
  it('shows a button for each enabled provider and signs in with the general provider', async () => {
    google.setAccount('owner-at-google', { email: OWNER.email, email_verified: true });
    await freshPage();
    await page.goto(`${base}/login`);
    await page.getByRole('button', { name: 'Sign in with GitHub' }).waitFor(WAIT);
    await expect(page.getByRole('button', { name: /^Sign in with / }).allTextContents()).resolves.toEqual([
      ' Sign in with a passkey',
      'Sign in with Google',
      'Sign in with Microsoft',
      'Sign in with GitHub',
    ]);
    expect(await reviewLayouts(page, 'login-providers')).toEqual([]);
    await page.getByRole('button', { name: 'Sign in with Google' }).click();
    await atProvider('owner-at-google');
    await signedIn();
    expect(new URL(page.url()).origin).toBe(base);
  }, 60_000);

  it('signs in with GitHub', async () => {
    github.setAccount('octo-owner', { id: 583231, emails: [{ email: OWNER.email, primary: true, verified: true }] });
    await freshPage();
    await page.goto(`${base}/login`);
    await page.getByRole('button', { name: 'Sign in with GitHub' }).click();
    await page.getByLabel('Login').fill('octo-owner');
    await page.getByRole('button', { name: 'Authorize' }).click();
    await signedIn();
  }, 60_000);

  it('explains on the login page why a provider sign-in was refused', async () => {
    google.setAccount('unverified', { email: OWNER.email, email_verified: false });
    await freshPage();
    await page.goto(`${base}/login`);
    await page.getByRole('button', { name: 'Sign in with Google' }).click();
    await atProvider('unverified');
    await expect(page.getByTestId('signin-error').textContent()).resolves.toBe('The provider did not confirm a verified email address for your account.');
    // The address bar forgets the reason, so a reload shows a plain login page.
    await page.waitForURL(`${base}/login`, WAIT);
    await expect(page.getByTestId('signin-error').isVisible()).resolves.toBe(true);
  }, 60_000);

  it('links the directory on the account page, then signs in with it', async () => {
    entra.setAccount('owner-in-directory', { email: 'owner@corp.example', email_verified: true, tid: 'tenant', oid: 'object-1' });
    await freshPage();
    await signInAs(page, OWNER, base);
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByRole('button', { name: 'Link Microsoft' }).click();
    await atProvider('owner-in-directory');
    await page.waitForURL(`${base}/account**`, WAIT);
    await page.getByText('The provider is linked: you can sign in with it now.').waitFor(WAIT);
    await page.getByText('owner@corp.example', { exact: false }).waitFor(WAIT);
    expect(await reviewLayouts(page, 'account-sign-in-providers')).toEqual([]);
    await freshPage();
    await page.goto(`${base}/login`);
    await page.getByRole('button', { name: 'Sign in with Microsoft' }).click();
    await atProvider('owner-in-directory');
    await signedIn();
  }, 60_000);

  it('unlinks a provider on the account page', async () => {
    await page.goto(`${base}/account`);
    await page.getByRole('button', { name: 'Unlink GitHub' }).click();
    await page.getByRole('button', { name: 'Link GitHub' }).waitFor(WAIT);
  }, 60_000);

  it('asks for the TOTP code after the provider when the account has TOTP on', async () => {
    const cookie = await ownerCookie();
    const start = await fetch(`${instance.url}/api/user/security/totp/setup/start`, { method: 'POST', headers: { Cookie: cookie, 'Content-Type': 'application/json' }, body: '{}' });
    const { secret } = (await start.json()) as { secret: string };
    const verify = await fetch(`${instance.url}/api/user/security/totp/setup/verify`, {
      method: 'POST',
      headers: { Cookie: cookie, 'Content-Type': 'application/json' },
      body: JSON.stringify({ code: totpAt(secret, Date.now() / 1000) }),
    });
    expect(verify.status).toBe(200);
    await freshPage();
    await page.goto(`${base}/login`);
    await page.getByRole('button', { name: 'Sign in with Google' }).click();
    await atProvider('owner-at-google');
    await page.getByRole('heading', { name: 'Second factor' }).waitFor(WAIT);
    expect(new URL(page.url()).hash).toBe('');
    await page.getByLabel('Code from your authenticator app').fill(totpAt(secret, Date.now() / 1000 + 30));
    await page.getByRole('button', { name: 'Verify' }).click();
    await signedIn();
  }, 60_000);
});

describe('team single sign-on', () => {
  it('is connected in team settings and signs a new colleague in from the login page', async () => {
    // The owner is signed in on `page` since the TOTP step.
    await page.goto(`${base}/teams/${teamId}`);
    const form = page.getByRole('form', { name: 'Single sign-on' });
    await form.getByLabel('Issuer URL').fill(teamIdp.issuer);
    await form.getByLabel('Client id').fill('plumb-team');
    await form.getByLabel('Client secret').fill('team-secret');
    await form.getByLabel('Allowed email domains (comma-separated)').fill('colleagues.example');
    await form.getByLabel(/Just-in-time membership/).check();
    await form.getByRole('button', { name: 'Connect single sign-on' }).click();
    await form.getByRole('button', { name: 'Save single sign-on' }).waitFor(WAIT);
    await form.getByRole('button', { name: 'Test discovery' }).click();
    await form.getByText('The discovery document is usable').waitFor(WAIT);
    await expect(form.getByLabel(/Client secret/).inputValue()).resolves.toBe('');
    expect(await reviewLayouts(page, 'team-single-sign-on')).toEqual([]);

    teamIdp.setAccount('new-colleague', { email: 'kim@colleagues.example', email_verified: true });
    await freshPage();
    await page.goto(`${base}/login`);
    await page.getByRole('button', { name: 'Sign in with SSO' }).click();
    expect(await reviewLayouts(page, 'login-sso')).toEqual([]);
    await page.getByLabel('Work email').fill('kim@colleagues.example');
    await page.getByRole('button', { name: 'Continue with SSO' }).click();
    await atProvider('new-colleague');
    await signedIn();
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByText('kim@colleagues.example').first().waitFor(WAIT);
  }, 90_000);
});

describe('accepting an invitation with a provider', () => {
  it('creates the invited account from the provider on the invitation page', async () => {
    google.setAccount('newcomer-at-google', { email: 'newcomer@example.com', email_verified: true });
    await freshPage();
    await page.goto(inviteUrl);
    await page.getByRole('button', { name: 'Join with Google' }).waitFor(WAIT);
    expect(await reviewLayouts(page, 'invite-providers')).toEqual([]);
    await page.getByRole('button', { name: 'Join with Google' }).click();
    await atProvider('newcomer-at-google');
    await signedIn();
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByText('newcomer@example.com').first().waitFor(WAIT);
  }, 60_000);
});
