// Accounts: instance user administration (/api/admin/users), the caller's own account
// (/api/user/me, /api/user/password, /api/user/email) and their API clients (/api/user/api-clients).
import { Type } from '@sinclair/typebox';
import type { Context, ServiceSchema } from 'moleculer';
import { listApiClients } from '../lib/auth/api-clients.ts';
import { forgetPrincipalsLocally, type PrincipalsChange, PRINCIPALS_CHANGED, principalsChanged } from '../lib/auth/principal-cache.ts';
import { INSTANCE_ROLES, type InstanceRole, SITE_ROLES } from '../lib/auth/roles.ts';
import type { UserPrincipal } from '../lib/auth/sessions.ts';
import { unauthorized } from '../lib/errors.ts';
import { Ok } from '../lib/auth/responses.ts';
import { MAIL_QUEUED } from '../lib/mail/outbox.ts';
import { action } from '../lib/openapi/action.ts';
import { NoContent, object } from '../lib/openapi/responses.ts';
import { mailConfigured } from '../lib/mail/transport.ts';
import { confirmEmailChange, requestEmailChange } from '../lib/users/email-change.ts';
import { notConfigured } from './mail.service.ts';
import { type PageQuery, pageParams } from '../lib/pagination.ts';
import type { Runtime } from '../lib/runtime.ts';
import * as U from '../lib/users/responses.ts';
import { type ApiClientRequest, changePassword, deleteOwnApiClient, issueApiClient, ownApiClient, rotateOwnApiClient } from '../lib/users/account.ts';
import { adminCreateUser, changeRole, deleteUser, disableMfa, listUsers, type UserView } from '../lib/users/admin.ts';
import type { RequestMeta } from '../types/meta.ts';

type Ctx<P = Record<string, never>> = Context<P, RequestMeta>;
type ById = { id: string };

const admin = { auth: 'user', access: { instance: 'admin' } } as const;
const byId = { id: 'uuid' };

export default function createUsersService(runtime: Runtime): ServiceSchema {
  const db = () => runtime.metadata();
  const scopeNames = runtime.apiScopes.map((scope) => scope.name);

  /** The signed-in caller. The access middleware already refused everyone else over HTTP. */
  const caller = (ctx: Ctx<unknown>): UserPrincipal => {
    if (!ctx.meta.user) throw unauthorized();
    return ctx.meta.user;
  };

  const forget = (ctx: Ctx<unknown>, change: PrincipalsChange) => principalsChanged(ctx, runtime, change);

  /** Sends a fresh session's cookies, so the caller stays signed in after their other sessions ended. */
  const restartSession = async (ctx: Ctx<unknown>, user: UserPrincipal) => {
    const fresh = await runtime.sessions.start(user.id, { remember: ctx.meta.session?.rememberId !== undefined });
    ctx.meta.$responseHeaders = { 'Set-Cookie': fresh.setCookies, 'Cache-Control': 'no-store' };
  };

  const announceUpdate = (ctx: Ctx<unknown>, user: UserView) => ctx.emit('ops.system.user.updated', { user_id: user.id, email: user.email, role: user.role });

  return {
    name: 'users',
    settings: { rest: '/' },
    actions: {
      listUsers: action({
        rest: 'GET /api/admin/users',
        ...admin,
        params: pageParams,
        openapi: { summary: 'Instance users, oldest first (instance owners and admins)', tags: ['admin'], response: U.UserPage },
        handler: (ctx: Ctx<PageQuery>) => listUsers(db(), ctx.params),
      }),

      createUser: action({
        rest: 'POST /api/admin/users',
        location: '/api/admin/users/{user.id}',
        ...admin,
        params: { email: 'string|min:3|max:254|trim', password: 'string|min:1|max:1024', role: { type: 'enum', values: INSTANCE_ROLES } },
        openapi: { summary: 'Create an account directly; only an instance owner may create owners and admins', tags: ['admin'], successStatus: 201, response: U.UserEnvelope, errors: [409] },
        async handler(ctx: Ctx<{ email: string; password: string; role: InstanceRole }>) {
          const user = await adminCreateUser(db(), caller(ctx), ctx.params);
          announceUpdate(ctx, user);
          ctx.meta.$statusCode = 201;
          return { user };
        },
      }),

      updateUser: action({
        rest: 'PATCH /api/admin/users/:id',
        ...admin,
        params: { ...byId, role: { type: 'enum', values: INSTANCE_ROLES } },
        openapi: { summary: "Change a user's instance role (owners only for owner and admin); ends that user's sessions", tags: ['admin'], response: U.UserEnvelope, errors: [409] },
        async handler(ctx: Ctx<ById & { role: InstanceRole }>) {
          const actor = caller(ctx);
          const { user, changed } = await changeRole(db(), actor, ctx.params.id, ctx.params.role);
          if (changed) {
            await runtime.sessions.revokeAll(user.id);
            // Their tokens are capped by their rights, which just changed.
            forget(ctx, { user_id: user.id });
            if (user.id === actor.id) await restartSession(ctx, user);
            announceUpdate(ctx, user);
          }
          return { user };
        },
      }),

      disableMfa: action({
        rest: 'POST /api/admin/users/:id/disable-mfa',
        ...admin,
        params: byId,
        openapi: { summary: "Reset a user's second factor (TOTP and recovery codes); ends that user's sessions", tags: ['admin'], response: U.UserEnvelope },
        async handler(ctx: Ctx<ById>) {
          const actor = caller(ctx);
          const user = await disableMfa(db(), actor, ctx.params.id);
          ctx.broadcast(MAIL_QUEUED, {});
          await runtime.sessions.revokeAll(user.id);
          forget(ctx, { user_id: user.id });
          if (user.id === actor.id) await restartSession(ctx, user);
          announceUpdate(ctx, user);
          return { user };
        },
      }),

      deleteUser: action({
        rest: 'DELETE /api/admin/users/:id',
        ...admin,
        params: byId,
        openapi: { summary: 'Delete an account with its memberships and API clients (not yourself, not the last owner)', tags: ['admin'], successStatus: 204, response: NoContent, errors: [409] },
        async handler(ctx: Ctx<ById>) {
          const user = await deleteUser(db(), caller(ctx), ctx.params.id);
          forget(ctx, { user_id: user.id });
          ctx.emit('ops.system.user.deleted', { user_id: user.id, email: user.email, role: user.role });
          ctx.meta.$statusCode = 204;
          return null;
        },
      }),

      me: action({
        rest: 'GET /api/user/me',
        auth: 'user',
        openapi: { summary: 'The signed-in user', tags: ['account'], response: U.Me },
        handler(ctx: Ctx) {
          const { id, email, role } = caller(ctx);
          return { id, email, role };
        },
      }),

      changePassword: action({
        rest: 'POST /api/user/password',
        auth: 'user',
        // It checks a password, so it gets the sign-in attempt limit.
        rateLimit: 'login',
        params: { current_password: 'string|min:1|max:1024', new_password: 'string|min:1|max:1024' },
        openapi: { summary: 'Change your password; your other sessions end and this one continues with a fresh cookie', tags: ['account'], response: Ok },
        async handler(ctx: Ctx<{ current_password: string; new_password: string }>) {
          const user = caller(ctx);
          await changePassword(db(), user, ctx.params);
          ctx.broadcast(MAIL_QUEUED, {});
          await runtime.sessions.revokeAll(user.id);
          forget(ctx, { user_id: user.id });
          await restartSession(ctx, user);
          return { status: 'ok' as const };
        },
      }),

      requestEmailChange: action({
        rest: 'POST /api/user/email',
        auth: 'user',
        // It checks a password, so it gets the sign-in attempt limit.
        rateLimit: 'login',
        params: { $$strict: true, email: 'string|min:1|max:254|trim', password: 'string|min:1|max:1024' },
        openapi: {
          summary: 'Change your email address: a confirmation link (valid 24 hours) goes to the new address, and the change happens when it is opened. 403 for a wrong password, 409 when the instance has no mail',
          tags: ['account'],
          successStatus: 202,
          response: object({ status: Type.Literal('confirmation_sent'), email: Type.String() }),
          errors: [409],
        },
        async handler(ctx: Ctx<{ email: string; password: string }>) {
          if (!mailConfigured(runtime.config)) throw notConfigured();
          const email = await requestEmailChange(db(), caller(ctx), ctx.params);
          ctx.broadcast(MAIL_QUEUED, {});
          ctx.meta.$statusCode = 202;
          return { status: 'confirmation_sent' as const, email };
        },
      }),

      confirmEmailChange: action({
        rest: 'POST /api/user/email/confirm',
        auth: 'none',
        rateLimit: 'login',
        params: { $$strict: true, token: 'string|min:1|max:128' },
        openapi: { summary: 'Confirm a new email address with the token its confirmation link carries (used once); the old address is told', tags: ['account'], response: U.Me, errors: [409] },
        async handler(ctx: Ctx<{ token: string }>) {
          const user = await confirmEmailChange(db(), ctx.params.token);
          forget(ctx, { user_id: user.id });
          ctx.broadcast(MAIL_QUEUED, {});
          ctx.emit('ops.system.user.updated', { user_id: user.id, email: user.email, role: user.role });
          return user;
        },
      }),

      listApiClients: action({
        rest: 'GET /api/user/api-clients',
        auth: 'user',
        params: pageParams,
        openapi: { summary: 'Your API clients (never their tokens)', tags: ['api-clients'], response: U.ApiClientPage },
        handler: (ctx: Ctx<PageQuery>) => listApiClients(db(), caller(ctx).id, ctx.params),
      }),

      apiScopes: action({
        rest: 'GET /api/user/api-clients/scopes',
        auth: 'user',
        openapi: { summary: 'The scopes a token may hold on this node: Plumb’s own, then those its plugins declare', tags: ['api-clients'], response: U.ScopeList },
        handler: () => ({ scopes: runtime.apiScopes.map(({ name, description }) => ({ name, description })) }),
      }),

      createApiClient: action({
        rest: 'POST /api/user/api-clients',
        location: '/api/user/api-clients/{api_client.id}',
        auth: 'user',
        params: {
          name: 'string|min:1|max:120|trim',
          scopes: { type: 'array', max: scopeNames.length, items: { type: 'enum', values: scopeNames } },
          sites: {
            type: 'array',
            optional: true,
            default: [],
            max: 200,
            items: { type: 'object', strict: true, props: { site_id: 'uuid', role: { type: 'enum', values: SITE_ROLES } } },
          },
          expires_at: { type: 'string', optional: true, max: 64 },
        },
        openapi: { summary: 'Issue an API client token (shown once) with scopes and site roles no higher than your own', tags: ['api-clients'], successStatus: 201, response: U.IssuedApiClient },
        async handler(ctx: Ctx<ApiClientRequest>) {
          const owner = caller(ctx);
          const { id, token } = await issueApiClient(db(), owner, ctx.params, scopeNames);
          ctx.meta.$statusCode = 201;
          return { api_client: await ownApiClient(db(), owner, id), token };
        },
      }),

      rotateApiClient: action({
        rest: 'POST /api/user/api-clients/:id/rotate',
        auth: 'user',
        params: byId,
        openapi: { summary: 'Replace the token of one of your API clients; the old token stops working', tags: ['api-clients'], response: U.IssuedApiClient },
        async handler(ctx: Ctx<ById>) {
          const owner = caller(ctx);
          const token = await rotateOwnApiClient(db(), owner, ctx.params.id);
          forget(ctx, { api_client_id: ctx.params.id });
          return { api_client: await ownApiClient(db(), owner, ctx.params.id), token };
        },
      }),

      deleteApiClient: action({
        rest: 'DELETE /api/user/api-clients/:id',
        auth: 'user',
        params: byId,
        openapi: { summary: 'Delete one of your API clients; its token stops working', tags: ['api-clients'], successStatus: 204, response: NoContent },
        async handler(ctx: Ctx<ById>) {
          await deleteOwnApiClient(db(), caller(ctx), ctx.params.id);
          forget(ctx, { api_client_id: ctx.params.id });
          ctx.meta.$statusCode = 204;
          return null;
        },
      }),
    },

    events: {
      [PRINCIPALS_CHANGED](ctx: Context<PrincipalsChange>) {
        forgetPrincipalsLocally(runtime, ctx.params);
      },
    },
  };
}
