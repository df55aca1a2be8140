// Passkeys through a real node with a software authenticator (test/support/software-authenticator.ts):
// registration, the list people manage, discoverable sign-in, counter replay, the MFA rule for
// authenticators that did not verify their user, and keeping the last way to sign in.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { as, type Person, person } from '../support/accounts.ts';
import { startTestNode, type TestNode } from '../support/node.ts';
import { SoftwareAuthenticator } from '../support/software-authenticator.ts';

let t: TestNode;
// publicUrl defaults to http://localhost:8080 on a node started on port 0: rpID "localhost".
const ORIGIN = 'http://localhost:8080';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const expiredChallenge = {
  message: 'challenge_token is invalid, used or expired; start again',
  code: 'validation_failed',
  fields: [{ field: 'challenge_token', message: 'challenge_token is invalid, used or expired; start again', type: 'challenge' }],
};

beforeAll(async () => {
  t = await startTestNode({ PLUMB_LOGIN_RATE_PER_MINUTE: '1000', PLUMB_LOGIN_BURST: '1000' });
});

afterAll(() => t.stop());

type Options = Parameters<SoftwareAuthenticator['register']>[0];

/** Runs register/start → authenticator → register/finish; answers the finish response. */
async function addPasskey(who: Person, authenticator: SoftwareAuthenticator, name?: string) {
  const start = await as(t, who, 'POST', '/api/user/security/passkeys/register/start', {});
  const response = authenticator.register(start.body.options as Options);
  return as(t, who, 'POST', '/api/user/security/passkeys/register/finish', { challenge_token: start.body.challenge_token, response, name });
}

async function passkeyLogin(authenticator: SoftwareAuthenticator, overrides: Parameters<SoftwareAuthenticator['assert']>[1] = {}, extra: Record<string, unknown> = {}) {
  const start = await as(t, undefined, 'POST', '/api/auth/passkey/login/start', {});
  const response = authenticator.assert(start.body.options as { challenge: string; rpId: string }, overrides);
  return as(t, undefined, 'POST', '/api/auth/passkey/login/finish', { challenge_token: start.body.challenge_token, response, ...extra });
}

async function passwordless(): Promise<Person> {
  const who = await person(t, 'user');
  await t.node.runtime.metadata().query('UPDATE users SET password_hash = NULL WHERE id = $1', [who.id]);
  return who;
}

describe('POST /api/user/security/passkeys/register/start', () => {
  it('offers creation options for this site: resident key required, user verification preferred, no attestation', async () => {
    const ana = await person(t, 'user');
    const res = await as(t, ana, 'POST', '/api/user/security/passkeys/register/start', {});
    expect(res.status).toBe(200);
    expect(res.body.challenge_token).toEqual(expect.any(String));
    expect(res.body.options).toMatchObject({
      rp: { name: 'Plumb', id: 'localhost' },
      user: { id: Buffer.from(ana.id.replaceAll('-', ''), 'hex').toString('base64url'), name: ana.email, displayName: ana.email },
      attestation: 'none',
      excludeCredentials: [],
      authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'preferred' },
    });
  });

  it("lists the person's existing passkeys as excluded, so one device is not added twice", async () => {
    const ana = await person(t, 'user');
    const key = new SoftwareAuthenticator({ origin: ORIGIN });
    await addPasskey(ana, key);
    const [credentialId] = key.credentials.keys();
    const res = await as(t, ana, 'POST', '/api/user/security/passkeys/register/start', {});
    expect((res.body.options as { excludeCredentials: unknown }).excludeCredentials).toEqual([{ id: credentialId, type: 'public-key', transports: ['internal'] }]);
  });
});

describe('POST /api/user/security/passkeys/register/finish', () => {
  it('stores the passkey and answers 201 with it and its Location', async () => {
    const ana = await person(t, 'user');
    const res = await addPasskey(ana, new SoftwareAuthenticator({ origin: ORIGIN }), 'Laptop');
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ passkey: { id: expect.stringMatching(UUID), name: 'Laptop', created_at: expect.stringMatching(ISO), last_used_at: null } });
    expect(res.headers.get('location')).toBe(`/api/user/security/passkeys/${(res.body.passkey as { id: string }).id}`);
    expect((await as(t, ana, 'GET', '/api/user/security')).body).toEqual({ totp_enabled: false, recovery_codes_left: 0, passkeys: 1, has_password: true });
  });

  it('names an unnamed passkey by its number', async () => {
    const ana = await person(t, 'user');
    await addPasskey(ana, new SoftwareAuthenticator({ origin: ORIGIN }));
    const second = await addPasskey(ana, new SoftwareAuthenticator({ origin: ORIGIN }));
    expect(second.body).toMatchObject({ passkey: { name: 'Passkey 2' } });
  });

  it('refuses an attestation made on another origin', async () => {
    const ana = await person(t, 'user');
    const start = await as(t, ana, 'POST', '/api/user/security/passkeys/register/start', {});
    const response = new SoftwareAuthenticator({ origin: ORIGIN }).register(start.body.options as Options, { origin: 'https://evil.example' });
    const res = await as(t, ana, 'POST', '/api/user/security/passkeys/register/finish', { challenge_token: start.body.challenge_token, response });
    expect([res.status, res.body.code, (res.body.fields as { field: string }[])[0].field]).toEqual([400, 'validation_failed', 'response']);
  });

  it('refuses a ceremony started by someone else', async () => {
    const ana = await person(t, 'user');
    const bo = await person(t, 'user');
    const start = await as(t, bo, 'POST', '/api/user/security/passkeys/register/start', {});
    const response = new SoftwareAuthenticator({ origin: ORIGIN }).register(start.body.options as Options);
    const res = await as(t, ana, 'POST', '/api/user/security/passkeys/register/finish', { challenge_token: start.body.challenge_token, response });
    expect([res.status, res.body]).toEqual([400, expiredChallenge]);
  });

  it('refuses a finished registration sent again: each ceremony is single-use', async () => {
    const ana = await person(t, 'user');
    const start = await as(t, ana, 'POST', '/api/user/security/passkeys/register/start', {});
    const body = { challenge_token: start.body.challenge_token, response: new SoftwareAuthenticator({ origin: ORIGIN }).register(start.body.options as Options) };
    expect((await as(t, ana, 'POST', '/api/user/security/passkeys/register/finish', body)).status).toBe(201);
    const again = await as(t, ana, 'POST', '/api/user/security/passkeys/register/finish', body);
    expect([again.status, again.body]).toEqual([400, expiredChallenge]);
  });
});

describe('GET and PATCH /api/user/security/passkeys', () => {
  it('lists the passkeys oldest first with paging fields', async () => {
    const ana = await person(t, 'user');
    await addPasskey(ana, new SoftwareAuthenticator({ origin: ORIGIN }), 'Phone');
    await addPasskey(ana, new SoftwareAuthenticator({ origin: ORIGIN }), 'Key');
    const all = await as(t, ana, 'GET', '/api/user/security/passkeys');
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ total: 2, limit: 25, offset: 0, has_more: false });
    expect((all.body.items as { name: string }[]).map((p) => p.name)).toEqual(['Phone', 'Key']);
    const page = await as(t, ana, 'GET', '/api/user/security/passkeys?limit=1');
    expect(page.body).toMatchObject({ total: 2, limit: 1, offset: 0, has_more: true, items: [{ name: 'Phone' }] });
  });

  it("renames a passkey, and answers 404 for another person's", async () => {
    const ana = await person(t, 'user');
    const bo = await person(t, 'user');
    const id = ((await addPasskey(ana, new SoftwareAuthenticator({ origin: ORIGIN }), 'Laptop')).body.passkey as { id: string }).id;
    const res = await as(t, ana, 'PATCH', `/api/user/security/passkeys/${id}`, { name: '  Work laptop ' });
    expect([res.status, res.body]).toEqual([200, { passkey: { id, name: 'Work laptop', created_at: expect.stringMatching(ISO), last_used_at: null } }]);
    const foreign = await as(t, bo, 'PATCH', `/api/user/security/passkeys/${id}`, { name: 'Mine now' });
    expect([foreign.status, foreign.body]).toEqual([404, { message: 'Passkey not found', code: 'not_found' }]);
    expect((await as(t, ana, 'PATCH', `/api/user/security/passkeys/${id}`, { name: '' })).status).toBe(400);
  });
});

describe('POST /api/auth/passkey/login/start and /finish', () => {
  it('offers discoverable request options: no credentials listed, this site only', async () => {
    const res = await as(t, undefined, 'POST', '/api/auth/passkey/login/start', {});
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      options: { rpId: 'localhost', challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), timeout: 300000, userVerification: 'preferred' },
      challenge_token: expect.any(String),
    });
  });

  it('signs in without a password and records when the passkey was used', async () => {
    const ana = await passwordless();
    const key = new SoftwareAuthenticator({ origin: ORIGIN });
    await addPasskey(ana, key, 'Laptop');
    const res = await passkeyLogin(key);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ok', user: { id: ana.id, email: ana.email, role: 'user' }, session: { duration_seconds: 900, remembered: false } });
    const cookie = res.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    expect((await as(t, { ...ana, cookie }, 'GET', '/api/auth/session')).status).toBe(200);
    const list = await as(t, ana, 'GET', '/api/user/security/passkeys');
    expect((list.body.items as { last_used_at: string }[])[0].last_used_at).toMatch(ISO);
  });

  it('starts a remembered session when remember me is asked', async () => {
    const ana = await person(t, 'user');
    const key = new SoftwareAuthenticator({ origin: ORIGIN });
    await addPasskey(ana, key);
    const res = await passkeyLogin(key, {}, { remember_me: true });
    expect(res.body).toMatchObject({ status: 'ok', session: { remembered: true } });
  });

  it('refuses a signature counter that did not grow, and a replayed assertion', async () => {
    const ana = await person(t, 'user');
    const key = new SoftwareAuthenticator({ origin: ORIGIN });
    await addPasskey(ana, key);
    expect((await passkeyLogin(key)).status).toBe(200); // counter 1
    expect((await passkeyLogin(key)).status).toBe(200); // counter 2
    const cloned = await passkeyLogin(key, { counter: 2 });
    expect([cloned.status, cloned.body]).toEqual([401, { message: 'Passkey sign-in failed', code: 'unauthorized' }]);
    // The same request again: challenge and assertion both once valid.
    const start = await as(t, undefined, 'POST', '/api/auth/passkey/login/start', {});
    const body = { challenge_token: start.body.challenge_token, response: key.assert(start.body.options as { challenge: string }, { counter: 5 }) };
    expect((await as(t, undefined, 'POST', '/api/auth/passkey/login/finish', body)).status).toBe(200);
    expect((await as(t, undefined, 'POST', '/api/auth/passkey/login/finish', body)).status).toBe(401);
  });

  it('refuses a replayed sign-in even from an authenticator whose counter stays at 0 (synced passkeys)', async () => {
    const ana = await person(t, 'user');
    const key = new SoftwareAuthenticator({ origin: ORIGIN });
    await addPasskey(ana, key);
    const start = await as(t, undefined, 'POST', '/api/auth/passkey/login/start', {});
    const body = { challenge_token: start.body.challenge_token, response: key.assert(start.body.options as { challenge: string }, { counter: 0 }) };
    expect((await as(t, undefined, 'POST', '/api/auth/passkey/login/finish', body)).status).toBe(200);
    expect((await as(t, undefined, 'POST', '/api/auth/passkey/login/finish', body)).status).toBe(401);
  });

  it('refuses a bad signature, an unknown credential, another origin and a forged challenge token', async () => {
    const ana = await person(t, 'user');
    const key = new SoftwareAuthenticator({ origin: ORIGIN });
    await addPasskey(ana, key);
    const start = await as(t, undefined, 'POST', '/api/auth/passkey/login/start', {});
    const response = key.assert(start.body.options as { challenge: string });
    const signature = Buffer.from(response.response.signature, 'base64url');
    signature[signature.length - 1] ^= 1;
    const tampered = { ...response, response: { ...response.response, signature: signature.toString('base64url') } };
    expect((await as(t, undefined, 'POST', '/api/auth/passkey/login/finish', { challenge_token: start.body.challenge_token, response: tampered })).status).toBe(401);
    const unknownKey = new SoftwareAuthenticator({ origin: ORIGIN });
    unknownKey.register({ challenge: 'x', rp: { id: 'localhost', name: 'Plumb' }, user: { id: 'AAAA', name: 'x' } });
    const unknown = await passkeyLogin(unknownKey);
    expect([unknown.status, unknown.body]).toEqual([401, { message: 'This passkey is not registered here', code: 'unauthorized' }]);
    expect((await passkeyLogin(key, { origin: 'https://evil.example' })).status).toBe(401);
    const forged = await as(t, undefined, 'POST', '/api/auth/passkey/login/finish', { challenge_token: 'not-a-token', response: key.assert({ challenge: 'abc' }) });
    expect([forged.status, forged.body.code]).toEqual([401, 'unauthorized']);
  });

  it('takes assertions with signatures as long as ML-DSA-87 ones to the signature check', async () => {
    const ana = await person(t, 'user');
    const key = new SoftwareAuthenticator({ origin: ORIGIN });
    await addPasskey(ana, key);
    const start = await as(t, undefined, 'POST', '/api/auth/passkey/login/start', {});
    const response = key.assert(start.body.options as { challenge: string });
    // 4,627 bytes: the size of an ML-DSA-87 signature. It is not a valid one, so the answer is the
    // verifier's 401, not a 400 from the request's size limits.
    const long = { ...response, response: { ...response.response, signature: Buffer.alloc(4627, 7).toString('base64url') } };
    const answer = await as(t, undefined, 'POST', '/api/auth/passkey/login/finish', { challenge_token: start.body.challenge_token, response: long });
    expect([answer.status, answer.body.code]).toEqual([401, 'unauthorized']);
  });

  it('asks for the TOTP step when the authenticator did not verify its user and TOTP is on', async () => {
    const ana = await person(t, 'user');
    const key = new SoftwareAuthenticator({ origin: ORIGIN, userVerification: false });
    await addPasskey(ana, key);
    expect((await passkeyLogin(key)).body).toMatchObject({ status: 'ok' });
    await t.node.runtime.metadata().query('UPDATE users SET totp_enabled_at = now() WHERE id = $1', [ana.id]);
    const res = await passkeyLogin(key);
    expect([res.status, res.body]).toEqual([200, { status: 'mfa_required', challenge_token: expect.any(String), factors: ['totp', 'recovery_code'] }]);
    expect(res.headers.getSetCookie()).toEqual([]);
    // With user verification the passkey is both factors.
    key.userVerification = true;
    expect((await passkeyLogin(key)).body).toMatchObject({ status: 'ok', user: { id: ana.id } });
  });
});

describe('DELETE /api/user/security/passkeys/:id', () => {
  it("refuses with 409 to remove a passwordless person's last passkey, and allows it while another remains", async () => {
    const ana = await passwordless();
    const first = ((await addPasskey(ana, new SoftwareAuthenticator({ origin: ORIGIN }))).body.passkey as { id: string }).id;
    const lone = await as(t, ana, 'DELETE', `/api/user/security/passkeys/${first}`);
    expect([lone.status, lone.body]).toEqual([409, { message: 'This is your only way to sign in: add another passkey, set a password or link a provider before removing it', code: 'conflict' }]);
    const second = ((await addPasskey(ana, new SoftwareAuthenticator({ origin: ORIGIN }))).body.passkey as { id: string }).id;
    expect((await as(t, ana, 'DELETE', `/api/user/security/passkeys/${first}`)).status).toBe(204);
    expect((await as(t, ana, 'DELETE', `/api/user/security/passkeys/${second}`)).status).toBe(409);
    expect((await as(t, ana, 'GET', '/api/user/security')).body).toEqual({ totp_enabled: false, recovery_codes_left: 0, passkeys: 1, has_password: false });
  });

  it('removes the only passkey of a person who has a password; it no longer signs in', async () => {
    const ana = await person(t, 'user');
    const key = new SoftwareAuthenticator({ origin: ORIGIN });
    const id = ((await addPasskey(ana, key)).body.passkey as { id: string }).id;
    const res = await as(t, ana, 'DELETE', `/api/user/security/passkeys/${id}`);
    expect(res.status).toBe(204);
    expect((await as(t, ana, 'GET', '/api/user/security/passkeys')).body).toEqual({ items: [], total: 0, limit: 25, offset: 0, has_more: false });
    expect((await passkeyLogin(key)).status).toBe(401);
  });

  it("answers 404 for another person's passkey and 400 for an id that is not a UUID", async () => {
    const ana = await person(t, 'user');
    const bo = await person(t, 'user');
    const id = ((await addPasskey(ana, new SoftwareAuthenticator({ origin: ORIGIN }))).body.passkey as { id: string }).id;
    expect((await as(t, bo, 'DELETE', `/api/user/security/passkeys/${id}`)).status).toBe(404);
    expect((await as(t, bo, 'DELETE', '/api/user/security/passkeys/not-a-uuid')).status).toBe(400);
    expect((await as(t, undefined, 'DELETE', `/api/user/security/passkeys/${id}`)).status).toBe(401);
  });
});
