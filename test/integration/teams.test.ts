// Teams and their members through a real node: listing, creating, renaming, archiving, adding,
// re-roling and removing members, who may do which (404 for a team you cannot see, 403 for one you
// can see without the role), the last-owner rules, and the operational events for webhooks.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Context } from 'moleculer';
import { as, joinTeam, type Person, person } from '../support/accounts.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const NOT_FOUND = { message: 'Team not found', code: 'not_found' };
const NEEDS_ADMIN = { message: 'You must be a team admin to do this', code: 'forbidden' };

let t: TestNode;
let instanceOwner: Person;
let instanceAdmin: Person;
const events: { name: string; data: unknown }[] = [];

/** A new team created through the API by `owner`, with these people added in these roles. */
async function teamOf(owner: Person, name: string, members: [Person, 'owner' | 'admin' | 'member'][] = []): Promise<string> {
  const created = await as(t, owner, 'POST', '/api/user/teams', { name });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  for (const [who, role] of members) expect((await joinTeam(t, owner, id, who, role)).status).toBe(200);
  return id;
}

const memberRow = (who: Person, role: string) => ({ user_id: who.id, email: who.email, role, joined_at: expect.stringMatching(ISO) });

/** Events emitted since `from`, once the asynchronous delivery has happened. */
async function eventsSince(from: number, count: number) {
  for (let i = 0; i < 100 && events.length < from + count; i++) await new Promise((r) => setTimeout(r, 10));
  return events.slice(from);
}

beforeAll(async () => {
  t = await startTestNode({ PLUMB_API_RATE_PER_SECOND: '100000', PLUMB_API_BURST: '100000' });
  instanceOwner = await person(t, 'owner');
  instanceAdmin = await person(t, 'admin');
  await t.node.broker.createService({
    name: 'ops-team-spy',
    events: {
      'ops.team.**'(ctx: Context) {
        events.push({ name: ctx.eventName ?? '', data: ctx.params });
      },
    },
  });
});

afterAll(() => t.stop());

describe('POST /api/user/teams', () => {
  it('creates the team with its creator as owner', async () => {
    const ana = await person(t);
    const mark = events.length;
    const res = await as(t, ana, 'POST', '/api/user/teams', { name: '  Marketing  ' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.stringMatching(UUID), name: 'Marketing', role: 'owner', created_at: expect.stringMatching(ISO), archived_at: null });
    const members = await as(t, ana, 'GET', `/api/user/teams/${res.body.id}/members`);
    expect(members.body).toEqual({ items: [memberRow(ana, 'owner')], total: 1, limit: 25, offset: 0, has_more: false });
    expect(await eventsSince(mark, 1)).toEqual([
      { name: 'ops.team.created', data: { team_id: res.body.id, name: 'Marketing', user_id: ana.id, email: ana.email, role: 'owner' } },
    ]);
  });

  it('refuses a blank or over-long name', async () => {
    const ana = await person(t);
    expect((await as(t, ana, 'POST', '/api/user/teams', { name: '   ' })).status).toBe(400);
    expect((await as(t, ana, 'POST', '/api/user/teams', { name: 'x'.repeat(101) })).status).toBe(400);
    expect((await as(t, ana, 'POST', '/api/user/teams', {})).status).toBe(400);
  });

  it('needs a signed-in person: 401 without one, 403 for an API token', async () => {
    expect(await as(t, undefined, 'POST', '/api/user/teams', { name: 'X' })).toMatchObject({ status: 401 });
    const token = await t.token(['stats:read']);
    const res = await fetch(`${t.url}/api/user/teams`, { headers: { Authorization: `Bearer ${token}` } });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ message: 'This action needs a signed-in user; API tokens cannot perform it', code: 'forbidden' });
  });
});

describe('GET /api/user/teams', () => {
  it('lists the teams the person belongs to, by name, with their role', async () => {
    const bo = await person(t);
    const other = await person(t);
    const beta = await teamOf(bo, 'Beta');
    const alpha = await teamOf(bo, 'alpha');
    const shared = await teamOf(other, 'Gamma', [[bo, 'member']]);
    await teamOf(other, 'Not mine');
    const res = await as(t, bo, 'GET', '/api/user/teams');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      items: [
        { id: alpha, name: 'alpha', role: 'owner', created_at: expect.stringMatching(ISO), archived_at: null },
        { id: beta, name: 'Beta', role: 'owner', created_at: expect.stringMatching(ISO), archived_at: null },
        { id: shared, name: 'Gamma', role: 'member', created_at: expect.stringMatching(ISO), archived_at: null },
      ],
      total: 3,
      limit: 25,
      offset: 0,
      has_more: false,
    });
    const second = await as(t, bo, 'GET', '/api/user/teams?limit=1&offset=1');
    expect(second.body).toMatchObject({ items: [{ id: beta }], total: 3, limit: 1, offset: 1, has_more: true });
  });

  it('shows instance owners and admins every team, with the role they hold there', async () => {
    const { rows } = await t.node.runtime.metadata().query<{ n: number }>('SELECT count(*)::int AS n FROM teams');
    const asAdmin = await as(t, instanceAdmin, 'GET', '/api/user/teams?limit=200');
    expect(asAdmin.body.total).toBe(rows[0].n);
    expect(asAdmin.body.items).toContainEqual({ id: t.team.id, name: 'Test team', role: 'admin', created_at: expect.stringMatching(ISO), archived_at: null });
    const asOwner = await as(t, instanceOwner, 'GET', '/api/user/teams?limit=200');
    expect(asOwner.body.items).toContainEqual({ id: t.team.id, name: 'Test team', role: 'owner', created_at: expect.stringMatching(ISO), archived_at: null });
  });

  it.each(['limit=0', 'limit=201', 'limit=abc', 'offset=-1'])('refuses %s with 400', async (query) => {
    const res = await as(t, instanceOwner, 'GET', `/api/user/teams?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
  });
});

describe('PATCH /api/user/teams/:id', () => {
  it('lets a team admin rename the team', async () => {
    const owner = await person(t);
    const admin = await person(t);
    const id = await teamOf(owner, 'Old name', [[admin, 'admin']]);
    const mark = events.length;
    const res = await as(t, admin, 'PATCH', `/api/user/teams/${id}`, { name: 'New name' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id, name: 'New name', role: 'admin', created_at: expect.stringMatching(ISO), archived_at: null });
    expect(await eventsSince(mark, 1)).toEqual([{ name: 'ops.team.updated', data: { team_id: id, name: 'New name' } }]);
  });

  it('answers 403 to a plain member, 404 to an outsider and for an unknown team, 400 for a bad id', async () => {
    const owner = await person(t);
    const member = await person(t);
    const outsider = await person(t);
    const id = await teamOf(owner, 'Guarded', [[member, 'member']]);
    expect(await as(t, member, 'PATCH', `/api/user/teams/${id}`, { name: 'x' })).toMatchObject({ status: 403, body: NEEDS_ADMIN });
    expect(await as(t, outsider, 'PATCH', `/api/user/teams/${id}`, { name: 'x' })).toMatchObject({ status: 404, body: NOT_FOUND });
    expect(await as(t, owner, 'PATCH', '/api/user/teams/00000000-0000-4000-8000-000000000000', { name: 'x' })).toMatchObject({ status: 404, body: NOT_FOUND });
    expect((await as(t, owner, 'PATCH', '/api/user/teams/not-a-uuid', { name: 'x' })).status).toBe(400);
  });

  it('lets an instance admin who is not a member rename any team', async () => {
    const owner = await person(t);
    const id = await teamOf(owner, 'Somebody else');
    expect(await as(t, instanceAdmin, 'PATCH', `/api/user/teams/${id}`, { name: 'Renamed by admin' })).toMatchObject({ status: 200, body: { name: 'Renamed by admin', role: 'admin' } });
  });
});

describe('POST /api/user/teams/:id/archive', () => {
  it('is for team owners; an archived team refuses new members', async () => {
    const owner = await person(t);
    const admin = await person(t);
    const newcomer = await person(t);
    const id = await teamOf(owner, 'Closing down', [[admin, 'admin']]);
    expect(await as(t, admin, 'POST', `/api/user/teams/${id}/archive`, {})).toMatchObject({ status: 403, body: { message: 'You must be a team owner to do this', code: 'forbidden' } });
    const mark = events.length;
    const res = await as(t, owner, 'POST', `/api/user/teams/${id}/archive`, {});
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id, name: 'Closing down', role: 'owner', created_at: expect.stringMatching(ISO), archived_at: expect.stringMatching(ISO) });
    expect(await eventsSince(mark, 1)).toEqual([{ name: 'ops.team.archived', data: { team_id: id, name: 'Closing down', archived_at: res.body.archived_at } }]);
    expect(await as(t, owner, 'POST', `/api/user/teams/${id}/archive`, {})).toMatchObject({ status: 409, body: { message: 'This team is already archived', code: 'conflict' } });
    const archived = { status: 409, body: { message: 'This team is archived; it accepts no new members or sites', code: 'conflict' } };
    expect(await as(t, owner, 'POST', `/api/user/teams/${id}/members`, { email: newcomer.email, role: 'member' })).toMatchObject(archived);
    expect(await as(t, owner, 'POST', `/api/user/teams/${id}/members`, { email: 'nobody-yet@example.com', role: 'member' })).toMatchObject(archived);
    // Its people can still see it, and leave it.
    expect((await as(t, admin, 'GET', '/api/user/teams')).body.items).toEqual([expect.objectContaining({ id, archived_at: res.body.archived_at })]);
    expect((await as(t, admin, 'DELETE', `/api/user/teams/${id}/members/${admin.id}`)).status).toBe(200);
  });
});

describe('GET /api/user/teams/:id/members', () => {
  it('lists owners, then admins, then members to any member; 404 to outsiders', async () => {
    const owner = await person(t, 'user', `zz-owner-${Date.now()}@example.com`);
    const admin = await person(t);
    const member = await person(t);
    const id = await teamOf(owner, 'Listed', [[member, 'member'], [admin, 'admin']]);
    const res = await as(t, member, 'GET', `/api/user/teams/${id}/members`);
    expect(res.body).toEqual({ items: [memberRow(owner, 'owner'), memberRow(admin, 'admin'), memberRow(member, 'member')], total: 3, limit: 25, offset: 0, has_more: false });
    expect(await as(t, await person(t), 'GET', `/api/user/teams/${id}/members`)).toMatchObject({ status: 404, body: NOT_FOUND });
  });
});

describe('POST /api/user/teams/:id/members', () => {
  it('answers an existing account and an unknown email the same way: an invitation, and nobody joins yet', async () => {
    const owner = await person(t);
    const ana = await person(t, 'user', `ana-${Date.now()}@example.com`);
    const id = await teamOf(owner, 'Adders');
    const mark = events.length;
    const existing = await as(t, owner, 'POST', `/api/user/teams/${id}/members`, { email: ana.email.toUpperCase(), role: 'member' });
    const unknown = await as(t, owner, 'POST', `/api/user/teams/${id}/members`, { email: `nobody-${Date.now()}@example.com`, role: 'member' });
    const shape = { invitation: { id: expect.any(String), email: expect.any(String), role: 'member', expires_at: expect.stringMatching(ISO) }, invite_token: expect.any(String), invite_url: expect.any(String) };
    expect([existing.status, existing.body]).toEqual([201, shape]);
    expect([unknown.status, unknown.body]).toEqual([201, shape]);
    expect(Object.keys(existing.body).sort()).toEqual(Object.keys(unknown.body).sort());
    expect(JSON.stringify(existing.body)).not.toContain(ana.id);
    expect((existing.body.invitation as { email: string }).email).toBe(ana.email);
    // Not a member until they accept.
    expect((await as(t, owner, 'GET', `/api/user/teams/${id}/members`)).body.items).toEqual([memberRow(owner, 'owner')]);
    expect(await as(t, ana, 'GET', `/api/user/teams/${id}/members`)).toMatchObject({ status: 404 });
    expect(events.slice(mark).filter((e) => e.name === 'ops.team.member.added')).toEqual([]);
  });

  it('refuses to invite someone who is already a member', async () => {
    const owner = await person(t);
    const ana = await person(t);
    const id = await teamOf(owner, 'Members already', [[ana, 'member']]);
    const again = await as(t, owner, 'POST', `/api/user/teams/${id}/members`, { email: ana.email, role: 'admin' });
    expect(again).toMatchObject({ status: 409, body: { message: `${ana.email} is already a member of this team`, code: 'conflict' } });
  });

  it('is for team admins, and only an owner invites an owner', async () => {
    const owner = await person(t);
    const admin = await person(t);
    const member = await person(t);
    const [a, b, c] = [await person(t), await person(t), await person(t)];
    const id = await teamOf(owner, 'Roles', [[admin, 'admin'], [member, 'member']]);
    expect(await as(t, member, 'POST', `/api/user/teams/${id}/members`, { email: a.email, role: 'member' })).toMatchObject({ status: 403, body: NEEDS_ADMIN });
    expect(await as(t, admin, 'POST', `/api/user/teams/${id}/members`, { email: a.email, role: 'owner' })).toMatchObject({
      status: 403,
      body: { message: 'Only a team owner can add an owner', code: 'forbidden' },
    });
    expect(await as(t, admin, 'POST', `/api/user/teams/${id}/members`, { email: a.email, role: 'admin' })).toMatchObject({ status: 201, body: { invitation: { role: 'admin' } } });
    expect(await as(t, owner, 'POST', `/api/user/teams/${id}/members`, { email: b.email, role: 'owner' })).toMatchObject({ status: 201, body: { invitation: { role: 'owner' } } });
    expect(await as(t, await person(t), 'POST', `/api/user/teams/${id}/members`, { email: c.email, role: 'member' })).toMatchObject({ status: 404, body: NOT_FOUND });
  });

  it('refuses an unknown role or a malformed email', async () => {
    const owner = await person(t);
    const id = await teamOf(owner, 'Strict');
    expect((await as(t, owner, 'POST', `/api/user/teams/${id}/members`, { email: 'x@example.com', role: 'boss' })).status).toBe(400);
    expect((await as(t, owner, 'POST', `/api/user/teams/${id}/members`, { email: 'not an email', role: 'member' })).status).toBe(400);
  });
});

describe('PATCH /api/user/teams/:id/members/:userId', () => {
  it('changes roles within the rules: owners only by owners, never the last owner', async () => {
    const owner = await person(t);
    const admin = await person(t);
    const member = await person(t);
    const id = await teamOf(owner, 'Re-roled', [[admin, 'admin'], [member, 'member']]);
    const path = (who: Person) => `/api/user/teams/${id}/members/${who.id}`;
    expect(await as(t, admin, 'PATCH', path(member), { role: 'admin' })).toEqual(expect.objectContaining({ status: 200, body: { member: memberRow(member, 'admin') } }));
    expect(await as(t, member, 'PATCH', path(admin), { role: 'member' })).toMatchObject({ status: 200 });
    expect(await as(t, admin, 'PATCH', path(member), { role: 'member' })).toMatchObject({ status: 403, body: NEEDS_ADMIN });
    const ownerOnly = { status: 403, body: { message: 'Only a team owner can grant or take away the owner role', code: 'forbidden' } };
    expect(await as(t, member, 'PATCH', path(owner), { role: 'admin' })).toMatchObject(ownerOnly);
    expect(await as(t, member, 'PATCH', path(member), { role: 'owner' })).toMatchObject(ownerOnly);
    const lastOwner = { status: 409, body: { message: 'A team needs at least one owner: make someone else an owner first', code: 'conflict' } };
    expect(await as(t, owner, 'PATCH', path(owner), { role: 'member' })).toMatchObject(lastOwner);
    expect(await as(t, owner, 'PATCH', path(member), { role: 'owner' })).toMatchObject({ status: 200, body: { member: { role: 'owner' } } });
    expect(await as(t, owner, 'PATCH', path(owner), { role: 'member' })).toMatchObject({ status: 200, body: { member: { role: 'member' } } });
    expect(await as(t, member, 'PATCH', path(member), { role: 'admin' })).toMatchObject(lastOwner);
    expect(await as(t, member, 'PATCH', `/api/user/teams/${id}/members/00000000-0000-4000-8000-000000000000`, { role: 'admin' })).toMatchObject({
      status: 404,
      body: { message: 'Member not found', code: 'not_found' },
    });
    expect((await as(t, member, 'PATCH', path(owner), { role: 'boss' })).status).toBe(400);
  });
});

describe('DELETE /api/user/teams/:id/members/:userId', () => {
  it('lets admins remove members, anyone leave, only owners remove owners, never the last owner', async () => {
    const owner = await person(t);
    const admin = await person(t);
    const member = await person(t);
    const leaver = await person(t);
    const secondOwner = await person(t);
    const id = await teamOf(owner, 'Shrinking', [[admin, 'admin'], [member, 'member'], [leaver, 'member'], [secondOwner, 'owner']]);
    const path = (who: Person) => `/api/user/teams/${id}/members/${who.id}`;
    expect(await as(t, member, 'DELETE', path(leaver))).toMatchObject({ status: 403, body: { message: 'You must be a team admin to remove other members', code: 'forbidden' } });
    const mark = events.length;
    expect(await as(t, leaver, 'DELETE', path(leaver))).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(await eventsSince(mark, 1)).toEqual([{ name: 'ops.team.member.removed', data: { team_id: id, user_id: leaver.id, email: leaver.email, role: 'member' } }]);
    expect(await as(t, leaver, 'GET', `/api/user/teams/${id}/members`)).toMatchObject({ status: 404, body: NOT_FOUND });
    expect(await as(t, admin, 'DELETE', path(secondOwner))).toMatchObject({ status: 403, body: { message: 'Only a team owner can remove an owner', code: 'forbidden' } });
    expect(await as(t, admin, 'DELETE', path(member))).toMatchObject({ status: 200 });
    expect(await as(t, admin, 'DELETE', path(member))).toMatchObject({ status: 404, body: { message: 'Member not found', code: 'not_found' } });
    expect(await as(t, owner, 'DELETE', path(secondOwner))).toMatchObject({ status: 200 });
    const lastOwner = { status: 409, body: { message: 'A team needs at least one owner: make someone else an owner first', code: 'conflict' } };
    expect(await as(t, owner, 'DELETE', path(owner))).toMatchObject(lastOwner);
    // The instance owner administers every team, and still cannot leave it without an owner.
    expect(await as(t, instanceOwner, 'DELETE', path(owner))).toMatchObject(lastOwner);
    const left = await as(t, owner, 'GET', `/api/user/teams/${id}/members`);
    expect(left.body.items).toEqual([memberRow(owner, 'owner'), memberRow(admin, 'admin')]);
  });
});

describe('the two owners of a team leaving at the same moment', () => {
  it('lets exactly one leave, so the team keeps an owner', async () => {
    const a = await person(t);
    const b = await person(t);
    const id = await teamOf(a, 'Duel', [[b, 'owner']]);
    const results = await Promise.all([as(t, a, 'DELETE', `/api/user/teams/${id}/members/${a.id}`), as(t, b, 'DELETE', `/api/user/teams/${id}/members/${b.id}`)]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    const { rows } = await t.node.runtime.metadata().query("SELECT count(*)::int AS n FROM team_members WHERE team_id = $1 AND role = 'owner'", [id]);
    expect(rows).toEqual([{ n: 1 }]);
  });
});
