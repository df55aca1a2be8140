// The team audit log: one entry per team-management action (spec: Team audit), read newest first.
import { randomUUID } from 'node:crypto';
import type { UserPrincipal } from '../auth/sessions.ts';
import type { MetadataQueryable } from '../stores/metadata/index.ts';

export interface AuditEntry {
  id: string;
  team_id: string;
  action: string;
  actor_user_id: string | null;
  actor_email: string | null;
  target_user_id: string | null;
  target_email: string | null;
  details: string;
  created_at: string;
}

export async function writeAudit(
  db: MetadataQueryable,
  entry: { teamId: string; action: string; actor?: Pick<UserPrincipal, 'id' | 'email'>; target?: { id?: string; email?: string }; details?: string },
): Promise<void> {
  await db.query(
    `INSERT INTO audit_log (id, team_id, action, actor_user_id, actor_email, target_user_id, target_email, details)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [randomUUID(), entry.teamId, entry.action, entry.actor?.id ?? null, entry.actor?.email ?? null, entry.target?.id ?? null, entry.target?.email ?? null, entry.details ?? ''],
  );
}

export async function auditPage(db: MetadataQueryable, teamId: string, query: { action?: string; limit: number; offset: number }) {
  const filter = query.action ?? null;
  const { rows } = await db.query<AuditEntry & { total: number }>(
    `SELECT id, team_id, action, actor_user_id, actor_email, target_user_id, target_email, details,
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
  const entries = rows.map(({ total: _total, ...entry }) => entry);
  return { action: query.action ?? '', entries, has_more: query.offset + entries.length < total, limit: query.limit, offset: query.offset, total };
}
