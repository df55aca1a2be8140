// The caller's own account through a real node: who am I, and a password change that keeps the
// changer signed in with a fresh cookie while every other session of theirs ends.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { as, type Person, person, cookiesOf } from '../support/accounts.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

let t: TestNode;


async function login(email: string, password: string, remember = false): Promise<string> {
  const res = await fetch(`${t.url}/api/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ email, password, remember_me: remember }),
  });
  return res.status === 200 ? cookiesOf(res) : `refused ${res.status}`;
}

const withCookie = (who: Person, cookie: string): Person => ({ ...who, cookie });

beforeAll(async () => {
  t = await startTestNode({ PLUMB_LOGIN_RATE_PER_MINUTE: '1000', PLUMB_LOGIN_BURST: '1000' });
});

afterAll(() => t.stop());

describe('GET /api/user/me', () => {
  it('answers who is signed in', async () => {
    const me = await person(t, 'admin', 'me@example.com');
    const res = await as(t, me, 'GET', '/api/user/me');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: me.id, email: 'me@example.com', role: 'admin' });
  });

  it('answers 401 without a session and 403 to an API token', async () => {
    expect((await as(t, undefined, 'GET', '/api/user/me')).status).toBe(401);
    const token = await t.token(['stats:read']);
    const res = await fetch(`${t.url}/api/user/me`, { headers: { Authorization: `Bearer ${token}` } });
    expect(res.status).toBe(403);
  });
});

describe('POST /api/user/password', () => {
  it('sets the new password, ends the other sessions and keeps this one with a fresh cookie', async () => {
    const me = await person(t, 'user', 'changer@example.com');
    const elsewhere = withCookie(me, await login('changer@example.com', me.password));
    expect((await as(t, elsewhere, 'GET', '/api/user/me')).status).toBe(200);

    const res = await as(t, me, 'POST', '/api/user/password', { current_password: me.password, new_password: 'a brand new passphrase' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
    const fresh = withCookie(me, cookiesOf(res));
    expect(fresh.cookie).toMatch(/^plumb_session=/);

    expect((await as(t, fresh, 'GET', '/api/user/me')).body).toEqual({ id: me.id, email: 'changer@example.com', role: 'user' });
    expect((await as(t, me, 'GET', '/api/user/me')).status).toBe(401);
    expect((await as(t, elsewhere, 'GET', '/api/user/me')).status).toBe(401);
    expect(await login('changer@example.com', me.password)).toBe('refused 401');
    expect(await login('changer@example.com', 'a brand new passphrase')).toMatch(/^plumb_session=/);
  });

  it('keeps remember-me for the changer and forgets every older remembered sign-in', async () => {
    const me = await person(t, 'user', 'remembered@example.com');
    const here = withCookie(me, await login('remembered@example.com', me.password, true));
    const other = await login('remembered@example.com', me.password, true);
    const otherRemember = other.split('; ').find((c) => c.startsWith('plumb_remember='))!;

    const res = await as(t, here, 'POST', '/api/user/password', { current_password: me.password, new_password: 'another new passphrase' });
    expect(res.status).toBe(200);
    const renewed = cookiesOf(res);
    expect(renewed).toMatch(/plumb_remember=/);
    const rememberOnly = withCookie(me, renewed.split('; ').find((c) => c.startsWith('plumb_remember='))!);
    expect((await as(t, rememberOnly, 'GET', '/api/user/me')).status).toBe(200);
    expect((await as(t, withCookie(me, otherRemember), 'GET', '/api/user/me')).status).toBe(401);
  });

  it('refuses a wrong current password with 403, leaving the session and password alone', async () => {
    const me = await person(t, 'user', 'careful@example.com');
    const res = await as(t, me, 'POST', '/api/user/password', { current_password: 'not my password', new_password: 'a brand new passphrase' });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ message: 'The current password is not correct', code: 'forbidden' });
    expect((await as(t, me, 'GET', '/api/user/me')).status).toBe(200);
    expect(await login('careful@example.com', me.password)).toMatch(/^plumb_session=/);
  });

  it('refuses a new password that breaks the rules', async () => {
    const me = await person(t, 'user');
    const res = await as(t, me, 'POST', '/api/user/password', { current_password: me.password, new_password: 'short' });
    expect([res.status, res.body]).toEqual([
      400,
      { message: 'new_password must be at least 10 characters', code: 'validation_failed', fields: [{ field: 'new_password', message: 'new_password must be at least 10 characters', type: 'password' }] },
    ]);
    expect((await as(t, me, 'GET', '/api/user/me')).status).toBe(200);
  });

  it('refuses anonymous callers and API tokens', async () => {
    expect((await as(t, undefined, 'POST', '/api/user/password', { current_password: 'x', new_password: 'a brand new passphrase' })).status).toBe(401);
    const token = await t.token(['stats:read']);
    const res = await fetch(`${t.url}/api/user/password`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ current_password: 'x', new_password: 'a brand new passphrase' }),
    });
    expect(res.status).toBe(403);
  });
});
