// Share links through a real node: owners and admins create, list and revoke them; a link opens
// one site's read endpoints to anyone holding it (password and expiry honoured), and never any
// other site, whatever the query says.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Context, ServiceSchema } from 'moleculer';
import { type AuthMeta, enforce } from '../../lib/auth/access.ts';
import createAnalyticsService from '../../services/analytics.service.ts';
import { gatewayOf } from '../../services/api.service.ts';
import createEventsService from '../../services/events.service.ts';
import createGoalsService from '../../services/goals.service.ts';
import { as, type Person, person } from '../support/accounts.ts';
import { nativeFetch } from '../support/contract.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

const PUBLIC_URL = 'https://stats.example.org';
const ISO = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
const UUID = expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
const TOKEN = expect.stringMatching(/^[A-Za-z0-9_-]{43}$/);
const PASSWORD = 'correct horse battery';

let t: TestNode;
let owner: Person;
let siteAdmin: Person;
let teamAdmin: Person;
let editor: Person;
let viewer: Person;
let outsider: Person;
let otherOwner: Person;

const db = () => t.node.runtime.metadata();
const grant = (siteId: string, who: Person, role: string) => db().query('INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, $3)', [siteId, who.id, role]);

/**
 * Stand-ins for the site read actions the share routes forward to, declared as those actions are
 * (same names, routes and access rule), answering with what they were called with.
 */
function readStub(service: string, actions: Record<string, string>): ServiceSchema {
  return {
    name: service,
    settings: { rest: '/' },
    actions: Object.fromEntries(
      Object.entries(actions).map(([name, path]) => [
        name,
        {
          rest: `GET /api/sites/:id${path}`,
          auth: 'any',
          access: { site: { param: 'id', role: 'viewer', scope: 'stats:read' } },
          handler: (ctx: Context<Record<string, unknown>, AuthMeta>) => ({
            action: `${service}.${name}`,
            params: ctx.params,
            share: ctx.meta.share ?? null,
            user: ctx.meta.user?.email ?? null,
          }),
        },
      ]),
    ),
  };
}

async function createLink(who: Person, body: Record<string, unknown> = {}, siteId = t.site.id) {
  const res = await as(t, who, 'POST', `/api/sites/${siteId}/share`, body);
  expect(res.status).toBe(201);
  return res.body as { share: { id: string; url: string }; token: string };
}

/**
 * A public request: no session unless a cookie is given. `unchecked` skips the contract check,
 * for answers of stand-in services that echo their call instead of answering as the API does.
 */
async function pub(method: string, path: string, options: { cookie?: string; body?: unknown; unchecked?: boolean } = {}) {
  const headers: Record<string, string> = {};
  if (options.cookie) headers.Cookie = options.cookie;
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await (options.unchecked ? nativeFetch : fetch)(`${t.url}${path}`, { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown>, cookies: res.headers.getSetCookie() };
}

beforeAll(async () => {
  t = await startTestNode({
    PLUMB_PUBLIC_URL: PUBLIC_URL,
    PLUMB_API_RATE_PER_SECOND: '100000',
    PLUMB_API_BURST: '100000',
    PLUMB_LOGIN_RATE_PER_MINUTE: '100000',
    PLUMB_LOGIN_BURST: '100000',
  });
  [owner, siteAdmin, teamAdmin, editor, viewer, outsider, otherOwner] = await Promise.all([1, 2, 3, 4, 5, 6, 7].map(() => person(t)));
  await grant(t.site.id, owner, 'owner');
  await grant(t.site.id, siteAdmin, 'admin');
  await grant(t.site.id, editor, 'editor');
  await grant(t.site.id, viewer, 'viewer');
  await grant(t.otherSite.id, otherOwner, 'owner');
  await db().query("INSERT INTO team_members (team_id, user_id, role) VALUES ($1, $2, 'admin')", [t.team.id, teamAdmin.id]);
}, 60_000);

afterAll(() => t.stop());

describe('POST /api/sites/:id/share', () => {
  it('creates a link for the site owner and shows its token once, with the public URL', async () => {
    const res = await as(t, owner, 'POST', `/api/sites/${t.site.id}/share`, { name: ' Team board ', expires_at: '2099-01-31T12:00:00Z', password: PASSWORD });
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toEqual({
      share: { id: UUID, name: 'Team board', url: expect.any(String), expires_at: '2099-01-31T12:00:00.000Z', has_password: true, embed_origins: [], created_at: ISO },
      token: TOKEN,
    });
    const { share, token } = res.body as { share: { id: string; url: string }; token: string };
    expect(share.url).toBe(`${PUBLIC_URL}/share/${token}`);
    const audit = await db().query<{ actor_email: string; details: string }>("SELECT actor_email, details FROM audit_log WHERE team_id = $1 AND action = 'site.share.created'", [t.team.id]);
    expect(audit.rows).toContainEqual({ actor_email: owner.email, details: 'share link "Team board" on example.com' });
    const stored = await db().query<{ token_hash: Buffer; password_hash: string }>('SELECT token_hash, password_hash FROM share_links WHERE id = $1', [share.id]);
    expect(Buffer.from(stored.rows[0].token_hash).length).toBe(32);
    expect(stored.rows[0].password_hash).toMatch(/^scrypt\$/);
  });

  it('creates a plain link with every field optional', async () => {
    const res = await as(t, siteAdmin, 'POST', `/api/sites/${t.site.id}/share`, {});
    expect(res.body).toEqual({ share: { id: UUID, name: null, url: expect.any(String), expires_at: null, has_password: false, embed_origins: [], created_at: ISO }, token: TOKEN });
  });

  it('lets site admins and team admins create links; editors get 403, viewers 403, outsiders 404, strangers 401', async () => {
    expect((await as(t, siteAdmin, 'POST', `/api/sites/${t.site.id}/share`, {})).status).toBe(201);
    expect((await as(t, teamAdmin, 'POST', `/api/sites/${t.site.id}/share`, {})).status).toBe(201);
    expect((await as(t, editor, 'POST', `/api/sites/${t.site.id}/share`, {})).status).toBe(403);
    expect((await as(t, viewer, 'POST', `/api/sites/${t.site.id}/share`, {})).status).toBe(403);
    expect((await as(t, outsider, 'POST', `/api/sites/${t.site.id}/share`, {})).status).toBe(404);
    expect((await as(t, undefined, 'POST', `/api/sites/${t.site.id}/share`, {})).status).toBe(401);
  });

  it('refuses API tokens: creating links is for signed-in people', async () => {
    const token = await t.token(['stats:read'], [{ siteId: t.site.id, role: 'owner' }]);
    const res = await fetch(`${t.url}/api/sites/${t.site.id}/share`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(403);
  });

  it('refuses a past or malformed expiry and a short password', async () => {
    const past = await as(t, owner, 'POST', `/api/sites/${t.site.id}/share`, { expires_at: '2001-01-01T00:00:00Z' });
    expect({ status: past.status, code: past.body.code, message: past.body.message }).toEqual({ status: 400, code: 'validation_failed', message: 'expires_at must be in the future' });
    for (const expires_at of ['tomorrow', '2099-01-31', '2099-02-30T00:00:00Z']) {
      expect((await as(t, owner, 'POST', `/api/sites/${t.site.id}/share`, { expires_at })).status).toBe(400);
    }
    const short = await as(t, owner, 'POST', `/api/sites/${t.site.id}/share`, { password: 'short' });
    expect({ status: short.status, message: short.body.message }).toEqual({ status: 400, message: 'password must be at least 10 characters' });
  });
});

describe('GET /api/sites/:id/share', () => {
  it('lists the site’s live links newest first, without tokens, paged', async () => {
    const fresh = await as(t, teamAdmin, 'POST', '/api/sites', { domain: 'listed.example', team_id: t.team.id });
    const siteId = (fresh.body.site as { id: string }).id;
    const first = await createLink(teamAdmin, { name: 'first' }, siteId);
    const second = await createLink(teamAdmin, { name: 'second', password: PASSWORD }, siteId);
    const page = await as(t, teamAdmin, 'GET', `/api/sites/${siteId}/share?limit=1`);
    expect(page.status).toBe(200);
    expect(page.body).toEqual({
      items: [{ id: second.share.id, name: 'second', expires_at: null, has_password: true, embed_origins: [], created_at: ISO }],
      total: 2,
      limit: 1,
      offset: 0,
      has_more: true,
    });
    const rest = await as(t, teamAdmin, 'GET', `/api/sites/${siteId}/share?limit=1&offset=1`);
    expect(rest.body).toEqual({ items: [{ id: first.share.id, name: 'first', expires_at: null, has_password: false, embed_origins: [], created_at: ISO }], total: 2, limit: 1, offset: 1, has_more: false });
  });

  it('is for owners and admins only', async () => {
    expect((await as(t, siteAdmin, 'GET', `/api/sites/${t.site.id}/share`)).status).toBe(200);
    expect((await as(t, editor, 'GET', `/api/sites/${t.site.id}/share`)).status).toBe(403);
    expect((await as(t, viewer, 'GET', `/api/sites/${t.site.id}/share`)).status).toBe(403);
    expect((await as(t, outsider, 'GET', `/api/sites/${t.site.id}/share`)).status).toBe(404);
  });
});

describe('PATCH /api/sites/:id/share/:shareId', () => {
  it('sets the sites allowed to embed the link, in canonical origin form, and audits the change', async () => {
    const { share } = await createLink(owner, { name: 'Embedded board' });
    const res = await as(t, siteAdmin, 'PATCH', `/api/sites/${t.site.id}/share/${share.id}`, { embed_origins: ['https://Blog.Example.com/', 'http://intranet.example:8080', 'https://blog.example.com:443'] });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: share.id, name: 'Embedded board', expires_at: null, has_password: false, embed_origins: ['https://blog.example.com', 'http://intranet.example:8080'], created_at: ISO });
    const audit = await db().query<{ details: string }>("SELECT details FROM audit_log WHERE team_id = $1 AND action = 'site.share.updated' AND subject_id = $2", [t.team.id, share.id]);
    expect(audit.rows).toEqual([{ details: 'share link "Embedded board" on example.com changed; it may be embedded by https://blog.example.com, http://intranet.example:8080' }]);
    const cleared = await as(t, owner, 'PATCH', `/api/sites/${t.site.id}/share/${share.id}`, { embed_origins: [] });
    expect(cleared.body.embed_origins).toEqual([]);
    expect(cleared.body.name).toBe('Embedded board');
  });

  it('names every origin that is not a plain http(s) origin, at once', async () => {
    const { share } = await createLink(owner);
    const res = await as(t, owner, 'PATCH', `/api/sites/${t.site.id}/share/${share.id}`, { embed_origins: ['https://ok.example', 'https://blog.example.com/embed', 'javascript:alert(1)', '*'] });
    expect(res.status).toBe(400);
    expect((res.body.fields as { field: string }[]).map((f) => f.field)).toEqual(['embed_origins', 'embed_origins', 'embed_origins']);
  });

  it('accepts the embedding sites when the link is created', async () => {
    const res = await as(t, owner, 'POST', `/api/sites/${t.site.id}/share`, { embed_origins: ['https://wiki.example.org'] });
    expect(res.status).toBe(201);
    expect((res.body.share as { embed_origins: string[] }).embed_origins).toEqual(['https://wiki.example.org']);
  });

  it('is for site admins: editors get 403, a link of another site 404', async () => {
    const { share } = await createLink(owner);
    expect((await as(t, editor, 'PATCH', `/api/sites/${t.site.id}/share/${share.id}`, { embed_origins: [] })).status).toBe(403);
    expect((await as(t, otherOwner, 'PATCH', `/api/sites/${t.otherSite.id}/share/${share.id}`, { embed_origins: [] })).status).toBe(404);
  });
});

describe('DELETE /api/sites/:id/share/:shareId', () => {
  it('revokes the link: it leaves the list and its URL answers 404', async () => {
    const { share, token } = await createLink(owner, { name: 'to revoke' });
    expect((await pub('GET', `/api/share/${token}`)).status).toBe(200);
    expect((await as(t, editor, 'DELETE', `/api/sites/${t.site.id}/share/${share.id}`)).status).toBe(403);
    expect((await as(t, outsider, 'DELETE', `/api/sites/${t.site.id}/share/${share.id}`)).status).toBe(404);
    const res = await as(t, siteAdmin, 'DELETE', `/api/sites/${t.site.id}/share/${share.id}`);
    expect(res.status).toBe(204);
    const listed = await as(t, owner, 'GET', `/api/sites/${t.site.id}/share?limit=200`);
    expect((listed.body.items as { id: string }[]).map((i) => i.id)).not.toContain(share.id);
    expect(await pub('GET', `/api/share/${token}`)).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect((await pub('GET', `/api/share/${token}/stats`)).status).toBe(404);
    expect((await as(t, siteAdmin, 'DELETE', `/api/sites/${t.site.id}/share/${share.id}`)).status).toBe(404);
    const audit = await db().query<{ details: string }>("SELECT details FROM audit_log WHERE team_id = $1 AND action = 'site.share.revoked'", [t.team.id]);
    expect(audit.rows).toContainEqual({ details: 'share link "to revoke" on example.com' });
  });

  it('does not revoke a link through another site', async () => {
    const { share, token } = await createLink(owner);
    expect((await as(t, otherOwner, 'DELETE', `/api/sites/${t.otherSite.id}/share/${share.id}`)).status).toBe(404);
    expect((await pub('GET', `/api/share/${token}`)).status).toBe(200);
  });
});

describe('GET /api/share/:token', () => {
  it('shows the site and the link to anyone holding it', async () => {
    const { token } = await createLink(owner, { name: 'Public board' });
    const res = await pub('GET', `/api/share/${token}`);
    expect(res).toEqual({ status: 200, body: { site: { id: t.site.id, domain: 'example.com', timezone: 'UTC' }, name: 'Public board', has_password: false }, cookies: [] });
  });

  it('answers 404 for an unknown token, and for malformed ones', async () => {
    expect((await pub('GET', `/api/share/${'A'.repeat(43)}`)).status).toBe(404);
    expect((await pub('GET', '/api/share/short')).status).toBe(404);
  });

  it('answers 404 once the link has expired', async () => {
    const { share, token } = await createLink(owner, { expires_at: new Date(Date.now() + 3_600_000).toISOString() });
    expect((await pub('GET', `/api/share/${token}`)).status).toBe(200);
    await db().query("UPDATE share_links SET expires_at = now() - interval '1 second' WHERE id = $1", [share.id]);
    expect(await pub('GET', `/api/share/${token}`)).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect((await pub('GET', `/api/share/${token}/stats`)).status).toBe(404);
  });

  it('answers 404 once the site is deleted', async () => {
    const created = await as(t, teamAdmin, 'POST', '/api/sites', { domain: 'doomed.example', team_id: t.team.id });
    const siteId = (created.body.site as { id: string }).id;
    const { token } = await createLink(teamAdmin, {}, siteId);
    expect((await pub('GET', `/api/share/${token}`)).status).toBe(200);
    expect((await as(t, teamAdmin, 'DELETE', `/api/sites/${siteId}`)).status).toBe(204);
    expect((await pub('GET', `/api/share/${token}`)).status).toBe(404);
  });
});

describe('password-protected links', () => {
  let token: string;
  let shareId: string;

  beforeAll(async () => {
    const created = await createLink(owner, { name: 'Locked', password: PASSWORD });
    token = created.token;
    shareId = created.share.id;
  });

  it('answer 401 password_required until unlocked, on the view and on every read', async () => {
    expect(await pub('GET', `/api/share/${token}`)).toEqual({
      status: 401,
      body: { code: 'password_required', message: 'This share link is protected by a password' },
      cookies: [],
    });
    expect(await pub('GET', `/api/share/${token}/stats`)).toMatchObject({ status: 401, body: { code: 'password_required' } });
    expect(await pub('GET', `/api/share/${token}/events/names`)).toMatchObject({ status: 401, body: { code: 'password_required' } });
  });

  it('refuse a wrong password with 401 and no cookie', async () => {
    const res = await pub('POST', `/api/share/${token}/unlock`, { body: { password: 'not the password' } });
    expect(res).toEqual({ status: 401, body: { code: 'unauthorized', message: 'Wrong password for this share link' }, cookies: [] });
  });

  it('unlock with the right password: an HttpOnly cookie for this link, then the view and reads answer', async () => {
    const res = await pub('POST', `/api/share/${token}/unlock`, { body: { password: PASSWORD } });
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: { status: 'ok' } });
    expect(res.cookies).toEqual([expect.stringMatching(new RegExp(`^plumb_share_${shareId}=[\\w-]+\\.[\\w-]+\\.[\\w-]+; Path=/api/share/${token}; HttpOnly; SameSite=Lax; Max-Age=86400; Secure$`))]);
    const cookie = res.cookies[0].split(';')[0];
    expect(await pub('GET', `/api/share/${token}`, { cookie })).toEqual({
      status: 200,
      body: { site: { id: t.site.id, domain: 'example.com', timezone: 'UTC' }, name: 'Locked', has_password: true },
      cookies: [],
    });
    expect((await pub('GET', `/api/share/${token}/stats`, { cookie })).status).toBe(200);
  });

  it('do not accept the cookie of another link, or a forged one', async () => {
    const other = await createLink(owner, { password: PASSWORD });
    const unlocked = await pub('POST', `/api/share/${other.token}/unlock`, { body: { password: PASSWORD } });
    const [name, value] = unlocked.cookies[0].split(';')[0].split('=');
    expect(name).toBe(`plumb_share_${other.share.id}`);
    // The other link's token under this link's cookie name: signed for another subject.
    expect((await pub('GET', `/api/share/${token}`, { cookie: `plumb_share_${shareId}=${value}` })).status).toBe(401);
    expect((await pub('GET', `/api/share/${token}`, { cookie: `plumb_share_${shareId}=eyJhbGciOiJIUzI1NiJ9.e30.forged` })).status).toBe(401);
    // A signed-in owner of the site still needs the password: the link is its own principal.
    expect((await pub('GET', `/api/share/${token}`, { cookie: owner.cookie })).status).toBe(401);
  });
});

describe('reads through a link (stand-ins that answer with what they were called with)', () => {
  let token: string;
  const READ_SERVICES = ['analytics', 'events', 'goals'];

  beforeAll(async () => {
    token = (await createLink(owner)).token;
    const broker = t.node.broker;
    for (const name of READ_SERVICES) await broker.destroyService(broker.getLocalService(name)!);
    broker.createService(readStub('analytics', { stats: '/stats', kpis: '/stats/kpis', timeseries: '/stats/timeseries', breakdown: '/stats/breakdown' }));
    broker.createService(
      readStub('events', { names: '/events/names', properties: '/events/properties', breakdown: '/events/breakdown', timeseries: '/events/timeseries', audience: '/events/audience' }),
    );
    broker.createService(readStub('goals', { goalStats: '/goals/stats' }));
    await broker.waitForServices(READ_SERVICES);
    gatewayOf(broker).refreshRoutes();
  });

  // The real read services come back for the blocks after this one.
  afterAll(async () => {
    const broker = t.node.broker;
    for (const name of READ_SERVICES) await broker.destroyService(broker.getLocalService(name)!);
    for (const factory of [createAnalyticsService, createEventsService, createGoalsService]) broker.createService(factory(t.node.runtime));
    await broker.waitForServices(READ_SERVICES);
    gatewayOf(broker).refreshRoutes();
  });

  it.each([
    ['/stats', 'analytics.stats'],
    ['/stats/kpis', 'analytics.kpis'],
    ['/stats/timeseries', 'analytics.timeseries'],
    ['/stats/breakdown', 'analytics.breakdown'],
    ['/events/names', 'events.names'],
    ['/events/properties', 'events.properties'],
    ['/events/breakdown', 'events.breakdown'],
    ['/events/timeseries', 'events.timeseries'],
    ['/events/audience', 'events.audience'],
    ['/goals/stats', 'goals.goalStats'],
  ])('GET /api/share/:token%s answers %s for the link’s site, with the query forwarded', async (path, action) => {
    const res = await pub('GET', `/api/share/${token}${path}?from=2024-01-01&to=2024-01-31&event_name=signup&filter=country:is:DE&filter=device:is:mobile`, { unchecked: true });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      action,
      // A paged read is paged as the link says or, by default, as every list is.
      params: { from: '2024-01-01', to: '2024-01-31', event_name: 'signup', filter: ['country:is:DE', 'device:is:mobile'], id: t.site.id, ...(path === '/stats/breakdown' ? { limit: 25, offset: 0 } : {}) },
      share: { siteId: t.site.id },
      user: null,
    });
  });

  it('answers only the link’s site when the query names another site', async () => {
    const res = await pub('GET', `/api/share/${token}/stats?id=${t.otherSite.id}&from=2024-01-01`, { unchecked: true });
    expect(res.body).toEqual({ action: 'analytics.stats', params: { from: '2024-01-01', id: t.site.id }, share: { siteId: t.site.id }, user: null });
  });

  it('does not carry a signed-in person into the forwarded read', async () => {
    const res = await pub('GET', `/api/share/${token}/stats?id=${t.otherSite.id}`, { cookie: otherOwner.cookie, unchecked: true });
    expect(res.body).toEqual({ action: 'analytics.stats', params: { id: t.site.id }, share: { siteId: t.site.id }, user: null });
  });
});

describe('the share principal (lib/auth/access.ts)', () => {
  const meta = (siteId: string): AuthMeta => ({ request: {}, share: { siteId } });
  const outcome = (promise: Promise<void>) =>
    promise.then(
      () => 'allowed',
      (err: { code?: number }) => err.code,
    );

  it('reads its own site as a viewer', async () => {
    expect(await outcome(enforce(db(), meta(t.site.id), 'any', { site: { param: 'id', role: 'viewer', scope: 'stats:read' } }, { id: t.site.id }))).toBe('allowed');
  });

  it('reaches no other site', async () => {
    expect(await outcome(enforce(db(), meta(t.site.id), 'any', { site: { param: 'id', role: 'viewer' } }, { id: t.otherSite.id }))).toBe(404);
  });

  it('does nothing that needs more than viewer, a person, a token, or instance or team rights', async () => {
    const own = { id: t.site.id };
    expect(await outcome(enforce(db(), meta(t.site.id), 'any', { site: { param: 'id', role: 'editor' } }, own))).toBe(403);
    expect(await outcome(enforce(db(), meta(t.site.id), 'user', { site: { param: 'id', role: 'viewer' } }, own))).toBe(403);
    expect(await outcome(enforce(db(), meta(t.site.id), 'client', { site: { param: 'id', role: 'viewer' } }, own))).toBe(403);
    expect(await outcome(enforce(db(), meta(t.site.id), 'any', undefined, own))).toBe(403);
    expect(await outcome(enforce(db(), meta(t.site.id), 'any', { instance: 'admin' }, own))).toBe(403);
    expect(await outcome(enforce(db(), meta(t.site.id), 'any', { team: { param: 'id', role: 'member' } }, { id: t.team.id }))).toBe(403);
  });

  it('outranks a person in the same meta: a site owner’s rights do not pass through a link', async () => {
    const withOwner: AuthMeta = { ...meta(t.otherSite.id), user: { id: otherOwner.id, email: otherOwner.email, role: 'user' } };
    expect(await outcome(enforce(db(), withOwner, 'any', { site: { param: 'id', role: 'admin' } }, { id: t.otherSite.id }))).toBe(403);
  });
});

describe('reads through a link, answered by the real read actions', () => {
  let token: string;
  const today = new Date().toISOString().slice(0, 10);

  async function pageviews(siteDomain: string, count: number, ingestToken: string) {
    for (let i = 0; i < count; i++) {
      const res = await fetch(`${t.url}/api/ingest/server/pageview`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${ingestToken}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ url: `https://${siteDomain}/page-${i}`, timestamp: new Date().toISOString(), visitor_ip: `203.0.113.${i + 1}`, user_agent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0' }),
      });
      expect(res.status).toBe(202);
    }
  }
  const read = async (path: string, who?: Person) => {
    const res = await fetch(`${t.url}${path}`, { headers: who ? { Cookie: who.cookie } : {} });
    return { status: res.status, body: (await res.json()) as { kpis?: { visitors: number; pageviews: number } } };
  };

  beforeAll(async () => {
    const ingest = await t.token(['ingest:write'], [
      { siteId: t.site.id, role: 'editor' },
      { siteId: t.otherSite.id, role: 'editor' },
    ]);
    await pageviews(t.site.domain, 2, ingest);
    await pageviews(t.otherSite.domain, 5, ingest);
    await t.rows('hits', 7);
    // The writer stores a batch's tables one after the other, and the KPIs read the visits: wait for them too.
    await t.rows('visits', 7);
    token = (await createLink(owner)).token;
  }, 30_000);

  it('GET /api/share/:token/stats answers what the site’s own stats answer, for the link’s site only', async () => {
    const own = await read(`/api/sites/${t.site.id}/stats?from=${today}&to=${today}`, owner);
    const other = await read(`/api/sites/${t.otherSite.id}/stats?from=${today}&to=${today}`, otherOwner);
    expect({ visitors: own.body.kpis?.visitors, pageviews: own.body.kpis?.pageviews }).toEqual({ visitors: 2, pageviews: 2 });
    expect({ visitors: other.body.kpis?.visitors, pageviews: other.body.kpis?.pageviews }).toEqual({ visitors: 5, pageviews: 5 });
    const shared = await read(`/api/share/${token}/stats?from=${today}&to=${today}&id=${t.otherSite.id}`);
    expect(shared.status).toBe(200);
    expect({ visitors: shared.body.kpis?.visitors, pageviews: shared.body.kpis?.pageviews }).toEqual({ visitors: 2, pageviews: 2 });
  });

  it('GET /api/share/:token/stats/breakdown, /stats/kpis and /stats/timeseries answer for the link’s site', async () => {
    const breakdown = await read(`/api/share/${token}/stats/breakdown?from=${today}&to=${today}&dimension=pages&id=${t.otherSite.id}`);
    expect(breakdown.status).toBe(200);
    expect(breakdown.body).toEqual((await read(`/api/sites/${t.site.id}/stats/breakdown?from=${today}&to=${today}&dimension=pages`, owner)).body);
    for (const path of ['/stats/timeseries', '/stats/kpis']) {
      const res = await read(`/api/share/${token}${path}?from=${today}&to=${today}`);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      expect(res.body).toEqual((await read(`/api/sites/${t.site.id}${path}?from=${today}&to=${today}`, owner)).body);
    }
  });

  it('GET /api/share/:token/events/names and /goals/stats answer through the real actions', async () => {
    for (const path of ['/events/names', '/goals/stats']) {
      const res = await read(`/api/share/${token}${path}?from=${today}&to=${today}`);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      expect(res.body).toEqual((await read(`/api/sites/${t.site.id}${path}?from=${today}&to=${today}`, owner)).body);
    }
  });

  it('leaves the forwarded parameters to the action’s own validation', async () => {
    const res = await read(`/api/share/${token}/events/audience?from=${today}&to=${today}&event_name=signup&dimension_key=browser`);
    expect(res.status).toBe(400);
  });
});
