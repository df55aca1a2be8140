// Signing in and out: the first-run owner, password login (with the MFA challenge when a second
// factor is enrolled), password reset by mail, logout, and the session API the dashboard uses to warn and extend.
import type { Context, ServiceSchema } from 'moleculer';
import { Type } from '@sinclair/typebox';
import { verifyPassword } from '../lib/auth/passwords.ts';
import { principalsChanged } from '../lib/auth/principal-cache.ts';
import * as A from '../lib/auth/responses.ts';
import { sessionView, signedInView } from '../lib/auth/session-view.ts';
import { type Authenticated, MFA_CHALLENGE_SECONDS } from '../lib/auth/sessions.ts';
import { writeAudit } from '../lib/audit/audit.ts';
import { conflict, PlumbError } from '../lib/errors.ts';
import { MAIL_QUEUED } from '../lib/mail/outbox.ts';
import { mailConfigured } from '../lib/mail/transport.ts';
import { action } from '../lib/openapi/action.ts';
import { object } from '../lib/openapi/responses.ts';
import type { Runtime } from '../lib/runtime.ts';
import { createTeam } from '../lib/sites/sites.ts';
import { requestPasswordReset, resetPassword } from '../lib/users/password-reset.ts';
import { createUser, findUserByEmail, userCount } from '../lib/users/users.ts';
import { notConfigured } from './mail.service.ts';
import type { RequestMeta } from '../types/meta.ts';

type Ctx<P = Record<string, never>> = Context<P, RequestMeta>;

const credentials = { email: 'string|min:3|max:254|trim', password: 'string|min:1|max:256' };
/** "Keep me signed in": the same switch on every way of signing in (setup, login, passkey). */
const rememberMe = { remember_me: { type: 'boolean', optional: true, default: false, convert: true } } as const;


export default function createAuthService(runtime: Runtime): ServiceSchema {
  const { config } = runtime;

  /** Sends the session cookies of a successful sign-in. */
  const signedIn = (ctx: Ctx<unknown>, result: Authenticated) => {
    ctx.meta.$responseHeaders = { 'Set-Cookie': result.setCookies, 'Cache-Control': 'no-store' };
    return result;
  };

  return {
    name: 'auth',
    settings: { rest: '/' },
    actions: {
      initialUser: action({
        rest: 'POST /api/initial-user',
        location: '/api/user/me',
        auth: 'none',
        rateLimit: 'login',
        params: { ...credentials, ...rememberMe },
        openapi: { summary: 'First run: create the instance owner (only while no account exists); signs them in', tags: ['auth'], successStatus: 201, response: A.SignedIn, errors: [409] },
        async handler(ctx: Ctx<{ email: string; password: string; remember_me: boolean }>) {
          const user = await runtime.metadata().transaction(async (tx) => {
            // The lock makes "no account yet" and the insert one step, even with two racing requests.
            await tx.query('LOCK TABLE users IN SHARE ROW EXCLUSIVE MODE');
            if ((await userCount(tx)) > 0) throw conflict('Plumb is already set up; sign in instead');
            const owner = await createUser(tx, { email: ctx.params.email, password: ctx.params.password, role: 'owner' });
            const team = await createTeam(tx, { name: 'My team' });
            await tx.query("INSERT INTO team_members (team_id, user_id, role) VALUES ($1, $2, 'owner')", [team.id, owner.id]);
            await writeAudit(tx, { teamId: team.id, action: 'team.created', actor: owner, details: 'created at first run' });
            return owner;
          });
          ctx.meta.$statusCode = 201;
          return signedInView(config, signedIn(ctx, await runtime.sessions.start(user.id, { remember: ctx.params.remember_me })));
        },
      }),

      login: action({
        rest: 'POST /api/login',
        auth: 'none',
        rateLimit: 'login',
        params: { ...credentials, ...rememberMe },
        openapi: { summary: 'Sign in with email and password; answers mfa_required with a challenge when a second factor is enrolled', tags: ['auth'], response: A.LoginResult },
        async handler(ctx: Ctx<{ email: string; password: string; remember_me: boolean }>) {
          const user = await findUserByEmail(runtime.metadata(), ctx.params.email);
          // verifyPassword spends the same time for an unknown email (dummy hash).
          const valid = await verifyPassword(ctx.params.password, user?.password_hash);
          if (!user || !valid) throw new PlumbError(401, 'unauthorized', 'Invalid email or password');
          if (user.totp_enabled) {
            const challenge = await runtime.sessions.signChallenge('mfa', user.id, { remember: ctx.params.remember_me }, MFA_CHALLENGE_SECONDS);
            return { status: 'mfa_required' as const, challenge_token: challenge, factors: ['totp' as const, 'recovery_code' as const] };
          }
          return signedInView(config, signedIn(ctx, await runtime.sessions.start(user.id, { remember: ctx.params.remember_me })));
        },
      }),

      forgotPassword: action({
        rest: 'POST /api/auth/forgot-password',
        auth: 'none',
        rateLimit: 'login',
        params: { $$strict: true, email: 'string|min:1|max:254|trim' },
        openapi: {
          summary: 'Ask for a password reset link by mail (valid 1 hour, used once). Answers the same whether or not the address has an account; 409 when the instance has no mail',
          tags: ['auth'],
          successStatus: 202,
          response: object({ status: Type.Literal('accepted') }),
          errors: [409],
        },
        async handler(ctx: Ctx<{ email: string }>) {
          if (!mailConfigured(config)) throw notConfigured();
          await requestPasswordReset(runtime.metadata(), ctx.params.email);
          ctx.broadcast(MAIL_QUEUED, {});
          ctx.meta.$statusCode = 202;
          return { status: 'accepted' as const };
        },
      }),

      resetPassword: action({
        rest: 'POST /api/auth/reset-password',
        auth: 'none',
        rateLimit: 'login',
        params: { $$strict: true, token: 'string|min:1|max:128', password: 'string|min:1|max:1024' },
        openapi: { summary: "Set a new password with a reset link's token: the token is used up, every session of the account ends, a notice is mailed", tags: ['auth'], response: A.Ok },
        async handler(ctx: Ctx<{ token: string; password: string }>) {
          const userId = await resetPassword(runtime.metadata(), ctx.params.token, ctx.params.password);
          principalsChanged(ctx, runtime, { user_id: userId });
          ctx.broadcast(MAIL_QUEUED, {});
          return { status: 'ok' as const };
        },
      }),

      logout: action({
        rest: 'POST /api/logout',
        auth: 'none',
        openapi: { summary: 'Sign out: ends the session and forgets the remember-me token', tags: ['auth'], response: A.Ok },
        async handler(ctx: Ctx) {
          ctx.meta.$responseHeaders = { 'Set-Cookie': await runtime.sessions.logout(ctx.meta.session), 'Cache-Control': 'no-store' };
          return { status: 'ok' as const };
        },
      }),

      session: action({
        rest: 'GET /api/auth/session',
        auth: 'user',
        openapi: { summary: 'The current session: expiry, warning lead time, remember-me state', tags: ['auth'], response: A.CurrentSession },
        handler(ctx: Ctx) {
          return { user: ctx.meta.user!, ...sessionView(config, ctx.meta.session!) };
        },
      }),

      extend: action({
        rest: 'POST /api/auth/session/extend',
        auth: 'user',
        openapi: { summary: 'Extend the session: a fresh session cookie with a full lifetime', tags: ['auth'], response: A.CurrentSession },
        async handler(ctx: Ctx) {
          const result = signedIn(ctx, await runtime.sessions.extend(ctx.meta.user!, ctx.meta.session!));
          return { user: result.user, ...sessionView(config, result.session) };
        },
      }),
    },
  };
}

export type { Ctx as AuthContext };
