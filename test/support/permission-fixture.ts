// The cast of the permission matrix: one person or token per role, all around one site of one
// team, plus fresh targets for routes that destroy what they act on.
import { createApiClient } from '../../lib/auth/api-clients.ts';
import type { TestNode } from './node.ts';
import { type Person, person } from './accounts.ts';
import { randomBytes, randomUUID } from 'node:crypto';
import { createSite, createTeam } from '../../lib/sites/sites.ts';

export const ROLES = [
  'anonymous',
  'instance-owner',
  'instance-admin',
  'instance-user',
  'site-owner',
  'site-admin',
  'site-editor',
  'site-viewer',
  'client-scoped',
  'client-unscoped',
] as const;
export type Role = (typeof ROLES)[number];

const SITE_ROLE: Partial<Record<Role, string>> = { 'site-owner': 'owner', 'site-admin': 'admin', 'site-editor': 'editor', 'site-viewer': 'viewer' };

export interface Fixture {
  t: TestNode;
  siteId: string;
  teamId: string;
  people: Partial<Record<Role, Person>>;
  tokens: Partial<Record<Role, string>>;
  /** A new site of the team where `role` stands as on the main site (for destructive routes), and the headers to use on it. */
  freshSite(role: Role): Promise<{ siteId: string; headers: Record<string, string> }>;
  /** A plain account nobody else depends on (a target for user administration). */
  freshUser(): Promise<string>;
  /** A new team (instance owners and admins administer every team; nobody else is in it). */
  freshTeam(): Promise<string>;
  /** A member of the given team or site, to be changed or removed. */
  freshTeamMember(teamId: string): Promise<string>;
  freshSiteMember(siteId: string): Promise<string>;
  /** A pending invitation to the team. */
  freshInvitation(teamId: string): Promise<string>;
  headers(role: Role): Record<string, string>;
  /** The role's credentials on a session of its own, for routes that end the session they are called with. */
  freshSessionHeaders(role: Role): Promise<Record<string, string>>;
}

export async function buildFixture(t: TestNode): Promise<Fixture> {
  const db = t.node.runtime.metadata();
  const people: Partial<Record<Role, Person>> = {
    'instance-owner': await person(t, 'owner'),
    'instance-admin': await person(t, 'admin'),
    'instance-user': await person(t, 'user'),
  };
  for (const [role, siteRole] of Object.entries(SITE_ROLE)) {
    const member = await person(t, 'user');
    await db.query('INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, $3)', [t.site.id, member.id, siteRole]);
    people[role as Role] = member;
  }
  const owner = people['site-owner']!;
  const tokens: Partial<Record<Role, string>> = {
    'client-scoped': (await createApiClient(db, { name: 'scoped', scopes: ['stats:read', 'ingest:write', 'ai-fetch:write', 'mcp'], sites: [{ siteId: t.site.id, role: 'owner' }], ownerUserId: owner.id })).token,
    'client-unscoped': (await createApiClient(db, { name: 'unscoped', scopes: [], sites: [{ siteId: t.site.id, role: 'owner' }], ownerUserId: owner.id })).token,
  };
  let freshCount = 0;
  const headers = (role: Role): Record<string, string> => {
    if (role === 'anonymous') return {};
    const token = tokens[role];
    if (token) return { Authorization: `Bearer ${token}` };
    return { Cookie: people[role]!.cookie };
  };
  return {
    t,
    siteId: t.site.id,
    teamId: t.team.id,
    people,
    tokens,
    async freshSite(role) {
      const site = await createSite(db, { teamId: t.team.id, domain: `fresh-${++freshCount}-${Date.now()}.example` });
      const siteRole = SITE_ROLE[role];
      if (siteRole) await db.query('INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, $3)', [site.id, people[role]!.id, siteRole]);
      t.node.runtime.sites.invalidate();
      if (role === 'client-scoped' || role === 'client-unscoped') {
        // A new token rather than a grant to the old one: verified tokens are cached for seconds.
        await db.query('INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, $3)', [site.id, owner.id, 'owner']);
        const scopes = role === 'client-scoped' ? (['stats:read', 'ingest:write', 'ai-fetch:write', 'mcp'] as const) : [];
        const client = await createApiClient(db, { name: role, scopes: [...scopes], sites: [{ siteId: site.id, role: 'owner' }], ownerUserId: owner.id });
        return { siteId: site.id, headers: { Authorization: `Bearer ${client.token}` } };
      }
      return { siteId: site.id, headers: headers(role) };
    },
    headers,
    async freshSessionHeaders(role) {
      const who = people[role];
      if (!who || tokens[role]) return headers(role);
      const session = await t.node.runtime.sessions.start(who.id, { remember: false });
      return { Cookie: session.setCookies.map((c) => c.split(';')[0]).join('; ') };
    },
    async freshUser() {
      return (await person(t, 'user')).id;
    },
    async freshTeam() {
      return (await createTeam(db, { name: `fresh team ${++freshCount}` })).id;
    },
    async freshTeamMember(teamId) {
      const member = await person(t, 'user');
      await db.query("INSERT INTO team_members (team_id, user_id, role) VALUES ($1, $2, 'member')", [teamId, member.id]);
      return member.id;
    },
    async freshSiteMember(siteId) {
      const member = await person(t, 'user');
      await db.query("INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, 'viewer')", [siteId, member.id]);
      return member.id;
    },
    async freshInvitation(teamId) {
      const id = randomUUID();
      await db.query(
        "INSERT INTO invitations (id, team_id, email, role, token_hash, expires_at) VALUES ($1, $2, $3, 'member', $4, now() + interval '7 days')",
        [id, teamId, `invitee-${++freshCount}@example.com`, randomBytes(32)],
      );
      return id;
    },
  };
}
