// Social sign-in: the providers the login page offers, the start and the callback of a sign-in at
// Google-like OpenID providers, the enterprise directory and GitHub, linking and unlinking them in
// the security settings, and the mailed confirmation a directory identity needs when nothing else
// proved the account. Rules live in lib/auth/federated/; this file wires them to routes.
import type { Context, ServiceSchema } from 'moleculer';
import { writeInstanceAudit } from '../lib/users/admin.ts';
import { type FlowData, flowCookies, signFlow, takeFlow } from '../lib/auth/federated/flow.ts';
import { accountOfIdentity, confirmIdentity, linkWithNotice, listIdentities, mailConfirmation, unlinkIdentity } from '../lib/auth/federated/identities.ts';
import { MAIL_QUEUED } from '../lib/mail/outbox.ts';
import { redirectTo, refusedLanding, signedInLanding } from '../lib/auth/federated/landing.ts';
import { callbackUrl, enabledProviders, PROVIDER_IDS, type Provider, type ProviderId } from '../lib/auth/federated/providers.ts';
import * as F from '../lib/auth/federated/responses.ts';
import { createSocialClient, reasonOf, refused } from '../lib/auth/federated/social.ts';
import { notFound } from '../lib/errors.ts';
import { acceptInvitation } from '../lib/teams/invitations.ts';
import { action } from '../lib/openapi/action.ts';
import { NoContent } from '../lib/openapi/responses.ts';
import type { Runtime } from '../lib/runtime.ts';
import { findUserByEmail, findUserById } from '../lib/users/users.ts';
import type { RequestMeta } from '../types/meta.ts';

type Ctx<P = Record<string, never>> = Context<P, RequestMeta>;
type CallbackParams = { provider: string; code?: string; state?: string; iss?: string; error?: string; error_description?: string };

const tags = ['social sign-in'];
const providerParam = { provider: { type: 'enum', values: PROVIDER_IDS } } as const;
const rememberMe = { remember_me: { type: 'boolean', optional: true, default: false, convert: true } } as const;
/** What a provider may put on the callback URL; anything else is ignored. */
const callbackQuery = {
  code: { type: 'string', max: 2048, optional: true },
  state: { type: 'string', max: 512, optional: true },
  iss: { type: 'string', max: 2048, optional: true },
  error: { type: 'string', max: 256, optional: true },
  error_description: { type: 'string', max: 2048, optional: true },
} as const;
const Redirect = NoContent;

export default function createSocialService(runtime: Runtime): ServiceSchema {
  const { config, sessions } = runtime;
  const db = () => runtime.metadata();
  const providers = enabledProviders(config);
  const enabledIds = providers.map((p) => p.id);
  const client = createSocialClient({ allowPrivate: config.ssoAllowPrivate });
  const cookies = flowCookies(config.publicUrl);

  const providerOf = (id: string): Provider => {
    const provider = providers.find((p) => p.id === id);
    if (!provider) throw notFound('This sign-in provider is not enabled on this instance');
    return provider;
  };

  /** Signs the flow into the browser's flow cookie and answers with the provider's URL. */
  async function start(ctx: Ctx<unknown>, provider: Provider, intent: 'login' | 'link', remember: boolean, invite?: string) {
    const { url, flow } = await client.authorizationUrl(provider, callbackUrl(config.publicUrl, provider.id), { intent, remember, userId: ctx.meta.user?.id, invite });
    ctx.meta.$responseHeaders = { 'Set-Cookie': cookies.set(await signFlow(sessions, flow)), 'Cache-Control': 'no-store' };
    return { authorization_url: url };
  }

  /** The callback's URL as the provider built it, with only the parameters a code response has. */
  function currentUrl(provider: ProviderId, params: CallbackParams): URL {
    const url = new URL(callbackUrl(config.publicUrl, provider));
    for (const key of ['code', 'state', 'iss', 'error', 'error_description'] as const) {
      const value = params[key];
      if (typeof value === 'string') url.searchParams.set(key, value);
    }
    return url;
  }

  /** Decides what a proven identity does: link to the signed-in account, sign in, or wait for a confirmation. */
  async function land(ctx: Ctx<CallbackParams>, provider: Provider, identity: { subject: string; email: string }, flow: FlowData) {
    if (flow.intent === 'link') {
      // The account that started the link must still be the one signed in here.
      const user = ctx.meta.user;
      if (!user || user.id !== flow.userId) throw refused('session_changed', 'Sign in again to link a provider');
      if ((await linkWithNotice(db(), user, provider, identity, 'by the signed-in person')) === 'linked') ctx.broadcast(MAIL_QUEUED, {});
      return { location: `/account?linked=${provider.id}`, cookies: [] };
    }
    const known = await accountOfIdentity(db(), provider.id, identity.subject);
    if (known) return signedInLanding(sessions, db(), known, flow.remember);
    if (flow.invite) {
      // The invitation link proved the address: a new account, with this identity as its way in.
      const joined = await acceptInvitation(db(), flow.invite, { identity: { provider: provider.id, ...identity } }).catch((err: unknown) => {
        throw (err as { type?: string }).type === 'not_found' ? refused('invitation_invalid', (err as Error).message) : err;
      });
      ctx.emit('ops.team.member.added', { team_id: joined.teamId, user_id: joined.user.id, email: joined.user.email, role: joined.role });
      return signedInLanding(sessions, db(), joined.user.id, flow.remember);
    }
    const account = await findUserByEmail(db(), identity.email);
    if (!account) throw refused('no_account', 'There is no Plumb account for this address; ask for an invitation');
    if (provider.id === 'entra') {
      // The directory's address does not prove the mailbox: its owner confirms by mail first.
      await mailConfirmation(db(), account, provider, identity);
      ctx.broadcast(MAIL_QUEUED, {});
      return refusedLanding('confirmation_sent');
    }
    // GitHub's primary verified address and a general provider's verified address prove the
    // mailbox, as a password-reset mail would: the identity joins the account, and the second
    // factor (when enrolled) still has to follow.
    if ((await linkWithNotice(db(), account, provider, identity, 'by its verified address')) === 'linked') ctx.broadcast(MAIL_QUEUED, {});
    return signedInLanding(sessions, db(), account.id, flow.remember);
  }

  return {
    name: 'social',
    settings: { rest: '/' },
    actions: {
      options: action({
        rest: 'GET /api/auth/providers',
        auth: 'none',
        params: {},
        openapi: { summary: 'The sign-in providers the login page offers (only enabled ones), and whether single sign-on is in use', tags, response: F.SignInOptions },
        async handler() {
          const { rows } = await db().query<{ n: number }>('SELECT count(*)::int AS n FROM team_sso');
          return { providers: providers.map((p) => ({ id: p.id, name: p.name })), sso: rows[0].n > 0 };
        },
      }),

      start: action({
        rest: 'POST /api/auth/oauth/:provider/start',
        auth: 'none',
        rateLimit: 'login',
        params: { ...providerParam, ...rememberMe, invite_token: { type: 'string', min: 16, max: 256, optional: true } },
        openapi: {
          summary: "Start signing in at a provider (or accepting an invitation with it: invite_token): sets the browser's one-time flow cookie and answers the provider's authorization URL",
          tags,
          response: F.AuthorizationRedirect,
          errors: [404, 502],
        },
        handler: (ctx: Ctx<{ provider: string; remember_me: boolean; invite_token?: string }>) => start(ctx, providerOf(ctx.params.provider), 'login', ctx.params.remember_me, ctx.params.invite_token),
      }),

      callback: action({
        rest: 'GET /api/auth/oauth/:provider/callback',
        auth: 'none',
        rateLimit: 'login',
        params: { ...providerParam, ...callbackQuery },
        openapi: {
          summary: 'Where the provider sends the browser back: checks state, PKCE, nonce, issuer and audience, then signs in, links, or asks for the second factor; redirects (303) to the dashboard or the login page',
          tags,
          successStatus: 303,
          response: Redirect,
        },
        async handler(ctx: Ctx<CallbackParams>) {
          const flow = await takeFlow(sessions, ctx.meta.request.headers.cookie as string | undefined, ctx.params.provider, ctx.params.state);
          try {
            const provider = providerOf(ctx.params.provider);
            if (!flow) throw refused('state_invalid', 'The sign-in expired or was started in another browser; start again');
            if (ctx.params.error) throw refused('provider_refused', `${provider.name} did not sign you in`);
            const identity = await client.exchange(provider, currentUrl(provider.id, ctx.params), flow);
            return redirectTo(ctx.meta, config, await land(ctx, provider, identity, flow), cookies.clear);
          } catch (err) {
            const reason = reasonOf(err);
            if (reason === 'failed') this.logger.warn({ err: (err as Error).message, provider: ctx.params.provider }, 'social sign-in failed');
            const landing = flow?.intent === 'link' ? { location: `/account?link_error=${encodeURIComponent(reason)}`, cookies: [] } : refusedLanding(reason);
            return redirectTo(ctx.meta, config, landing, cookies.clear);
          }
        },
      }),

      confirm: action({
        rest: 'GET /api/auth/oauth/confirm/:token',
        auth: 'none',
        rateLimit: 'login',
        params: { token: { type: 'string', min: 20, max: 128, pattern: /^[A-Za-z0-9_-]+$/ } },
        openapi: { summary: 'The link of a directory confirmation mail: links the identity to the account and redirects (303) to the login page', tags, successStatus: 303, response: Redirect },
        async handler(ctx: Ctx<{ token: string }>) {
          try {
            const confirmed = await confirmIdentity(db(), ctx.params.token);
            if (!confirmed) return redirectTo(ctx.meta, config, refusedLanding('confirmation_invalid'), cookies.clear);
            const user = await findUserById(db(), confirmed.userId);
            if (user) await writeInstanceAudit(db(), { action: 'user.provider_linked', actor: user, target: user, details: `${confirmed.provider} (${confirmed.email}) confirmed by mail` });
            return redirectTo(ctx.meta, config, { location: `/login?linked=${confirmed.provider}`, cookies: [] }, cookies.clear);
          } catch (err) {
            return redirectTo(ctx.meta, config, refusedLanding(reasonOf(err)), cookies.clear);
          }
        },
      }),

      linked: action({
        rest: 'GET /api/user/security/providers',
        auth: 'user',
        params: {},
        openapi: { summary: "The signed-in person's sign-in providers: every enabled one, and any linked one, with its identity when linked", tags, response: F.LinkedProviders },
        async handler(ctx: Ctx) {
          const identities = await listIdentities(db(), ctx.meta.user!.id);
          const ids = PROVIDER_IDS.filter((id) => enabledIds.includes(id) || identities.some((i) => i.provider === id));
          const names: Record<ProviderId, string> = { google: 'Google', entra: 'Microsoft', github: 'GitHub' };
          return {
            providers: ids.map((id) => {
              const identity = identities.find((i) => i.provider === id);
              return { id, name: names[id], enabled: enabledIds.includes(id), identity: identity ? { email: identity.email, created_at: identity.created_at, last_used_at: identity.last_used_at } : null };
            }),
          };
        },
      }),

      link: action({
        rest: 'POST /api/user/security/providers/:provider/link',
        auth: 'user',
        params: providerParam,
        openapi: { summary: "Start linking a provider to the signed-in account: answers the provider's authorization URL; the callback links it", tags, response: F.AuthorizationRedirect, errors: [404, 502] },
        handler: (ctx: Ctx<{ provider: string }>) => start(ctx, providerOf(ctx.params.provider), 'link', ctx.meta.session?.rememberId !== undefined),
      }),

      unlink: action({
        rest: 'DELETE /api/user/security/providers/:provider',
        auth: 'user',
        params: providerParam,
        openapi: { summary: 'Unlink a provider; refused (409) when it is the last usable way to sign in', tags, successStatus: 204, response: NoContent, errors: [409] },
        async handler(ctx: Ctx<{ provider: string }>) {
          const user = ctx.meta.user!;
          await unlinkIdentity(db(), user.id, ctx.params.provider, enabledIds);
          await writeInstanceAudit(db(), { action: 'user.provider_unlinked', actor: user, target: user, details: ctx.params.provider });
          ctx.meta.$statusCode = 204;
          return null;
        },
      }),
    },
  };
}

