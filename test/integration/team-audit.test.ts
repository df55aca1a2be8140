// GET /api/user/teams/:id/audit as the README documents it: the team audit page, newest first,
// with the `action` filter, `limit` (default 25, max 200) and `offset`; an entry for every
// team-management action; 400 {message} for a bad query and 403 {message} for a non-admin. Beyond
// the documented fields, an entry names its site and the object acted on (`site`, `subject`) as they
// were called at the time, and its details read in names, never ids.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { writeAudit } from '../../lib/audit/audit.ts';
import { as, joinTeam, type Person, person } from '../support/accounts.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let t: TestNode;
let owner: Person;
let admin: Person;
let member: Person;
let viewer: Person;
let teamId: string;
let newcomerId: string;
const audit = (who: Person | undefined, query = '', team = teamId) => as(t, who, 'GET', `/api/user/teams/${team}/audit${query}`);

/** An entry as the page shows it; ids and times are checked for their form only. */
const entry = (action: string, actor: Person | { id: string; email: string } | null, target: { id?: string; email: string } | null, details: string) => ({
  id: expect.stringMatching(UUID),
  team_id: teamId,
  action,
  actor_user_id: actor?.id ?? null,
  actor_email: actor?.email ?? null,
  target_user_id: target?.id ?? null,
  target_email: target?.email ?? null,
  site: null,
  subject: null,
  details,
  created_at: expect.stringMatching(ISO),
});

/** A team of its own with `count` filler entries, written straight to the log. */
async function teamWithEntries(count: number): Promise<string> {
  const id = (await as(t, owner, 'POST', '/api/user/teams', { name: `Busy ${count}` })).body.id as string;
  for (let i = 1; i <= count; i++) await writeAudit(t.node.runtime.metadata(), { teamId: id, action: 'test.filler', actor: owner, details: `filler ${i}` });
  return id;
}

beforeAll(async () => {
  t = await startTestNode({ PLUMB_API_RATE_PER_SECOND: '100000', PLUMB_API_BURST: '100000', PLUMB_LOGIN_RATE_PER_MINUTE: '1000', PLUMB_LOGIN_BURST: '1000' });
  owner = await person(t, 'user', 'owner@example.com');
  admin = await person(t, 'user', 'admin@example.com');
  member = await person(t, 'user', 'member@example.com');
  // One of every team-management action, in this order.
  teamId = (await as(t, owner, 'POST', '/api/user/teams', { name: 'Audited' })).body.id as string;
  const members = `/api/user/teams/${teamId}/members`;
  const invitations = `/api/user/teams/${teamId}/invitations`;
  const ok = (res: { status: number }) => expect(res.status).toBeLessThan(300);
  ok(await as(t, owner, 'PATCH', `/api/user/teams/${teamId}`, { name: 'Audited team' }));
  ok(await joinTeam(t, owner, teamId, admin, 'member'));
  ok(await joinTeam(t, owner, teamId, member, 'member'));
  ok(await as(t, owner, 'PATCH', `${members}/${admin.id}`, { role: 'admin' }));
  const invited = await as(t, admin, 'POST', members, { email: 'later@example.com', role: 'member' });
  ok(invited);
  const invitationId = (invited.body.invitation as { id: string }).id;
  ok(await as(t, admin, 'POST', `${invitations}/${invitationId}/resend`, {}));
  ok(await as(t, admin, 'DELETE', `${invitations}/${invitationId}`));
  const again = await as(t, admin, 'POST', members, { email: 'newcomer@example.com', role: 'member' });
  const accepted = await as(t, undefined, 'POST', '/api/auth/accept-invite', { token: again.body.invite_token, password: 'a long enough password' });
  ok(accepted);
  newcomerId = (accepted.body.user as { id: string }).id;
  ok(await as(t, admin, 'DELETE', `${members}/${member.id}`));
  ok(await as(t, owner, 'POST', `/api/user/teams/${teamId}/archive`, {}));
  // A plain member for the 403 checks, put straight in the table so the story above stays as told.
  viewer = await person(t, 'user', 'viewer@example.com');
  await t.node.runtime.metadata().query("INSERT INTO team_members (team_id, user_id, role) VALUES ($1, $2, 'member')", [teamId, viewer.id]);
});

afterAll(() => t.stop());

describe('GET /api/user/teams/:id/audit', () => {
  it('lists an entry for every team-management action, newest first', async () => {
    const res = await audit(admin);
    expect(res.status).toBe(200);
    const newcomer = { id: newcomerId, email: 'newcomer@example.com' };
    expect(res.body).toEqual({
      action: '',
      entries: [
        entry('team.archived', owner, null, 'archived team "Audited team"'),
        entry('member.removed', admin, member, 'removed (was member)'),
        entry('invitation.accepted', newcomer, newcomer, 'accepted the invitation and joined as member'),
        entry('invitation.created', admin, { email: 'newcomer@example.com' }, 'invited as member'),
        entry('invitation.revoked', admin, { email: 'later@example.com' }, 'revoked invitation as member'),
        entry('invitation.resent', admin, { email: 'later@example.com' }, 'resent invitation as member'),
        entry('invitation.created', admin, { email: 'later@example.com' }, 'invited as member'),
        entry('member.role_changed', owner, admin, 'role changed from member to admin'),
        entry('invitation.accepted', member, member, 'accepted the invitation and joined as member'),
        entry('invitation.created', owner, { email: member.email }, 'invited as member'),
        entry('invitation.accepted', admin, admin, 'accepted the invitation and joined as member'),
        entry('invitation.created', owner, { email: admin.email }, 'invited as member'),
        entry('team.updated', owner, null, 'renamed from "Audited" to "Audited team"'),
        entry('team.created', owner, owner, 'created team "Audited"'),
      ],
      has_more: false,
      limit: 25,
      offset: 0,
      total: 14,
    });
  });

  it('filters on one action exactly', async () => {
    const res = await audit(admin, '?action=member.role_changed');
    expect(res.body).toEqual({
      action: 'member.role_changed',
      entries: [entry('member.role_changed', owner, admin, 'role changed from member to admin')],
      has_more: false,
      limit: 25,
      offset: 0,
      total: 1,
    });
    expect((await audit(admin, '?action=member')).body).toEqual({ action: 'member', entries: [], has_more: false, limit: 25, offset: 0, total: 0 });
    expect((await audit(admin, '?action=')).body).toMatchObject({ action: '', total: 14 });
  });

  it('pages with limit and offset', async () => {
    const res = await audit(admin, '?limit=2&offset=1');
    expect(res.body).toEqual({
      action: '',
      entries: [entry('member.removed', admin, member, 'removed (was member)'), expect.objectContaining({ action: 'invitation.accepted' })],
      has_more: true,
      limit: 2,
      offset: 1,
      total: 14,
    });
    expect((await audit(admin, '?limit=5&offset=12')).body).toMatchObject({ entries: [{ action: 'team.updated' }, { action: 'team.created' }], has_more: false, total: 14 });
    expect((await audit(admin, '?offset=14')).body).toEqual({ action: '', entries: [], has_more: false, limit: 25, offset: 14, total: 14 });
  });

  it('gives 25 entries by default and at most 200', async () => {
    const busy = await teamWithEntries(250);
    const first = await audit(owner, '', busy);
    expect(first.body).toMatchObject({ has_more: true, limit: 25, offset: 0, total: 251 });
    expect((first.body.entries as { details: string }[]).map((e) => e.details).slice(0, 3)).toEqual(['filler 250', 'filler 249', 'filler 248']);
    expect(first.body.entries).toHaveLength(25);
    const most = await audit(owner, '?limit=200', busy);
    expect(most.body).toMatchObject({ has_more: true, limit: 200, offset: 0, total: 251 });
    expect(most.body.entries).toHaveLength(200);
    const rest = await audit(owner, '?limit=200&offset=200', busy);
    expect(rest.body).toMatchObject({ has_more: false, limit: 200, offset: 200, total: 251 });
    expect(rest.body.entries).toHaveLength(51);
    expect((rest.body.entries as { action: string }[]).at(-1)!.action).toBe('team.created');
  });

  it.each([
    ['limit=0', 'limit must be at least 1'],
    ['limit=201', 'limit must be at most 200'],
    ['limit=-1', 'limit must be at least 1'],
    ['limit=abc', 'limit must be a number'],
    ['limit=1.5', 'limit must be a whole number'],
    ['limit=', 'limit must be at least 1'],
    ['limit=5&limit=6', 'limit must be a number'],
    ['offset=-1', 'offset must be at least 0'],
    ['offset=abc', 'offset must be a number'],
    ['offset=2.5', 'offset must be a whole number'],
    ['offset=99999999999999999999', 'offset must be at most 2147483647'],
    [`action=${'x'.repeat(101)}`, 'action must be at most 100 characters'],
    ['action=a&action=b', 'action must be a string'],
  ])('answers 400 {message} to %s', async (query, message) => {
    const res = await audit(admin, `?${query}`);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ message, code: 'validation_failed' });
  });

  it('answers 403 {message} to a team member who is not an admin', async () => {
    const res = await audit(viewer);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ message: 'You must be a team admin to do this', code: 'forbidden' });
  });

  it('answers 403 {message} to an API-client token, whatever its scopes', async () => {
    const token = await t.token(['stats:read', 'mcp']);
    const res = await fetch(`${t.url}/api/user/teams/${teamId}/audit`, { headers: { Authorization: `Bearer ${token}` } });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ message: 'This action needs a signed-in user; API tokens cannot perform it', code: 'forbidden' });
  });

  it('answers 404 for a team the person cannot see or that does not exist, 401 without a session', async () => {
    const notFound = { status: 404, body: { message: 'Team not found', code: 'not_found' } };
    expect(await audit(member)).toMatchObject(notFound); // removed from the team above
    expect(await audit(owner, '', '00000000-0000-4000-8000-000000000000')).toMatchObject(notFound);
    expect((await audit(owner, '', 'not-a-uuid')).status).toBe(400);
    expect((await audit(undefined)).status).toBe(401);
  });

  it("shows instance admins any team's audit, and never another team's entries", async () => {
    const instanceAdmin = await person(t, 'admin');
    expect((await audit(instanceAdmin)).body).toMatchObject({ total: 14 });
    const other = (await as(t, member, 'POST', '/api/user/teams', { name: 'Elsewhere' })).body.id as string;
    expect((await audit(member, '', other)).body).toEqual({
      action: '',
      entries: [{ ...entry('team.created', member, member, 'created team "Elsewhere"'), team_id: other }],
      has_more: false,
      limit: 25,
      offset: 0,
      total: 1,
    });
  });
});

describe('GET /api/user/teams/:id/audit: entries in names', () => {
  it('names the site, the goal, the share link and the person as they were, ids beside, after the site is gone', async () => {
    const alice = await person(t, 'user', 'alice@example.com');
    const shopTeam = (await as(t, owner, 'POST', '/api/user/teams', { name: 'Shop team' })).body.id as string;
    const created = await as(t, owner, 'POST', '/api/sites', { domain: 'shop.example.com', team_id: shopTeam, timezone: 'Europe/Berlin' });
    expect(created.status).toBe(201);
    const siteId = (created.body.site as { id: string }).id;
    const goal = await as(t, owner, 'POST', `/api/sites/${siteId}/goals`, { name: 'Pro signup', type: 'event', event_name: 'Signup' });
    const goalId = (goal.body.goal as { id: string }).id;
    expect((await as(t, owner, 'PUT', `/api/sites/${siteId}/members/${alice.id}`, { role: 'viewer' })).status).toBe(200);
    const share = await as(t, owner, 'POST', `/api/sites/${siteId}/share`, { name: 'Board' });
    const shareId = (share.body.share as { id: string }).id;
    expect((await as(t, owner, 'DELETE', `/api/sites/${siteId}/goals/${goalId}`)).status).toBeLessThan(300);
    expect((await as(t, owner, 'DELETE', `/api/sites/${siteId}`)).status).toBeLessThan(300);

    const res = await audit(owner, '', shopTeam);
    expect(res.status).toBe(200);
    const site = { id: siteId, domain: 'shop.example.com' };
    const at = { team_id: shopTeam, actor_user_id: owner.id, actor_email: owner.email, id: expect.stringMatching(UUID), created_at: expect.stringMatching(ISO) };
    const nobody = { target_user_id: null, target_email: null };
    expect(res.body.entries).toEqual([
      { ...at, ...nobody, action: 'site.deleted', site, subject: null, details: 'deleted shop.example.com' },
      { ...at, ...nobody, action: 'goal.deleted', site, subject: { type: 'goal', id: goalId, name: 'Pro signup' }, details: 'goal "Pro signup" on shop.example.com' },
      { ...at, ...nobody, action: 'site.share.created', site, subject: { type: 'share_link', id: shareId, name: 'Board' }, details: 'share link "Board" on shop.example.com' },
      { ...at, target_user_id: alice.id, target_email: 'alice@example.com', action: 'site.member.updated', site, subject: null, details: 'role on shop.example.com: none → viewer' },
      { ...at, ...nobody, action: 'goal.created', site, subject: { type: 'goal', id: goalId, name: 'Pro signup' }, details: 'goal "Pro signup" on shop.example.com' },
      { ...at, ...nobody, action: 'site.created', site, subject: null, details: 'created shop.example.com' },
      { ...at, target_user_id: owner.id, target_email: owner.email, action: 'team.created', site: null, subject: null, details: 'created team "Shop team"' },
    ]);
    for (const e of res.body.entries as { details: string }[]) expect(e.details).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/);
  });
});
