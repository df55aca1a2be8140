// Invitations through a real node: inviting by email (with or without an account), listing,
// resending, revoking, accepting (an account created from the link, or an existing one signed in,
// from the link or from the dashboard), declining, and every way a link can be unusable: unknown,
// used, expired, revoked, replaced by a resend, or its email taken meanwhile.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Context } from 'moleculer';
import { as, joinTeam, type Person, person } from '../support/accounts.ts';
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
  await joinTeam(t, owner, teamId, admin, 'admin');
  await joinTeam(t, owner, teamId, member, 'member');
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
    await joinTeam(t, owner, team, admin, 'admin');
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

  it('refuses an unknown token, and a new account without a password', async () => {
    expect(await accept('x'.repeat(43))).toMatchObject(dead('This invitation link is not valid'));
    expect((await accept('')).status).toBe(400);
    const { invite_token: token } = (await invite(fresh())).body as { invite_token: string };
    expect(await as(t, undefined, 'POST', '/api/auth/accept-invite', { token })).toMatchObject({
      status: 400,
      body: { code: 'validation_failed', fields: [{ field: 'password', message: 'password is required to create your account', type: 'required' }] },
    });
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
    expect(await accept(first.invite_token)).toMatchObject(dead('This invitation was revoked or declined'));
    expect(await accept(second.body.invite_token as string)).toMatchObject({ status: 201 });
  });

  it('refuses a revoked invitation', async () => {
    const email = fresh();
    const created = (await invite(email)).body as { invitation: { id: string }; invite_token: string };
    const path = `/api/user/teams/${teamId}/invitations/${created.invitation.id}`;
    expect(await as(t, member, 'DELETE', path)).toMatchObject({ status: 403 });
    expect(await as(t, admin, 'DELETE', path)).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(await accept(created.invite_token)).toMatchObject(dead('This invitation was revoked or declined'));
    expect(await as(t, admin, 'DELETE', path)).toMatchObject({ status: 404, body: { message: 'Invitation not found', code: 'not_found' } });
    expect(await as(t, admin, 'POST', `${path}/resend`, {})).toMatchObject({ status: 404, body: { message: 'Invitation not found' } });
  });

  it('refuses a password for an email that has an account: its owner signs in to accept', async () => {
    const email = fresh();
    const { invite_token: token } = (await invite(email)).body as { invite_token: string };
    const existing = await person(t, 'user', email);
    expect(await accept(token)).toMatchObject({
      status: 409,
      body: { message: 'An account with this email already exists: sign in with it, then open this link again to join', code: 'conflict' },
    });
    // The password typed on the link did not become theirs, and the link still works for them.
    expect((await as(t, undefined, 'POST', '/api/login', { email, password: PASSWORD })).status).toBe(401);
    expect(await as(t, existing, 'POST', '/api/auth/accept-invite', { token })).toMatchObject({ status: 201, body: { status: 'ok', user: { id: existing.id }, team_id: teamId } });
  });

  it('lets a signed-in person accept an invitation to their own email, without a password', async () => {
    const invitee = await person(t);
    const { invite_token: token } = (await invite(invitee.email, 'admin')).body as { invite_token: string };
    const mark = events.length;
    const res = await as(t, invitee, 'POST', '/api/auth/accept-invite', { token });
    expect(res).toMatchObject({ status: 201, body: { status: 'ok', user: { id: invitee.id, email: invitee.email, role: 'user' }, team_id: teamId } });
    // Their session goes on as it was: no new cookie.
    expect(res.headers.getSetCookie()).toEqual([]);
    expect((await as(t, owner, 'GET', `/api/user/teams/${teamId}/members?limit=200`)).body.items).toContainEqual(expect.objectContaining({ user_id: invitee.id, role: 'admin' }));
    for (let i = 0; i < 100 && events.length === mark; i++) await new Promise((r) => setTimeout(r, 10));
    expect(events.slice(mark)).toEqual([{ name: 'ops.team.member.added', data: { team_id: teamId, user_id: invitee.id, email: invitee.email, role: 'admin' } }]);
  });

  it('refuses a signed-in person whose email is not the invited one, and leaves the link usable', async () => {
    const email = fresh();
    const { invite_token: token } = (await invite(email)).body as { invite_token: string };
    const someoneElse = await person(t);
    expect(await as(t, someoneElse, 'POST', '/api/auth/accept-invite', { token })).toMatchObject({
      status: 403,
      body: { message: 'This invitation is for another email address; sign in with that one to accept it', code: 'forbidden' },
    });
    expect((await as(t, owner, 'GET', `/api/user/teams/${teamId}/members?limit=200`)).body.items).not.toContainEqual(expect.objectContaining({ user_id: someoneElse.id }));
    expect((await accept(token)).status).toBe(201);
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

describe('GET /api/user/invitations and accepting or declining one', () => {
  it('lists a signed-in person’s pending invitations, and accepting one joins the team', async () => {
    const invitee = await person(t);
    const team = (await as(t, owner, 'POST', '/api/user/teams', { name: 'Welcoming' })).body.id as string;
    const created = (await invite(invitee.email.toUpperCase(), 'admin', owner, team)).body as { invitation: { id: string } };
    const expired = (await invite(invitee.email, 'member')).body as { invitation: { id: string } };
    await sql("UPDATE invitations SET expires_at = now() - interval '1 second' WHERE id = $1", [expired.invitation.id]);
    const listed = await as(t, invitee, 'GET', '/api/user/invitations');
    expect(listed).toMatchObject({ status: 200 });
    expect(listed.body).toEqual({
      invitations: [{ id: created.invitation.id, team_id: team, team_name: 'Welcoming', role: 'admin', invited_by: owner.email, expires_at: expect.stringMatching(ISO) }],
    });
    // Somebody else's invitation is nobody's business: not listed, and 404 to accept or decline.
    const stranger = await person(t);
    expect((await as(t, stranger, 'GET', '/api/user/invitations')).body).toEqual({ invitations: [] });
    expect(await as(t, stranger, 'POST', `/api/user/invitations/${created.invitation.id}/accept`, {})).toMatchObject({ status: 404, body: { message: 'Invitation not found' } });
    expect(await as(t, stranger, 'POST', `/api/user/invitations/${created.invitation.id}/decline`, {})).toMatchObject({ status: 404 });
    const joined = await as(t, invitee, 'POST', `/api/user/invitations/${created.invitation.id}/accept`, {});
    expect(joined).toMatchObject({ status: 200, body: { status: 'ok', team_id: team, role: 'admin' } });
    expect((await as(t, invitee, 'GET', '/api/user/teams')).body.items).toContainEqual(expect.objectContaining({ id: team, role: 'admin' }));
    expect((await as(t, invitee, 'GET', '/api/user/invitations')).body).toEqual({ invitations: [] });
    expect(await as(t, invitee, 'POST', `/api/user/invitations/${created.invitation.id}/accept`, {})).toMatchObject({ status: 404 });
    expect(await as(t, undefined, 'GET', '/api/user/invitations')).toMatchObject({ status: 401 });
  });

  it('declines an invitation: its link stops working and the team’s audit log says so', async () => {
    const invitee = await person(t);
    const created = (await invite(invitee.email)).body as { invitation: { id: string }; invite_token: string };
    expect(await as(t, invitee, 'POST', `/api/user/invitations/${created.invitation.id}/decline`, {})).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(await as(t, invitee, 'POST', '/api/auth/accept-invite', { token: created.invite_token })).toMatchObject(dead('This invitation was revoked or declined'));
    const audit = await sql("SELECT action, actor_user_id FROM audit_log WHERE team_id = $1 AND action = 'invitation.declined'", [teamId]);
    expect(audit.rows).toContainEqual({ action: 'invitation.declined', actor_user_id: invitee.id });
    expect((await as(t, owner, 'GET', `/api/user/teams/${teamId}/members?limit=200`)).body.items).not.toContainEqual(expect.objectContaining({ user_id: invitee.id }));
  });
});
