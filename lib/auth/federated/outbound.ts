// Every request to an identity provider (discovery, keys, token exchange, GitHub's REST API) goes
// through the guarded outbound client: one deadline, a capped body, redirects returned and never
// followed, and only public addresses unless the operator allows private providers. openid-client
// takes it as its custom fetch; GitHub's API calls use it directly.
import * as oidc from 'openid-client';
import { guardedRequest, OutboundError } from '../../net/guarded-fetch.ts';

/** Discovery documents, key sets and token answers are small; anything bigger is not a provider's. */
const MAX_BYTES = 256 * 1024;
const TIMEOUT_MS = 10_000;

export interface ProviderNetwork {
  /** Loopback and private addresses, and plain http, are allowed (PLUMB_SSO_ALLOW_PRIVATE). */
  allowPrivate: boolean;
}

/** A fetch() over the guarded client, as openid-client's customFetch expects. */
export function guardedFetch(network: ProviderNetwork) {
  return async (url: string, options: { method?: string; headers?: Record<string, string>; body?: unknown }): Promise<Response> => {
    const target = new URL(url);
    if (!network.allowPrivate && target.protocol !== 'https:') throw new OutboundError('invalid_url', 'Identity providers are reached over https only');
    let body: string | undefined;
    if (options.body instanceof URLSearchParams) body = options.body.toString();
    else if (typeof options.body === 'string') body = options.body;
    else if (options.body !== undefined && options.body !== null) throw new TypeError('Unsupported request body for an identity provider');
    const res = await guardedRequest(target, { method: options.method ?? 'GET', headers: options.headers, body, timeoutMs: TIMEOUT_MS, maxBytes: MAX_BYTES, allowPrivate: network.allowPrivate });
    const headers = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      if (Array.isArray(value)) for (const v of value) headers.append(name, v);
      else if (value !== undefined) headers.set(name, value);
    }
    // A 204 or 304 carries no body; Response refuses one for them.
    const empty = res.status === 204 || res.status === 304;
    return new Response(empty ? null : new Uint8Array(res.body), { status: res.status, headers });
  };
}

/** The options every openid-client call takes: our fetch, and plain http only when private providers are allowed. */
export function clientOptions(network: ProviderNetwork) {
  return {
    [oidc.customFetch]: guardedFetch(network),
    ...(network.allowPrivate ? { execute: [oidc.allowInsecureRequests] } : {}),
  };
}

/** Discovery of an OpenID provider's configuration through the guarded client. */
export async function discover(network: ProviderNetwork, issuer: string, clientId: string, clientSecret: string): Promise<oidc.Configuration> {
  const config = await oidc.discovery(new URL(issuer), clientId, { client_secret: clientSecret }, oidc.ClientSecretPost(clientSecret), clientOptions(network));
  config[oidc.customFetch] = guardedFetch(network);
  return config;
}
