// Team membership: list, add by email (always an invitation the person accepts), change a role,
// remove or leave. Two rules hold whatever the caller's rights: only an owner hands
// out or takes away ownership, and a team is never left without an owner.
import { teamRoleOf } from '../auth/access.ts';
import type { TeamRole } from '../auth/roles.ts';
import { writeAudit } from '../audit/audit.ts';
import { conflict, forbidden, notFound } from '../errors.ts';
import type { MetadataQueryable, MetadataStore } from '../stores/metadata/index.ts';
import { findUserByEmail, normaliseEmail } from '../users/users.ts';
import { queueOperationalEvent } from '../webhooks/outbox.ts';
import { createInvitation, type IssuedInvitation } from './invitations.ts';
import { type Page, type PageQuery, pageOf } from '../pagination.ts';
import { type Actor, assertActive, atLeast, iso, lockTeam } from './teams.ts';

export interface Member {
  user_id: string;
  email: string;
  role: TeamRole;
  joined_at: string;
}

const MEMBER_COLUMNS = `u.id AS user_id, u.email, tm.role, ${iso('tm.created_at')} AS joined_at`;
const LAST_OWNER = 'A team needs at least one owner: make someone else an owner first';

/** Owners first, then admins, then members; alphabetical within each. */
export async function listMembers(db: MetadataQueryable, teamId: string, query: PageQuery): Promise<Page<Member>> {
  const { rows } = await db.query<Member>(
    `SELECT ${MEMBER_COLUMNS}
       FROM team_members tm JOIN users u ON u.id = tm.user_id
      WHERE tm.team_id = $1
      ORDER BY CASE tm.role WHEN 'owner' THEN 0 WHEN 'admin' THEN 1 ELSE 2 END, u.email
      LIMIT $2 OFFSET $3`,
    [teamId, query.limit, query.offset],
  );
  const counted = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM team_members WHERE team_id = $1', [teamId]);
  return pageOf(rows, counted.rows[0].n, query);
}

async function memberOf(tx: MetadataQueryable, teamId: string, userId: string): Promise<Member | null> {
  const { rows } = await tx.query<Member>(`SELECT ${MEMBER_COLUMNS} FROM team_members tm JOIN users u ON u.id = tm.user_id WHERE tm.team_id = $1 AND tm.user_id = $2`, [
    teamId,
    userId,
  ]);
  return rows[0] ?? null;
}

async function ownerCount(tx: MetadataQueryable, teamId: string): Promise<number> {
  const { rows } = await tx.query<{ n: number }>("SELECT count(*)::int AS n FROM team_members WHERE team_id = $1 AND role = 'owner'", [teamId]);
  return rows[0].n;
}

/**
 * Invites the person with this email into the team, whether they have an account or not: the
 * answer is the same either way, and nobody joins without accepting.
 */
export async function addMember(store: MetadataStore, actor: Actor, teamId: string, input: { email: string; role: TeamRole }): Promise<IssuedInvitation> {
  const email = normaliseEmail(input.email);
  return store.transaction(async (tx) => {
    assertActive(await lockTeam(tx, teamId));
    if (input.role === 'owner' && (await teamRoleOf(tx, actor, teamId)) !== 'owner') throw forbidden('Only a team owner can add an owner');
    // The admin sees the team's members anyway; saying so spares a pointless invitation.
    const user = await findUserByEmail(tx, email);
    if (user && (await memberOf(tx, teamId, user.id))) throw conflict(`${email} is already a member of this team`);
    return createInvitation(tx, actor, teamId, email, input.role);
  });
}

/** `changed` is false (nothing audited) when the member already had that role. */
export async function changeRole(store: MetadataStore, actor: Actor, teamId: string, userId: string, role: TeamRole): Promise<{ member: Member; changed: boolean }> {
  return store.transaction(async (tx) => {
    await lockTeam(tx, teamId);
    const target = await memberOf(tx, teamId, userId);
    if (!target) throw notFound('Member not found');
    if ((target.role === 'owner' || role === 'owner') && (await teamRoleOf(tx, actor, teamId)) !== 'owner') {
      throw forbidden('Only a team owner can grant or take away the owner role');
    }
    if (target.role === role) return { member: target, changed: false };
    if (target.role === 'owner' && (await ownerCount(tx, teamId)) <= 1) throw conflict(LAST_OWNER);
    await tx.query('UPDATE team_members SET role = $3 WHERE team_id = $1 AND user_id = $2', [teamId, userId, role]);
    await writeAudit(tx, { teamId, action: 'member.role_changed', actor, target: { id: target.user_id, email: target.email }, details: `role changed from ${target.role} to ${role}` });
    return { member: { ...target, role }, changed: true };
  });
}

/** Removes a member (team admin+; only an owner removes an owner), or the actor leaving themselves. */
export async function removeMember(store: MetadataStore, actor: Actor, teamId: string, userId: string): Promise<Member> {
  return store.transaction(async (tx) => {
    await lockTeam(tx, teamId);
    const target = await memberOf(tx, teamId, userId);
    const leaving = userId === actor.id;
    if (!leaving) {
      const role = await teamRoleOf(tx, actor, teamId);
      if (!atLeast(role, 'admin')) throw forbidden('You must be a team admin to remove other members');
      if (target?.role === 'owner' && role !== 'owner') throw forbidden('Only a team owner can remove an owner');
    }
    if (!target) throw notFound('Member not found');
    if (target.role === 'owner' && (await ownerCount(tx, teamId)) <= 1) throw conflict(LAST_OWNER);
    await tx.query('DELETE FROM team_members WHERE team_id = $1 AND user_id = $2', [teamId, userId]);
    await writeAudit(tx, {
      teamId,
      action: 'member.removed',
      actor,
      target: { id: target.user_id, email: target.email },
      details: leaving ? `left the team (was ${target.role})` : `removed (was ${target.role})`,
    });
    await queueOperationalEvent(tx, 'team.member.removed', { team_id: teamId, user_id: target.user_id, email: target.email, role: target.role });
    return target;
  });
}
