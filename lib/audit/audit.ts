// The team audit log: one entry per team-management action (README: Team audit), read newest first.
// An entry carries the names of what it concerned as they were when it was written (the site's
// domain, the goal's or share link's name, the person's email) beside their ids, so the log reads
// in names and still does after the objects are renamed or deleted.
import { randomUUID } from 'node:crypto';
import type { UserPrincipal } from '../auth/sessions.ts';
import { notFound } from '../errors.ts';
import { type PageQuery, pageFields } from '../pagination.ts';
import type { MetadataQueryable } from '../stores/metadata/index.ts';

/** The site an entry concerned: its id and its domain at the time. */
export interface AuditSite {
  id: string;
  domain: string;
}

/** What else an entry concerned besides a site and a person. */
export type AuditSubjectType = 'goal' | 'funnel' | 'share_link' | 'webhook' | 'team';

/** The object acted on: its kind, id, and name at the time (null for a share link without a name). */
export interface AuditSubject {
  type: AuditSubjectType;
  id: string;
  name: string | null;
}

export interface AuditEntry {
  id: string;
  team_id: string;
  action: string;
  actor_user_id: string | null;
  actor_email: string | null;
  target_user_id: string | null;
  target_email: string | null;
  /** The site of a site-level action; null for team-wide ones and for entries older than this field. */
  site: AuditSite | null;
  /** The goal, funnel, share link, webhook or (for a site moved between teams) other team; else null. */
  subject: AuditSubject | null;
  /** What happened, in words, naming things by their names (no ids). */
  details: string;
  created_at: string;
}

export async function writeAudit(
  db: MetadataQueryable,
  entry: {
    teamId: string;
    action: string;
    actor?: Pick<UserPrincipal, 'id' | 'email'>;
    target?: { id?: string; email?: string };
    site?: AuditSite;
    subject?: AuditSubject;
    details?: string;
  },
): Promise<void> {
  await db.query(
    `INSERT INTO audit_log (id, team_id, action, actor_user_id, actor_email, target_user_id, target_email, site_id, site_domain, subject_type, subject_id, subject_name, details)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
    [
      randomUUID(),
      entry.teamId,
      entry.action,
      entry.actor?.id ?? null,
      entry.actor?.email ?? null,
      entry.target?.id ?? null,
      entry.target?.email ?? null,
      entry.site?.id ?? null,
      entry.site?.domain ?? null,
      entry.subject?.type ?? null,
      entry.subject?.id ?? null,
      entry.subject?.name ?? null,
      entry.details ?? '',
    ],
  );
}

/**
 * A site as an entry names it, with its team, read inside the writing transaction so the name is
 * the one at the time of the change. Soft-deleted sites are not found.
 */
export async function auditedSite(db: MetadataQueryable, siteId: string): Promise<AuditSite & { teamId: string }> {
  const { rows } = await db.query<{ team_id: string; domain: string }>('SELECT team_id, domain FROM sites WHERE id = $1 AND deleted_at IS NULL', [siteId]);
  if (!rows[0]) throw notFound('Site not found');
  return { id: siteId, domain: rows[0].domain, teamId: rows[0].team_id };
}

interface AuditRow extends Omit<AuditEntry, 'site' | 'subject'> {
  site_id: string | null;
  site_domain: string | null;
  subject_type: AuditSubjectType | null;
  subject_id: string | null;
  subject_name: string | null;
  total: number;
}

const toEntry = ({ site_id, site_domain, subject_type, subject_id, subject_name, total: _total, details, created_at, ...who }: AuditRow): AuditEntry => ({
  ...who,
  site: site_id && site_domain !== null ? { id: site_id, domain: site_domain } : null,
  subject: subject_type && subject_id ? { type: subject_type, id: subject_id, name: subject_name } : null,
  details,
  created_at,
});

export async function auditPage(db: MetadataQueryable, teamId: string, query: PageQuery & { action?: string }) {
  const filter = query.action ?? null;
  const { rows } = await db.query<AuditRow>(
    `SELECT id, team_id, action, actor_user_id, actor_email, target_user_id, target_email,
            site_id, site_domain, subject_type, subject_id, subject_name, details,
            to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
            count(*) OVER ()::int AS total
       FROM audit_log
      WHERE team_id = $1 AND ($2::text IS NULL OR action = $2)
      ORDER BY audit_log.created_at DESC, audit_log.seq DESC
      LIMIT $3 OFFSET $4`,
    [teamId, filter, query.limit, query.offset],
  );
  let total = rows[0]?.total;
  if (total === undefined) {
    const counted = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM audit_log WHERE team_id = $1 AND ($2::text IS NULL OR action = $2)', [teamId, filter]);
    total = counted.rows[0].n;
  }
  const entries = rows.map(toEntry);
  return { action: query.action ?? '', entries, ...pageFields(entries.length, total, query) };
}
