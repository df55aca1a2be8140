// Team single sign-on through a real OpenID provider on loopback (panva's oidc-provider): team
// owners and admins configure it (the client secret is never returned), test its discovery
// document, and people sign in by their address's domain, with and without just-in-time membership.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTeam } from '../../lib/sites/sites.ts';
import { as, type Person, person } from '../support/accounts.ts';
import { returnTo, startAt } from '../support/federated.ts';
import { freePort } from '../support/instance.ts';
import { type OidcTestProvider, signInAt, startOidcTestProvider } from '../support/oidc-test-provider.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

let t: TestNode;
let idp: OidcTestProvider;
let n = 0;
const SECRET = 'the team provider secret';

beforeAll(async () => {
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  idp = await startOidcTestProvider({ clientId: 'plumb-team', clientSecret: SECRET, redirectUris: [`${publicUrl}/api/auth/sso/callback`] });
  t = await startTestNode({ PLUMB_PORT: String(port), PLUMB_PUBLIC_URL: publicUrl, PLUMB_SSO_ALLOW_PRIVATE: 'true', PLUMB_LOGIN_RATE_PER_MINUTE: '10000', PLUMB_LOGIN_BURST: '10000' });
});

afterAll(async () => {
  await t?.stop();
  await idp?.close();
});

/** A fresh team with an owner, an admin and a member (the viewer-level role). */
async function teamWithPeople() {
  const db = t.node.runtime.metadata();
  const team = await createTeam(db, { name: `SSO team ${++n}` });
  const people: Record<'owner' | 'admin' | 'member', Person> = {
    owner: await person(t, 'user', `owner-${n}-${Date.now()}@people.example`),
    admin: await person(t, 'user', `admin-${n}-${Date.now()}@people.example`),
    member: await person(t, 'user', `member-${n}-${Date.now()}@people.example`),
  };
  for (const [role, who] of Object.entries(people)) await db.query('INSERT INTO team_members (team_id, user_id, role) VALUES ($1, $2, $3)', [team.id, who.id, role]);
  return { teamId: team.id, ...people };
}

const connection = (domain: string, jit: boolean) => ({ issuer: idp.issuer, client_id: 'plumb-team', client_secret: SECRET, allowed_domains: [domain], jit_enabled: jit });

async function ssoSignIn(email: string, account: string) {
  const started = await startAt(t, '/api/auth/sso/start', { email });
  return returnTo(t, await signInAt(started.authorizationUrl, account), started.flowCookie);
}

async function whoIs(cookie: string) {
  const res = await fetch(`${t.url}/api/user/me`, { headers: { Cookie: cookie } });
  return res.status === 200 ? ((await res.json()) as { email: string }).email : res.status;
}

describe('PUT /api/teams/{id}/sso', () => {
  it('connects the team and never returns the client secret', async () => {
    const { teamId, owner } = await teamWithPeople();
    const saved = await as(t, owner, 'PUT', `/api/teams/${teamId}/sso`, { ...connection(`saved${n}.example`, false), allowed_domains: [`Saved${n}.Example`] });
    expect(saved.status).toBe(200);
    expect(saved.body.sso).toEqual({ issuer: idp.issuer, client_id: 'plumb-team', client_secret_set: true, allowed_domains: [`saved${n}.example`], jit_enabled: false, updated_at: expect.any(String) });
    const read = await as(t, owner, 'GET', `/api/teams/${teamId}/sso`);
    expect(JSON.stringify(read.body)).not.toContain(SECRET);
    const { rows } = await t.node.runtime.metadata().query<{ client_secret: string }>('SELECT client_secret FROM team_sso WHERE team_id = $1', [teamId]);
    expect(rows[0].client_secret).toMatch(/^v1\./);
    expect(rows[0].client_secret).not.toContain(SECRET);
  });

  it('keeps the stored secret when an update leaves it out', async () => {
    const { teamId, admin } = await teamWithPeople();
    const domain = `keep${n}.example`;
    expect((await as(t, admin, 'PUT', `/api/teams/${teamId}/sso`, connection(domain, true))).status).toBe(200);
    const { client_secret: _left, ...withoutSecret } = connection(domain, true);
    expect((await as(t, admin, 'PUT', `/api/teams/${teamId}/sso`, withoutSecret)).status).toBe(200);
    idp.setAccount(`kept-${n}`, { email: `new@${domain}`, email_verified: true });
    expect((await ssoSignIn(`new@${domain}`, `kept-${n}`)).location).toBe('/');
  });

  it('refuses a team member who is not an owner or admin (403)', async () => {
    const { teamId, member } = await teamWithPeople();
    expect((await as(t, member, 'PUT', `/api/teams/${teamId}/sso`, connection(`member${n}.example`, false))).status).toBe(403);
    expect((await as(t, member, 'GET', `/api/teams/${teamId}/sso`)).status).toBe(403);
    expect((await as(t, member, 'POST', `/api/teams/${teamId}/sso/test`, { issuer: idp.issuer })).status).toBe(403);
  });

  it('refuses a domain another team already signs in with (409)', async () => {
    const first = await teamWithPeople();
    const second = await teamWithPeople();
    const domain = `shared${n}.example`;
    expect((await as(t, first.owner, 'PUT', `/api/teams/${first.teamId}/sso`, connection(domain, false))).status).toBe(200);
    const taken = await as(t, second.owner, 'PUT', `/api/teams/${second.teamId}/sso`, connection(domain, false));
    expect([taken.status, taken.body.code]).toEqual([409, 'conflict']);
  });

  it('refuses a malformed domain or issuer with the field named (400)', async () => {
    const { teamId, owner } = await teamWithPeople();
    const bad = await as(t, owner, 'PUT', `/api/teams/${teamId}/sso`, { ...connection('not a domain', false), issuer: 'ftp://idp.example' });
    expect(bad.status).toBe(400);
    expect((bad.body.fields as { field: string }[]).map((f) => f.field).sort()).toEqual(['allowed_domains[0]', 'issuer']);
    expect((await as(t, owner, 'GET', `/api/teams/${teamId}/sso`)).body).toEqual({ sso: null });
  });
});

describe('POST /api/teams/{id}/sso/test', () => {
  it('reports a usable discovery document', async () => {
    const { teamId, owner } = await teamWithPeople();
    const res = await as(t, owner, 'POST', `/api/teams/${teamId}/sso/test`, { issuer: idp.issuer });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, issuer: idp.issuer, message: 'The discovery document is usable', authorization_endpoint: `${idp.issuer}/auth`, token_endpoint: `${idp.issuer}/token` });
  });

  it('reports an issuer without a discovery document', async () => {
    const { teamId, owner } = await teamWithPeople();
    const res = await as(t, owner, 'POST', `/api/teams/${teamId}/sso/test`, { issuer: `${idp.issuer}/nowhere` });
    expect([res.status, res.body.ok, res.body.authorization_endpoint]).toEqual([200, false, null]);
    expect(res.body.message).toMatch(/^No usable discovery document/);
  });
});

describe('single sign-on by email domain', () => {
  it('signs a new address in with just-in-time membership, as a member', async () => {
    const { teamId, owner } = await teamWithPeople();
    const domain = `jit${n}.example`;
    await as(t, owner, 'PUT', `/api/teams/${teamId}/sso`, connection(domain, true));
    idp.setAccount(`jit-${n}`, { email: `newcomer@${domain}`, email_verified: true, groups: ['admins'] });
    const back = await ssoSignIn(`newcomer@${domain}`, `jit-${n}`);
    expect([back.status, back.location]).toEqual([303, '/']);
    expect(await whoIs(back.cookie)).toBe(`newcomer@${domain}`);
    const { rows } = await t.node.runtime.metadata().query<{ role: string }>(
      'SELECT tm.role FROM team_members tm JOIN users u ON u.id = tm.user_id WHERE tm.team_id = $1 AND u.email = $2',
      [teamId, `newcomer@${domain}`],
    );
    // Provider groups are never roles.
    expect(rows).toEqual([{ role: 'member' }]);
  });

  it('refuses an address without an account when just-in-time membership is off', async () => {
    const { teamId, owner } = await teamWithPeople();
    const domain = `closed${n}.example`;
    await as(t, owner, 'PUT', `/api/teams/${teamId}/sso`, connection(domain, false));
    idp.setAccount(`closed-${n}`, { email: `outsider@${domain}`, email_verified: true });
    const back = await ssoSignIn(`outsider@${domain}`, `closed-${n}`);
    expect([back.location, back.cookie]).toEqual(['/login?signin_error=not_a_member', '']);
  });

  it('signs in an existing member of the team with just-in-time membership off', async () => {
    const { teamId, owner } = await teamWithPeople();
    const domain = `members${n}.example`;
    await as(t, owner, 'PUT', `/api/teams/${teamId}/sso`, connection(domain, false));
    const member = await person(t, 'user', `staff@${domain}`);
    await t.node.runtime.metadata().query("INSERT INTO team_members (team_id, user_id, role) VALUES ($1, $2, 'member')", [teamId, member.id]);
    idp.setAccount(`staff-${n}`, { email: `staff@${domain}`, email_verified: true });
    expect(await whoIs((await ssoSignIn(`staff@${domain}`, `staff-${n}`)).cookie)).toBe(`staff@${domain}`);
  });

  it('does not take over an existing account outside the team, even with just-in-time membership', async () => {
    const { teamId, owner } = await teamWithPeople();
    const domain = `takeover${n}.example`;
    await as(t, owner, 'PUT', `/api/teams/${teamId}/sso`, connection(domain, true));
    await person(t, 'user', `victim@${domain}`);
    idp.setAccount(`victim-${n}`, { email: `victim@${domain}`, email_verified: true });
    expect((await ssoSignIn(`victim@${domain}`, `victim-${n}`)).location).toBe('/login?signin_error=not_a_member');
  });

  it("refuses a verified address whose domain the team does not allow", async () => {
    const { teamId, owner } = await teamWithPeople();
    const domain = `allowed${n}.example`;
    await as(t, owner, 'PUT', `/api/teams/${teamId}/sso`, connection(domain, true));
    idp.setAccount(`elsewhere-${n}`, { email: `someone@elsewhere${n}.example`, email_verified: true });
    const back = await ssoSignIn(`someone@${domain}`, `elsewhere-${n}`);
    expect([back.location, back.cookie]).toEqual(['/login?signin_error=domain_not_allowed', '']);
  });

  it('refuses an address the provider has not verified', async () => {
    const { teamId, owner } = await teamWithPeople();
    const domain = `unverified${n}.example`;
    await as(t, owner, 'PUT', `/api/teams/${teamId}/sso`, connection(domain, true));
    idp.setAccount(`unverified-${n}`, { email: `person@${domain}`, email_verified: false });
    expect((await ssoSignIn(`person@${domain}`, `unverified-${n}`)).location).toBe('/login?signin_error=email_unverified');
  });

  it('answers 404 for an address whose domain no team signs in with', async () => {
    const res = await as(t, undefined, 'POST', '/api/auth/sso/start', { email: 'someone@no-sso.example' });
    expect([res.status, res.body.code]).toEqual([404, 'not_found']);
  });

  it('stops signing in once the team removed the connection', async () => {
    const { teamId, owner } = await teamWithPeople();
    const domain = `removed${n}.example`;
    await as(t, owner, 'PUT', `/api/teams/${teamId}/sso`, connection(domain, true));
    expect((await as(t, owner, 'DELETE', `/api/teams/${teamId}/sso`)).status).toBe(204);
    expect((await as(t, undefined, 'POST', '/api/auth/sso/start', { email: `a@${domain}` })).status).toBe(404);
  });
});
