// POST /api/initial-user with "keep me signed in": the first owner's session is remembered exactly
// as a remembered login is (the remember-me cookie, the session check renewing from it alone, the
// extend), and without the box it is a plain session, as a login without it.
import { afterEach, describe, expect, it } from '@jest/globals';
import { cookiesOf } from '../support/accounts.ts';
import { request } from '../support/instance.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

const OWNER = { email: 'owner@example.com', password: 'correct horse battery' };
let t: TestNode | undefined;

function call(method: string, path: string, body?: unknown, cookie?: string) {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (cookie) headers.Cookie = cookie;
  return request(`${t!.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
}

const rememberCookie = (res: { headers: Headers }) => res.headers.getSetCookie().find((c) => c.startsWith('plumb_remember='));

afterEach(async () => {
  await t?.stop();
  t = undefined;
});

describe('POST /api/initial-user', () => {
  it('keeps the first owner signed in when asked, as a remembered login does', async () => {
    t = await startTestNode({ PLUMB_AUTH_SESSION_MINUTES: '15' });
    const setup = await call('POST', '/api/initial-user', { ...OWNER, remember_me: true });
    expect(setup.status).toBe(201);
    expect(setup.body.session).toMatchObject({ remembered: true, remember_me_duration_days: 30 });
    const remember = rememberCookie(setup)!;
    expect(remember).toMatch(/Max-Age=2592000/);
    expect(remember).toMatch(/HttpOnly/);

    // The session check reports the remembered session, and the extend keeps it remembered.
    const checked = await call('GET', '/api/auth/session', undefined, cookiesOf(setup));
    expect([checked.status, checked.body.remembered]).toEqual([200, true]);
    const extended = await call('POST', '/api/auth/session/extend', {}, cookiesOf(setup));
    expect([extended.status, extended.body.remembered]).toEqual([200, true]);

    // Once the short session is gone, the remember-me token alone signs the owner back in.
    const renewed = await call('GET', '/api/auth/session', undefined, remember.split(';')[0]);
    expect(renewed.status).toBe(200);
    expect(renewed.body).toMatchObject({ remembered: true, user: { email: OWNER.email } });
    expect(rememberCookie(renewed)).toBeDefined();
  });

  it('starts a plain session without the box, with no remember-me cookie', async () => {
    t = await startTestNode({ PLUMB_AUTH_SESSION_MINUTES: '15' });
    const setup = await call('POST', '/api/initial-user', OWNER);
    expect(setup.status).toBe(201);
    expect(setup.body.session).toMatchObject({ remembered: false, remember_expires_at: null });
    expect(rememberCookie(setup)).toBeUndefined();
    const checked = await call('GET', '/api/auth/session', undefined, cookiesOf(setup));
    expect([checked.status, checked.body.remembered]).toEqual([200, false]);
  });

  it('refuses a remember_me that is not a yes or no, naming it, and creates nobody', async () => {
    t = await startTestNode();
    const res = await call('POST', '/api/initial-user', { ...OWNER, remember_me: 'perhaps' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'validation_failed', fields: [expect.objectContaining({ field: 'remember_me' })] });
    expect((await call('GET', '/api/status')).body).toMatchObject({ needs_setup: true });
  });
});
