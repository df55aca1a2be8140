// A real OpenID provider for tests (panva's oidc-provider) on 127.0.0.1: discovery, signed ID
// tokens, PKCE, nonce, and a plain sign-in page (/interaction/:uid) where a person types the
// account id to sign in as. Each account's claims (email, email_verified, tid, oid, …) are set by
// the test. signInAt() walks that page over HTTP, returning the callback URL the provider
// redirects to, so a test can hand it to Plumb as it is, or tampered with.
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

export interface TestProviderOptions {
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
  /** Listen on this port (a test that must name the issuer before the provider starts picks it). */
  port?: number;
}

export interface OidcTestProvider {
  issuer: string;
  /** The claims an account signs in with (sub is the account id). */
  setAccount(id: string, claims: Record<string, unknown>): void;
  close(): Promise<void>;
}

const page = (uid: string) => `<!doctype html>
<html><head><title>Test provider sign-in</title></head>
<body><h1>Sign in at the test provider</h1>
<form method="post" action="/interaction/${uid}">
<label>Account <input name="login" autofocus></label>
<button type="submit">Sign in</button>
</form></body></html>`;

async function formOf(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

export async function startOidcTestProvider(options: TestProviderOptions): Promise<OidcTestProvider> {
  const accounts = new Map<string, Record<string, unknown>>();
  let provider: Provider | undefined;
  const server: Server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    try {
      const match = /^\/interaction\/([A-Za-z0-9_-]+)$/.exec(req.url ?? '');
      if (!match) return provider!.callback()(req, res);
      const details = await provider!.interactionDetails(req, res);
      if (req.method === 'GET') {
        res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(page(details.uid));
        return;
      }
      const login = (await formOf(req)).get('login') ?? '';
      if (!accounts.has(login)) {
        res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(page(details.uid));
        return;
      }
      const grant = new provider!.Grant({ accountId: login, clientId: options.clientId });
      grant.addOIDCScope('openid email profile');
      const grantId = await grant.save();
      await provider!.interactionFinished(req, res, { login: { accountId: login }, consent: { grantId } }, { mergeWithLastSubmission: false });
    } catch (err) {
      res.writeHead(500, { 'Content-Type': 'text/plain' }).end(String(err));
    }
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  provider = new Provider(issuer, {
    clients: [
      {
        client_id: options.clientId,
        client_secret: options.clientSecret,
        redirect_uris: options.redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'tid', 'oid'] },
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    cookies: { keys: ['a test provider cookie key'] },
    jwks: { keys: [{ ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }), kid: 'test-key', alg: 'RS256', use: 'sig' }] },
    ttl: { AccessToken: 600, AuthorizationCode: 60, Grant: 600, IdToken: 600, Interaction: 600, Session: 600 },
    pkce: { required: () => true },
    async findAccount(_ctx, id) {
      const claims = accounts.get(id);
      if (!claims) return undefined;
      return { accountId: id, claims: async () => ({ sub: id, ...claims }) };
    },
  });
  return {
    issuer,
    setAccount: (id, claims) => void accounts.set(id, claims),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A tiny cookie jar, so a walk through the provider's pages keeps its session like a browser. */
export class CookieJar {
  private readonly cookies = new Map<string, string>();
  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
  take(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (value === '' || /max-age=0/i.test(line) || /expires=thu, 01 jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
}

/**
 * Follows the provider's redirects (an OpenID test provider's or the GitHub double's) from an authorization URL, signs in as `account` on its page,
 * and stops at the first redirect that leaves the provider: the URL it sends the browser back to.
 */
export async function signInAt(authorizationUrl: string, account: string): Promise<string> {
  const jar = new CookieJar();
  const origin = new URL(authorizationUrl).origin;
  let next = authorizationUrl;
  let method = 'GET';
  let body: string | undefined;
  for (let hop = 0; hop < 10; hop++) {
    const res = await fetch(next, {
      method,
      redirect: 'manual',
      headers: { Cookie: jar.header(), ...(body ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}) },
      body,
    });
    jar.take(res);
    const location = res.headers.get('location');
    if (location) {
      const target = new URL(location, next);
      if (target.origin !== origin) return target.href;
      next = target.href;
      method = 'GET';
      body = undefined;
      continue;
    }
    // The provider's sign-in page: submit it as the account.
    if (res.status === 200 && method === 'GET' && (res.headers.get('content-type') ?? '').startsWith('text/html')) {
      method = 'POST';
      body = new URLSearchParams({ login: account }).toString();
      continue;
    }
    throw new Error(`the test provider answered ${res.status} at ${next}: ${(await res.text()).slice(0, 300)}`);
  }
  throw new Error('too many redirects at the test provider');
}
