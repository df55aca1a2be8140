// Team single sign-on: owners and admins connect their team to one OpenID provider (and test its
// discovery document); people sign in by their address, whose domain finds the team. The flow is
// the social one's (lib/auth/federated/): code with PKCE S256, browser-bound state, nonce, issuer
// and audience checks, and a verified address in an allowed domain. Tokens are dropped at once.
import type { Context, ServiceSchema } from 'moleculer';
import * as oidc from 'openid-client';
import { flowCookies, signFlow, takeFlow } from '../lib/auth/federated/flow.ts';
import { redirectTo, refusedLanding, signedInLanding } from '../lib/auth/federated/landing.ts';
import { discover } from '../lib/auth/federated/outbound.ts';
import { ssoCallbackUrl } from '../lib/auth/federated/providers.ts';
import * as F from '../lib/auth/federated/responses.ts';
import { createSocialClient, reasonOf, refused } from '../lib/auth/federated/social.ts';
import { createSecretBox } from '../lib/auth/secret-box.ts';
import { notFound, PlumbError } from '../lib/errors.ts';
import { action } from '../lib/openapi/action.ts';
import { NoContent } from '../lib/openapi/responses.ts';
import type { Runtime } from '../lib/runtime.ts';
import { checkSsoInput, deleteSso, getSso, type SsoInput, type SsoSecrets, saveSso, ssoAccount, ssoForEmail, ssoOfTeam } from '../lib/teams/sso.ts';
import type { RequestMeta } from '../types/meta.ts';

type Ctx<P = Record<string, never>> = Context<P, RequestMeta>;
type CallbackParams = { code?: string; state?: string; iss?: string; error?: string; error_description?: string };

const tags = ['single sign-on'];
const teamAdmin = { team: { param: 'id', role: 'admin' } } as const;
const issuer = 'string|min:8|max:2048|trim';
const connection = {
  id: 'uuid',
  issuer,
  client_id: 'string|min:1|max:512|trim',
  client_secret: { type: 'string', min: 1, max: 2048, optional: true },
  allowed_domains: { type: 'array', items: 'string|min:1|max:253', min: 1, max: 50 },
  jit_enabled: { type: 'boolean', optional: true, default: false },
} as const;

export default function createSsoService(runtime: Runtime): ServiceSchema {
  const { config, sessions } = runtime;
  const db = () => runtime.metadata();
  const network = { allowPrivate: config.ssoAllowPrivate };
  const box = createSecretBox(runtime.jwtSecret, 'team-sso');
  const client = createSocialClient(network);
  const cookies = flowCookies(config.publicUrl);
  const redirectUri = ssoCallbackUrl(config.publicUrl);

  /** The team's provider configuration, discovered (and kept a while) under its current settings. */
  const configurationOf = async (sso: SsoSecrets) => {
    const { rows } = await db().query<{ v: string }>('SELECT extract(epoch FROM updated_at)::text AS v FROM team_sso WHERE team_id = $1', [sso.teamId]);
    return client.configurationOf({ id: `sso ${sso.teamId} ${rows[0]?.v}`, issuer: sso.issuer, clientId: sso.clientId, clientSecret: sso.clientSecret });
  };

  return {
    name: 'sso',
    settings: { rest: '/' },
    actions: {
      get: action({
        rest: 'GET /api/teams/:id/sso',
        auth: 'user',
        access: teamAdmin,
        params: { id: 'uuid' },
        openapi: { summary: "The team's single sign-on connection (null when none); the client secret is never returned", tags, response: F.SsoEnvelope },
        handler: async (ctx: Ctx<{ id: string }>) => ({ sso: await getSso(db(), ctx.params.id) }),
      }),

      save: action({
        rest: 'PUT /api/teams/:id/sso',
        auth: 'user',
        access: teamAdmin,
        params: connection,
        openapi: {
          summary: 'Connect the team to an OpenID provider, or change the connection (a left-out client_secret keeps the stored one); a domain another team answers for is refused (409)',
          tags,
          response: F.SsoEnvelope,
          errors: [409],
        },
        handler: async (ctx: Ctx<SsoInput & { id: string }>) => ({ sso: await saveSso(db(), box, ctx.meta.user!, ctx.params.id, ctx.params, network.allowPrivate) }),
      }),

      remove: action({
        rest: 'DELETE /api/teams/:id/sso',
        auth: 'user',
        access: teamAdmin,
        params: { id: 'uuid' },
        openapi: { summary: "Disconnect the team's single sign-on; accounts keep their other ways to sign in", tags, successStatus: 204, response: NoContent },
        async handler(ctx: Ctx<{ id: string }>) {
          await deleteSso(db(), ctx.meta.user!, ctx.params.id);
          ctx.meta.$statusCode = 204;
          return null;
        },
      }),

      test: action({
        rest: 'POST /api/teams/:id/sso/test',
        auth: 'user',
        access: teamAdmin,
        params: { id: 'uuid', issuer: { type: 'string', min: 8, max: 2048, trim: true, optional: true } },
        openapi: { summary: "Fetch and check a provider's discovery document (the given issuer, or the connected one's)", tags, response: F.SsoTestResult },
        async handler(ctx: Ctx<{ id: string; issuer?: string }>) {
          const saved = await ssoOfTeam(db(), box, ctx.params.id);
          const wanted = ctx.params.issuer ?? saved?.issuer;
          if (!wanted) throw notFound('This team has no single sign-on connection; give an issuer to test');
          const { issuer: checked } = checkSsoInput({ issuer: wanted, client_id: 'x', allowed_domains: ['example.com'], jit_enabled: false }, network.allowPrivate);
          try {
            const found = (await discover(network, checked, saved?.clientId ?? 'plumb', saved?.clientSecret ?? 'unused')).serverMetadata();
            const problems: string[] = [];
            if (!found.authorization_endpoint) problems.push('it names no authorization endpoint');
            if (!found.token_endpoint) problems.push('it names no token endpoint');
            if (!found.jwks_uri) problems.push('it names no key set (jwks_uri)');
            if (found.code_challenge_methods_supported && !found.code_challenge_methods_supported.includes('S256')) problems.push('it does not support PKCE S256');
            return {
              ok: problems.length === 0,
              issuer: checked,
              message: problems.length === 0 ? 'The discovery document is usable' : `The discovery document cannot be used: ${problems.join('; ')}`,
              authorization_endpoint: found.authorization_endpoint ?? null,
              token_endpoint: found.token_endpoint ?? null,
            };
          } catch (err) {
            return { ok: false, issuer: checked, message: `No usable discovery document: ${(err as Error).message}`, authorization_endpoint: null, token_endpoint: null };
          }
        },
      }),

      start: action({
        rest: 'POST /api/auth/sso/start',
        auth: 'none',
        rateLimit: 'login',
        params: { email: 'string|min:3|max:254|trim', remember_me: { type: 'boolean', optional: true, default: false, convert: true } },
        openapi: { summary: "Start single sign-on for an address: its domain finds the team; answers the team provider's authorization URL", tags, response: F.AuthorizationRedirect, errors: [404, 502] },
        async handler(ctx: Ctx<{ email: string; remember_me: boolean }>) {
          const sso = await ssoForEmail(db(), box, ctx.params.email);
          if (!sso) throw notFound("No team signs in with single sign-on for this address's domain");
          const config_ = await configurationOf(sso).catch((err: unknown) => {
            throw new PlumbError(502, 'unavailable', `The team's provider cannot be reached right now: ${(err as Error).message}`);
          });
          const verifier = oidc.randomPKCECodeVerifier();
          const state = oidc.randomState();
          const nonce = oidc.randomNonce();
          const url = oidc.buildAuthorizationUrl(config_, {
            redirect_uri: redirectUri,
            scope: 'openid email profile',
            code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
            code_challenge_method: 'S256',
            state,
            nonce,
            login_hint: ctx.params.email.toLowerCase(),
          });
          const flow = await signFlow(sessions, { provider: 'sso', state, nonce, verifier, intent: 'login', remember: ctx.params.remember_me, teamId: sso.teamId });
          ctx.meta.$responseHeaders = { 'Set-Cookie': cookies.set(flow), 'Cache-Control': 'no-store' };
          return { authorization_url: url.href };
        },
      }),

      callback: action({
        rest: 'GET /api/auth/sso/callback',
        auth: 'none',
        rateLimit: 'login',
        params: {
          code: { type: 'string', max: 2048, optional: true },
          state: { type: 'string', max: 512, optional: true },
          iss: { type: 'string', max: 2048, optional: true },
          error: { type: 'string', max: 256, optional: true },
          error_description: { type: 'string', max: 2048, optional: true },
        },
        openapi: {
          summary: "Where the team's provider sends the browser back: checks state, PKCE, nonce, issuer, audience and the verified address's domain, then signs in; redirects (303) to the dashboard or the login page",
          tags,
          successStatus: 303,
          response: NoContent,
        },
        async handler(ctx: Ctx<CallbackParams>) {
          try {
            const flow = await takeFlow(sessions, ctx.meta.request.headers.cookie as string | undefined, 'sso', ctx.params.state);
            if (!flow?.teamId || !flow.nonce) throw refused('state_invalid', 'The sign-in expired or was started in another browser; start again');
            if (ctx.params.error) throw refused('provider_refused', 'The team’s provider did not sign you in');
            const sso = await ssoOfTeam(db(), box, flow.teamId);
            if (!sso) throw refused('sso_removed', 'The team no longer signs in with single sign-on');
            const url = new URL(redirectUri);
            for (const key of ['code', 'state', 'iss', 'error', 'error_description'] as const) if (ctx.params[key] !== undefined) url.searchParams.set(key, ctx.params[key]);
            let claims: oidc.IDToken | undefined;
            try {
              const tokens = await oidc.authorizationCodeGrant(await configurationOf(sso), url, { pkceCodeVerifier: flow.verifier, expectedState: flow.state, expectedNonce: flow.nonce, idTokenExpected: true });
              claims = tokens.claims();
            } catch (err) {
              throw refused('exchange_failed', `The team's provider did not confirm the sign-in: ${(err as Error).message}`);
            }
            const email = typeof claims?.email === 'string' ? claims.email.toLowerCase() : '';
            if (!email || claims?.email_verified !== true) throw refused('email_unverified', "The team's provider did not confirm a verified email address");
            const { userId, joined } = await ssoAccount(db(), sso, email);
            // Just-in-time membership queued its webhook event with the change: the dispatcher may look now.
            if (joined) ctx.emit('ops.team.member.added', { team_id: sso.teamId, user_id: userId, email, role: 'member' });
            return redirectTo(ctx.meta, config, await signedInLanding(sessions, db(), userId, flow.remember), cookies.clear);
          } catch (err) {
            const reason = reasonOf(err);
            if (reason === 'failed') this.logger.warn({ err: (err as Error).message }, 'single sign-on failed');
            return redirectTo(ctx.meta, config, refusedLanding(reason), cookies.clear);
          }
        },
      }),
    },
  };
}
