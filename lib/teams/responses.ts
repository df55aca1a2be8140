// Response schemas of the team routes (services/teams.service.ts): teams, members, invitations
// and the team audit page, published in the OpenAPI document and typing the handlers.
import { Type } from '@sinclair/typebox';
import { UserPrincipal } from '../auth/responses.ts';
import { TEAM_ROLES } from '../auth/roles.ts';
import { DateTime, envelope, nullable, object, page, pageFields, stringEnum, Uuid } from '../openapi/responses.ts';

export const TeamRole = stringEnum(TEAM_ROLES);

export const Team = object({
  id: Uuid,
  name: Type.String(),
  role: { ...TeamRole, description: 'The caller’s effective role in the team' },
  created_at: DateTime,
  archived_at: nullable(DateTime),
});
export const TeamPage = page(Team);

export const Member = object({ user_id: Uuid, email: Type.String(), role: TeamRole, joined_at: DateTime });
export const MemberPage = page(Member);
export const MemberEnvelope = envelope('member', Member);

const Invitation = { id: Uuid, email: Type.String(), role: TeamRole, expires_at: DateTime };
export const InvitationPage = page(object({ ...Invitation, status: stringEnum(['pending', 'expired']), created_at: DateTime }));

/** A new invitation: the token (and the link with it) exists only in this answer. */
export const IssuedInvitation = object({ invitation: object(Invitation), invite_token: Type.String(), invite_url: Type.String({ format: 'uri' }) });

export const Accepted = object({ status: Type.Literal('ok'), user: UserPrincipal, team_id: Uuid });
export const Joined = object({ status: Type.Literal('ok'), team_id: Uuid, role: TeamRole });

export const ReceivedInvitations = object({
  invitations: Type.Array(
    object({
      id: Uuid,
      team_id: Uuid,
      team_name: Type.String(),
      role: TeamRole,
      invited_by: nullable(Type.String({ description: 'The inviter’s email, null when their account is gone' })),
      expires_at: DateTime,
    }),
  ),
});

export const AuditPage = object({
  action: Type.String({ description: 'The action filter applied, "" for none' }),
  entries: Type.Array(
    object({
      id: Uuid,
      team_id: Uuid,
      action: Type.String(),
      actor_user_id: nullable(Uuid),
      actor_email: nullable(Type.String()),
      target_user_id: nullable(Uuid),
      target_email: nullable(Type.String()),
      site: nullable(object({ id: Uuid, domain: Type.String() }, { description: 'The site of a site-level action' })),
      subject: nullable(
        object(
          { type: stringEnum(['goal', 'funnel', 'share_link', 'webhook', 'team']), id: Uuid, name: nullable(Type.String()) },
          { description: 'What else the entry concerned, by its name at the time' },
        ),
      ),
      details: Type.String({ description: 'What happened, in words, naming things by their names' }),
      created_at: DateTime,
    }),
  ),
  ...pageFields,
});
