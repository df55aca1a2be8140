// API clients through a real node: issue, list, use on server ingest, rotate, delete, expiry; a
// token never exceeds its owner's rights, at issue and at use; tokens cannot mint tokens.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createSite, createTeam } from '../../lib/sites/sites.ts';
import { waitFor } from '../support/instance.ts';
import { as, joinTeam, type Person, person, withToken } from '../support/accounts.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const TOKEN = /^plumb_[A-Za-z0-9_-]{43}$/;

let t: TestNode;
let alice: Person;
let stranger: Person;
let elsewhereSiteId: string;


const ingest = (token: string) =>
  withToken(t, token, 'POST', '/api/ingest/server/pageview', {
    url: 'https://example.com/from-a-token',
    timestamp: new Date().toISOString(),
    visitor_ip: '193.0.6.139',
    user_agent: 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0',
  });

/** Polls until ingest with the token answers `status` (site-role changes reach cached tokens within 5 s). */
async function ingestSettlesOn(token: string, status: number) {
  let last = 0;
  await waitFor(
    async () => {
      last = (await ingest(token)).status;
      return last === status;
    },
    8_000,
    () => `expected ingest to answer ${status}, last answer ${last}`,
  );
}

const setSiteRole = (userId: string, role: string | null) =>
  role === null
    ? t.node.runtime.metadata().query('DELETE FROM site_members WHERE site_id = $1 AND user_id = $2', [t.site.id, userId])
    : t.node.runtime
        .metadata()
        .query('INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, $3) ON CONFLICT (site_id, user_id) DO UPDATE SET role = $3', [t.site.id, userId, role]);

beforeAll(async () => {
  t = await startTestNode();
  alice = await person(t, 'user', 'alice@example.com');
  stranger = await person(t, 'user', 'stranger@example.com');
  const db = t.node.runtime.metadata();
  await setSiteRole(alice.id, 'admin');
  await db.query("INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, 'viewer')", [t.otherSite.id, alice.id]);
  const elsewhere = await createSite(db, { teamId: (await createTeam(db, { name: 'Elsewhere' })).id, domain: 'elsewhere.example' });
  elsewhereSiteId = elsewhere.id;
});

afterAll(() => t.stop());

describe('the API client lifecycle', () => {
  let id: string;
  let first: string;
  let second: string;

  it('POST /api/user/api-clients issues a token once, with its scopes and site roles', async () => {
    const res = await as(t, alice, 'POST', '/api/user/api-clients', {
      name: 'Backend',
      scopes: ['ingest:write', 'stats:read'],
      sites: [{ site_id: t.site.id, role: 'editor' }],
      expires_at: '2099-01-01T00:00:00Z',
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      api_client: {
        id: expect.any(String),
        name: 'Backend',
        scopes: ['ingest:write', 'stats:read'],
        sites: [{ site_id: t.site.id, role: 'editor' }],
        expires_at: '2099-01-01T00:00:00.000Z',
        created_at: expect.stringMatching(ISO),
        last_used_at: null,
      },
      token: expect.stringMatching(TOKEN),
    });
    id = (res.body.api_client as { id: string }).id;
    first = res.body.token as string;
  });

  it('the token ingests for its site', async () => {
    expect(await ingest(first)).toEqual({ status: 202, body: { status: 'accepted' } });
  });

  it('GET /api/user/api-clients lists the caller’s clients, never the token, with the last use', async () => {
    let res = await as(t, alice, 'GET', '/api/user/api-clients');
    await waitFor(
      async () => {
        res = await as(t, alice, 'GET', '/api/user/api-clients');
        return (res.body.items as { last_used_at: string | null }[])[0].last_used_at !== null;
      },
      5_000,
      () => 'last_used_at was never recorded',
    );
    expect(res.body).toEqual({
      items: [
        {
          id,
          name: 'Backend',
          scopes: ['ingest:write', 'stats:read'],
          sites: [{ site_id: t.site.id, role: 'editor' }],
          expires_at: '2099-01-01T00:00:00.000Z',
          created_at: expect.stringMatching(ISO),
          last_used_at: expect.stringMatching(ISO),
        },
      ],
      total: 1,
      limit: 25,
      offset: 0,
      has_more: false,
    });
    expect((await as(t, stranger, 'GET', '/api/user/api-clients')).body).toEqual({ items: [], total: 0, limit: 25, offset: 0, has_more: false });
  });

  it('POST /api/user/api-clients/:id/rotate kills the old token at once and returns a new one', async () => {
    const res = await as(t, alice, 'POST', `/api/user/api-clients/${id}/rotate`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ api_client: { id, name: 'Backend', sites: [{ site_id: t.site.id, role: 'editor' }] }, token: expect.stringMatching(TOKEN) });
    second = res.body.token as string;
    expect(second).not.toBe(first);
    expect((await ingest(first)).status).toBe(401);
    expect((await ingest(second)).status).toBe(202);
  });

  it("answers 404 for someone else's client, on rotate and delete alike", async () => {
    expect((await as(t, stranger, 'POST', `/api/user/api-clients/${id}/rotate`)).status).toBe(404);
    expect((await as(t, stranger, 'DELETE', `/api/user/api-clients/${id}`)).status).toBe(404);
    expect((await ingest(second)).status).toBe(202);
  });

  it('DELETE /api/user/api-clients/:id kills the token at once', async () => {
    const res = await as(t, alice, 'DELETE', `/api/user/api-clients/${id}`);
    expect(res.status).toBe(204);
    expect((await ingest(second)).status).toBe(401);
    expect((await as(t, alice, 'GET', '/api/user/api-clients')).body).toMatchObject({ items: [], total: 0 });
    expect((await as(t, alice, 'DELETE', `/api/user/api-clients/${id}`)).status).toBe(404);
  });
});

describe('what a token may hold', () => {
  it.each([
    ['a role above the caller’s own on a site', () => [{ site_id: t.otherSite.id, role: 'editor' }], 403],
    ['a site the caller has no role on', () => [{ site_id: elsewhereSiteId, role: 'viewer' }], 403],
    ['a site that does not exist', () => [{ site_id: '00000000-0000-4000-8000-000000000000', role: 'viewer' }], 403],
    ['the same site twice', () => [{ site_id: t.site.id, role: 'viewer' }, { site_id: t.site.id, role: 'editor' }], 400],
  ])('refuses %s', async (_name, sites, status) => {
    const res = await as(t, alice, 'POST', '/api/user/api-clients', { name: 'x', scopes: ['stats:read'], sites: sites() });
    expect(res.status).toBe(status);
  });

  it('allows the caller’s own role and below', async () => {
    const res = await as(t, alice, 'POST', '/api/user/api-clients', {
      name: 'Own rights',
      scopes: ['stats:read'],
      sites: [
        { site_id: t.site.id, role: 'admin' },
        { site_id: t.otherSite.id, role: 'viewer' },
      ],
    });
    expect(res.status).toBe(201);
    expect((res.body.api_client as { expires_at: unknown }).expires_at).toBeNull();
  });

  it('refuses an unknown scope and an expiry in the past', async () => {
    const scope = await as(t, alice, 'POST', '/api/user/api-clients', { name: 'x', scopes: ['stats:read', 'root'], sites: [] });
    expect({ status: scope.status, code: scope.body.code }).toEqual({ status: 400, code: 'validation_failed' });
    const past = await as(t, alice, 'POST', '/api/user/api-clients', { name: 'x', scopes: ['stats:read'], sites: [], expires_at: '2020-01-01T00:00:00Z' });
    expect([past.status, past.body.fields]).toEqual([400, [{ field: 'expires_at', message: 'expires_at must be in the future', type: 'dateTimeFuture' }]]);
  });

  it('a token cannot mint, list, rotate or delete tokens', async () => {
    const created = await as(t, alice, 'POST', '/api/user/api-clients', { name: 'minter', scopes: ['ingest:write'], sites: [{ site_id: t.site.id, role: 'editor' }] });
    const token = created.body.token as string;
    const clientId = (created.body.api_client as { id: string }).id;
    expect((await withToken(t, token, 'POST', '/api/user/api-clients', { name: 'child', scopes: ['ingest:write'], sites: [] })).status).toBe(403);
    expect((await withToken(t, token, 'GET', '/api/user/api-clients')).status).toBe(403);
    expect((await withToken(t, token, 'POST', `/api/user/api-clients/${clientId}/rotate`)).status).toBe(403);
    expect((await withToken(t, token, 'DELETE', `/api/user/api-clients/${clientId}`)).status).toBe(403);
  });

  it('an expiring token stops working at its expiry', async () => {
    const created = await as(t, alice, 'POST', '/api/user/api-clients', {
      name: 'short-lived',
      scopes: ['ingest:write'],
      sites: [{ site_id: t.site.id, role: 'editor' }],
      expires_at: new Date(Date.now() + 1_500).toISOString(),
    });
    const token = created.body.token as string;
    expect((await ingest(token)).status).toBe(202);
    await new Promise((r) => setTimeout(r, 1_700));
    expect((await ingest(token)).status).toBe(401);
  });
});

describe("a token follows its owner's current rights", () => {
  it('demoting or removing the owner on the site takes the token down (within the 5 s verifier cache)', async () => {
    const tokenOf = async (who: Person) => {
      await setSiteRole(who.id, 'editor');
      const created = await as(t, who, 'POST', '/api/user/api-clients', { name: who.email, scopes: ['ingest:write'], sites: [{ site_id: t.site.id, role: 'editor' }] });
      const token = created.body.token as string;
      expect((await ingest(token)).status).toBe(202);
      return token;
    };
    const bob = await person(t, 'user');
    const dave = await person(t, 'user');
    const [bobs, daves] = [await tokenOf(bob), await tokenOf(dave)];
    await setSiteRole(bob.id, 'viewer');
    await setSiteRole(dave.id, null);
    await Promise.all([ingestSettlesOn(bobs, 403), ingestSettlesOn(daves, 403)]);
    await setSiteRole(bob.id, 'editor');
    await ingestSettlesOn(bobs, 202);
  });

  it('an instance role change applies to the owner’s tokens at once on this node', async () => {
    const owner = await person(t, 'owner');
    const carol = await person(t, 'admin');
    const created = await as(t, carol, 'POST', '/api/user/api-clients', { name: 'carol', scopes: ['ingest:write'], sites: [{ site_id: t.site.id, role: 'admin' }] });
    expect(created.status).toBe(201);
    const token = created.body.token as string;
    expect((await ingest(token)).status).toBe(202);
    expect((await as(t, owner, 'PATCH', `/api/admin/users/${carol.id}`, { role: 'user' })).status).toBe(200);
    expect(await ingest(token)).toEqual({ status: 403, body: { message: 'This token has no access to that site', code: 'forbidden' } });
  });
});

describe('a token whose owner loses their role', () => {
  /** A new team with a site, `who` in it as `role` through an accepted invitation, and a token of theirs for the site. */
  async function memberWithToken(role: string) {
    const owner = await person(t);
    const teamId = (await as(t, owner, 'POST', '/api/user/teams', { name: `Token team ${Date.now()}` })).body.id as string;
    const site = await as(t, owner, 'POST', '/api/sites', { domain: `token-${Date.now()}.example`, team_id: teamId });
    const siteId = (site.body.site as { id: string }).id;
    const who = await person(t);
    expect((await joinTeam(t, owner, teamId, who, role)).status).toBe(200);
    const issued = await as(t, who, 'POST', '/api/user/api-clients', { name: 'reader', scopes: ['stats:read'], sites: [{ site_id: siteId, role: 'viewer' }] });
    expect(issued.status).toBe(201);
    const token = issued.body.token as string;
    const read = () => withToken(t, token, 'GET', `/api/sites/${siteId}/stats?period=day`);
    expect((await read()).status).toBe(200);
    return { owner, teamId, who, read };
  }

  it('stops reading the moment its owner is removed from the team, with no wait for a cache', async () => {
    const { owner, teamId, who, read } = await memberWithToken('member');
    expect((await as(t, owner, 'DELETE', `/api/user/teams/${teamId}/members/${who.id}`)).status).toBe(200);
    expect((await read()).status).toBe(404);
  });

  it('stops reading the moment its owner leaves the team', async () => {
    const { teamId, who, read } = await memberWithToken('member');
    expect((await as(t, who, 'DELETE', `/api/user/teams/${teamId}/members/${who.id}`)).status).toBe(200);
    expect((await read()).status).toBe(404);
  });
});
