// Sites through a real node: create, list, read, change, delete with exact bodies; who may do each
// (site and team roles, outsiders, API clients); site members; audit entries and ops events.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Context } from 'moleculer';
import { createApiClient } from '../../lib/auth/api-clients.ts';
import { createTeam } from '../../lib/sites/sites.ts';
import { as, type Person, person, withToken } from '../support/accounts.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

let t: TestNode;
let teamOwner: Person;
let teamAdmin: Person;
let teamMember: Person;
let siteAdmin: Person;
let viewer: Person;
let outsider: Person;
const events: { type: string; data: unknown }[] = [];

const ISO = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
const UUID = expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);

const db = () => t.node.runtime.metadata();
const join = (teamId: string, who: Person, role: string) => db().query('INSERT INTO team_members (team_id, user_id, role) VALUES ($1, $2, $3)', [teamId, who.id, role]);
const grant = (siteId: string, who: Person, role: string) => db().query('INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, $3)', [siteId, who.id, role]);
const audit = async (teamId: string, action: string) =>
  (await db().query<{ actor_email: string; details: string }>('SELECT actor_email, details FROM audit_log WHERE team_id = $1 AND action = $2 ORDER BY created_at', [teamId, action])).rows;


beforeAll(async () => {
  t = await startTestNode({ PLUMB_API_RATE_PER_SECOND: '100000', PLUMB_API_BURST: '100000' });
  [teamOwner, teamAdmin, teamMember, siteAdmin, viewer, outsider] = await Promise.all([1, 2, 3, 4, 5, 6].map(() => person(t)));
  await join(t.team.id, teamOwner, 'owner');
  await join(t.team.id, teamAdmin, 'admin');
  await join(t.team.id, teamMember, 'member');
  await grant(t.site.id, siteAdmin, 'admin');
  await grant(t.site.id, viewer, 'viewer');
  await t.node.broker.createService({
    name: 'ops-spy',
    events: {
      'ops.site.*'(ctx: Context) {
        events.push({ type: ctx.eventName!, data: ctx.params });
      },
    },
  });
}, 60_000);

afterAll(() => t.stop());

describe('POST /api/sites', () => {
  it('creates a site in a team the caller administers, normalised, with the caller as its owner', async () => {
    const res = await as(t, teamAdmin, 'POST', '/api/sites', { domain: 'WWW.New-Site.Example', team_id: t.team.id, timezone: 'Europe/Berlin', hostnames: ['Blog.New-Site.Example', 'new-site.example'] });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      site: { id: UUID, team_id: t.team.id, domain: 'new-site.example', timezone: 'Europe/Berlin', hostnames: ['blog.new-site.example'], created_at: ISO, role: 'owner' },
    });
    const id = (res.body.site as { id: string }).id;
    expect((await db().query('SELECT user_id, role FROM site_members WHERE site_id = $1', [id])).rows).toEqual([{ user_id: teamAdmin.id, role: 'owner' }]);
    expect(await audit(t.team.id, 'site.created')).toEqual([{ actor_email: teamAdmin.email, details: 'created new-site.example' }]);
    expect(events).toContainEqual({ type: 'ops.site.created', data: { site_id: id, domain: 'new-site.example', team_id: t.team.id } });
    // The ingest path finds it by its extra hostname at once.
    expect((await t.node.runtime.sites.byHostname('blog.new-site.example'))?.id).toBe(id);
  });

  it('defaults the time zone to UTC and stores an alias in its canonical spelling', async () => {
    const plain = await as(t, teamAdmin, 'POST', '/api/sites', { domain: 'utc-default.example', team_id: t.team.id });
    expect((plain.body.site as { timezone: string }).timezone).toBe('UTC');
    const alias = await as(t, teamAdmin, 'POST', '/api/sites', { domain: 'kyiv.example', team_id: t.team.id, timezone: 'Europe/Kyiv' });
    expect((alias.body.site as { timezone: string }).timezone).toBe('Europe/Kiev');
  });

  it('refuses a domain another live site answers on, as its domain or as an extra hostname', async () => {
    expect(await as(t, teamAdmin, 'POST', '/api/sites', { domain: 'www.example.com', team_id: t.team.id })).toMatchObject({
      status: 409,
      body: { message: 'example.com already belongs to another site', code: 'conflict' },
    });
    expect(await as(t, teamAdmin, 'POST', '/api/sites', { domain: 'shop.example.net', team_id: t.team.id })).toMatchObject({
      status: 409,
      body: { message: 'shop.example.net already belongs to another site', code: 'conflict' },
    });
  });

  it('refuses a bad domain and an unknown time zone with 400', async () => {
    expect(await as(t, teamAdmin, 'POST', '/api/sites', { domain: 'not a domain', team_id: t.team.id })).toMatchObject({
      status: 400,
      body: { message: 'domain must be a domain name such as example.com (no scheme, port or path)', code: 'validation_failed' },
    });
    expect(await as(t, teamAdmin, 'POST', '/api/sites', { domain: 'zone.example', team_id: t.team.id, timezone: 'Mars/Olympus' })).toMatchObject({
      status: 400,
      body: { message: 'timezone must be an IANA time zone such as Europe/Berlin or UTC', code: 'validation_failed' },
    });
    expect(await as(t, teamAdmin, 'POST', '/api/sites', { domain: 'zone.example', team_id: 'not-a-team' })).toMatchObject({ status: 400, body: { code: 'validation_failed' } });
  });

  it('refuses an archived team with 409', async () => {
    const archived = await createTeam(db(), { name: 'Old team' });
    await join(archived.id, teamAdmin, 'owner');
    await db().query('UPDATE teams SET archived_at = now() WHERE id = $1', [archived.id]);
    expect(await as(t, teamAdmin, 'POST', '/api/sites', { domain: 'archived.example', team_id: archived.id })).toMatchObject({
      status: 409,
      body: { message: 'The team is archived', code: 'conflict' },
    });
  });

  it('needs the admin role in the team: a member gets 403, an outsider 404, a token 403', async () => {
    const body = { domain: 'denied.example', team_id: t.team.id };
    expect((await as(t, teamMember, 'POST', '/api/sites', body)).status).toBe(403);
    expect(await as(t, outsider, 'POST', '/api/sites', body)).toMatchObject({ status: 404, body: { message: 'Team not found', code: 'not_found' } });
    const token = (await createApiClient(db(), { name: 'stats', scopes: ['stats:read'], sites: [{ siteId: t.site.id, role: 'owner' }], ownerUserId: teamOwner.id })).token;
    expect((await withToken(t, token, 'POST', '/api/sites', body)).status).toBe(403);
  });
});

describe('GET /api/sites and GET /api/sites/:id', () => {
  it('lists only the sites the caller can see, with their effective role', async () => {
    const res = await as(t, viewer, 'GET', '/api/sites');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      items: [{ id: t.site.id, team_id: t.team.id, domain: 'example.com', timezone: 'UTC', hostnames: ['shop.example.net'], created_at: ISO, role: 'viewer' }],
      total: 1,
      limit: 25,
      offset: 0,
      has_more: false,
    });
    expect(await as(t, outsider, 'GET', '/api/sites')).toMatchObject({ status: 200, body: { items: [], total: 0, has_more: false } });
  });

  it('pages through a team’s sites, ordered by domain', async () => {
    const first = await as(t, teamMember, 'GET', '/api/sites?limit=2');
    const total = first.body.total as number;
    expect(total).toBeGreaterThanOrEqual(4);
    expect(first.body).toMatchObject({ limit: 2, offset: 0, has_more: true });
    const domains = (first.body.items as { domain: string; role: string }[]).map((s) => [s.domain, s.role]);
    expect(domains).toEqual([
      ['example.com', 'viewer'],
      ['kyiv.example', 'viewer'],
    ]);
    const last = await as(t, teamMember, 'GET', `/api/sites?limit=2&offset=${total - 1}`);
    expect(last.body).toMatchObject({ offset: total - 1, has_more: false });
    expect((last.body.items as unknown[]).length).toBe(1);
  });

  it('reads a site for a viewer; an outsider gets 404', async () => {
    expect(await as(t, viewer, 'GET', `/api/sites/${t.site.id}`)).toMatchObject({
      status: 200,
      body: { site: { id: t.site.id, team_id: t.team.id, domain: 'example.com', timezone: 'UTC', hostnames: ['shop.example.net'], created_at: ISO, role: 'viewer' } },
    });
    expect(await as(t, outsider, 'GET', `/api/sites/${t.site.id}`)).toMatchObject({ status: 404, body: { message: 'Site not found', code: 'not_found' } });
    expect((await as(t, undefined, 'GET', `/api/sites/${t.site.id}`)).status).toBe(401);
  });

  it('lets an API client with stats:read read its site, capped by its grant; without the scope 403', async () => {
    const scoped = (await createApiClient(db(), { name: 'reader', scopes: ['stats:read'], sites: [{ siteId: t.site.id, role: 'viewer' }], ownerUserId: teamOwner.id })).token;
    const get = await withToken(t, scoped, 'GET', `/api/sites/${t.site.id}`);
    expect(get).toMatchObject({ status: 200, body: { site: { id: t.site.id, role: 'viewer' } } });
    const list = await withToken(t, scoped, 'GET', '/api/sites');
    expect(list.body).toMatchObject({ total: 1, items: [{ id: t.site.id, role: 'viewer' }] });
    expect((await withToken(t, scoped, 'GET', `/api/sites/${t.otherSite.id}`)).status).toBe(404);
    const unscoped = (await createApiClient(db(), { name: 'ingest', scopes: ['ingest:write'], sites: [{ siteId: t.site.id, role: 'owner' }], ownerUserId: teamOwner.id })).token;
    expect(await withToken(t, unscoped, 'GET', `/api/sites/${t.site.id}`)).toMatchObject({ status: 403, body: { message: 'This token lacks the stats:read scope' } });
    expect((await withToken(t, unscoped, 'GET', '/api/sites')).status).toBe(403);
    expect(await withToken(t, scoped, 'PATCH', `/api/sites/${t.site.id}`, { timezone: 'Europe/Paris' })).toMatchObject({ status: 403 });
  });
});

describe('PATCH /api/sites/:id', () => {
  it('lets a site admin change the time zone and replace the extra hostnames', async () => {
    const res = await as(t, siteAdmin, 'PATCH', `/api/sites/${t.site.id}`, { timezone: 'Europe/Paris', hostnames: ['Shop.Example.Net', 'm.example.com'] });
    expect(res).toMatchObject({
      status: 200,
      body: { site: { id: t.site.id, team_id: t.team.id, domain: 'example.com', timezone: 'Europe/Paris', hostnames: ['m.example.com', 'shop.example.net'], created_at: ISO, role: 'admin' } },
    });
    expect(await audit(t.team.id, 'site.updated')).toEqual([{ actor_email: siteAdmin.email, details: 'changed time zone UTC → Europe/Paris, extra hostnames' }]);
    expect(events).toContainEqual({ type: 'ops.site.updated', data: { site_id: t.site.id, domain: 'example.com', team_id: t.team.id } });
    expect((await t.node.runtime.sites.byHostname('m.example.com'))?.id).toBe(t.site.id);
  });

  it('refuses a viewer (403), a taken domain (409) and an unknown zone (400)', async () => {
    expect((await as(t, viewer, 'PATCH', `/api/sites/${t.site.id}`, { timezone: 'UTC' })).status).toBe(403);
    expect(await as(t, siteAdmin, 'PATCH', `/api/sites/${t.site.id}`, { domain: 'other.example' })).toMatchObject({
      status: 409,
      body: { message: 'other.example already belongs to another site', code: 'conflict' },
    });
    expect((await as(t, siteAdmin, 'PATCH', `/api/sites/${t.site.id}`, { timezone: 'Nowhere' })).status).toBe(400);
    expect((await as(t, siteAdmin, 'PATCH', `/api/sites/not-a-uuid`, { timezone: 'UTC' })).status).toBe(400);
  });
});

describe('DELETE /api/sites/:id', () => {
  it('is for owners only; deletes the site’s analytics and frees its domain and hostnames', async () => {
    const created = await as(t, teamAdmin, 'POST', '/api/sites', { domain: 'doomed.example', team_id: t.team.id, hostnames: ['www2.doomed.example'] });
    const id = (created.body.site as { id: string }).id;
    await grant(id, siteAdmin, 'admin');
    const analytics = t.node.runtime.analytics();
    const tenant = analytics.tenantDatabase(t.team.id);
    await analytics.insert('hits', [{ ts: '2026-01-01T00:00:00Z', site_id: id, path: '/gone' }, { ts: '2026-01-01T00:00:00Z', site_id: t.otherSite.id, path: '/kept' }], { database: tenant });
    await analytics.insert('events', [{ ts: '2026-01-01T00:00:00Z', site_id: id, name: 'x' }], { database: tenant });

    expect(await as(t, siteAdmin, 'DELETE', `/api/sites/${id}`)).toMatchObject({ status: 403, body: { message: 'This needs the owner role on the site' } });
    const res = await as(t, teamAdmin, 'DELETE', `/api/sites/${id}`);
    expect([res.status, res.body]).toEqual([204, {}]);

    expect((await as(t, teamAdmin, 'GET', `/api/sites/${id}`)).status).toBe(404);
    expect(await t.rowsNow('hits', 'site_id = {s:UUID}', { s: id })).toEqual([]);
    expect(await t.rowsNow('events', 'site_id = {s:UUID}', { s: id })).toEqual([]);
    expect((await t.rowsNow<{ path: string }>('hits', 'site_id = {s:UUID}', { s: t.otherSite.id })).map((h) => h.path)).toContain('/kept');
    expect(await audit(t.team.id, 'site.deleted')).toEqual([{ actor_email: teamAdmin.email, details: 'deleted doomed.example' }]);
    expect(events).toContainEqual({ type: 'ops.site.deleted', data: { site_id: id, domain: 'doomed.example', team_id: t.team.id } });
    expect(await t.node.runtime.sites.byHostname('doomed.example')).toBeNull();

    const again = await as(t, teamAdmin, 'POST', '/api/sites', { domain: 'doomed.example', team_id: t.team.id, hostnames: ['www2.doomed.example'] });
    expect(again.status).toBe(201);
    expect((again.body.site as { id: string }).id).not.toBe(id);
  });

  it('answers 404 to an outsider and to a second delete', async () => {
    expect((await as(t, outsider, 'DELETE', `/api/sites/${t.site.id}`)).status).toBe(404);
    const created = await as(t, teamOwner, 'POST', '/api/sites', { domain: 'twice.example', team_id: t.team.id });
    const id = (created.body.site as { id: string }).id;
    expect((await as(t, teamOwner, 'DELETE', `/api/sites/${id}`)).status).toBe(204);
    expect((await as(t, teamOwner, 'DELETE', `/api/sites/${id}`)).status).toBe(404);
  });
});

describe('site members', () => {
  it('lists the site’s own members for admins, not for viewers', async () => {
    const res = await as(t, siteAdmin, 'GET', `/api/sites/${t.site.id}/members`);
    const expected = [
      { user_id: siteAdmin.id, email: siteAdmin.email, role: 'admin' },
      { user_id: viewer.id, email: viewer.email, role: 'viewer' },
    ].sort((a, b) => a.email.localeCompare(b.email));
    expect(res).toMatchObject({ status: 200, body: { items: expected, total: 2, limit: 25, offset: 0, has_more: false } });
    expect((await as(t, viewer, 'GET', `/api/sites/${t.site.id}/members`)).status).toBe(403);
  });

  it('adds and changes a member; only an owner grants owner', async () => {
    const newcomer = await person(t);
    const added = await as(t, siteAdmin, 'PUT', `/api/sites/${t.site.id}/members/${newcomer.id}`, { role: 'editor' });
    expect([added.status, added.body]).toEqual([200, { member: { user_id: newcomer.id, email: newcomer.email, role: 'editor' } }]);
    expect(await as(t, newcomer, 'GET', `/api/sites/${t.site.id}`)).toMatchObject({ status: 200, body: { site: { role: 'editor' } } });

    expect(await as(t, siteAdmin, 'PUT', `/api/sites/${t.site.id}/members/${newcomer.id}`, { role: 'owner' })).toMatchObject({
      status: 403,
      body: { message: 'Only a site owner can grant or withdraw the owner role', code: 'forbidden' },
    });
    const promoted = await as(t, teamOwner, 'PUT', `/api/sites/${t.site.id}/members/${newcomer.id}`, { role: 'owner' });
    expect(promoted.body).toEqual({ member: { user_id: newcomer.id, email: newcomer.email, role: 'owner' } });
    expect((await as(t, siteAdmin, 'DELETE', `/api/sites/${t.site.id}/members/${newcomer.id}`)).status).toBe(403);

    expect((await as(t, siteAdmin, 'PUT', `/api/sites/${t.site.id}/members/${newcomer.id}`, { role: 'boss' })).status).toBe(400);
    expect(await as(t, siteAdmin, 'PUT', `/api/sites/${t.site.id}/members/00000000-0000-4000-8000-000000000000`, { role: 'viewer' })).toMatchObject({
      status: 404,
      body: { message: 'User not found' },
    });
    expect((await audit(t.team.id, 'site.member.updated')).map((e) => e.details)).toEqual(['role on example.com: none → editor', 'role on example.com: editor → owner']);
  });

  it('removes a member, who then loses the site', async () => {
    const leaving = await person(t);
    await grant(t.site.id, leaving, 'editor');
    expect((await as(t, leaving, 'GET', `/api/sites/${t.site.id}`)).status).toBe(200);
    const res = await as(t, siteAdmin, 'DELETE', `/api/sites/${t.site.id}/members/${leaving.id}`);
    expect([res.status, res.body]).toEqual([204, {}]);
    expect((await as(t, leaving, 'GET', `/api/sites/${t.site.id}`)).status).toBe(404);
    expect(await as(t, siteAdmin, 'DELETE', `/api/sites/${t.site.id}/members/${leaving.id}`)).toMatchObject({
      status: 404,
      body: { message: 'That user is not a member of the site' },
    });
  });
});
