// Managing sites through the API: list what a caller can see with their effective role, read,
// create in a team, change domain/timezone/hostnames, soft-delete. Each step that changes metadata
// runs in one transaction with its audit entry, so an entry exists exactly when the change does.
import type { ApiClientPrincipal } from '../auth/api-clients.ts';
import { type ApiScope, SITE_RANK, type SiteRole, type TeamRole } from '../auth/roles.ts';
import type { UserPrincipal } from '../auth/sessions.ts';
import { writeAudit } from '../audit/audit.ts';
import { conflict, type FieldError, forbidden, notFound, validationFailed } from '../errors.ts';
import type { MetadataQueryable, MetadataStore } from '../stores/metadata/index.ts';
import { queueOperationalEvent } from '../webhooks/outbox.ts';
import { canonicalTimeZone, DOMAIN_MESSAGE, HOSTNAME_MESSAGE, MAX_HOSTNAMES, TIME_ZONE_MESSAGE } from './fields.ts';
import { normaliseHostname } from './hostname.ts';
import { createSite } from './sites.ts';
import { pageOf, type Page } from '../pagination.ts';

/** Who is asking: a signed-in person, or an API client (acting for its owner, within its grants). */
export interface Caller {
  user?: UserPrincipal;
  apiClient?: ApiClientPrincipal;
}

export interface SiteView {
  id: string;
  team_id: string;
  domain: string;
  timezone: string;
  /** Further hostnames the site accepts traffic from, sorted. */
  hostnames: string[];
  created_at: string;
  /** The caller's effective role on the site. */
  role: SiteRole;
}


export interface SiteChanges {
  domain?: string;
  timezone?: string;
  hostnames?: string[];
}

/** Postgres' unique_violation: two requests raced for the same domain or hostname. */
const UNIQUE_VIOLATION = '23505';
const TEAM_TO_SITE: Record<TeamRole, SiteRole> = { owner: 'owner', admin: 'admin', member: 'viewer' };

const higher = (a: SiteRole | null, b: SiteRole | null) => (!a ? b : !b ? a : SITE_RANK[a] >= SITE_RANK[b] ? a : b);
const lower = (a: SiteRole | null, b: SiteRole | null) => (!a || !b ? null : SITE_RANK[a] <= SITE_RANK[b] ? a : b);

/**
 * The same rule as siteRoleOf in lib/auth/access.ts (which guards every route), computed from
 * columns a listing already has, so a page of sites costs one query rather than one per site.
 */
export function effectiveSiteRole(instanceRole: UserPrincipal['role'], siteRole: SiteRole | null, teamRole: TeamRole | null): SiteRole | null {
  if (instanceRole === 'owner') return 'owner';
  const fromInstance: SiteRole | null = instanceRole === 'admin' ? 'admin' : null;
  return higher(higher(fromInstance, siteRole), teamRole ? TEAM_TO_SITE[teamRole] : null);
}

interface SiteFields {
  domain: string;
  timezone?: string;
  hostnames?: string[];
}

/**
 * A site's fields as stored (domain and hostnames normalised, the time zone in its canonical
 * spelling), or one 400 naming every bad field. The domain defaults to `currentDomain` (a change
 * that keeps it); extra hostnames drop the site's own domain, which is implied.
 */
function checkSiteFields(input: { domain?: string; timezone?: string; hostnames?: readonly string[] }, currentDomain?: string): SiteFields {
  const problems: FieldError[] = [];
  const domain = input.domain === undefined ? currentDomain : normaliseHostname(input.domain);
  if (!domain) problems.push({ field: 'domain', message: `domain ${DOMAIN_MESSAGE}`, type: 'siteDomain' });
  const checked: SiteFields = { domain: domain ?? '' };
  if (input.timezone !== undefined) {
    const zone = canonicalTimeZone(input.timezone);
    if (!zone) problems.push({ field: 'timezone', message: `timezone ${TIME_ZONE_MESSAGE}`, type: 'timeZone' });
    checked.timezone = zone ?? undefined;
  }
  if (input.hostnames !== undefined) {
    if (input.hostnames.length > MAX_HOSTNAMES) problems.push({ field: 'hostnames', message: `hostnames must hold at most ${MAX_HOSTNAMES} items`, type: 'arrayMax' });
    const hosts = new Set<string>();
    for (const [index, name] of input.hostnames.entries()) {
      const host = normaliseHostname(name);
      if (!host) problems.push({ field: `hostnames[${index}]`, message: `hostnames[${index}] ${HOSTNAME_MESSAGE}`, type: 'siteHostname' });
      else if (host !== domain) hosts.add(host);
    }
    checked.hostnames = [...hosts].sort();
  }
  if (problems.length > 0) throw validationFailed(problems);
  return checked;
}

interface SiteRow {
  id: string;
  team_id: string;
  domain: string;
  timezone: string;
  created_at: Date | string;
  hostnames: string[];
  site_role: SiteRole | null;
  team_role: TeamRole | null;
}

// The sites a user reaches, with the columns their role is computed from. $1 user id, $2 "sees
// every site" (instance owner/admin), $3 only these ids (an API client's grants) or NULL.
const VISIBLE_SITES = `
  FROM sites s
  LEFT JOIN site_members sm ON sm.site_id = s.id AND sm.user_id = $1
  LEFT JOIN team_members tm ON tm.team_id = s.team_id AND tm.user_id = $1
 WHERE s.deleted_at IS NULL
   AND ($2::boolean OR sm.role IS NOT NULL OR tm.role IS NOT NULL)
   AND ($3::uuid[] IS NULL OR s.id = ANY($3::uuid[]))`;

const SITE_COLUMNS = `s.id, s.team_id, s.domain, s.timezone, s.created_at, sm.role AS site_role, tm.role AS team_role,
       ARRAY(SELECT h.hostname FROM site_hostnames h WHERE h.site_id = s.id ORDER BY h.hostname) AS hostnames`;

function toView(row: SiteRow, user: Pick<UserPrincipal, 'role'>, client?: ApiClientPrincipal): SiteView {
  let role = effectiveSiteRole(user.role, row.site_role, row.team_role);
  if (client) role = lower(role, client.sites[row.id] ?? null);
  return {
    id: row.id,
    team_id: row.team_id,
    domain: row.domain,
    timezone: row.timezone,
    hostnames: row.hostnames ?? [],
    created_at: new Date(row.created_at).toISOString(),
    // Rows come from VISIBLE_SITES, so the user has a role; a client's grant is among $3.
    role: role ?? 'viewer',
  };
}

/** The person a caller acts as: the user, or the owner of the API client (never above them). */
async function actingUser(db: MetadataQueryable, caller: Caller): Promise<UserPrincipal | null> {
  if (caller.user) return caller.user;
  if (!caller.apiClient) return null;
  const { rows } = await db.query<UserPrincipal>('SELECT u.id, u.email, u.role FROM api_clients c JOIN users u ON u.id = c.owner_user_id WHERE c.id = $1', [caller.apiClient.id]);
  return rows[0] ?? null;
}

const seesEverySite = (user: UserPrincipal) => user.role === 'owner' || user.role === 'admin';
const clientSites = (caller: Caller) => (caller.apiClient ? Object.keys(caller.apiClient.sites) : null);

/** The sites the caller reaches; a token must carry `scope` (stats:read for the REST API, mcp for the MCP server). */
export async function listSites(db: MetadataQueryable, caller: Caller, page: { limit: number; offset: number }, scope: ApiScope = 'stats:read'): Promise<Page<SiteView>> {
  if (caller.apiClient && !caller.apiClient.scopes.includes(scope)) throw forbidden(`This token lacks the ${scope} scope`);
  const user = await actingUser(db, caller);
  if (!user) return pageOf([], 0, page);
  const params = [user.id, seesEverySite(user), clientSites(caller)];
  const counted = await db.query<{ n: number }>(`SELECT count(*)::int AS n ${VISIBLE_SITES}`, params);
  const { rows } = await db.query<SiteRow>(`SELECT ${SITE_COLUMNS} ${VISIBLE_SITES} ORDER BY s.domain, s.id LIMIT $4 OFFSET $5`, [...params, page.limit, page.offset]);
  const total = counted.rows[0].n;
  const items = rows.map((row) => toView(row, user, caller.apiClient));
  return pageOf(items, total, page);
}

/** The site as the caller sees it; 404 when it is gone or out of the caller's reach. */
export async function getSite(db: MetadataQueryable, caller: Caller, siteId: string): Promise<SiteView> {
  const user = await actingUser(db, caller);
  const ids = clientSites(caller);
  if (user && (!ids || ids.includes(siteId))) {
    const { rows } = await db.query<SiteRow>(`SELECT ${SITE_COLUMNS} ${VISIBLE_SITES} AND s.id = $4`, [user.id, seesEverySite(user), ids, siteId]);
    if (rows[0]) return toView(rows[0], user, caller.apiClient);
  }
  throw notFound('Site not found');
}

/** Refuses a domain or hostname that another live site already answers on. */
async function assertHostsFree(db: MetadataQueryable, hosts: readonly string[], exceptSiteId: string | null): Promise<void> {
  const { rows } = await db.query<{ host: string }>(
    `SELECT s.domain AS host FROM sites s
      WHERE s.deleted_at IS NULL AND s.domain = ANY($1::text[]) AND ($2::uuid IS NULL OR s.id <> $2)
     UNION ALL
     SELECT h.hostname FROM site_hostnames h JOIN sites s ON s.id = h.site_id
      WHERE s.deleted_at IS NULL AND h.hostname = ANY($1::text[]) AND ($2::uuid IS NULL OR s.id <> $2)
     LIMIT 1`,
    [hosts, exceptSiteId],
  );
  if (rows[0]) throw conflict(`${rows[0].host} already belongs to another site`);
}

/** A team that exists and is not archived (sites cannot be added to or moved into an archived team). */
export async function liveTeam(db: MetadataQueryable, teamId: string): Promise<{ id: string; name: string }> {
  const { rows } = await db.query<{ id: string; name: string; archived_at: Date | null }>('SELECT id, name, archived_at FROM teams WHERE id = $1', [teamId]);
  if (!rows[0]) throw notFound('Team not found');
  if (rows[0].archived_at) throw conflict('The team is archived');
  return rows[0];
}

/** The change's webhook event, queued in its transaction; `site` is the site as the change left it. */
export const siteEvent = (tx: MetadataQueryable, type: 'site.created' | 'site.updated' | 'site.deleted', site: { id: string; domain: string; team_id: string }) =>
  queueOperationalEvent(tx, type, { site_id: site.id, domain: site.domain, team_id: site.team_id });

async function readOwnSite(tx: MetadataQueryable, actor: UserPrincipal, siteId: string): Promise<SiteView> {
  return getSite(tx, { user: actor }, siteId);
}

/** Creates a site in a team the actor administers; the actor becomes the site's owner. */
export async function createTeamSite(
  store: MetadataStore,
  actor: UserPrincipal,
  input: { teamId: string; domain: string; timezone?: string; hostnames?: string[] },
): Promise<SiteView> {
  const { domain, hostnames = [], timezone = 'UTC' } = checkSiteFields(input);
  return store.transaction(async (tx) => {
    await liveTeam(tx, input.teamId);
    await assertHostsFree(tx, [domain, ...hostnames], null);
    const site = await createSite(tx, { teamId: input.teamId, domain, timezone, hostnames });
    await tx.query("INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, 'owner')", [site.id, actor.id]);
    await writeAudit(tx, { teamId: input.teamId, action: 'site.created', actor, site: { id: site.id, domain }, details: `created ${domain}` });
    await siteEvent(tx, 'site.created', { id: site.id, domain, team_id: input.teamId });
    return readOwnSite(tx, actor, site.id);
  });
}

/** A site change in words for its audit entry: what the domain and time zone were and became, which hostnames were set. */
function siteChanges(before: SiteView, after: { domain: string; timezone: string }, changed: string[]): string {
  const said = changed.map((field) => {
    if (field === 'domain') return `domain ${before.domain} → ${after.domain}`;
    if (field === 'timezone') return `time zone ${before.timezone} → ${after.timezone}`;
    return 'extra hostnames';
  });
  return `changed ${said.join(', ')}`;
}

/** Changes domain, timezone and/or the whole set of extra hostnames. */
export async function updateSite(store: MetadataStore, actor: UserPrincipal, siteId: string, changes: SiteChanges): Promise<{ site: SiteView; changed: string[] }> {
  try {
    return await store.transaction(async (tx) => {
      const before = await readOwnSite(tx, actor, siteId);
      const checked = checkSiteFields(changes, before.domain);
      const { domain, timezone } = checked;
      const hostnames = checked.hostnames ?? before.hostnames.filter((h) => h !== domain);
      const changed: string[] = [];
      if (domain !== before.domain) changed.push('domain');
      if (timezone !== undefined && timezone !== before.timezone) changed.push('timezone');
      if (hostnames.join() !== before.hostnames.join()) changed.push('hostnames');
      if (changed.length === 0) return { site: before, changed };
      await assertHostsFree(tx, [domain, ...hostnames], siteId);
      await tx.query('UPDATE sites SET domain = $2, timezone = $3 WHERE id = $1', [siteId, domain, timezone ?? before.timezone]);
      if (changed.includes('hostnames')) {
        await tx.query('DELETE FROM site_hostnames WHERE site_id = $1', [siteId]);
        for (const host of hostnames) await tx.query('INSERT INTO site_hostnames (hostname, site_id) VALUES ($1, $2)', [host, siteId]);
      }
      await writeAudit(tx, { teamId: before.team_id, action: 'site.updated', actor, site: { id: siteId, domain }, details: siteChanges(before, { domain, timezone: timezone ?? before.timezone }, changed) });
      await siteEvent(tx, 'site.updated', { id: siteId, domain, team_id: before.team_id });
      return { site: await readOwnSite(tx, actor, siteId), changed };
    });
  } catch (err) {
    if ((err as { code?: string }).code === UNIQUE_VIOLATION) throw conflict('That domain or hostname already belongs to another site');
    throw err;
  }
}

/**
 * Marks the site deleted (its domain is free again: the unique index covers live sites only) and
 * frees its extra hostnames, which are unique across all sites. Analytics rows are the caller's
 * next step (deleteSiteRows), outside this transaction: ClickHouse is not part of it.
 */
export async function softDeleteSite(store: MetadataStore, actor: UserPrincipal, siteId: string): Promise<{ id: string; team_id: string; domain: string }> {
  return store.transaction(async (tx) => {
    const moving = await tx.query("SELECT 1 FROM site_transfers WHERE site_id = $1 AND status = 'running'", [siteId]);
    if (moving.rows[0]) throw conflict('The site is being moved to another team; delete it once the move has finished');
    const { rows } = await tx.query<{ id: string; team_id: string; domain: string }>(
      'UPDATE sites SET deleted_at = now() WHERE id = $1 AND deleted_at IS NULL RETURNING id, team_id, domain',
      [siteId],
    );
    if (!rows[0]) throw notFound('Site not found');
    await tx.query('DELETE FROM site_hostnames WHERE site_id = $1', [siteId]);
    await writeAudit(tx, { teamId: rows[0].team_id, action: 'site.deleted', actor, site: { id: siteId, domain: rows[0].domain }, details: `deleted ${rows[0].domain}` });
    await siteEvent(tx, 'site.deleted', rows[0]);
    return rows[0];
  });
}
