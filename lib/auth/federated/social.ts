// Social sign-in at a provider: the authorization request (code flow, PKCE S256, state, and a
// nonce for OpenID providers) and the exchange of the returned code for the person's identity.
// Tokens live only inside exchange(): they are used to read the identity and then dropped, never
// stored or logged.
import * as oidc from 'openid-client';
import { PlumbError } from '../../errors.ts';
import { guardedRequest } from '../../net/guarded-fetch.ts';
import type { FlowData } from './flow.ts';
import { clientOptions, discover, type ProviderNetwork } from './outbound.ts';
import type { GitHubProvider, OidcProvider, Provider } from './providers.ts';

/** What a provider proved about the person: its stable key and a verified email address. */
export interface ProvenIdentity {
  subject: string;
  email: string;
}

/** A refused sign-in: `reason` (in the error's data) is a short code the login page explains. */
export const refused = (reason: string, message: string) => new PlumbError(401, 'unauthorized', message, { reason });

/** The short code of a refused sign-in, or 'failed' for any other error. */
export const reasonOf = (err: unknown) => {
  const reason = (err as { data?: { reason?: unknown } })?.data?.reason;
  return typeof reason === 'string' ? reason : 'failed';
};

const DISCOVERY_TTL_MS = 10 * 60_000;

export function createSocialClient(network: ProviderNetwork) {
  const configurations = new Map<string, { config: Promise<oidc.Configuration>; expires: number }>();

  /** Discovery of an OpenID provider, kept for a while; a failed one is forgotten at once. */
  function configurationOf(provider: OidcProvider | { id: string; issuer: string; clientId: string; clientSecret: string }): Promise<oidc.Configuration> {
    const key = `${provider.id} ${provider.issuer} ${provider.clientId}`;
    const hit = configurations.get(key);
    if (hit && hit.expires > Date.now()) return hit.config;
    const config = discover(network, provider.issuer, provider.clientId, provider.clientSecret);
    configurations.set(key, { config, expires: Date.now() + DISCOVERY_TTL_MS });
    config.catch(() => configurations.delete(key));
    return config;
  }

  function gitHubConfiguration(provider: GitHubProvider): oidc.Configuration {
    const config = new oidc.Configuration(
      { issuer: provider.oauthUrl, authorization_endpoint: `${provider.oauthUrl}/login/oauth/authorize`, token_endpoint: `${provider.oauthUrl}/login/oauth/access_token` },
      provider.clientId,
      { client_secret: provider.clientSecret },
      oidc.ClientSecretPost(provider.clientSecret),
    );
    const options = clientOptions(network);
    config[oidc.customFetch] = options[oidc.customFetch];
    if (network.allowPrivate) oidc.allowInsecureRequests(config);
    return config;
  }

  const configFor = (provider: Provider) => (provider.kind === 'github' ? Promise.resolve(gitHubConfiguration(provider)) : configurationOf(provider));

  return {
    configurationOf,

    /** The provider's authorization URL for a new flow, and the flow to keep in the browser. */
    async authorizationUrl(provider: Provider, redirectUri: string, flow: Pick<FlowData, 'intent' | 'remember' | 'userId' | 'invite'>): Promise<{ url: string; flow: FlowData }> {
      const config = await configFor(provider).catch((err: unknown) => {
        throw new PlumbError(502, 'unavailable', `${provider.name} cannot be reached right now: ${(err as Error).message}`);
      });
      const verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const nonce = provider.kind === 'oidc' ? oidc.randomNonce() : undefined;
      const params: Record<string, string> = {
        redirect_uri: redirectUri,
        scope: provider.kind === 'oidc' ? 'openid email profile' : 'read:user user:email',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        ...(nonce ? { nonce } : {}),
      };
      return { url: oidc.buildAuthorizationUrl(config, params).href, flow: { provider: provider.id, state, nonce, verifier, ...flow } };
    },

    /** Exchanges the callback's code (checks: state, PKCE, nonce, issuer, audience) for the identity it proves. */
    async exchange(provider: Provider, callbackUrl: URL, flow: FlowData): Promise<ProvenIdentity> {
      const config = await configFor(provider);
      let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
      try {
        tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
          pkceCodeVerifier: flow.verifier,
          expectedState: flow.state,
          ...(provider.kind === 'oidc' ? { expectedNonce: flow.nonce, idTokenExpected: true } : {}),
        });
      } catch (err) {
        throw refused('exchange_failed', `${provider.name} did not confirm the sign-in: ${(err as Error).message}`);
      }
      if (provider.kind === 'github') return gitHubIdentity(provider, tokens.access_token);
      const claims = tokens.claims();
      if (!claims) throw refused('exchange_failed', `${provider.name} sent no ID token`);
      return oidcIdentity(provider, claims);
    },
  };

  async function gitHubIdentity(provider: GitHubProvider, accessToken: string): Promise<ProvenIdentity> {
    const get = async (path: string) => {
      const res = await guardedRequest(new URL(`${provider.apiUrl}${path}`), {
        headers: { Authorization: `Bearer ${accessToken}`, Accept: 'application/vnd.github+json', 'User-Agent': 'Plumb', 'X-GitHub-Api-Version': '2022-11-28' },
        timeoutMs: 10_000,
        maxBytes: 256 * 1024,
        allowPrivate: network.allowPrivate,
      });
      if (res.status !== 200) throw refused('exchange_failed', `GitHub answered ${res.status} for ${path}`);
      try {
        return JSON.parse(res.body.toString('utf8')) as unknown;
      } catch {
        throw refused('exchange_failed', `GitHub's answer for ${path} is not JSON`);
      }
    };
    const user = (await get('/user')) as { id?: unknown };
    if (typeof user?.id !== 'number' || !Number.isSafeInteger(user.id) || user.id <= 0) throw refused('exchange_failed', 'GitHub did not name the account');
    const emails = await get('/user/emails');
    const primary = Array.isArray(emails) ? emails.find((e: { primary?: unknown; verified?: unknown; email?: unknown }) => e?.primary === true && e.verified === true && typeof e.email === 'string') : undefined;
    if (!primary) throw refused('email_unverified', 'Your GitHub account has no verified primary email address');
    return { subject: String(user.id), email: String(primary.email).toLowerCase() };
  }
}

function oidcIdentity(provider: OidcProvider, claims: oidc.IDToken): ProvenIdentity {
  const email = typeof claims.email === 'string' ? claims.email.toLowerCase() : '';
  // The directory marks an address whose domain its tenant owns with xms_edov.
  const verified = claims.email_verified === true || (provider.id === 'entra' && claims.xms_edov === true);
  if (!email || !verified) throw refused('email_unverified', `${provider.name} did not confirm a verified email address`);
  if (provider.id === 'entra') {
    const { tid, oid } = claims;
    if (typeof tid !== 'string' || typeof oid !== 'string' || !tid || !oid) throw refused('exchange_failed', 'The directory did not name the tenant and object of the account');
    return { subject: `${tid}/${oid}`, email };
  }
  return { subject: `${claims.iss} ${claims.sub}`, email };
}
