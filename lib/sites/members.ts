// People with a role on one site (owner, admin, editor, viewer), besides those who reach it
// through its team or their instance role. Only an owner hands out or takes away ownership.
import { siteRoleOf } from '../auth/access.ts';
import type { SiteRole } from '../auth/roles.ts';
import type { UserPrincipal } from '../auth/sessions.ts';
import { auditedSite, writeAudit } from '../audit/audit.ts';
import { forbidden, notFound } from '../errors.ts';
import type { MetadataQueryable, MetadataStore } from '../stores/metadata/index.ts';
import { pageOf, type Page } from '../pagination.ts';

export interface SiteMember {
  user_id: string;
  email: string;
  role: SiteRole;
}

export async function listSiteMembers(db: MetadataQueryable, siteId: string, page: { limit: number; offset: number }): Promise<Page<SiteMember>> {
  const counted = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM site_members WHERE site_id = $1', [siteId]);
  const { rows } = await db.query<SiteMember>(
    `SELECT sm.user_id, u.email, sm.role FROM site_members sm JOIN users u ON u.id = sm.user_id
      WHERE sm.site_id = $1 ORDER BY u.email, sm.user_id LIMIT $2 OFFSET $3`,
    [siteId, page.limit, page.offset],
  );
  const total = counted.rows[0].n;
  return pageOf(rows, total, page);
}

/** The site's team, for the audit entry; the route's access rule has already proved the site live. */
async function memberRole(db: MetadataQueryable, siteId: string, userId: string): Promise<SiteRole | null> {
  const { rows } = await db.query<{ role: SiteRole }>('SELECT role FROM site_members WHERE site_id = $1 AND user_id = $2', [siteId, userId]);
  return rows[0]?.role ?? null;
}

/** Ownership is granted and withdrawn by owners only, so an admin cannot raise anyone (or themselves) above admin. */
async function assertMayTouch(db: MetadataQueryable, actor: UserPrincipal, siteId: string, roles: (SiteRole | null)[]): Promise<void> {
  if (!roles.includes('owner')) return;
  if ((await siteRoleOf(db, actor, siteId)) !== 'owner') throw forbidden('Only a site owner can grant or withdraw the owner role');
}

/** Adds the user to the site with the role, or changes their role. */
export async function setSiteMember(store: MetadataStore, actor: UserPrincipal, siteId: string, userId: string, role: SiteRole): Promise<SiteMember> {
  return store.transaction(async (tx) => {
    const { teamId, ...site } = await auditedSite(tx, siteId);
    const { rows } = await tx.query<{ id: string; email: string }>('SELECT id, email FROM users WHERE id = $1', [userId]);
    if (!rows[0]) throw notFound('User not found');
    const previous = await memberRole(tx, siteId, userId);
    await assertMayTouch(tx, actor, siteId, [role, previous]);
    if (previous !== role) {
      await tx.query(
        `INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, $3)
         ON CONFLICT (site_id, user_id) DO UPDATE SET role = EXCLUDED.role`,
        [siteId, userId, role],
      );
      await writeAudit(tx, { teamId, action: 'site.member.updated', actor, target: rows[0], site, details: `role on ${site.domain}: ${previous ?? 'none'} → ${role}` });
    }
    return { user_id: userId, email: rows[0].email, role };
  });
}

export async function removeSiteMember(store: MetadataStore, actor: UserPrincipal, siteId: string, userId: string): Promise<void> {
  await store.transaction(async (tx) => {
    const { teamId, ...site } = await auditedSite(tx, siteId);
    const previous = await memberRole(tx, siteId, userId);
    if (!previous) throw notFound('That user is not a member of the site');
    await assertMayTouch(tx, actor, siteId, [previous]);
    await tx.query('DELETE FROM site_members WHERE site_id = $1 AND user_id = $2', [siteId, userId]);
    const { rows } = await tx.query<{ email: string }>('SELECT email FROM users WHERE id = $1', [userId]);
    await writeAudit(tx, { teamId, action: 'site.member.removed', actor, target: { id: userId, email: rows[0]?.email }, site, details: `removed from ${site.domain} (was ${previous})` });
  });
}
