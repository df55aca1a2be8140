// Teams as people manage them: list the ones you can see, create one (its creator becomes owner),
// rename, archive. Each change and its audit entry commit together in one transaction.
import { type InstanceRole, TEAM_RANK, type TeamRole } from '../auth/roles.ts';
import type { UserPrincipal } from '../auth/sessions.ts';
import { writeAudit } from '../audit/audit.ts';
import { conflict, notFound } from '../errors.ts';
import { createTeam } from '../sites/sites.ts';
import type { MetadataQueryable, MetadataStore } from '../stores/metadata/index.ts';
import { queueOperationalEvent } from '../webhooks/outbox.ts';
import { type Page, type PageQuery, pageOf } from '../pagination.ts';

/** The signed-in person doing something. */
export type Actor = Pick<UserPrincipal, 'id' | 'email' | 'role'>;

export interface Team {
  id: string;
  name: string;
  /** The caller's effective role in the team (instance owners and admins included). */
  role: TeamRole;
  created_at: string;
  archived_at: string | null;
}



/** RFC 3339 UTC text of a timestamptz column, the same on PGlite and PostgreSQL. `column` is a fixed name, never input. */
export const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;


/** True when `role` is at least `needed` (owner > admin > member). */
export const atLeast = (role: TeamRole | null, needed: TeamRole) => role !== null && TEAM_RANK[role] >= TEAM_RANK[needed];

/** Same answer as teamRoleOf (lib/auth/access.ts), for rows already joined with the membership. */
function effectiveRole(instanceRole: InstanceRole, memberRole: TeamRole | null): TeamRole | null {
  if (instanceRole === 'owner') return 'owner';
  if (instanceRole === 'admin') return memberRole === 'owner' ? 'owner' : 'admin';
  return memberRole;
}

interface TeamRow {
  id: string;
  name: string;
  member_role: TeamRole | null;
  created_at: string;
  archived_at: string | null;
}

const TEAM_COLUMNS = `t.id, t.name, tm.role AS member_role, ${iso('t.created_at')} AS created_at, ${iso('t.archived_at')} AS archived_at`;

const toTeam = (actor: Actor, row: TeamRow): Team => ({
  id: row.id,
  name: row.name,
  role: effectiveRole(actor.role, row.member_role) ?? 'member',
  created_at: row.created_at,
  archived_at: row.archived_at,
});

/** Teams the actor belongs to; instance owners and admins see every team. Archived ones included (archived_at says so). */
export async function listTeams(db: MetadataQueryable, actor: Actor, query: PageQuery): Promise<Page<Team>> {
  const seesAll = actor.role === 'owner' || actor.role === 'admin';
  const { rows } = await db.query<TeamRow>(
    `SELECT ${TEAM_COLUMNS}
       FROM teams t LEFT JOIN team_members tm ON tm.team_id = t.id AND tm.user_id = $1
      WHERE $2::boolean OR tm.user_id IS NOT NULL
      ORDER BY lower(t.name), t.id
      LIMIT $3 OFFSET $4`,
    [actor.id, seesAll, query.limit, query.offset],
  );
  const counted = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM teams t WHERE $2::boolean OR EXISTS (SELECT 1 FROM team_members tm WHERE tm.team_id = t.id AND tm.user_id = $1)',
    [actor.id, seesAll],
  );
  return pageOf(
    rows.map((row) => toTeam(actor, row)),
    counted.rows[0].n,
    query,
  );
}

/** One team as the actor sees it. */
export async function getTeam(db: MetadataQueryable, actor: Actor, teamId: string): Promise<Team> {
  const { rows } = await db.query<TeamRow>(`SELECT ${TEAM_COLUMNS} FROM teams t LEFT JOIN team_members tm ON tm.team_id = t.id AND tm.user_id = $2 WHERE t.id = $1`, [
    teamId,
    actor.id,
  ]);
  if (!rows[0]) throw notFound('Team not found');
  return toTeam(actor, rows[0]);
}

/**
 * Locks the team row for the rest of the transaction. Every membership change takes this lock
 * first, so two requests cannot both remove "one of two" owners and leave none.
 */
export async function lockTeam(tx: MetadataQueryable, teamId: string): Promise<{ id: string; name: string; archived: boolean }> {
  const { rows } = await tx.query<{ id: string; name: string; archived: boolean }>(
    'SELECT id, name, archived_at IS NOT NULL AS archived FROM teams WHERE id = $1 FOR UPDATE',
    [teamId],
  );
  if (!rows[0]) throw notFound('Team not found');
  return rows[0];
}

/** Archived teams keep their members and history but take no one new. */
export function assertActive(team: { archived: boolean }): void {
  if (team.archived) throw conflict('This team is archived; it accepts no new members or sites');
}

export async function createTeamWithOwner(store: MetadataStore, actor: Actor, name: string): Promise<Team> {
  return store.transaction(async (tx) => {
    const team = await createTeam(tx, { name });
    await tx.query("INSERT INTO team_members (team_id, user_id, role) VALUES ($1, $2, 'owner')", [team.id, actor.id]);
    await writeAudit(tx, { teamId: team.id, action: 'team.created', actor, target: { id: actor.id, email: actor.email }, details: `created team "${name}"` });
    const created = await getTeam(tx, actor, team.id);
    await queueOperationalEvent(tx, 'team.created', { team_id: created.id, name: created.name, user_id: actor.id, email: actor.email, role: 'owner' });
    return created;
  });
}

/** Renames the team; `changed` is false (and nothing is audited) when the name was already that. */
export async function renameTeam(store: MetadataStore, actor: Actor, teamId: string, name: string): Promise<{ team: Team; changed: boolean }> {
  return store.transaction(async (tx) => {
    const before = await lockTeam(tx, teamId);
    if (before.name === name) return { team: await getTeam(tx, actor, teamId), changed: false };
    await tx.query('UPDATE teams SET name = $2 WHERE id = $1', [teamId, name]);
    await writeAudit(tx, { teamId, action: 'team.updated', actor, details: `renamed from "${before.name}" to "${name}"` });
    await queueOperationalEvent(tx, 'team.updated', { team_id: teamId, name });
    return { team: await getTeam(tx, actor, teamId), changed: true };
  });
}

export async function archiveTeam(store: MetadataStore, actor: Actor, teamId: string): Promise<Team> {
  return store.transaction(async (tx) => {
    const team = await lockTeam(tx, teamId);
    if (team.archived) throw conflict('This team is already archived');
    await tx.query('UPDATE teams SET archived_at = now() WHERE id = $1', [teamId]);
    await writeAudit(tx, { teamId, action: 'team.archived', actor, details: `archived team "${team.name}"` });
    const archived = await getTeam(tx, actor, teamId);
    await queueOperationalEvent(tx, 'team.archived', { team_id: archived.id, name: archived.name, archived_at: archived.archived_at });
    return archived;
  });
}
