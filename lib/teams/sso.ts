// A team's single sign-on connection to one OpenID provider: what owners and admins configure
// (issuer, client, the email domains it answers for, just-in-time membership), the discovery
// check, and who a verified address from the provider may sign in as. The client secret is sealed
// at rest and never leaves the server. Provider groups are never read; roles stay Plumb's.
import { writeAudit } from '../audit/audit.ts';
import type { SecretBox } from '../auth/secret-box.ts';
import type { UserPrincipal } from '../auth/sessions.ts';
import { conflict, notFound, validationFailed } from '../errors.ts';
import type { MetadataQueryable, MetadataStore } from '../stores/metadata/index.ts';
import { createUser, findUserByEmail } from '../users/users.ts';
import { queueOperationalEvent } from '../webhooks/outbox.ts';
import { refused } from '../auth/federated/social.ts';
import { assertActive, iso, lockTeam } from './teams.ts';

export interface SsoConnection {
  issuer: string;
  client_id: string;
  /** Always true once configured: the secret is stored, and never shown again. */
  client_secret_set: boolean;
  allowed_domains: string[];
  jit_enabled: boolean;
  updated_at: string;
}

export interface SsoInput {
  issuer: string;
  client_id: string;
  /** Left out on an update to keep the stored one. */
  client_secret?: string;
  allowed_domains: string[];
  jit_enabled: boolean;
}

/** What sign-in needs: the connection with its secret opened. */
export interface SsoSecrets {
  teamId: string;
  issuer: string;
  clientId: string;
  clientSecret: string;
  allowedDomains: string[];
  jitEnabled: boolean;
}

const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

export const domainOf = (email: string) => email.slice(email.lastIndexOf('@') + 1).toLowerCase();

async function domainsOf(db: MetadataQueryable, teamId: string): Promise<string[]> {
  const { rows } = await db.query<{ domain: string }>('SELECT domain FROM team_sso_domains WHERE team_id = $1 ORDER BY domain', [teamId]);
  return rows.map((r) => r.domain);
}

export async function getSso(db: MetadataQueryable, teamId: string): Promise<SsoConnection | null> {
  const { rows } = await db.query<Omit<SsoConnection, 'allowed_domains' | 'client_secret_set'>>(
    `SELECT issuer, client_id, jit_enabled, ${iso('updated_at')} AS updated_at FROM team_sso WHERE team_id = $1`,
    [teamId],
  );
  if (!rows[0]) return null;
  return { ...rows[0], client_secret_set: true, allowed_domains: await domainsOf(db, teamId) };
}

/** Checks what an owner or admin entered; the issuer must be an https URL unless private providers are allowed. */
export function checkSsoInput(input: SsoInput, allowPrivate: boolean): { issuer: string; domains: string[] } {
  const problems: { field: string; message: string; type: string }[] = [];
  let issuer = '';
  try {
    const url = new URL(input.issuer);
    const schemes = allowPrivate ? ['https:', 'http:'] : ['https:'];
    if (!schemes.includes(url.protocol) || url.username || url.password || url.search || url.hash) throw new Error('scheme');
    issuer = url.href.replace(/\/+$/, '');
  } catch {
    problems.push({ field: 'issuer', message: allowPrivate ? 'issuer must be an http(s) URL without query or credentials' : 'issuer must be an https URL without query or credentials', type: 'url' });
  }
  const domains = [...new Set(input.allowed_domains.map((d) => d.trim().toLowerCase()))];
  domains.forEach((domain, i) => {
    if (!DOMAIN.test(domain)) problems.push({ field: `allowed_domains[${i}]`, message: `allowed_domains[${i}] must be a domain name like example.com`, type: 'domain' });
  });
  if (domains.length === 0) problems.push({ field: 'allowed_domains', message: 'allowed_domains must name at least one domain', type: 'arrayMin' });
  if (problems.length > 0) throw validationFailed(problems);
  return { issuer, domains };
}

/** Creates or replaces the team's connection. A domain another team's connection answers for is refused (409). */
export async function saveSso(store: MetadataStore, box: SecretBox, actor: UserPrincipal, teamId: string, input: SsoInput, allowPrivate: boolean): Promise<SsoConnection> {
  const { issuer, domains } = checkSsoInput(input, allowPrivate);
  return store.transaction(async (tx) => {
    assertActive(await lockTeam(tx, teamId));
    const { rows: existing } = await tx.query<{ client_secret: string }>('SELECT client_secret FROM team_sso WHERE team_id = $1', [teamId]);
    if (!existing[0] && !input.client_secret) throw validationFailed([{ field: 'client_secret', message: 'client_secret is required when connecting a provider', type: 'required' }]);
    const sealed = input.client_secret ? box.seal(input.client_secret, teamId) : existing[0].client_secret;
    const { rows: taken } = await tx.query<{ domain: string }>('SELECT domain FROM team_sso_domains WHERE domain = ANY($1::text[]) AND team_id <> $2 ORDER BY domain', [domains, teamId]);
    if (taken[0]) throw conflict(`${taken[0].domain} already signs in through another team's single sign-on`, { domain: taken[0].domain });
    await tx.query(
      `INSERT INTO team_sso (team_id, issuer, client_id, client_secret, jit_enabled) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (team_id) DO UPDATE SET issuer = $2, client_id = $3, client_secret = $4, jit_enabled = $5, updated_at = now()`,
      [teamId, issuer, input.client_id, sealed, input.jit_enabled],
    );
    await tx.query('DELETE FROM team_sso_domains WHERE team_id = $1', [teamId]);
    for (const domain of domains) await tx.query('INSERT INTO team_sso_domains (domain, team_id) VALUES ($1, $2)', [domain, teamId]);
    await writeAudit(tx, { teamId, action: 'sso.updated', actor, details: `issuer ${issuer}; domains ${domains.join(', ')}; just-in-time membership ${input.jit_enabled ? 'on' : 'off'}` });
    return (await getSso(tx, teamId))!;
  });
}

export async function deleteSso(store: MetadataStore, actor: UserPrincipal, teamId: string): Promise<void> {
  await store.transaction(async (tx) => {
    const { rowCount } = await tx.query('DELETE FROM team_sso WHERE team_id = $1', [teamId]);
    if (!rowCount) throw notFound('This team has no single sign-on connection');
    await writeAudit(tx, { teamId, action: 'sso.deleted', actor });
  });
}

/** The connection answering for an address's domain, with its secret, or null. */
export async function ssoForEmail(db: MetadataQueryable, box: SecretBox, email: string): Promise<SsoSecrets | null> {
  return ssoOfTeam(db, box, null, domainOf(email));
}

export async function ssoOfTeam(db: MetadataQueryable, box: SecretBox, teamId: string | null, domain?: string): Promise<SsoSecrets | null> {
  const { rows } = await db.query<{ team_id: string; issuer: string; client_id: string; client_secret: string; jit_enabled: boolean }>(
    teamId
      ? 'SELECT team_id, issuer, client_id, client_secret, jit_enabled FROM team_sso WHERE team_id = $1'
      : 'SELECT s.team_id, s.issuer, s.client_id, s.client_secret, s.jit_enabled FROM team_sso s JOIN team_sso_domains d ON d.team_id = s.team_id WHERE d.domain = $1',
    [teamId ?? domain],
  );
  const row = rows[0];
  if (!row) return null;
  const clientSecret = box.open(row.client_secret, row.team_id);
  // Sealed under another JWT secret: the connection must be saved again with its secret.
  if (clientSecret === null) return null;
  return { teamId: row.team_id, issuer: row.issuer, clientId: row.client_id, clientSecret, allowedDomains: await domainsOf(db, row.team_id), jitEnabled: row.jit_enabled };
}

/**
 * The account a verified address from the team's provider signs in as. A member of the team signs
 * in. With just-in-time membership, an address without an account gets one (no password) and joins
 * as a member. An existing account outside the team is never taken over through the team's provider:
 * it joins through an invitation. Instance owners and admins keep signing in their own ways.
 */
export async function ssoAccount(store: MetadataStore, sso: SsoSecrets, email: string): Promise<{ userId: string; joined: boolean }> {
  if (!sso.allowedDomains.includes(domainOf(email))) throw refused('domain_not_allowed', "This address's domain is not allowed by the team's single sign-on");
  return store.transaction(async (tx) => {
    const user = await findUserByEmail(tx, email);
    if (user) {
      const { rows } = await tx.query<{ role: string }>('SELECT role FROM team_members WHERE team_id = $1 AND user_id = $2', [sso.teamId, user.id]);
      if (!rows[0]) throw refused('not_a_member', 'This account is not a member of the team; ask a team admin for an invitation');
      if (user.role !== 'user') throw refused('instance_admin', 'Instance owners and admins sign in with their password, passkey or linked provider, not a team’s single sign-on');
      return { userId: user.id, joined: false };
    }
    if (!sso.jitEnabled) throw refused('not_a_member', 'There is no account for this address; ask a team admin for an invitation');
    const team = await lockTeam(tx, sso.teamId);
    if (team.archived) throw refused('not_a_member', 'This team is archived');
    const created = await createUser(tx, { email, role: 'user' });
    await tx.query("INSERT INTO team_members (team_id, user_id, role) VALUES ($1, $2, 'member')", [sso.teamId, created.id]);
    await queueOperationalEvent(tx, 'team.member.added', { team_id: sso.teamId, user_id: created.id, email: created.email, role: 'member' });
    await writeAudit(tx, { teamId: sso.teamId, action: 'member.joined_by_sso', actor: created, target: created, details: 'joined as member through single sign-on' });
    return { userId: created.id, joined: true };
  });
}
