// Instance user administration through a real node: who may list, create, re-role, reset MFA and
// delete accounts, the last-owner rules, sessions ended by a role change, and the ops events.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Context } from 'moleculer';
import { createApiClient } from '../../lib/auth/api-clients.ts';
import { as, type Person, person, withToken } from '../support/accounts.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

let t: TestNode;
let owner: Person;
let admin: Person;
let user: Person;
let ownerToken: string;
const events: { name: string; data: unknown }[] = [];


async function login(email: string, password: string): Promise<string> {
  const res = await fetch(`${t.url}/api/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ email, password }) });
  expect(res.status).toBe(200);
  return res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
}

const withCookie = (who: Person, cookie: string): Person => ({ ...who, cookie });

beforeAll(async () => {
  t = await startTestNode({ PLUMB_LOGIN_RATE_PER_MINUTE: '1000', PLUMB_LOGIN_BURST: '1000' });
  owner = await person(t, 'owner', 'owner@example.com');
  admin = await person(t, 'admin', 'admin@example.com');
  user = await person(t, 'user', 'user@example.com');
  ownerToken = (await createApiClient(t.node.runtime.metadata(), { name: 'owner token', scopes: ['stats:read'], sites: [], ownerUserId: owner.id })).token;
  await t.node.broker.createService({
    name: 'ops-spy',
    events: {
      'ops.system.user.*'(ctx: Context) {
        events.push({ name: ctx.eventName ?? '', data: ctx.params });
      },
    },
  });
});

afterAll(() => t.stop());

describe('GET /api/admin/users', () => {
  it('lists every account, oldest first, with the page', async () => {
    const res = await as(t, owner, 'GET', '/api/admin/users');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      items: [
        { id: owner.id, email: 'owner@example.com', role: 'owner', totp_enabled: false, created_at: expect.stringMatching(ISO) },
        { id: admin.id, email: 'admin@example.com', role: 'admin', totp_enabled: false, created_at: expect.stringMatching(ISO) },
        { id: user.id, email: 'user@example.com', role: 'user', totp_enabled: false, created_at: expect.stringMatching(ISO) },
      ],
      total: 3,
      limit: 25,
      offset: 0,
      has_more: false,
    });
  });

  it('pages with limit and offset', async () => {
    const res = await as(t, admin, 'GET', '/api/admin/users?limit=1&offset=1');
    expect(res.body).toMatchObject({ items: [{ email: 'admin@example.com' }], total: 3, limit: 1, offset: 1, has_more: true });
    expect((await as(t, admin, 'GET', '/api/admin/users?limit=500')).status).toBe(400);
  });

  it.each([
    ['an instance user', 'user', 403],
    ["the owner's API token", 'token', 403],
    ['nobody', 'anonymous', 401],
  ])('refuses %s', async (_name, who, status) => {
    const res = who === 'token' ? await withToken(t, ownerToken, 'GET', '/api/admin/users') : await as(t, who === 'user' ? user : undefined, 'GET', '/api/admin/users');
    expect(res.status).toBe(status);
  });
});

describe('POST /api/admin/users', () => {
  it('lets an owner create an admin who can then sign in', async () => {
    const res = await as(t, owner, 'POST', '/api/admin/users', { email: 'New-Admin@Example.com', password: 'a fine new password', role: 'admin' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ user: { id: expect.any(String), email: 'new-admin@example.com', role: 'admin', totp_enabled: false, created_at: expect.stringMatching(ISO) } });
    await login('new-admin@example.com', 'a fine new password');
    expect(events).toContainEqual({ name: 'ops.system.user.updated', data: { user_id: (res.body.user as { id: string }).id, email: 'new-admin@example.com', role: 'admin' } });
  });

  it('lets an admin create a plain user', async () => {
    const res = await as(t, admin, 'POST', '/api/admin/users', { email: 'made-by-admin@example.com', password: 'a fine new password', role: 'user' });
    expect(res.status).toBe(201);
    expect(res.body.user).toMatchObject({ email: 'made-by-admin@example.com', role: 'user' });
  });

  it.each([
    ['an admin creating an admin', 'admin', 'admin', 403],
    ['an admin creating an owner', 'admin', 'owner', 403],
    ['an instance user', 'user', 'user', 403],
  ])('refuses %s', async (_name, who, role, status) => {
    const res = await as(t, who === 'admin' ? admin : user, 'POST', '/api/admin/users', { email: `refused-${who}-${role}@example.com`, password: 'a fine new password', role });
    expect({ status: res.status, code: res.body.code }).toEqual({ status, code: 'forbidden' });
  });

  it('refuses an API token even of an owner', async () => {
    const res = await withToken(t, ownerToken, 'POST', '/api/admin/users', { email: 'by-token@example.com', password: 'a fine new password', role: 'user' });
    expect(res.status).toBe(403);
  });

  it('refuses a taken email (409), a short password and an unknown role (400)', async () => {
    expect((await as(t, owner, 'POST', '/api/admin/users', { email: 'USER@example.com', password: 'a fine new password', role: 'user' })).status).toBe(409);
    const short = await as(t, owner, 'POST', '/api/admin/users', { email: 'short@example.com', password: 'short', role: 'user' });
    expect([short.status, short.body.message]).toEqual([400, 'password must be at least 10 characters']);
    expect((await as(t, owner, 'POST', '/api/admin/users', { email: 'root@example.com', password: 'a fine new password', role: 'root' })).status).toBe(400);
  });
});

describe('PATCH /api/admin/users/:id', () => {
  it('changes the role, ends every session of that user, and announces it', async () => {
    const target = await person(t, 'user', 'promoted@example.com');
    const secondSession = await login('promoted@example.com', target.password);
    expect((await as(t, target, 'GET', '/api/user/me')).status).toBe(200);
    const res = await as(t, owner, 'PATCH', `/api/admin/users/${target.id}`, { role: 'admin' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ user: { id: target.id, email: 'promoted@example.com', role: 'admin', totp_enabled: false, created_at: expect.stringMatching(ISO) } });
    expect((await as(t, target, 'GET', '/api/user/me')).status).toBe(401);
    expect((await as(t, withCookie(target, secondSession), 'GET', '/api/user/me')).status).toBe(401);
    const fresh = withCookie(target, await login('promoted@example.com', target.password));
    expect((await as(t, fresh, 'GET', '/api/user/me')).body).toEqual({ id: target.id, email: 'promoted@example.com', role: 'admin' });
    expect(events).toContainEqual({ name: 'ops.system.user.updated', data: { user_id: target.id, email: 'promoted@example.com', role: 'admin' } });
  });

  it('lets an admin touch plain users only', async () => {
    const other = await person(t, 'admin');
    const plain = await person(t, 'user');
    expect((await as(t, admin, 'PATCH', `/api/admin/users/${plain.id}`, { role: 'admin' })).status).toBe(403);
    expect((await as(t, admin, 'PATCH', `/api/admin/users/${other.id}`, { role: 'user' })).status).toBe(403);
    expect((await as(t, admin, 'PATCH', `/api/admin/users/${owner.id}`, { role: 'user' })).status).toBe(403);
    expect((await as(t, admin, 'PATCH', `/api/admin/users/${admin.id}`, { role: 'owner' })).status).toBe(403);
    expect((await as(t, admin, 'PATCH', `/api/admin/users/${plain.id}`, { role: 'user' })).body).toMatchObject({ user: { id: plain.id, role: 'user' } });
  });

  it('answers 404 for an unknown user and 400 for a malformed id', async () => {
    expect((await as(t, owner, 'PATCH', '/api/admin/users/00000000-0000-4000-8000-000000000000', { role: 'user' })).status).toBe(404);
    expect((await as(t, owner, 'PATCH', '/api/admin/users/not-a-uuid', { role: 'user' })).status).toBe(400);
  });

  it('never leaves the instance without an owner', async () => {
    const res = await as(t, owner, 'PATCH', `/api/admin/users/${owner.id}`, { role: 'admin' });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ message: 'The instance must keep at least one owner', code: 'conflict' });
  });

  it('lets an owner step down once another owner exists, keeping them signed in', async () => {
    const second = await person(t, 'owner');
    const res = await as(t, second, 'PATCH', `/api/admin/users/${second.id}`, { role: 'admin' });
    expect(res.status).toBe(200);
    const renewed = res.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    expect((await as(t, second, 'GET', '/api/user/me')).status).toBe(401);
    expect((await as(t, withCookie(second, renewed), 'GET', '/api/user/me')).body).toMatchObject({ role: 'admin' });
  });
});

describe('POST /api/admin/users/:id/disable-mfa', () => {
  it('clears the TOTP enrolment and recovery codes and ends the sessions', async () => {
    const target = await person(t, 'user');
    const db = t.node.runtime.metadata();
    await db.query("UPDATE users SET totp_secret = 'JBSWY3DPEHPK3PXP', totp_pending_secret = 'X', totp_enabled_at = now(), totp_last_step = 42 WHERE id = $1", [target.id]);
    await db.query("INSERT INTO recovery_codes (user_id, code_hash) VALUES ($1, '\\x01'), ($1, '\\x02')", [target.id]);
    const res = await as(t, admin, 'POST', `/api/admin/users/${target.id}/disable-mfa`);
    expect(res.status).toBe(200);
    expect(res.body.user).toMatchObject({ id: target.id, totp_enabled: false });
    const { rows } = await db.query('SELECT totp_secret, totp_pending_secret, totp_enabled_at, totp_last_step FROM users WHERE id = $1', [target.id]);
    expect(rows).toEqual([{ totp_secret: null, totp_pending_secret: null, totp_enabled_at: null, totp_last_step: null }]);
    expect((await db.query('SELECT 1 FROM recovery_codes WHERE user_id = $1', [target.id])).rows).toEqual([]);
    expect((await as(t, target, 'GET', '/api/user/me')).status).toBe(401);
  });

  it("refuses an admin resetting an owner's second factor, and instance users", async () => {
    expect((await as(t, admin, 'POST', `/api/admin/users/${owner.id}/disable-mfa`)).status).toBe(403);
    expect((await as(t, user, 'POST', `/api/admin/users/${admin.id}/disable-mfa`)).status).toBe(403);
  });
});

describe('DELETE /api/admin/users/:id', () => {
  it('deletes the account, ends its sessions, kills its tokens, and announces it', async () => {
    const target = await person(t, 'user', 'leaving@example.com');
    const created = await as(t, target, 'POST', '/api/user/api-clients', { name: 'ci', scopes: ['stats:read'], sites: [] });
    const token = created.body.token as string;
    expect((await withToken(t, token, 'GET', '/api/admin/users')).status).toBe(403);
    const res = await as(t, owner, 'DELETE', `/api/admin/users/${target.id}`);
    expect(res.status).toBe(204);
    expect((await as(t, target, 'GET', '/api/user/me')).status).toBe(401);
    expect((await withToken(t, token, 'GET', '/api/admin/users')).status).toBe(401);
    const list = await as(t, owner, 'GET', '/api/admin/users?limit=200');
    expect((list.body.items as { email: string }[]).map((u) => u.email)).not.toContain('leaving@example.com');
    expect(events).toContainEqual({ name: 'ops.system.user.deleted', data: { user_id: target.id, email: 'leaving@example.com', role: 'user' } });
  });

  it('refuses deleting yourself (409), an unknown user (404), and admins deleting admins or owners (403)', async () => {
    expect((await as(t, owner, 'DELETE', `/api/admin/users/${owner.id}`)).status).toBe(409);
    expect((await as(t, owner, 'DELETE', '/api/admin/users/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    const other = await person(t, 'admin');
    expect((await as(t, admin, 'DELETE', `/api/admin/users/${other.id}`)).status).toBe(403);
    expect((await as(t, admin, 'DELETE', `/api/admin/users/${owner.id}`)).status).toBe(403);
    expect((await withToken(t, ownerToken, 'DELETE', `/api/admin/users/${user.id}`)).status).toBe(403);
  });

  it('lets an admin delete a plain user and an owner delete another owner', async () => {
    const plain = await person(t, 'user');
    expect((await as(t, admin, 'DELETE', `/api/admin/users/${plain.id}`)).status).toBe(204);
    const otherOwner = await person(t, 'owner');
    expect((await as(t, owner, 'DELETE', `/api/admin/users/${otherOwner.id}`)).status).toBe(204);
  });
});
