// Which providers an operator's settings enable, where their callbacks are, what a team may enter
// as its single sign-on connection, and that provider requests keep to public https addresses
// unless private providers are allowed.
import { describe, expect, it } from '@jest/globals';
import { guardedFetch } from '../../lib/auth/federated/outbound.ts';
import { callbackUrl, enabledProviders, ssoCallbackUrl } from '../../lib/auth/federated/providers.ts';
import { describeConfig, loadConfig } from '../../lib/config.ts';
import { checkSsoInput } from '../../lib/teams/sso.ts';

const configWith = (env: Record<string, string>) => loadConfig({ env: { PLUMB_DATA_DIR: '/tmp/plumb-unused', ...env } });

describe('enabled sign-in providers', () => {
  it('are none by default', () => {
    expect(enabledProviders(configWith({}))).toEqual([]);
  });

  it('need a client id and a secret, and the directory its issuer too', () => {
    const config = configWith({
      PLUMB_OIDC_GOOGLE_CLIENT_ID: 'g',
      PLUMB_OIDC_ENTRA_CLIENT_ID: 'e',
      PLUMB_OIDC_ENTRA_CLIENT_SECRET: 'es',
      PLUMB_GITHUB_CLIENT_ID: 'h',
      PLUMB_GITHUB_CLIENT_SECRET: 'hs',
    });
    expect(enabledProviders(config).map((p) => p.id)).toEqual(['github']);
  });

  it("default to Google's issuer and GitHub's public endpoints", () => {
    const config = configWith({ PLUMB_OIDC_GOOGLE_CLIENT_ID: 'g', PLUMB_OIDC_GOOGLE_CLIENT_SECRET: 'gs', PLUMB_GITHUB_CLIENT_ID: 'h', PLUMB_GITHUB_CLIENT_SECRET: 'hs' });
    expect(enabledProviders(config)).toEqual([
      { id: 'google', kind: 'oidc', name: 'Google', issuer: 'https://accounts.google.com', clientId: 'g', clientSecret: 'gs' },
      { id: 'github', kind: 'github', name: 'GitHub', clientId: 'h', clientSecret: 'hs', oauthUrl: 'https://github.com', apiUrl: 'https://api.github.com' },
    ]);
  });

  it('have their callbacks under the public URL', () => {
    expect(callbackUrl('https://stats.example.org', 'entra')).toBe('https://stats.example.org/api/auth/oauth/entra/callback');
    expect(ssoCallbackUrl('https://stats.example.org')).toBe('https://stats.example.org/api/auth/sso/callback');
  });

  it('mask their secrets in the printed settings', () => {
    const config = configWith({ PLUMB_OIDC_GOOGLE_CLIENT_ID: 'g', PLUMB_OIDC_GOOGLE_CLIENT_SECRET: 'google-secret-value', PLUMB_GITHUB_CLIENT_SECRET: 'github-secret-value' });
    const printed = JSON.stringify(describeConfig(config));
    expect(printed).not.toContain('google-secret-value');
    expect(printed).not.toContain('github-secret-value');
    expect(printed).toContain('"oidcGoogleClientId":"g"');
  });
});

describe('a team single sign-on connection', () => {
  const input = { issuer: 'https://idp.example.com/', client_id: 'c', allowed_domains: [' Example.COM ', 'example.com', 'sub.example.org'], jit_enabled: false };

  it('keeps an https issuer without its trailing slash and the domains lower-cased, once each', () => {
    expect(checkSsoInput(input, false)).toEqual({ issuer: 'https://idp.example.com', domains: ['example.com', 'sub.example.org'] });
  });

  it('refuses a plain-http issuer unless private providers are allowed', () => {
    expect(() => checkSsoInput({ ...input, issuer: 'http://idp.example.com' }, false)).toThrow('issuer must be an https URL without query or credentials');
    expect(checkSsoInput({ ...input, issuer: 'http://127.0.0.1:9000' }, true).issuer).toBe('http://127.0.0.1:9000');
  });

  it('refuses an issuer with credentials or a query, and a domain that is not one', () => {
    for (const issuer of ['https://user:pw@idp.example.com', 'https://idp.example.com/?tenant=1', 'javascript:alert(1)']) {
      expect(() => checkSsoInput({ ...input, issuer }, true)).toThrow('issuer must be an http(s) URL without query or credentials');
    }
    for (const domain of ['example', '*.example.com', 'exa mple.com', '@example.com']) {
      expect(() => checkSsoInput({ ...input, allowed_domains: [domain] }, false)).toThrow('allowed_domains[0] must be a domain name like example.com');
    }
  });
});

describe('requests to identity providers', () => {
  it('refuse plain http and private addresses by default', async () => {
    const fetchAt = guardedFetch({ allowPrivate: false });
    await expect(fetchAt('http://idp.example.com/.well-known/openid-configuration', {})).rejects.toMatchObject({ kind: 'invalid_url' });
    await expect(fetchAt('https://127.0.0.1:9/.well-known/openid-configuration', {})).rejects.toMatchObject({ kind: 'blocked_address' });
    await expect(fetchAt('https://[::1]:9/', {})).rejects.toMatchObject({ kind: 'blocked_address' });
  });
});
