// The social sign-in providers an operator can enable (lib/config.ts): two general OpenID Connect
// providers and GitHub. A provider is enabled when its client id and secret (and, for the
// directory, its issuer) are set; only enabled ones reach the login page and the routes.
import type { Config } from '../../config.ts';

export const PROVIDER_IDS = ['google', 'entra', 'github'] as const;
export type ProviderId = (typeof PROVIDER_IDS)[number];

interface ProviderBase {
  id: ProviderId;
  /** What the button says. */
  name: string;
  clientId: string;
  clientSecret: string;
}

export interface OidcProvider extends ProviderBase {
  kind: 'oidc';
  issuer: string;
}

export interface GitHubProvider extends ProviderBase {
  kind: 'github';
  oauthUrl: string;
  apiUrl: string;
}

export type Provider = OidcProvider | GitHubProvider;

/** The enabled providers, in the order the login page shows them. */
export function enabledProviders(config: Config): Provider[] {
  const providers: Provider[] = [];
  if (config.oidcGoogleClientId && config.oidcGoogleClientSecret) {
    providers.push({ id: 'google', kind: 'oidc', name: 'Google', issuer: config.oidcGoogleIssuer, clientId: config.oidcGoogleClientId, clientSecret: config.oidcGoogleClientSecret });
  }
  if (config.oidcEntraIssuer && config.oidcEntraClientId && config.oidcEntraClientSecret) {
    providers.push({ id: 'entra', kind: 'oidc', name: 'Microsoft', issuer: config.oidcEntraIssuer, clientId: config.oidcEntraClientId, clientSecret: config.oidcEntraClientSecret });
  }
  if (config.githubClientId && config.githubClientSecret) {
    providers.push({
      id: 'github',
      kind: 'github',
      name: 'GitHub',
      clientId: config.githubClientId,
      clientSecret: config.githubClientSecret,
      oauthUrl: config.githubOauthUrl.replace(/\/+$/, ''),
      apiUrl: config.githubApiUrl.replace(/\/+$/, ''),
    });
  }
  return providers;
}

/** Where the provider sends the browser back: the URL an operator registers at the provider. */
export const callbackUrl = (publicUrl: string, id: ProviderId) => `${publicUrl}/api/auth/oauth/${id}/callback`;
export const ssoCallbackUrl = (publicUrl: string) => `${publicUrl}/api/auth/sso/callback`;
