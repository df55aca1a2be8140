// Invitations: the only way into a team. Adding someone by email always invites them, whether they
// have an account or not, so an admin learns nothing about who has one and nobody is enrolled
// without saying yes. The link carries a random token shown once; only its SHA-256 is stored, so a
// database leak opens no team. Someone with an account accepts while signed in as the invited
// email (from the link, or from their pending invitations in the dashboard); someone without one
// creates it from the link, with a password or a sign-in provider. The link is also mailed to the invited address (when the instance
// has mail). An invitation lives 7 days, can be resent (new token, new expiry, old
// token dead), revoked or declined, and is used once.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { teamRoleOf } from '../auth/access.ts';
import { linkIdentity } from '../auth/federated/identities.ts';
import type { ProviderId } from '../auth/federated/providers.ts';
import { refused } from '../auth/federated/social.ts';
import type { TeamRole } from '../auth/roles.ts';
import type { UserPrincipal } from '../auth/sessions.ts';
import { writeAudit } from '../audit/audit.ts';
import { conflict, forbidden, notFound, validationFailed } from '../errors.ts';
import type { MetadataQueryable, MetadataStore } from '../stores/metadata/index.ts';
import { createUser, findUserByEmail } from '../users/users.ts';
import { enqueueMail } from '../mail/outbox.ts';
import { queueOperationalEvent } from '../webhooks/outbox.ts';
import { type Page, type PageQuery, pageOf } from '../pagination.ts';
import { type Actor, assertActive, iso, lockTeam } from './teams.ts';

export const INVITATION_DAYS = 7;

/** What the inviter sees of an invitation they just created or resent. */
export interface Invitation {
  id: string;
  email: string;
  role: TeamRole;
  expires_at: string;
}

/** An open invitation in the team's list: not accepted, not revoked; maybe past its expiry. */
export interface OpenInvitation extends Invitation {
  status: 'pending' | 'expired';
  created_at: string;
}

/** The invitation and its token; the token exists only in this answer. */
export interface IssuedInvitation {
  invitation: Invitation;
  token: string;
}

const sha256 = (token: string) => createHash('sha256').update(token, 'utf8').digest();
const newToken = () => randomBytes(32).toString('base64url');
const RETURNING = `RETURNING id, email, role, ${iso('expires_at')} AS expires_at`;

/** Inside the caller's transaction (the team is already locked and checked). */
export async function createInvitation(tx: MetadataQueryable, actor: Actor, teamId: string, email: string, role: TeamRole): Promise<IssuedInvitation> {
  // An expired invitation for the same email is closed so the new one can take its place.
  await tx.query(
    'UPDATE invitations SET revoked_at = now() WHERE team_id = $1 AND email = $2 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at <= now()',
    [teamId, email],
  );
  const token = newToken();
  let rows: Invitation[];
  try {
    ({ rows } = await tx.query<Invitation>(
      `INSERT INTO invitations (id, team_id, email, role, token_hash, invited_by, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(days => $7)) ${RETURNING}`,
      [randomUUID(), teamId, email, role, sha256(token), actor.id, INVITATION_DAYS],
    ));
  } catch (err) {
    if ((err as { code?: string }).code === '23505') throw conflict(`${email} already has a pending invitation to this team; resend it instead`);
    throw err;
  }
  await writeAudit(tx, { teamId, action: 'invitation.created', actor, target: { email }, details: `invited as ${role}` });
  await mailInvitation(tx, actor, teamId, rows[0], token);
  return { invitation: rows[0], token };
}

/** The invitation mail with its one-time link, queued with the invitation (it is still shown to the inviter too). */
async function mailInvitation(tx: MetadataQueryable, actor: Actor, teamId: string, invitation: Invitation, token: string) {
  const { rows } = await tx.query<{ name: string }>('SELECT name FROM teams WHERE id = $1', [teamId]);
  await enqueueMail(tx, {
    to: invitation.email,
    template: 'invitation',
    params: { team_name: rows[0]?.name ?? '', role: invitation.role, inviter_email: actor.email, token, expires_at: invitation.expires_at },
  });
}

export async function listInvitations(db: MetadataQueryable, teamId: string, query: PageQuery): Promise<Page<OpenInvitation>> {
  const open = 'team_id = $1 AND accepted_at IS NULL AND revoked_at IS NULL';
  const { rows } = await db.query<OpenInvitation>(
    `SELECT id, email, role, CASE WHEN expires_at > now() THEN 'pending' ELSE 'expired' END AS status,
            ${iso('created_at')} AS created_at, ${iso('expires_at')} AS expires_at
       FROM invitations WHERE ${open}
      ORDER BY created_at DESC, id
      LIMIT $2 OFFSET $3`,
    [teamId, query.limit, query.offset],
  );
  const counted = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM invitations WHERE ${open}`, [teamId]);
  return pageOf(rows, counted.rows[0].n, query);
}

/** The open invitation, locked for this transaction, or 404. */
async function lockOpenInvitation(tx: MetadataQueryable, teamId: string, invitationId: string) {
  const { rows } = await tx.query<{ id: string; email: string; role: TeamRole }>(
    'SELECT id, email, role FROM invitations WHERE id = $1 AND team_id = $2 AND accepted_at IS NULL AND revoked_at IS NULL FOR UPDATE',
    [invitationId, teamId],
  );
  if (!rows[0]) throw notFound('Invitation not found');
  return rows[0];
}

/** A new token and a fresh 7-day expiry; the old token stops working at once. Works on expired invitations too. */
export async function resendInvitation(store: MetadataStore, actor: Actor, teamId: string, invitationId: string): Promise<IssuedInvitation> {
  return store.transaction(async (tx) => {
    assertActive(await lockTeam(tx, teamId));
    const open = await lockOpenInvitation(tx, teamId, invitationId);
    // Reviving an owner invitation hands out ownership again: only an owner may do that.
    if (open.role === 'owner' && (await teamRoleOf(tx, actor, teamId)) !== 'owner') throw forbidden('Only a team owner can resend an owner invitation');
    const token = newToken();
    const { rows } = await tx.query<Invitation>(
      `UPDATE invitations SET token_hash = $2, expires_at = now() + make_interval(days => $3), invited_by = $4 WHERE id = $1 ${RETURNING}`,
      [invitationId, sha256(token), INVITATION_DAYS, actor.id],
    );
    await writeAudit(tx, { teamId, action: 'invitation.resent', actor, target: { email: open.email }, details: `resent invitation as ${open.role}` });
    await mailInvitation(tx, actor, teamId, rows[0], token);
    return { invitation: rows[0], token };
  });
}

export async function revokeInvitation(store: MetadataStore, actor: Actor, teamId: string, invitationId: string): Promise<void> {
  await store.transaction(async (tx) => {
    await lockTeam(tx, teamId);
    const open = await lockOpenInvitation(tx, teamId, invitationId);
    await tx.query('UPDATE invitations SET revoked_at = now() WHERE id = $1', [invitationId]);
    await writeAudit(tx, { teamId, action: 'invitation.revoked', actor, target: { email: open.email }, details: `revoked invitation as ${open.role}` });
  });
}

interface TokenRow {
  id: string;
  team_id: string;
  email: string;
  role: TeamRole;
  live: boolean;
  accepted: boolean;
  revoked: boolean;
  archived: boolean;
}

/**
 * Someone signed in as the invited email accepts, or the invited person creates their account:
 * with a password, or with the provider identity they just signed in with (its address must be
 * the invited one).
 */
export type Acceptance = { signedIn: UserPrincipal } | { password: string | undefined } | { identity: { provider: ProviderId; subject: string; email: string } };

interface Joined {
  user: UserPrincipal;
  teamId: string;
  role: TeamRole;
}

/**
 * Accepts an invitation by its link's token: joins the team with the invited role, creating the
 * account first when the invited email has none, and closes the invitation, all or nothing. Every
 * unusable token is 404 (only its message says why), so a caller learns nothing a valid link would
 * not tell them.
 */
export async function acceptInvitation(store: MetadataStore, token: string, how: Acceptance): Promise<Joined> {
  return store.transaction(async (tx) => {
    const { rows } = await tx.query<TokenRow>(
      `SELECT i.id, i.team_id, i.email, i.role, i.expires_at > now() AS live, i.accepted_at IS NOT NULL AS accepted,
              i.revoked_at IS NOT NULL AS revoked, t.archived_at IS NOT NULL AS archived
         FROM invitations i JOIN teams t ON t.id = i.team_id
        WHERE i.token_hash = $1
        FOR UPDATE OF i`,
      [sha256(token)],
    );
    const invitation = rows[0];
    if (!invitation) throw notFound('This invitation link is not valid');
    if (invitation.accepted) throw notFound('This invitation has already been used');
    if (invitation.revoked) throw notFound('This invitation was revoked or declined');
    if (!invitation.live) throw notFound('This invitation has expired; ask for a new one');
    if (invitation.archived) throw conflict('This team is archived; it accepts no new members');
    if ('signedIn' in how) return join(tx, invitation, invitedPerson(how.signedIn, invitation.email));
    if ('identity' in how) {
      // The link proves the mailbox; the provider's account must be the one of that address.
      if (how.identity.email !== invitation.email.toLowerCase()) throw refused('invitation_mismatch', "The provider's address is not the invited one");
      if (await findUserByEmail(tx, invitation.email)) throw refused('account_exists', 'An account with this email already exists: sign in with it, then open the invitation link again');
      const user = await createUser(tx, { email: invitation.email, role: 'user' });
      await linkIdentity(tx, user.id, how.identity.provider, how.identity.subject, how.identity.email);
      return join(tx, invitation, user);
    }
    // The link's holder proves the email by holding it, but an existing account is proved only by
    // signing in to it: the password typed here must not become a second way in.
    if (await findUserByEmail(tx, invitation.email)) throw conflict('An account with this email already exists: sign in with it, then open this link again to join');
    if (!how.password) throw validationFailed([{ field: 'password', message: 'password is required to create your account', type: 'required' }]);
    // createUser checks the password (400) and hashes it; the transaction waits those ~100 ms.
    const user = await createUser(tx, { email: invitation.email, password: how.password, role: 'user' });
    return join(tx, invitation, user);
  });
}

/** The signed-in person, when they are the one invited; anyone else is refused. */
function invitedPerson(user: UserPrincipal, invitedEmail: string): UserPrincipal {
  if (user.email.toLowerCase() !== invitedEmail.toLowerCase()) throw forbidden('This invitation is for another email address; sign in with that one to accept it');
  return user;
}

/** Inside the caller's transaction, with the open invitation locked: membership, closing, audit and webhook together. */
async function join(tx: MetadataQueryable, invitation: { id: string; team_id: string; role: TeamRole }, user: UserPrincipal): Promise<Joined> {
  const already = await tx.query('SELECT 1 FROM team_members WHERE team_id = $1 AND user_id = $2', [invitation.team_id, user.id]);
  if (already.rowCount) throw conflict('You are already a member of this team');
  await tx.query('INSERT INTO team_members (team_id, user_id, role) VALUES ($1, $2, $3)', [invitation.team_id, user.id, invitation.role]);
  await tx.query('UPDATE invitations SET accepted_at = now() WHERE id = $1', [invitation.id]);
  // One entry says both things (accepted, joined): two written in one transaction would share a
  // timestamp and come back in no particular order.
  const who = { id: user.id, email: user.email };
  await writeAudit(tx, { teamId: invitation.team_id, action: 'invitation.accepted', actor: who, target: who, details: `accepted the invitation and joined as ${invitation.role}` });
  await queueOperationalEvent(tx, 'team.member.added', { team_id: invitation.team_id, user_id: user.id, email: user.email, role: invitation.role });
  return { user: { id: user.id, email: user.email, role: user.role }, teamId: invitation.team_id, role: invitation.role };
}

/** A pending invitation addressed to the signed-in person, as their dashboard lists it. */
export interface ReceivedInvitation {
  id: string;
  team_id: string;
  team_name: string;
  role: TeamRole;
  invited_by: string | null;
  expires_at: string;
}

/** Pending (unexpired) invitations to the person's email, in live teams, newest first. */
export async function receivedInvitations(db: MetadataQueryable, user: UserPrincipal): Promise<ReceivedInvitation[]> {
  const { rows } = await db.query<ReceivedInvitation>(
    `SELECT i.id, i.team_id, t.name AS team_name, i.role, u.email AS invited_by, ${iso('i.expires_at')} AS expires_at
       FROM invitations i
       JOIN teams t ON t.id = i.team_id
       LEFT JOIN users u ON u.id = i.invited_by
      WHERE i.email = $1 AND i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > now() AND t.archived_at IS NULL
      ORDER BY i.created_at DESC, i.id
      LIMIT 100`,
    [user.email.toLowerCase()],
  );
  return rows;
}

/** The pending invitation to this person, locked, or 404 (another person's looks the same as none). */
async function lockReceived(tx: MetadataQueryable, user: UserPrincipal, invitationId: string) {
  const { rows } = await tx.query<{ id: string; team_id: string; role: TeamRole; archived: boolean }>(
    `SELECT i.id, i.team_id, i.role, t.archived_at IS NOT NULL AS archived
       FROM invitations i JOIN teams t ON t.id = i.team_id
      WHERE i.id = $1 AND i.email = $2 AND i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > now()
      FOR UPDATE OF i`,
    [invitationId, user.email.toLowerCase()],
  );
  if (!rows[0]) throw notFound('Invitation not found');
  if (rows[0].archived) throw conflict('This team is archived; it accepts no new members');
  return rows[0];
}

/** The signed-in person accepts one of their pending invitations from the dashboard. */
export async function acceptReceivedInvitation(store: MetadataStore, user: UserPrincipal, invitationId: string): Promise<Joined> {
  return store.transaction(async (tx) => join(tx, await lockReceived(tx, user, invitationId), user));
}

/** The signed-in person turns an invitation down: it closes, and the team's audit log says so. */
export async function declineInvitation(store: MetadataStore, user: UserPrincipal, invitationId: string): Promise<void> {
  await store.transaction(async (tx) => {
    const invitation = await lockReceived(tx, user, invitationId);
    await tx.query('UPDATE invitations SET revoked_at = now() WHERE id = $1', [invitation.id]);
    const who = { id: user.id, email: user.email };
    await writeAudit(tx, { teamId: invitation.team_id, action: 'invitation.declined', actor: who, target: who, details: `declined the invitation as ${invitation.role}` });
  });
}
