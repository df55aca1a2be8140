// Team management over HTTP: teams, members, invitations (and accepting one), and the team audit
// log. Actions stay thin: rules live in lib/teams/, roles in each action's `access`.
// A change's webhook event is queued in the change's own transaction (lib/teams/ does it); the
// `ops.*` event emitted after the commit only tells the webhooks dispatcher to look now.
import type { Context, ServiceSchema } from 'moleculer';
import { TEAM_ROLES, type TeamRole } from '../lib/auth/roles.ts';
import { auditPage } from '../lib/audit/audit.ts';
import { principalsChanged } from '../lib/auth/principal-cache.ts';
import { Ok } from '../lib/auth/responses.ts';
import { action } from '../lib/openapi/action.ts';
import { MAIL_QUEUED } from '../lib/mail/outbox.ts';
import type { Runtime } from '../lib/runtime.ts';
import * as T from '../lib/teams/responses.ts';
import {
  acceptInvitation,
  acceptReceivedInvitation,
  declineInvitation,
  type IssuedInvitation,
  listInvitations,
  receivedInvitations,
  resendInvitation,
  revokeInvitation,
} from '../lib/teams/invitations.ts';
import { addMember, changeRole, listMembers, removeMember } from '../lib/teams/members.ts';
import { type PageQuery, pageParams } from '../lib/pagination.ts';
import { archiveTeam, createTeamWithOwner, listTeams, renameTeam } from '../lib/teams/teams.ts';
import type { RequestMeta } from '../types/meta.ts';

type Ctx<P = Record<string, never>> = Context<P, RequestMeta>;

const role = { type: 'enum', values: TEAM_ROLES };
const name = 'string|trim|min:1|max:100';
const teamId = { id: 'uuid' };
const tags = ['teams'];

export default function createTeamsService(runtime: Runtime): ServiceSchema {
  const db = () => runtime.metadata();
  const issued = ({ invitation, token }: IssuedInvitation) => ({ invitation, invite_token: token, invite_url: `${runtime.config.publicUrl}/invite/${token}` });

  return {
    name: 'teams',
    settings: { rest: '/' },
    actions: {
      list: action({
        rest: 'GET /api/user/teams',
        auth: 'user',
        params: pageParams,
        openapi: { summary: 'Teams you belong to, with your role (instance owners and admins see every team)', tags, response: T.TeamPage },
        handler: (ctx: Ctx<PageQuery>) => listTeams(db(), ctx.meta.user!, ctx.params),
      }),

      create: action({
        rest: 'POST /api/user/teams',
        location: '/api/user/teams/{id}',
        auth: 'user',
        params: { name },
        openapi: { summary: 'Create a team; you become its owner', tags, successStatus: 201, response: T.Team },
        async handler(ctx: Ctx<{ name: string }>) {
          const team = await createTeamWithOwner(db(), ctx.meta.user!, ctx.params.name);
          ctx.meta.$statusCode = 201;
          ctx.emit('ops.team.created', { team_id: team.id, name: team.name, user_id: ctx.meta.user!.id, email: ctx.meta.user!.email, role: 'owner' });
          return team;
        },
      }),

      update: action({
        rest: 'PATCH /api/user/teams/:id',
        auth: 'user',
        access: { team: { param: 'id', role: 'admin' } },
        params: { ...teamId, name },
        openapi: { summary: 'Rename a team (team admin or owner)', tags, response: T.Team },
        async handler(ctx: Ctx<{ id: string; name: string }>) {
          const { team, changed } = await renameTeam(db(), ctx.meta.user!, ctx.params.id, ctx.params.name);
          if (changed) ctx.emit('ops.team.updated', { team_id: team.id, name: team.name });
          return team;
        },
      }),

      archive: action({
        rest: 'POST /api/user/teams/:id/archive',
        auth: 'user',
        access: { team: { param: 'id', role: 'owner' } },
        params: teamId,
        openapi: { summary: 'Archive a team (team owner): it keeps its history but takes no new sites or members', tags, response: T.Team, errors: [409] },
        async handler(ctx: Ctx<{ id: string }>) {
          const team = await archiveTeam(db(), ctx.meta.user!, ctx.params.id);
          ctx.emit('ops.team.archived', { team_id: team.id, name: team.name, archived_at: team.archived_at });
          return team;
        },
      }),

      members: action({
        rest: 'GET /api/user/teams/:id/members',
        auth: 'user',
        access: { team: { param: 'id', role: 'member' } },
        params: { ...teamId, ...pageParams },
        openapi: { summary: 'Members of a team with their roles (any team member)', tags, response: T.MemberPage },
        handler: (ctx: Ctx<{ id: string } & PageQuery>) => listMembers(db(), ctx.params.id, ctx.params),
      }),

      addMember: action({
        rest: 'POST /api/user/teams/:id/members',
        location: '/api/user/teams/:id/invitations/{invitation.id}',
        auth: 'user',
        access: { team: { param: 'id', role: 'admin' } },
        params: { ...teamId, email: { type: 'email', max: 254 }, role },
        openapi: {
          summary: 'Invite someone by email (team admin; owners only by an owner): the same answer whether or not they have an account, and they join only by accepting',
          tags,
          successStatus: 201,
          response: T.IssuedInvitation,
          errors: [409],
        },
        async handler(ctx: Ctx<{ id: string; email: string; role: TeamRole }>) {
          const invited = await addMember(db(), ctx.meta.user!, ctx.params.id, ctx.params);
          ctx.broadcast(MAIL_QUEUED, {});
          ctx.meta.$statusCode = 201;
          return issued(invited);
        },
      }),

      changeRole: action({
        rest: 'PATCH /api/user/teams/:id/members/:userId',
        auth: 'user',
        access: { team: { param: 'id', role: 'admin' } },
        params: { ...teamId, userId: 'uuid', role },
        openapi: { summary: "Change a member's role (team admin; the owner role only by an owner; never the last owner)", tags, response: T.MemberEnvelope, errors: [409] },
        async handler(ctx: Ctx<{ id: string; userId: string; role: TeamRole }>) {
          const { member, changed } = await changeRole(db(), ctx.meta.user!, ctx.params.id, ctx.params.userId, ctx.params.role);
          if (changed) principalsChanged(ctx, runtime, { user_id: member.user_id });
          return { member };
        },
      }),

      removeMember: action({
        rest: 'DELETE /api/user/teams/:id/members/:userId',
        auth: 'user',
        // Any member may leave; removing someone else needs admin, checked by the use case.
        access: { team: { param: 'id', role: 'member' } },
        params: { ...teamId, userId: 'uuid' },
        openapi: { summary: 'Remove a member (team admin; an owner only by an owner) or leave the team yourself; never the last owner', tags, response: Ok, errors: [409] },
        async handler(ctx: Ctx<{ id: string; userId: string }>) {
          const removed = await removeMember(db(), ctx.meta.user!, ctx.params.id, ctx.params.userId);
          principalsChanged(ctx, runtime, { user_id: removed.user_id });
          ctx.emit('ops.team.member.removed', { team_id: ctx.params.id, user_id: removed.user_id, email: removed.email, role: removed.role });
          return { status: 'ok' as const };
        },
      }),

      invitations: action({
        rest: 'GET /api/user/teams/:id/invitations',
        auth: 'user',
        access: { team: { param: 'id', role: 'admin' } },
        params: { ...teamId, ...pageParams },
        openapi: { summary: 'Open invitations of a team, pending or expired (team admin)', tags, response: T.InvitationPage },
        handler: (ctx: Ctx<{ id: string } & PageQuery>) => listInvitations(db(), ctx.params.id, ctx.params),
      }),

      resendInvitation: action({
        rest: 'POST /api/user/teams/:id/invitations/:invitationId/resend',
        auth: 'user',
        access: { team: { param: 'id', role: 'admin' } },
        params: { ...teamId, invitationId: 'uuid' },
        openapi: { summary: 'Resend an invitation: a new link valid 7 days; the old link stops working (team admin)', tags, response: T.IssuedInvitation, errors: [409] },
        async handler(ctx: Ctx<{ id: string; invitationId: string }>) {
          const resent = await resendInvitation(db(), ctx.meta.user!, ctx.params.id, ctx.params.invitationId);
          ctx.broadcast(MAIL_QUEUED, {});
          return issued(resent);
        },
      }),

      revokeInvitation: action({
        rest: 'DELETE /api/user/teams/:id/invitations/:invitationId',
        auth: 'user',
        access: { team: { param: 'id', role: 'admin' } },
        params: { ...teamId, invitationId: 'uuid' },
        openapi: { summary: 'Revoke an invitation; its link stops working (team admin)', tags, response: Ok },
        async handler(ctx: Ctx<{ id: string; invitationId: string }>) {
          await revokeInvitation(db(), ctx.meta.user!, ctx.params.id, ctx.params.invitationId);
          return { status: 'ok' as const };
        },
      }),

      acceptInvite: action({
        rest: 'POST /api/auth/accept-invite',
        location: '/api/user/me',
        auth: 'none',
        rateLimit: 'login',
        params: { token: 'string|min:1|max:200', password: 'string|min:1|max:256|optional' },
        openapi: {
          summary:
            'Accept an invitation by its link: signed in as the invited email, you join the team; without an account, the password creates it, you join and are signed in (409 when the email has an account and you are not signed in to it)',
          tags,
          successStatus: 201,
          response: T.Accepted,
          errors: [403, 404, 409],
        },
        async handler(ctx: Ctx<{ token: string; password?: string }>) {
          const signedIn = ctx.meta.user;
          const joined = await acceptInvitation(db(), ctx.params.token, signedIn ? { signedIn } : { password: ctx.params.password });
          ctx.emit('ops.team.member.added', { team_id: joined.teamId, user_id: joined.user.id, email: joined.user.email, role: joined.role });
          ctx.meta.$statusCode = 201;
          if (signedIn) return { status: 'ok' as const, user: joined.user, team_id: joined.teamId };
          const session = await runtime.sessions.start(joined.user.id, { remember: false });
          ctx.meta.$responseHeaders = { 'Set-Cookie': session.setCookies, 'Cache-Control': 'no-store' };
          return { status: 'ok' as const, user: session.user, team_id: joined.teamId };
        },
      }),

      receivedInvitations: action({
        rest: 'GET /api/user/invitations',
        auth: 'user',
        openapi: { summary: 'Your pending invitations to teams, to accept or decline', tags, response: T.ReceivedInvitations },
        async handler(ctx: Ctx) {
          return { invitations: await receivedInvitations(db(), ctx.meta.user!) };
        },
      }),

      acceptReceivedInvitation: action({
        rest: 'POST /api/user/invitations/:invitationId/accept',
        auth: 'user',
        params: { invitationId: 'uuid' },
        openapi: { summary: 'Accept one of your pending invitations: you join its team with the invited role', tags, response: T.Joined, errors: [404, 409] },
        async handler(ctx: Ctx<{ invitationId: string }>) {
          const joined = await acceptReceivedInvitation(db(), ctx.meta.user!, ctx.params.invitationId);
          ctx.emit('ops.team.member.added', { team_id: joined.teamId, user_id: joined.user.id, email: joined.user.email, role: joined.role });
          return { status: 'ok' as const, team_id: joined.teamId, role: joined.role };
        },
      }),

      declineReceivedInvitation: action({
        rest: 'POST /api/user/invitations/:invitationId/decline',
        auth: 'user',
        params: { invitationId: 'uuid' },
        openapi: { summary: 'Decline one of your pending invitations; its link stops working', tags, response: Ok, errors: [404, 409] },
        async handler(ctx: Ctx<{ invitationId: string }>) {
          await declineInvitation(db(), ctx.meta.user!, ctx.params.invitationId);
          return { status: 'ok' as const };
        },
      }),

      audit: action({
        rest: 'GET /api/user/teams/:id/audit',
        auth: 'user',
        access: { team: { param: 'id', role: 'admin' } },
        params: { ...teamId, action: { type: 'string', optional: true, max: 100 }, ...pageParams },
        openapi: { summary: 'Team audit page: recent team-management actions, newest first (team admin)', tags, response: T.AuditPage },
        handler(ctx: Ctx<{ id: string; action?: string } & PageQuery>) {
          const { id, action, limit, offset } = ctx.params;
          // An empty `action=` (as a form sends it) means no filter, as the page's own `action: ""` does.
          return auditPage(db(), id, { action: action === '' ? undefined : action, limit, offset });
        },
      }),
    },
  };
}
