// Mail about accounts through a real node and a real SMTP server on loopback: invitations, password
// reset (no account enumeration, single use, one hour, every session ended), email change with
// confirmation, and the security notices (password changed, TOTP turned off, passkey added).
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { as, cookiesOf, type Person, person } from '../support/accounts.ts';
import { startTestNode, type TestNode } from '../support/node.ts';
import { type CapturedMail, linkIn, type SmtpCapture, startSmtpCapture } from '../support/smtp-capture.ts';
import { SoftwareAuthenticator } from '../support/software-authenticator.ts';
import { totpAt } from '../support/totp.ts';

const ORIGIN = 'http://localhost:8080';
const NEW_PASSWORD = 'a freshly reset password';

let smtp: SmtpCapture;
let t: TestNode;
let n = 0;
const fresh = () => `account${++n}-${Date.now()}@example.net`;
const sql = <T = Record<string, unknown>>(text: string, params: unknown[]) => t.node.runtime.metadata().query<T>(text, params);
const tokenOf = (link: string) => new URL(link).searchParams.get('token')!;
/** Waits for the message with this subject to the address (others may arrive before it). */
async function mailTo(address: string, subject: string): Promise<CapturedMail> {
  let found: CapturedMail | undefined;
  for (let count = 1; !found; count++) found = (await smtp.waitFor(address, count)).find((m) => m.subject === subject);
  return found;
}
const login = (email: string, password: string) => as(t, undefined, 'POST', '/api/login', { email, password });

beforeAll(async () => {
  smtp = await startSmtpCapture();
  t = await startTestNode({
    PLUMB_SMTP_URL: smtp.url,
    PLUMB_MAIL_FROM: 'plumb@example.org',
    PLUMB_MAIL_SWEEP_SECONDS: '1',
    PLUMB_LOGIN_RATE_PER_MINUTE: '1000',
    PLUMB_LOGIN_BURST: '1000',
  });
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await smtp?.close();
});

describe('POST /api/user/teams/:id/members', () => {
  it('mails the invitation with the same accept link the inviter is shown', async () => {
    const owner = await person(t);
    const teamId = (await as(t, owner, 'POST', '/api/user/teams', { name: 'Ops <Team> & "friends"' })).body.id as string;
    const email = fresh();
    const res = await as(t, owner, 'POST', `/api/user/teams/${teamId}/members`, { email, role: 'admin' });
    expect(res.status).toBe(201);
    const mail = await mailTo(email, 'You are invited to join Ops <Team> & "friends" on Plumb');
    expect(linkIn(mail, '/invite/')).toBe(res.body.invite_url);
    expect(mail.text).toContain(`${owner.email} invited you to join the team "Ops <Team> & "friends"" as admin.`);
    expect(mail.html).toContain('the team &quot;Ops &lt;Team&gt; &amp; &quot;friends&quot;&quot; as admin.');
    expect(mail.html).toContain(`href="${res.body.invite_url}"`);
  });

  it('mails the new link when an invitation is resent', async () => {
    const owner = await person(t);
    const teamId = (await as(t, owner, 'POST', '/api/user/teams', { name: 'Resenders' })).body.id as string;
    const email = fresh();
    const invited = await as(t, owner, 'POST', `/api/user/teams/${teamId}/members`, { email, role: 'member' });
    const resent = await as(t, owner, 'POST', `/api/user/teams/${teamId}/invitations/${(invited.body.invitation as { id: string }).id}/resend`, {});
    expect(resent.status).toBe(200);
    const mails = await smtp.waitFor(email, 2);
    expect(mails.map((m) => linkIn(m, '/invite/')).sort()).toEqual([invited.body.invite_url, resent.body.invite_url].sort());
  });
});

describe('POST /api/auth/forgot-password', () => {
  it('answers the same for a known and an unknown address, and mails only the known one', async () => {
    const ana = await person(t);
    const unknown = fresh();
    const known = await as(t, undefined, 'POST', '/api/auth/forgot-password', { email: ana.email.toUpperCase() });
    const other = await as(t, undefined, 'POST', '/api/auth/forgot-password', { email: unknown });
    expect(known.status).toBe(202);
    expect(other.status).toBe(202);
    expect(other.body).toEqual(known.body);
    expect(known.body).toEqual({ status: 'accepted' });
    const mail = await mailTo(ana.email, 'Reset your Plumb password');
    expect(linkIn(mail, '/reset-password?token=')).toMatch(/^http:\/\/localhost:8080\/reset-password\?token=[A-Za-z0-9_-]{43}$/);
    expect(smtp.to(unknown)).toEqual([]);
    const { rows } = await sql<{ n: number }>("SELECT count(*)::int AS n FROM mail_messages WHERE recipient = $1", [unknown]);
    expect(rows[0].n).toBe(0);
  });

  it('takes as long for an unknown address as for a known one', async () => {
    const ana = await person(t);
    const time = async (email: string) => {
      const started = performance.now();
      await as(t, undefined, 'POST', '/api/auth/forgot-password', { email });
      return performance.now() - started;
    };
    const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
    const known: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 7; i++) {
      known.push(await time(ana.email));
      unknown.push(await time(fresh()));
    }
    expect(Math.abs(median(known) - median(unknown))).toBeLessThan(50);
  });

  it('stores only the hash of the token, valid one hour', async () => {
    const ana = await person(t);
    await as(t, undefined, 'POST', '/api/auth/forgot-password', { email: ana.email });
    const token = tokenOf(linkIn(await mailTo(ana.email, 'Reset your Plumb password'), '/reset-password'));
    const { rows } = await sql<{ token_hash: Buffer; seconds: number }>(
      "SELECT token_hash, extract(epoch FROM expires_at - created_at)::int AS seconds FROM account_tokens WHERE user_id = $1 AND purpose = 'password_reset'",
      [ana.id],
    );
    expect(rows).toHaveLength(1);
    expect(Buffer.from(rows[0].token_hash).toString('hex')).toBe(createHash('sha256').update(token).digest('hex'));
    expect(rows[0].seconds).toBe(3600);
  });

  it('is refused with 400 for a body without an email', async () => {
    const res = await as(t, undefined, 'POST', '/api/auth/forgot-password', { address: 'x@example.net' });
    expect(res.status).toBe(400);
  });
});

/** Asks for a reset link for the person and answers its token. */
async function resetToken(who: Person): Promise<string> {
  const before = smtp.to(who.email).length;
  await as(t, undefined, 'POST', '/api/auth/forgot-password', { email: who.email });
  const mails = await smtp.waitFor(who.email, before + 1);
  return tokenOf(linkIn(mails[mails.length - 1], '/reset-password'));
}

describe('POST /api/auth/reset-password', () => {
  it('sets the new password, ends every session, and mails a notice', async () => {
    const ana = await person(t);
    const token = await resetToken(ana);
    const res = await as(t, undefined, 'POST', '/api/auth/reset-password', { token, password: NEW_PASSWORD });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
    expect((await as(t, ana, 'GET', '/api/user/me')).status).toBe(401);
    expect((await login(ana.email, ana.password)).status).toBe(401);
    expect((await login(ana.email, NEW_PASSWORD)).status).toBe(200);
    const notice = await mailTo(ana.email, 'Your Plumb password was changed');
    expect(notice.text).toContain('Every other session was signed out.');
  });

  it('uses a token once', async () => {
    const ana = await person(t);
    const token = await resetToken(ana);
    expect((await as(t, undefined, 'POST', '/api/auth/reset-password', { token, password: NEW_PASSWORD })).status).toBe(200);
    const again = await as(t, undefined, 'POST', '/api/auth/reset-password', { token, password: 'yet another password' });
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ code: 'validation_failed', fields: [{ field: 'token', message: 'token is invalid, used or expired; ask for a new link', type: 'token' }] });
    expect((await login(ana.email, NEW_PASSWORD)).status).toBe(200);
  });

  it('refuses a token past its hour', async () => {
    const ana = await person(t);
    const token = await resetToken(ana);
    await sql("UPDATE account_tokens SET expires_at = now() - interval '1 second' WHERE user_id = $1", [ana.id]);
    const res = await as(t, undefined, 'POST', '/api/auth/reset-password', { token, password: NEW_PASSWORD });
    expect(res.status).toBe(400);
    expect((await login(ana.email, ana.password)).status).toBe(200);
  });

  it('keeps only the newest link working', async () => {
    const ana = await person(t);
    const first = await resetToken(ana);
    const second = await resetToken(ana);
    expect((await as(t, undefined, 'POST', '/api/auth/reset-password', { token: first, password: NEW_PASSWORD })).status).toBe(400);
    expect((await as(t, undefined, 'POST', '/api/auth/reset-password', { token: second, password: NEW_PASSWORD })).status).toBe(200);
  });

  it('applies the password rules, and leaves the token usable', async () => {
    const ana = await person(t);
    const token = await resetToken(ana);
    const short = await as(t, undefined, 'POST', '/api/auth/reset-password', { token, password: 'short' });
    expect(short.status).toBe(400);
    expect(short.body.fields).toEqual([{ field: 'password', message: 'password must be at least 10 characters', type: 'password' }]);
    expect((await as(t, undefined, 'POST', '/api/auth/reset-password', { token, password: NEW_PASSWORD })).status).toBe(200);
  });

  it('refuses a made-up token and a reset-password body with extra fields', async () => {
    expect((await as(t, undefined, 'POST', '/api/auth/reset-password', { token: 'A'.repeat(43), password: NEW_PASSWORD })).status).toBe(400);
    expect((await as(t, undefined, 'POST', '/api/auth/reset-password', { token: 'x', password: NEW_PASSWORD, user_id: 'someone' })).status).toBe(400);
  });
});

describe('POST /api/user/email', () => {
  it('mails a confirmation to the new address; the change happens only when it is confirmed, and the old address is told', async () => {
    const ana = await person(t);
    const oldEmail = ana.email;
    const newEmail = fresh();
    const res = await as(t, ana, 'POST', '/api/user/email', { email: newEmail.toUpperCase(), password: ana.password });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ status: 'confirmation_sent', email: newEmail });
    expect((await as(t, ana, 'GET', '/api/user/me')).body.email).toBe(oldEmail);
    const mail = await mailTo(newEmail, 'Confirm your new Plumb email address');
    const link = linkIn(mail, '/confirm-email?token=');
    const confirmed = await as(t, undefined, 'POST', '/api/user/email/confirm', { token: tokenOf(link) });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toEqual({ id: ana.id, email: newEmail, role: 'user' });
    expect((await as(t, ana, 'GET', '/api/user/me')).body.email).toBe(newEmail);
    const notice = await mailTo(oldEmail, 'Your Plumb email address was changed');
    expect(notice.text).toContain(`from ${oldEmail} to ${newEmail}`);
    expect((await login(newEmail, ana.password)).status).toBe(200);
    const again = await as(t, undefined, 'POST', '/api/user/email/confirm', { token: tokenOf(link) });
    expect(again.status).toBe(400);
  });

  it('refuses a wrong password with 403 and mails nothing', async () => {
    const ana = await person(t);
    const newEmail = fresh();
    const res = await as(t, ana, 'POST', '/api/user/email', { email: newEmail, password: 'not the password' });
    expect(res.status).toBe(403);
    const { rows } = await sql<{ n: number }>('SELECT count(*)::int AS n FROM mail_messages WHERE recipient = $1', [newEmail]);
    expect(rows[0].n).toBe(0);
  });

  it('answers the same for an address another account has, mails it nothing, and changes nothing', async () => {
    const ana = await person(t);
    const bo = await person(t);
    const res = await as(t, ana, 'POST', '/api/user/email', { email: bo.email, password: ana.password });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ status: 'confirmation_sent', email: bo.email });
    const { rows } = await sql<{ n: number }>("SELECT count(*)::int AS n FROM account_tokens WHERE user_id = $1 AND purpose = 'email_change'", [ana.id]);
    expect(rows[0].n).toBe(0);
  });

  it('refuses a confirmation past its 24 hours', async () => {
    const ana = await person(t);
    const newEmail = fresh();
    await as(t, ana, 'POST', '/api/user/email', { email: newEmail, password: ana.password });
    const token = tokenOf(linkIn(await mailTo(newEmail, 'Confirm your new Plumb email address'), '/confirm-email'));
    const { rows } = await sql<{ seconds: number }>("SELECT extract(epoch FROM expires_at - created_at)::int AS seconds FROM account_tokens WHERE user_id = $1 AND purpose = 'email_change'", [ana.id]);
    expect(rows[0].seconds).toBe(86_400);
    await sql("UPDATE account_tokens SET expires_at = now() - interval '1 second' WHERE user_id = $1", [ana.id]);
    expect((await as(t, undefined, 'POST', '/api/user/email/confirm', { token })).status).toBe(400);
    expect((await as(t, ana, 'GET', '/api/user/me')).body.email).toBe(ana.email);
  });

  it('refuses something that is not an address, and the current address', async () => {
    const ana = await person(t);
    expect((await as(t, ana, 'POST', '/api/user/email', { email: 'not an address', password: ana.password })).status).toBe(400);
    expect((await as(t, ana, 'POST', '/api/user/email', { email: ana.email, password: ana.password })).status).toBe(400);
  });
});

describe('security notices', () => {
  it('mails the account when its password is changed', async () => {
    const ana = await person(t);
    const res = await as(t, ana, 'POST', '/api/user/password', { current_password: ana.password, new_password: 'another good password' });
    expect(res.status).toBe(200);
    await mailTo(ana.email, 'Your Plumb password was changed');
  });

  it('mails the account when it turns TOTP off, and when an admin does', async () => {
    const enrol = async (who: Person) => {
      const start = await as(t, who, 'POST', '/api/user/security/totp/setup/start', {});
      const verify = await as(t, who, 'POST', '/api/user/security/totp/setup/verify', { code: totpAt(start.body.secret as string, Date.now() / 1000) });
      expect(verify.status).toBe(200);
      who.cookie = cookiesOf(verify);
      return verify.body.recovery_codes as string[];
    };
    const ana = await person(t);
    const [code] = await enrol(ana);
    expect((await as(t, ana, 'POST', '/api/user/security/totp/disable', { code })).status).toBe(200);
    const self = await mailTo(ana.email, 'Two-factor authentication was turned off for your Plumb account');
    expect(self.text).toContain('Two-factor authentication was turned off for your Plumb account at');

    const bo = await person(t);
    await enrol(bo);
    const admin = await person(t, 'admin');
    expect((await as(t, admin, 'POST', `/api/admin/users/${bo.id}/disable-mfa`, {})).status).toBe(200);
    const byAdmin = await mailTo(bo.email, 'Two-factor authentication was turned off for your Plumb account');
    expect(byAdmin.text).toContain('An instance administrator turned off two-factor authentication');
  });

  it('mails the account when a passkey is added', async () => {
    const ana = await person(t);
    const start = await as(t, ana, 'POST', '/api/user/security/passkeys/register/start', {});
    const response = new SoftwareAuthenticator({ origin: ORIGIN }).register(start.body.options as Parameters<SoftwareAuthenticator['register']>[0]);
    const res = await as(t, ana, 'POST', '/api/user/security/passkeys/register/finish', { challenge_token: start.body.challenge_token, response, name: 'Laptop <b>' });
    expect(res.status).toBe(201);
    const mail = await mailTo(ana.email, 'A passkey was added to your Plumb account');
    expect(mail.text).toContain('A passkey named "Laptop <b>" was added');
    expect(mail.html).toContain('A passkey named &quot;Laptop &lt;b&gt;&quot; was added');
  });
});
