// Invitations through a real node: inviting someone without an account, listing, resending,
// revoking, and accepting (account created, team joined, signed in), and every way a link can be
// unusable: unknown, used, expired, revoked, replaced by a resend, or its email taken meanwhile.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Context } from 'moleculer';
import { as, type Person, person } from '../support/accounts.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

const PUBLIC_URL = 'https://analytics.example.org';
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TOKEN = /^[A-Za-z0-9_-]{43}$/;
const DAY = 86_400_000;
const PASSWORD = 'a brand new password';

let t: TestNode;
let owner: Person;
let admin: Person;
let member: Person;
let teamId: string;
let n = 0;
const events: { name: string; data: unknown }[] = [];

const fresh = () => `invitee${++n}-${Date.now()}@example.com`;
const invite = (email: string, role = 'member', who: Person = owner, team = teamId) => as(t, who, 'POST', `/api/user/teams/${team}/members`, { email, role });
const accept = (token: string, password = PASSWORD) => as(t, undefined, 'POST', '/api/auth/accept-invite', { token, password });
const sql = (text: string, params: unknown[]) => t.node.runtime.metadata().query(text, params);
const dead = (message: string) => ({ status: 404, body: { message, code: 'not_found' } });

beforeAll(async () => {
  t = await startTestNode({
    PLUMB_PUBLIC_URL: PUBLIC_URL,
    PLUMB_API_RATE_PER_SECOND: '100000',
    PLUMB_API_BURST: '100000',
    PLUMB_LOGIN_RATE_PER_MINUTE: '1000',
    PLUMB_LOGIN_BURST: '1000',
  });
  owner = await person(t);
  admin = await person(t);
  member = await person(t);
  teamId = (await as(t, owner, 'POST', '/api/user/teams', { name: 'Inviters' })).body.id as string;
  await as(t, owner, 'POST', `/api/user/teams/${teamId}/members`, { email: admin.email, role: 'admin' });
  await as(t, owner, 'POST', `/api/user/teams/${teamId}/members`, { email: member.email, role: 'member' });
  await t.node.broker.createService({
    name: 'ops-invite-spy',
    events: {
      'ops.team.member.*'(ctx: Context) {
        events.push({ name: ctx.eventName ?? '', data: ctx.params });
      },
    },
  });
});

afterAll(() => t.stop());

describe('POST /api/user/teams/:id/members for an email without an account', () => {
  it('creates a 7-day invitation and answers its one-time link; only the SHA-256 of the token is stored', async () => {
    const email = fresh();
    const before = Date.now();
    const res = await invite(email.toUpperCase(), 'admin', admin);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      invitation: { id: expect.stringMatching(UUID), email, role: 'admin', expires_at: expect.stringMatching(ISO) },
      invite_token: expect.stringMatching(TOKEN),
      invite_url: `${PUBLIC_URL}/invite/${res.body.invite_token}`,
    });
    const expires = Date.parse((res.body.invitation as { expires_at: string }).expires_at);
    expect(expires).toBeGreaterThanOrEqual(before + 7 * DAY - 5_000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 7 * DAY + 5_000);
    const { rows } = await sql('SELECT token_hash, invited_by FROM invitations WHERE email = $1', [email]);
    expect(rows).toEqual([{ token_hash: expect.anything(), invited_by: admin.id }]);
    const stored = Buffer.from(rows[0].token_hash as Uint8Array);
    expect(stored.equals(createHash('sha256').update(res.body.invite_token as string).digest())).toBe(true);
  });

  it('refuses a second invitation while one is pending, and an owner invitation from an admin', async () => {
    const email = fresh();
    expect((await invite(email)).status).toBe(201);
    expect(await invite(email)).toMatchObject({ status: 409, body: { message: `${email} already has a pending invitation to this team; resend it instead`, code: 'conflict' } });
    expect(await invite(fresh(), 'owner', admin)).toMatchObject({ status: 403, body: { message: 'Only a team owner can add an owner', code: 'forbidden' } });
    expect(await invite(fresh(), 'member', member)).toMatchObject({ status: 403, body: { message: 'You must be a team admin to do this', code: 'forbidden' } });
  });

  it('lets only one of two simultaneous invitations of the same email through', async () => {
    const email = fresh();
    const results = await Promise.all([invite(email, 'member', owner), invite(email, 'member', admin)]);
    expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
  });
});

describe('GET /api/user/teams/:id/invitations', () => {
  it('lists open invitations, newest first, to team admins only', async () => {
    const team = (await as(t, owner, 'POST', '/api/user/teams', { name: 'Listing' })).body.id as string;
    await as(t, owner, 'POST', `/api/user/teams/${team}/members`, { email: admin.email, role: 'admin' });
    const first = (await invite('first@example.com', 'member', owner, team)).body.invitation as { id: string };
    const second = (await invite('second@example.com', 'admin', owner, team)).body.invitation as { id: string };
    const accepted = await invite('third@example.com', 'member', owner, team);
    expect((await accept(accepted.body.invite_token as string)).status).toBe(201);
    await sql("UPDATE invitations SET expires_at = now() - interval '1 day' WHERE id = $1", [first.id]);
    const res = await as(t, admin, 'GET', `/api/user/teams/${team}/invitations`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      items: [
        { id: second.id, email: 'second@example.com', role: 'admin', status: 'pending', created_at: expect.stringMatching(ISO), expires_at: expect.stringMatching(ISO) },
        { id: first.id, email: 'first@example.com', role: 'member', status: 'expired', created_at: expect.stringMatching(ISO), expires_at: expect.stringMatching(ISO) },
      ],
      total: 2,
      limit: 25,
      offset: 0,
      has_more: false,
    });
    expect(await as(t, member, 'GET', `/api/user/teams/${team}/invitations`)).toMatchObject({ status: 404 });
    expect(await as(t, member, 'GET', `/api/user/teams/${teamId}/invitations`)).toMatchObject({ status: 403, body: { message: 'You must be a team admin to do this' } });
  });
});

describe('POST /api/auth/accept-invite', () => {
  it('creates the account, joins the team with the invited role and signs the person in', async () => {
    const email = fresh();
    const { invite_token: token } = (await invite(email, 'admin')).body as { invite_token: string };
    const mark = events.length;
    const res = await accept(token);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ status: 'ok', user: { id: expect.stringMatching(UUID), email, role: 'user' }, team_id: teamId });
    const userId = (res.body.user as { id: string }).id;
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('plumb_session='))!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/Secure/);
    const newcomer: Person = { id: userId, email, role: 'user', password: PASSWORD, cookie: cookie.split(';')[0] };
    expect((await as(t, newcomer, 'GET', '/api/user/teams')).body.items).toEqual([
      { id: teamId, name: 'Inviters', role: 'admin', created_at: expect.stringMatching(ISO), archived_at: null },
    ]);
    expect((await as(t, owner, 'GET', `/api/user/teams/${teamId}/members`)).body.items).toContainEqual({ user_id: userId, email, role: 'admin', joined_at: expect.stringMatching(ISO) });
    const login = await as(t, undefined, 'POST', '/api/login', { email, password: PASSWORD });
    expect(login.body).toMatchObject({ status: 'ok' });
    for (let i = 0; i < 100 && events.length === mark; i++) await new Promise((r) => setTimeout(r, 10));
    expect(events.slice(mark)).toEqual([{ name: 'ops.team.member.added', data: { team_id: teamId, user_id: userId, email, role: 'admin' } }]);
    // Used once: the link is dead now, and the invitation is off the list.
    expect(await accept(token)).toMatchObject(dead('This invitation has already been used'));
    const open = (await as(t, owner, 'GET', `/api/user/teams/${teamId}/invitations?limit=200`)).body.items as { email: string }[];
    expect(open.map((i) => i.email)).not.toContain(email);
  });

  it('refuses an unknown token', async () => {
    expect(await accept('x'.repeat(43))).toMatchObject(dead('This invitation link is not valid'));
    expect((await accept('')).status).toBe(400);
  });

  it('refuses an expired invitation, which a resend brings back with a new link', async () => {
    const email = fresh();
    const created = (await invite(email)).body as { invitation: { id: string }; invite_token: string };
    await sql("UPDATE invitations SET expires_at = now() - interval '1 second' WHERE id = $1", [created.invitation.id]);
    expect(await accept(created.invite_token)).toMatchObject(dead('This invitation has expired; ask for a new one'));
    const resent = await as(t, admin, 'POST', `/api/user/teams/${teamId}/invitations/${created.invitation.id}/resend`, {});
    expect(resent.status).toBe(200);
    expect(resent.body).toEqual({
      invitation: { id: created.invitation.id, email, role: 'member', expires_at: expect.stringMatching(ISO) },
      invite_token: expect.stringMatching(TOKEN),
      invite_url: `${PUBLIC_URL}/invite/${resent.body.invite_token}`,
    });
    expect(Date.parse((resent.body.invitation as { expires_at: string }).expires_at)).toBeGreaterThan(Date.now() + 7 * DAY - 60_000);
    expect(resent.body.invite_token).not.toBe(created.invite_token);
    expect(await accept(created.invite_token)).toMatchObject(dead('This invitation link is not valid'));
    expect((await accept(resent.body.invite_token as string)).status).toBe(201);
  });

  it('lets a new invitation replace an expired one for the same email', async () => {
    const email = fresh();
    const first = (await invite(email)).body as { invitation: { id: string }; invite_token: string };
    await sql("UPDATE invitations SET expires_at = now() - interval '1 second' WHERE id = $1", [first.invitation.id]);
    const second = await invite(email, 'admin');
    expect(second.status).toBe(201);
    expect(await accept(first.invite_token)).toMatchObject(dead('This invitation was revoked'));
    expect(await accept(second.body.invite_token as string)).toMatchObject({ status: 201 });
  });

  it('refuses a revoked invitation', async () => {
    const email = fresh();
    const created = (await invite(email)).body as { invitation: { id: string }; invite_token: string };
    const path = `/api/user/teams/${teamId}/invitations/${created.invitation.id}`;
    expect(await as(t, member, 'DELETE', path)).toMatchObject({ status: 403 });
    expect(await as(t, admin, 'DELETE', path)).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(await accept(created.invite_token)).toMatchObject(dead('This invitation was revoked'));
    expect(await as(t, admin, 'DELETE', path)).toMatchObject({ status: 404, body: { message: 'Invitation not found', code: 'not_found' } });
    expect(await as(t, admin, 'POST', `${path}/resend`, {})).toMatchObject({ status: 404, body: { message: 'Invitation not found' } });
  });

  it('refuses when an account with the email appeared meanwhile: they sign in and are added instead', async () => {
    const email = fresh();
    const { invite_token: token } = (await invite(email)).body as { invite_token: string };
    await person(t, 'user', email);
    expect(await accept(token)).toMatchObject({
      status: 409,
      body: { message: 'An account with this email already exists; sign in and ask a team admin to add you', code: 'conflict' },
    });
  });

  it('refuses a weak password and leaves the invitation usable', async () => {
    const { invite_token: token } = (await invite(fresh())).body as { invite_token: string };
    expect(await accept(token, 'short')).toMatchObject({ status: 400, body: { message: 'password must be at least 10 characters', code: 'validation_failed' } });
    expect((await accept(token)).status).toBe(201);
  });

  it('refuses to join an archived team', async () => {
    const team = (await as(t, owner, 'POST', '/api/user/teams', { name: 'Soon archived' })).body.id as string;
    const { invite_token: token } = (await invite(fresh(), 'member', owner, team)).body as { invite_token: string };
    expect((await as(t, owner, 'POST', `/api/user/teams/${team}/archive`, {})).status).toBe(200);
    expect(await accept(token)).toMatchObject({ status: 409, body: { message: 'This team is archived; it accepts no new members', code: 'conflict' } });
  });
});

describe('POST /api/user/teams/:id/invitations/:invitationId/resend', () => {
  it('kills the old link at once, and is for owners when the invitation is for an owner', async () => {
    const created = (await invite(fresh(), 'owner')).body as { invitation: { id: string }; invite_token: string };
    const path = `/api/user/teams/${teamId}/invitations/${created.invitation.id}/resend`;
    expect(await as(t, admin, 'POST', path, {})).toMatchObject({ status: 403, body: { message: 'Only a team owner can resend an owner invitation', code: 'forbidden' } });
    const resent = await as(t, owner, 'POST', path, {});
    expect(resent.status).toBe(200);
    expect(await accept(created.invite_token)).toMatchObject(dead('This invitation link is not valid'));
    const joined = await accept(resent.body.invite_token as string);
    expect(joined.status).toBe(201);
    expect((await as(t, owner, 'GET', `/api/user/teams/${teamId}/members?limit=200`)).body.items).toContainEqual(
      expect.objectContaining({ user_id: (joined.body.user as { id: string }).id, role: 'owner' }),
    );
    expect(await as(t, owner, 'POST', path, {})).toMatchObject({ status: 404, body: { message: 'Invitation not found' } });
  });
});
