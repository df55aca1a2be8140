// First run, sign-in and the session API through a real node: cookies, remember-me rotation,
// logout, and the answers a stranger gets.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SignJWT } from 'jose';
import { request } from '../support/instance.ts';
import { startTestNode, type TestNode } from '../support/node.ts';
import { cookiesOf } from '../support/accounts.ts';

let t: TestNode;
const OWNER = { email: 'Owner@Example.com', password: 'correct horse battery' };


function call(method: string, path: string, body?: unknown, cookie?: string) {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (cookie) headers.Cookie = cookie;
  return request(`${t.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
}

beforeAll(async () => {
  t = await startTestNode({ PLUMB_AUTH_SESSION_MINUTES: '15', PLUMB_AUTH_SESSION_WARNING_SECONDS: '45', PLUMB_LOGIN_RATE_PER_MINUTE: '1000', PLUMB_LOGIN_BURST: '1000' });
});

afterAll(() => t.stop());

describe('first run', () => {
  it('needs setup until the owner exists, then refuses a second owner', async () => {
    expect((await call('GET', '/api/status')).body).toMatchObject({ needs_setup: true });
    const res = await call('POST', '/api/initial-user', OWNER);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: 'ok', user: { email: 'owner@example.com', role: 'owner' } });
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('plumb_session='))!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).toMatch(/Max-Age=900/);
    expect((await call('GET', '/api/status')).body).toMatchObject({ needs_setup: false });
    const again = await call('POST', '/api/initial-user', { email: 'late@example.com', password: 'another long password' });
    expect(again.status).toBe(409);
  });

  it('refuses any further initial user once set up, whatever it sends', async () => {
    const res = await call('POST', '/api/initial-user', { email: 'x@example.com', password: 'short' });
    expect(res.status).toBe(409);
  });
});

describe('POST /api/login', () => {
  it('refuses a wrong password and an unknown email alike', async () => {
    const wrong = await call('POST', '/api/login', { email: OWNER.email, password: 'wrong password!!' });
    const unknown = await call('POST', '/api/login', { email: 'nobody@example.com', password: 'wrong password!!' });
    expect([wrong.status, wrong.body]).toEqual([401, { message: 'Invalid email or password', code: 'unauthorized' }]);
    expect([unknown.status, unknown.body]).toEqual([401, { message: 'Invalid email or password', code: 'unauthorized' }]);
  });

  it('signs in and reports the session the dashboard needs', async () => {
    const login = await call('POST', '/api/login', { email: 'owner@example.com', password: OWNER.password });
    expect(login.body).toMatchObject({ status: 'ok' });
    const session = await call('GET', '/api/auth/session', undefined, cookiesOf(login));
    expect(session.status).toBe(200);
    expect(session.body).toMatchObject({ duration_seconds: 900, warning_seconds: 45, remembered: false, remember_expires_at: null, remember_me_duration_days: 30 });
    const expires = Date.parse(session.body.expires_at as string) - Date.parse(session.body.issued_at as string);
    expect(expires).toBe(900_000);
  });

  it('extends a session with a fresh cookie', async () => {
    const login = await call('POST', '/api/login', { email: 'owner@example.com', password: OWNER.password });
    await new Promise((r) => setTimeout(r, 1100));
    const extended = await call('POST', '/api/auth/session/extend', {}, cookiesOf(login));
    expect(extended.status).toBe(200);
    expect(Date.parse(extended.body.expires_at as string)).toBeGreaterThan(Date.parse((login.body.session as { expires_at: string }).expires_at));
    expect(extended.headers.getSetCookie().some((c) => c.startsWith('plumb_session='))).toBe(true);
  });
});

describe('remember me', () => {
  it('renews the session from the remember-me token alone and rotates the token', async () => {
    const login = await call('POST', '/api/login', { email: 'owner@example.com', password: OWNER.password, remember_me: true });
    const remember = login.headers.getSetCookie().find((c) => c.startsWith('plumb_remember='))!;
    expect(remember).toMatch(/Max-Age=2592000/);
    const rememberOnly = remember.split(';')[0];
    const renewed = await call('GET', '/api/auth/session', undefined, rememberOnly);
    expect(renewed.status).toBe(200);
    expect(renewed.body).toMatchObject({ remembered: true });
    const rotated = renewed.headers.getSetCookie().find((c) => c.startsWith('plumb_remember='))!.split(';')[0];
    expect(rotated).not.toBe(rememberOnly);
    // The used token is gone: presenting it again signs nobody in.
    expect((await call('GET', '/api/auth/session', undefined, rememberOnly)).status).toBe(401);
    expect((await call('GET', '/api/auth/session', undefined, rotated)).status).toBe(200);
  });

  it('forgets the remember-me token at logout', async () => {
    const login = await call('POST', '/api/login', { email: 'owner@example.com', password: OWNER.password, remember_me: true });
    const cookie = cookiesOf(login);
    const out = await call('POST', '/api/logout', {}, cookie);
    expect(out.status).toBe(200);
    expect(out.headers.getSetCookie().every((c) => /Max-Age=0/.test(c))).toBe(true);
    const rememberOnly = cookie.split('; ').find((c) => c.startsWith('plumb_remember='))!;
    expect((await call('GET', '/api/auth/session', undefined, rememberOnly)).status).toBe(401);
  });
});

describe('without a session', () => {
  it('answers 401 on the session API and ignores a forged cookie', async () => {
    expect((await call('GET', '/api/auth/session')).status).toBe(401);
    expect((await call('GET', '/api/auth/session', undefined, 'plumb_session=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.forged')).status).toBe(401);
  });
});

describe('POST /api/logout', () => {
  const sessionOnly = (cookie: string) => cookie.split('; ').find((c) => c.startsWith('plumb_session='))!;

  it('ends the session on the server: a cookie copied before logout reads nothing and cannot be extended', async () => {
    const login = await call('POST', '/api/login', { email: 'owner@example.com', password: OWNER.password });
    const copied = sessionOnly(cookiesOf(login));
    expect((await call('GET', '/api/user/me', undefined, copied)).status).toBe(200);
    expect((await call('POST', '/api/logout', {}, copied)).status).toBe(200);
    expect(await call('GET', '/api/user/me', undefined, copied)).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    expect((await call('POST', '/api/auth/session/extend', {}, copied)).status).toBe(401);
  });

  it('ends only the session it is called with', async () => {
    const first = sessionOnly(cookiesOf(await call('POST', '/api/login', { email: 'owner@example.com', password: OWNER.password })));
    const second = sessionOnly(cookiesOf(await call('POST', '/api/login', { email: 'owner@example.com', password: OWNER.password })));
    await call('POST', '/api/logout', {}, first);
    expect((await call('GET', '/api/user/me', undefined, first)).status).toBe(401);
    expect((await call('GET', '/api/user/me', undefined, second)).status).toBe(200);
  });

  it('keeps an extended session ended: the renewed cookie dies with the session too', async () => {
    const login = sessionOnly(cookiesOf(await call('POST', '/api/login', { email: 'owner@example.com', password: OWNER.password })));
    const extended = await call('POST', '/api/auth/session/extend', {}, login);
    const renewed = extended.headers.getSetCookie().find((c) => c.startsWith('plumb_session='))!.split(';')[0];
    await call('POST', '/api/logout', {}, login);
    expect((await call('GET', '/api/user/me', undefined, renewed)).status).toBe(401);
    expect((await call('POST', '/api/auth/session/extend', {}, renewed)).status).toBe(401);
  });
});

describe('session cookies the server did not issue as they are', () => {
  /** A cookie signed with the instance's own key (as a leaked key or a forger would), for a live session. */
  async function signedCookie(claims: { exp?: number; iat?: number }): Promise<string> {
    const login = await call('POST', '/api/login', { email: 'owner@example.com', password: OWNER.password });
    const session = sessionOnly(cookiesOf(login)).slice('plumb_session='.length);
    const payload = JSON.parse(Buffer.from(session.split('.')[1], 'base64url').toString()) as { sub: string; sid: string };
    let jwt = new SignJWT({ sid: payload.sid }).setProtectedHeader({ alg: 'HS256' }).setSubject(payload.sub);
    if (claims.iat !== undefined) jwt = jwt.setIssuedAt(claims.iat);
    if (claims.exp !== undefined) jwt = jwt.setExpirationTime(claims.exp);
    return `plumb_session=${await jwt.sign(t.node.runtime.jwtSecret)}`;
  }
  const sessionOnly = (cookie: string) => cookie.split('; ').find((c) => c.startsWith('plumb_session='))!;
  const now = () => Math.floor(Date.now() / 1000);

  it('accepts a cookie of the configured lifetime (the control)', async () => {
    expect((await call('GET', '/api/user/me', undefined, await signedCookie({ iat: now(), exp: now() + 900 }))).status).toBe(200);
  });

  it('refuses a cookie without an expiry', async () => {
    expect((await call('GET', '/api/user/me', undefined, await signedCookie({ iat: now() }))).status).toBe(401);
  });

  it('refuses a cookie whose expiry lies beyond the configured lifetime', async () => {
    expect((await call('GET', '/api/user/me', undefined, await signedCookie({ iat: now(), exp: now() + 86_400 }))).status).toBe(401);
  });

  it('refuses a cookie issued in the future', async () => {
    expect((await call('GET', '/api/user/me', undefined, await signedCookie({ iat: now() + 3_600, exp: now() + 3_600 + 900 }))).status).toBe(401);
  });
});

describe('a session check the store cannot answer', () => {
  it('answers 503 with Retry-After and keeps the session, which works again once the store is back', async () => {
    const login = await call('POST', '/api/login', { email: 'owner@example.com', password: OWNER.password });
    const cookie = cookiesOf(login);
    const store = t.node.runtime.metadata() as { query: (...args: unknown[]) => Promise<unknown> };
    const query = store.query;
    store.query = () => Promise.reject(new Error('connection terminated unexpectedly'));
    let during: Awaited<ReturnType<typeof call>>;
    try {
      during = await call('GET', '/api/user/me', undefined, cookie);
    } finally {
      store.query = query;
    }
    expect([during.status, during.body.code, during.headers.get('retry-after')]).toEqual([503, 'unavailable', '5']);
    expect(during.headers.getSetCookie()).toEqual([]);
    expect((await call('GET', '/api/user/me', undefined, cookie)).status).toBe(200);
  });
});
