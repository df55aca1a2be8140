// Social sign-in through real providers on loopback: two OpenID providers (panva's oidc-provider,
// as the general provider and as the enterprise directory) and a double of GitHub's OAuth and REST
// endpoints. Each test walks the flow as a browser does: start at Plumb, sign in at the provider,
// come back to the callback with the flow cookie. Mail goes to a real SMTP server on loopback.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createInvitation } from '../../lib/teams/invitations.ts';
import { createUser } from '../../lib/users/users.ts';
import { as, cookiesOf, type Person, person } from '../support/accounts.ts';
import { returnTo, startAt, withParam } from '../support/federated.ts';
import { type GitHubDouble, startGitHubDouble } from '../support/github-double.ts';
import { freePort } from '../support/instance.ts';
import { type OidcTestProvider, signInAt, startOidcTestProvider } from '../support/oidc-test-provider.ts';
import { startTestNode, type TestNode } from '../support/node.ts';
import { linkIn, type SmtpCapture, startSmtpCapture } from '../support/smtp-capture.ts';
import { totpAt } from '../support/totp.ts';

let t: TestNode;
let google: OidcTestProvider;
let entra: OidcTestProvider;
let github: GitHubDouble;
let smtp: SmtpCapture;
let n = 0;
const unique = (what: string) => `${what}-${++n}-${Date.now()}`;

beforeAll(async () => {
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  google = await startOidcTestProvider({ clientId: 'plumb-google', clientSecret: 'google-secret', redirectUris: [`${publicUrl}/api/auth/oauth/google/callback`] });
  entra = await startOidcTestProvider({ clientId: 'plumb-entra', clientSecret: 'entra-secret', redirectUris: [`${publicUrl}/api/auth/oauth/entra/callback`] });
  github = await startGitHubDouble();
  smtp = await startSmtpCapture();
  t = await startTestNode({
    PLUMB_SMTP_URL: smtp.url,
    PLUMB_MAIL_FROM: 'plumb@example.org',
    PLUMB_MAIL_SWEEP_SECONDS: '1',
    PLUMB_PORT: String(port),
    PLUMB_PUBLIC_URL: publicUrl,
    PLUMB_LOGIN_RATE_PER_MINUTE: '10000',
    PLUMB_LOGIN_BURST: '10000',
    PLUMB_SSO_ALLOW_PRIVATE: 'true',
    PLUMB_OIDC_GOOGLE_ISSUER: google.issuer,
    PLUMB_OIDC_GOOGLE_CLIENT_ID: 'plumb-google',
    PLUMB_OIDC_GOOGLE_CLIENT_SECRET: 'google-secret',
    PLUMB_OIDC_ENTRA_ISSUER: entra.issuer,
    PLUMB_OIDC_ENTRA_CLIENT_ID: 'plumb-entra',
    PLUMB_OIDC_ENTRA_CLIENT_SECRET: 'entra-secret',
    PLUMB_GITHUB_CLIENT_ID: github.clientId,
    PLUMB_GITHUB_CLIENT_SECRET: github.clientSecret,
    PLUMB_GITHUB_OAUTH_URL: github.url,
    PLUMB_GITHUB_API_URL: github.url,
  });
});

afterAll(async () => {
  await t?.stop();
  await Promise.all([google?.close(), entra?.close(), github?.close(), smtp?.close()]);
});

/** The whole round trip of a sign-in: start, sign in at the provider as `account`, come back. */
async function signInWith(provider: string, account: string, remember = false) {
  const started = await startAt(t, `/api/auth/oauth/${provider}/start`, { remember_me: remember });
  const callback = await signInAt(started.authorizationUrl, account);
  return returnTo(t, callback, started.flowCookie);
}

async function whoIs(cookie: string) {
  const res = await fetch(`${t.url}/api/user/me`, { headers: { Cookie: cookie } });
  return res.status === 200 ? ((await res.json()) as { email: string }).email : res.status;
}

const linkedProviders = async (who: Person) => (await as(t, who, 'GET', '/api/user/security/providers')).body.providers as { id: string; identity: { email: string } | null }[];

describe('GET /api/auth/providers', () => {
  it('lists the enabled providers for the login page', async () => {
    const res = await as(t, undefined, 'GET', '/api/auth/providers');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      providers: [
        { id: 'google', name: 'Google' },
        { id: 'entra', name: 'Microsoft' },
        { id: 'github', name: 'GitHub' },
      ],
      sso: false,
    });
  });
});

describe('sign-in with the general OpenID provider', () => {
  it('signs in the account with the verified address and links the identity', async () => {
    const who = await person(t, 'user', `${unique('ana')}@example.com`);
    google.setAccount(`g-${who.id}`, { email: who.email, email_verified: true });
    const back = await signInWith('google', `g-${who.id}`);
    expect([back.status, back.location]).toEqual([303, '/']);
    expect(await whoIs(back.cookie)).toBe(who.email);
    expect((await linkedProviders(who)).find((p) => p.id === 'google')?.identity?.email).toBe(who.email);
    // Not silently: the account's address hears of the new way in.
    expect((await smtp.waitFor(who.email, 1))[0].subject).toBe('A new way to sign in was added to your Plumb account');
    // The flow cookie is spent: cleared in the same answer.
    expect(back.setCookies.some((c) => c.startsWith('plumb_signin_flow=;'))).toBe(true);
  });

  it('signs in a returning identity even after the provider changed its address', async () => {
    const who = await person(t, 'user', `${unique('ben')}@example.com`);
    google.setAccount(`g-${who.id}`, { email: who.email, email_verified: true });
    expect((await signInWith('google', `g-${who.id}`)).location).toBe('/');
    google.setAccount(`g-${who.id}`, { email: 'renamed@elsewhere.example', email_verified: true });
    const again = await signInWith('google', `g-${who.id}`);
    expect(await whoIs(again.cookie)).toBe(who.email);
  });

  it('refuses an address the provider has not verified', async () => {
    const who = await person(t, 'user', `${unique('cai')}@example.com`);
    google.setAccount(`g-${who.id}`, { email: who.email, email_verified: false });
    const back = await signInWith('google', `g-${who.id}`);
    expect([back.status, back.location, back.cookie]).toEqual([303, '/login?signin_error=email_unverified', '']);
  });

  it('refuses an address without a Plumb account', async () => {
    google.setAccount('stranger', { email: `${unique('nobody')}@example.com`, email_verified: true });
    const back = await signInWith('google', 'stranger');
    expect([back.location, back.cookie]).toEqual(['/login?signin_error=no_account', '']);
  });

  it('asks for the TOTP code before it gives a session to an account with TOTP enrolled', async () => {
    const who = await person(t, 'user', `${unique('dee')}@example.com`);
    const setup = await as(t, who, 'POST', '/api/user/security/totp/setup/start', {});
    const secret = setup.body.secret as string;
    expect((await as(t, who, 'POST', '/api/user/security/totp/setup/verify', { code: totpAt(secret, Date.now() / 1000) })).status).toBe(200);
    google.setAccount(`g-${who.id}`, { email: who.email, email_verified: true });
    const back = await signInWith('google', `g-${who.id}`);
    expect(back.cookie).toBe('');
    expect(back.location).toMatch(/^\/login#mfa=/);
    const challenge = decodeURIComponent(back.location.slice('/login#mfa='.length));
    const verified = await as(t, undefined, 'POST', '/api/auth/mfa/totp/verify', { challenge_token: challenge, code: totpAt(secret, Date.now() / 1000 + 30) });
    expect([verified.status, verified.body.status]).toEqual([200, 'ok']);
    expect(await whoIs(cookiesOf(verified))).toBe(who.email);
  });
});

describe('GET /api/auth/oauth/{provider}/callback', () => {
  async function preparedReturn() {
    const who = await person(t, 'user', `${unique('eve')}@example.com`);
    google.setAccount(`g-${who.id}`, { email: who.email, email_verified: true });
    const started = await startAt(t, '/api/auth/oauth/google/start', {});
    return { who, started, callback: await signInAt(started.authorizationUrl, `g-${who.id}`) };
  }

  it('refuses a state that is not the one of the flow', async () => {
    const { started, callback } = await preparedReturn();
    const back = await returnTo(t, withParam(callback, 'state', 'forged-state'), started.flowCookie);
    expect([back.location, back.cookie]).toEqual(['/login?signin_error=state_invalid', '']);
  });

  it('refuses a browser without the flow cookie (a flow started elsewhere)', async () => {
    const { callback } = await preparedReturn();
    const back = await returnTo(t, callback, '');
    expect([back.location, back.cookie]).toEqual(['/login?signin_error=state_invalid', '']);
  });

  it('accepts a flow once', async () => {
    const { started, callback } = await preparedReturn();
    expect((await returnTo(t, callback, started.flowCookie)).location).toBe('/');
    const replay = await returnTo(t, callback, started.flowCookie);
    expect([replay.location, replay.cookie]).toEqual(['/login?signin_error=state_invalid', '']);
  });

  it('refuses an ID token whose nonce is not the flow’s', async () => {
    const who = await person(t, 'user', `${unique('fay')}@example.com`);
    google.setAccount(`g-${who.id}`, { email: who.email, email_verified: true });
    const started = await startAt(t, '/api/auth/oauth/google/start', {});
    const callback = await signInAt(withParam(started.authorizationUrl, 'nonce', 'a-nonce-of-someone-else'), `g-${who.id}`);
    const back = await returnTo(t, callback, started.flowCookie);
    expect([back.location, back.cookie]).toEqual(['/login?signin_error=exchange_failed', '']);
  });

  it('refuses a code issued for another PKCE challenge', async () => {
    const who = await person(t, 'user', `${unique('gus')}@example.com`);
    google.setAccount(`g-${who.id}`, { email: who.email, email_verified: true });
    const started = await startAt(t, '/api/auth/oauth/google/start', {});
    const otherChallenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
    const callback = await signInAt(withParam(started.authorizationUrl, 'code_challenge', otherChallenge), `g-${who.id}`);
    const back = await returnTo(t, callback, started.flowCookie);
    expect([back.location, back.cookie]).toEqual(['/login?signin_error=exchange_failed', '']);
  });

  it('refuses a flow of one provider returning at another', async () => {
    const { started, callback } = await preparedReturn();
    const back = await returnTo(t, callback.replace('/oauth/google/', '/oauth/github/'), started.flowCookie);
    expect(back.location).toBe('/login?signin_error=state_invalid');
  });

  it('refuses a provider Plumb does not know (400)', async () => {
    const res = await as(t, undefined, 'POST', '/api/auth/oauth/gitlab/start', {});
    expect(res.status).toBe(400);
  });
});

describe('sign-in with the enterprise directory', () => {
  it('does not sign in or link an unknown directory identity by its address; the mailed link links it, once', async () => {
    const who = await person(t, 'user', `${unique('hal')}@example.com`);
    entra.setAccount(`e-${who.id}`, { email: who.email, email_verified: true, tid: 'tenant-1', oid: `object-${who.id}` });
    const back = await signInWith('entra', `e-${who.id}`);
    expect([back.location, back.cookie]).toEqual(['/login?signin_error=confirmation_sent', '']);
    expect((await linkedProviders(who)).find((p) => p.id === 'entra')?.identity).toBeNull();
    const [mail] = await smtp.waitFor(who.email, 1);
    expect(mail.subject).toBe('Confirm signing in to Plumb with Microsoft');
    const link = linkIn(mail, '/api/auth/oauth/confirm/');
    const confirmed = await returnTo(t, link, '');
    expect(confirmed.location).toBe('/login?linked=entra');
    expect((await returnTo(t, link, '')).location).toBe('/login?signin_error=confirmation_invalid');
    expect(await whoIs((await signInWith('entra', `e-${who.id}`)).cookie)).toBe(who.email);
  });

  it('links without a confirmation when the signed-in person links it', async () => {
    const who = await person(t, 'user', `${unique('jon')}@example.com`);
    entra.setAccount(`e-${who.id}`, { email: 'jon.work@corp.example', email_verified: true, tid: 'tenant-2', oid: `object-${who.id}` });
    const started = await startAt(t, '/api/user/security/providers/entra/link', {}, who.cookie);
    const back = await returnTo(t, await signInAt(started.authorizationUrl, `e-${who.id}`), `${started.flowCookie}; ${who.cookie}`);
    expect(back.location).toBe('/account?linked=entra');
    expect((await linkedProviders(who)).find((p) => p.id === 'entra')?.identity?.email).toBe('jon.work@corp.example');
    const [notice] = await smtp.waitFor(who.email, 1);
    expect(notice.subject).toBe('A new way to sign in was added to your Plumb account');
    expect(notice.text).toContain('The Microsoft account jon.work@corp.example can now sign in to your Plumb account');
    expect(await whoIs((await signInWith('entra', `e-${who.id}`)).cookie)).toBe(who.email);
  });

  it('refuses a directory answer without tenant and object ids', async () => {
    const who = await person(t, 'user', `${unique('kim')}@example.com`);
    entra.setAccount(`e-${who.id}`, { email: who.email, email_verified: true });
    expect((await signInWith('entra', `e-${who.id}`)).location).toBe('/login?signin_error=exchange_failed');
  });
});

describe('sign-in with GitHub', () => {
  it('signs in by the primary verified address and keys the identity by the numeric user id', async () => {
    const who = await person(t, 'user', `${unique('lea')}@example.com`);
    github.setAccount(`lea${n}`, { id: 9000 + n, emails: [{ email: 'old@example.org', primary: false, verified: true }, { email: who.email, primary: true, verified: true }] });
    const back = await signInWith('github', `lea${n}`);
    expect([back.status, back.location]).toEqual([303, '/']);
    expect(await whoIs(back.cookie)).toBe(who.email);
    const { rows } = await t.node.runtime.metadata().query<{ subject: string }>("SELECT subject FROM user_identities WHERE user_id = $1 AND provider = 'github'", [who.id]);
    expect(rows).toEqual([{ subject: String(9000 + n) }]);
  });

  it('refuses an account without a primary verified address', async () => {
    const who = await person(t, 'user', `${unique('max')}@example.com`);
    github.setAccount(`max${n}`, { id: 9500 + n, emails: [{ email: who.email, primary: true, verified: false }, { email: 'spare@example.org', primary: false, verified: true }] });
    const back = await signInWith('github', `max${n}`);
    expect([back.location, back.cookie]).toEqual(['/login?signin_error=email_unverified', '']);
  });
});

describe('linking and unlinking providers', () => {
  it('refuses to link an identity that belongs to another account', async () => {
    const owner = await person(t, 'user', `${unique('ned')}@example.com`);
    const other = await person(t, 'user', `${unique('oli')}@example.com`);
    github.setAccount(`ned${n}`, { id: 12000 + n, emails: [{ email: owner.email, primary: true, verified: true }] });
    expect((await signInWith('github', `ned${n}`)).location).toBe('/');
    const started = await startAt(t, '/api/user/security/providers/github/link', {}, other.cookie);
    const back = await returnTo(t, await signInAt(started.authorizationUrl, `ned${n}`), `${started.flowCookie}; ${other.cookie}`);
    expect(back.location).toBe('/account?link_error=identity_in_use');
  });

  it('refuses to finish a link in a browser signed in as someone else', async () => {
    const starter = await person(t, 'user', `${unique('pam')}@example.com`);
    const other = await person(t, 'user', `${unique('quin')}@example.com`);
    github.setAccount(`pam${n}`, { id: 13000 + n, emails: [{ email: 'pam@example.org', primary: true, verified: true }] });
    const started = await startAt(t, '/api/user/security/providers/github/link', {}, starter.cookie);
    const back = await returnTo(t, await signInAt(started.authorizationUrl, `pam${n}`), `${started.flowCookie}; ${other.cookie}`);
    expect(back.location).toBe('/account?link_error=session_changed');
  });

  it('unlinks a provider while another way to sign in is left, and refuses (409) to remove the last one', async () => {
    const db = t.node.runtime.metadata();
    const user = await createUser(db, { email: `${unique('ray')}@example.com`, role: 'user' });
    const session = await t.node.runtime.sessions.start(user.id, { remember: false });
    const who = { ...user, password: '', cookie: session.setCookies.map((c) => c.split(';')[0]).join('; ') };
    github.setAccount(`ray${n}`, { id: 14000 + n, emails: [{ email: 'ray@example.org', primary: true, verified: true }] });
    google.setAccount(`g-${who.id}`, { email: 'ray@gmail.example', email_verified: true });
    for (const [provider, account] of [['github', `ray${n}`], ['google', `g-${who.id}`]]) {
      const started = await startAt(t, `/api/user/security/providers/${provider}/link`, {}, who.cookie);
      const back = await returnTo(t, await signInAt(started.authorizationUrl, account), `${started.flowCookie}; ${who.cookie}`);
      expect(back.location).toBe(`/account?linked=${provider}`);
    }
    expect((await as(t, who, 'DELETE', '/api/user/security/providers/github')).status).toBe(204);
    const last = await as(t, who, 'DELETE', '/api/user/security/providers/google');
    expect([last.status, last.body.code]).toEqual([409, 'conflict']);
    expect((await linkedProviders(who)).find((p) => p.id === 'google')?.identity?.email).toBe('ray@gmail.example');
    expect((await as(t, who, 'DELETE', '/api/user/security/providers/github')).status).toBe(404);
  });

  it('lets a person with a password unlink their only provider', async () => {
    const who = await person(t, 'user', `${unique('sam')}@example.com`);
    google.setAccount(`g-${who.id}`, { email: who.email, email_verified: true });
    expect((await signInWith('google', `g-${who.id}`)).location).toBe('/');
    expect((await as(t, who, 'DELETE', '/api/user/security/providers/google')).status).toBe(204);
    expect((await linkedProviders(who)).find((p) => p.id === 'google')?.identity).toBeNull();
  });
});

describe('accepting an invitation with a provider', () => {
  async function invitation(email: string) {
    const inviter = await person(t, 'admin');
    return (await createInvitation(t.node.runtime.metadata(), inviter, t.team.id, email, 'member')).token;
  }

  it('creates the account of the invited address with the identity as its way in, without a confirmation', async () => {
    const email = `${unique('uma')}@example.com`;
    const token = await invitation(email);
    entra.setAccount(`invited-${n}`, { email, email_verified: true, tid: 'tenant-3', oid: `object-${n}` });
    const started = await startAt(t, '/api/auth/oauth/entra/start', { invite_token: token });
    const back = await returnTo(t, await signInAt(started.authorizationUrl, `invited-${n}`), started.flowCookie);
    expect(back.location).toBe('/');
    expect(await whoIs(back.cookie)).toBe(email);
    const { rows } = await t.node.runtime.metadata().query<{ role: string; has_password: boolean }>(
      'SELECT tm.role, u.password_hash IS NOT NULL AS has_password FROM users u JOIN team_members tm ON tm.user_id = u.id WHERE u.email = $1 AND tm.team_id = $2',
      [email, t.team.id],
    );
    expect(rows).toEqual([{ role: 'member', has_password: false }]);
  });

  it('refuses a provider account whose address is not the invited one', async () => {
    const token = await invitation(`${unique('vic')}@example.com`);
    const account = unique('other');
    google.setAccount(account, { email: `${unique('someone-else')}@example.com`, email_verified: true });
    const started = await startAt(t, '/api/auth/oauth/google/start', { invite_token: token });
    const back = await returnTo(t, await signInAt(started.authorizationUrl, account), started.flowCookie);
    expect([back.location, back.cookie]).toEqual(['/login?signin_error=invitation_mismatch', '']);
  });

  it('refuses an invitation link that is not valid', async () => {
    const email = `${unique('wes')}@example.com`;
    google.setAccount(`wes-${n}`, { email, email_verified: true });
    const started = await startAt(t, '/api/auth/oauth/google/start', { invite_token: 'not-a-real-invitation-token' });
    const back = await returnTo(t, await signInAt(started.authorizationUrl, `wes-${n}`), started.flowCookie);
    expect(back.location).toBe('/login?signin_error=invitation_invalid');
  });
});
