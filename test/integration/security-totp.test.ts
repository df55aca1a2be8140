// TOTP and recovery codes through a real node: enrolment, the second sign-in step after
// /api/login, replay refusal, recovery codes (single use, regenerated), and disabling. Codes are
// computed with the tests' own RFC 6238 implementation (test/support/totp.ts, node:crypto), not otplib.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Context } from 'moleculer';
import { as, type Person, person, cookiesOf } from '../support/accounts.ts';
import { waitFor } from '../support/instance.ts';
import { startTestNode, type TestNode } from '../support/node.ts';
import { totpAt } from '../support/totp.ts';

let t: TestNode;
const events: { name: string; data: unknown }[] = [];

beforeAll(async () => {
  t = await startTestNode({ PLUMB_LOGIN_RATE_PER_MINUTE: '1000', PLUMB_LOGIN_BURST: '1000' });
  await t.node.broker.createService({
    name: 'ops-spy',
    events: {
      'ops.system.user.updated'(ctx: Context) {
        events.push({ name: String(ctx.eventName), data: ctx.params });
      },
    },
  });
});

afterAll(() => t.stop());

const now = () => Date.now() / 1000;
/** Enrolment spends the current step, so the next code a test can use is the one of the next step (drift +1). */
const nextCode = (secret: string) => totpAt(secret, now() + 30);
/** A six-digit code that matches no step near now. */
function wrongCode(secret: string): string {
  const near = new Set([-60, -30, 0, 30, 60].map((d) => totpAt(secret, now() + d)));
  for (let n = 0; ; n++) {
    const candidate = String(n).padStart(6, '0');
    if (!near.has(candidate)) return candidate;
  }
}


/** A person with TOTP enrolled through the routes; their cookie is replaced by the new session's. */
async function enrolled(who: Person) {
  const start = await as(t, who, 'POST', '/api/user/security/totp/setup/start', {});
  const secret = start.body.secret as string;
  const verify = await as(t, who, 'POST', '/api/user/security/totp/setup/verify', { code: totpAt(secret, now()) });
  expect(verify.status).toBe(200);
  who.cookie = cookiesOf(verify);
  return { secret, recoveryCodes: verify.body.recovery_codes as string[] };
}

const login = (who: Person, extra: Record<string, unknown> = {}) => as(t, undefined, 'POST', '/api/login', { email: who.email, password: who.password, ...extra });
const challengeOf = async (who: Person) => (await login(who)).body.challenge_token as string;

describe('POST /api/user/security/totp/setup/start', () => {
  it('returns a new secret with its otpauth URL and a QR code made on the server', async () => {
    const ana = await person(t, 'user');
    const res = await as(t, ana, 'POST', '/api/user/security/totp/setup/start', {});
    expect(res.status).toBe(200);
    const secret = res.body.secret as string;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(res.body.otpauth_url).toBe(`otpauth://totp/Plumb:${encodeURIComponent(ana.email)}?secret=${secret}&issuer=Plumb`);
    expect(res.body.qr_svg).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('keeps the pending secret encrypted in the database, never in the clear', async () => {
    const ana = await person(t, 'user');
    const res = await as(t, ana, 'POST', '/api/user/security/totp/setup/start', {});
    const { rows } = await t.node.runtime.metadata().query<{ totp_pending_secret: string }>('SELECT totp_pending_secret FROM users WHERE id = $1', [ana.id]);
    expect(rows[0].totp_pending_secret).toMatch(/^v1\./);
    expect(rows[0].totp_pending_secret).not.toContain(res.body.secret as string);
  });

  it('answers 401 without a session', async () => {
    const res = await as(t, undefined, 'POST', '/api/user/security/totp/setup/start', {});
    expect([res.status, res.body.code]).toEqual([401, 'unauthorized']);
  });
});

describe('POST /api/user/security/totp/setup/verify', () => {
  it('refuses a wrong code and leaves TOTP off', async () => {
    const ana = await person(t, 'user');
    const start = await as(t, ana, 'POST', '/api/user/security/totp/setup/start', {});
    const res = await as(t, ana, 'POST', '/api/user/security/totp/setup/verify', { code: wrongCode(start.body.secret as string) });
    expect(res.status).toBe(400);
    expect(res.body.fields).toEqual([{ field: 'code', message: "code is not valid; check the authenticator app's clock and try again", type: 'totp' }]);
    expect((await as(t, ana, 'GET', '/api/user/security')).body).toEqual({ totp_enabled: false, recovery_codes_left: 0, passkeys: 0, has_password: true });
  });

  it('enables TOTP, returns ten recovery codes once, and ends the other sessions', async () => {
    const ana = await person(t, 'user');
    const oldCookie = ana.cookie;
    const { recoveryCodes } = await enrolled(ana);
    expect(recoveryCodes).toHaveLength(10);
    expect(new Set(recoveryCodes).size).toBe(10);
    for (const code of recoveryCodes) expect(code).toMatch(/^[a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{2}$/);
    expect((await as(t, { ...ana, cookie: oldCookie }, 'GET', '/api/user/security')).status).toBe(401);
    const overview = await as(t, ana, 'GET', '/api/user/security');
    expect([overview.status, overview.body]).toEqual([200, { totp_enabled: true, recovery_codes_left: 10, passkeys: 0, has_password: true }]);
  });

  it('answers 409 when TOTP is already enabled or no setup was started', async () => {
    const ana = await person(t, 'user');
    expect((await as(t, ana, 'POST', '/api/user/security/totp/setup/verify', { code: '123456' })).status).toBe(409);
    await enrolled(ana);
    expect((await as(t, ana, 'POST', '/api/user/security/totp/setup/start', {})).status).toBe(409);
  });
});

describe('POST /api/auth/mfa/totp/verify', () => {
  it('is required by /api/login once TOTP is enrolled, and no session is given before it', async () => {
    const ana = await person(t, 'user');
    await enrolled(ana);
    const res = await login(ana);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'mfa_required', challenge_token: expect.any(String), factors: ['totp', 'recovery_code'] });
    expect(res.headers.getSetCookie()).toEqual([]);
  });

  it('signs in with the right code and refuses the same code a second time', async () => {
    const ana = await person(t, 'user');
    const { secret } = await enrolled(ana);
    const code = nextCode(secret);
    const res = await as(t, undefined, 'POST', '/api/auth/mfa/totp/verify', { challenge_token: await challengeOf(ana), code });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ok', user: { id: ana.id, email: ana.email, role: 'user' }, session: { duration_seconds: 900, remembered: false } });
    const session = await as(t, { ...ana, cookie: cookiesOf(res) }, 'GET', '/api/auth/session');
    expect(session.status).toBe(200);
    const replay = await as(t, undefined, 'POST', '/api/auth/mfa/totp/verify', { challenge_token: await challengeOf(ana), code });
    expect([replay.status, replay.body]).toEqual([401, { message: 'Invalid or already used code', code: 'unauthorized' }]);
  });

  it('signs in only once when the same code arrives twice at the same moment', async () => {
    const ana = await person(t, 'user');
    const { secret } = await enrolled(ana);
    const code = nextCode(secret);
    const [a, b] = await Promise.all([challengeOf(ana), challengeOf(ana)]);
    const answers = await Promise.all([a, b].map((challenge_token) => as(t, undefined, 'POST', '/api/auth/mfa/totp/verify', { challenge_token, code })));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 401]);
  });

  it('refuses a wrong code', async () => {
    const ana = await person(t, 'user');
    const { secret } = await enrolled(ana);
    const res = await as(t, undefined, 'POST', '/api/auth/mfa/totp/verify', { challenge_token: await challengeOf(ana), code: wrongCode(secret) });
    expect([res.status, res.body]).toEqual([401, { message: 'Invalid or already used code', code: 'unauthorized' }]);
  });

  it('refuses a forged or foreign challenge token', async () => {
    const ana = await person(t, 'user');
    const { secret } = await enrolled(ana);
    const forged = await as(t, undefined, 'POST', '/api/auth/mfa/totp/verify', { challenge_token: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.forged', code: nextCode(secret) });
    expect([forged.status, forged.body]).toEqual([401, { message: 'The sign-in challenge is invalid or has expired; sign in again', code: 'unauthorized' }]);
    // A passkey-login challenge is signed with the same key but is not an MFA challenge.
    const other = await as(t, undefined, 'POST', '/api/auth/passkey/login/start', {});
    const foreign = await as(t, undefined, 'POST', '/api/auth/mfa/totp/verify', { challenge_token: other.body.challenge_token, code: nextCode(secret) });
    expect(foreign.status).toBe(401);
  });

  it('keeps the remember-me choice made at the password step', async () => {
    const ana = await person(t, 'user');
    const { secret } = await enrolled(ana);
    const challenge = (await login(ana, { remember_me: true })).body.challenge_token;
    const res = await as(t, undefined, 'POST', '/api/auth/mfa/totp/verify', { challenge_token: challenge, code: nextCode(secret) });
    expect(res.body).toMatchObject({ status: 'ok', session: { remembered: true } });
    expect(res.headers.getSetCookie().some((c) => c.startsWith('plumb_remember='))).toBe(true);
  });
});

describe('POST /api/auth/mfa/recovery-code/verify', () => {
  it('signs in once with a recovery code and refuses it the second time', async () => {
    const ana = await person(t, 'user');
    const { recoveryCodes } = await enrolled(ana);
    const first = await as(t, undefined, 'POST', '/api/auth/mfa/recovery-code/verify', { challenge_token: await challengeOf(ana), code: recoveryCodes[3] });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ status: 'ok', user: { id: ana.id } });
    const again = await as(t, undefined, 'POST', '/api/auth/mfa/recovery-code/verify', { challenge_token: await challengeOf(ana), code: recoveryCodes[3] });
    expect([again.status, again.body]).toEqual([401, { message: 'Invalid or already used code', code: 'unauthorized' }]);
    expect((await as(t, ana, 'GET', '/api/user/security')).body).toMatchObject({ recovery_codes_left: 9 });
  });

  it('lets only one of two simultaneous uses of a code through', async () => {
    const ana = await person(t, 'user');
    const { recoveryCodes } = await enrolled(ana);
    const [a, b] = await Promise.all([challengeOf(ana), challengeOf(ana)]);
    const answers = await Promise.all(
      [a, b].map((challenge_token) => as(t, undefined, 'POST', '/api/auth/mfa/recovery-code/verify', { challenge_token, code: recoveryCodes[5] })),
    );
    expect(answers.map((r) => r.status).sort()).toEqual([200, 401]);
  });

  it('accepts a code typed in capitals without dashes', async () => {
    const ana = await person(t, 'user');
    const { recoveryCodes } = await enrolled(ana);
    const typed = recoveryCodes[0].replaceAll('-', '').toUpperCase();
    const res = await as(t, undefined, 'POST', '/api/auth/mfa/recovery-code/verify', { challenge_token: await challengeOf(ana), code: typed });
    expect(res.status).toBe(200);
  });

  it("refuses another person's recovery code", async () => {
    const ana = await person(t, 'user');
    const bo = await person(t, 'user');
    await enrolled(ana);
    const { recoveryCodes } = await enrolled(bo);
    const res = await as(t, undefined, 'POST', '/api/auth/mfa/recovery-code/verify', { challenge_token: await challengeOf(ana), code: recoveryCodes[0] });
    expect(res.status).toBe(401);
  });
});

describe('POST /api/user/security/recovery-codes/regenerate', () => {
  it('needs a TOTP code, then replaces the codes so the old ones stop working', async () => {
    const ana = await person(t, 'user');
    const { secret, recoveryCodes: old } = await enrolled(ana);
    const refused = await as(t, ana, 'POST', '/api/user/security/recovery-codes/regenerate', { code: wrongCode(secret) });
    expect([refused.status, refused.body.code]).toEqual([400, 'validation_failed']);
    const res = await as(t, ana, 'POST', '/api/user/security/recovery-codes/regenerate', { code: nextCode(secret) });
    expect(res.status).toBe(200);
    const fresh = res.body.recovery_codes as string[];
    expect(fresh).toHaveLength(10);
    expect(fresh.filter((c) => old.includes(c))).toEqual([]);
    const withOld = await as(t, undefined, 'POST', '/api/auth/mfa/recovery-code/verify', { challenge_token: await challengeOf(ana), code: old[0] });
    expect(withOld.status).toBe(401);
    const withNew = await as(t, undefined, 'POST', '/api/auth/mfa/recovery-code/verify', { challenge_token: await challengeOf(ana), code: fresh[0] });
    expect(withNew.status).toBe(200);
  });
});

describe('POST /api/user/security/totp/disable', () => {
  it('refuses a wrong code, then turns TOTP off with a valid one so login asks for no second factor', async () => {
    const ana = await person(t, 'user');
    const { secret } = await enrolled(ana);
    const refused = await as(t, ana, 'POST', '/api/user/security/totp/disable', { code: wrongCode(secret) });
    expect([refused.status, refused.body]).toEqual([
      400,
      { message: 'code is invalid or already used', code: 'validation_failed', fields: [{ field: 'code', message: 'code is invalid or already used', type: 'code' }] },
    ]);
    expect((await as(t, ana, 'GET', '/api/user/security')).body).toMatchObject({ totp_enabled: true });
    const res = await as(t, ana, 'POST', '/api/user/security/totp/disable', { code: nextCode(secret) });
    expect([res.status, res.body]).toEqual([200, { totp_enabled: false, recovery_codes_left: 0, passkeys: 0, has_password: true }]);
    expect((await login(ana)).body).toMatchObject({ status: 'ok' });
  });

  it('accepts a recovery code instead of a TOTP code', async () => {
    const ana = await person(t, 'user');
    const { recoveryCodes } = await enrolled(ana);
    const res = await as(t, ana, 'POST', '/api/user/security/totp/disable', { code: recoveryCodes[9] });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ totp_enabled: false });
  });

  it('announces enabling and disabling as an update of the user (ops.system.user.updated)', async () => {
    const ana = await person(t, 'user');
    const { recoveryCodes } = await enrolled(ana);
    await as(t, ana, 'POST', '/api/user/security/totp/disable', { code: recoveryCodes[0] });
    const mine = () => events.filter((e) => (e.data as { user_id: string }).user_id === ana.id);
    await waitFor(async () => mine().length >= 2, 2_000, () => `expected two events, saw ${mine().length}`);
    const expected = { name: 'ops.system.user.updated', data: { user_id: ana.id, email: ana.email, role: 'user' } };
    expect(mine()).toEqual([expected, expected]);
  });

  it('answers 409 when TOTP is not enabled', async () => {
    const ana = await person(t, 'user');
    const res = await as(t, ana, 'POST', '/api/user/security/totp/disable', { code: '123456' });
    expect([res.status, res.body.code]).toEqual([409, 'conflict']);
  });
});
