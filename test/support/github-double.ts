// A local double of GitHub's OAuth app endpoints and the two REST calls sign-in makes, on
// 127.0.0.1: /login/oauth/authorize (a page where the person types the login to sign in as),
// /login/oauth/access_token (checks the client, the one-time code, the redirect URI and the PKCE
// S256 verifier, as GitHub does), /user and /user/emails. Serve it as both PLUMB_GITHUB_OAUTH_URL
// and PLUMB_GITHUB_API_URL.
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface GitHubEmail {
  email: string;
  primary: boolean;
  verified: boolean;
}

export interface GitHubDouble {
  url: string;
  clientId: string;
  clientSecret: string;
  setAccount(login: string, account: { id: number; emails: GitHubEmail[] }): void;
  close(): Promise<void>;
}

const page = (action: string) => `<!doctype html>
<html><head><title>Sign in to GitHub</title></head>
<body><h1>Authorize the app</h1>
<form method="post" action="${action.replaceAll('&', '&amp;').replaceAll('"', '&quot;')}">
<label>Login <input name="login" autofocus></label>
<button type="submit">Authorize</button>
</form></body></html>`;

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startGitHubDouble(port = 0): Promise<GitHubDouble> {
  const clientId = 'github-test-client';
  const clientSecret = 'github-test-secret';
  const accounts = new Map<string, { id: number; emails: GitHubEmail[] }>();
  const codes = new Map<string, { login: string; redirectUri: string; challenge: string }>();
  const tokens = new Map<string, string>();
  const json = (res: ServerResponse, status: number, body: unknown) => res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));

  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://double');
    if (url.pathname === '/login/oauth/authorize') {
      const q = url.searchParams;
      if (q.get('client_id') !== clientId || !q.get('redirect_uri') || q.get('code_challenge_method') !== 'S256' || !q.get('code_challenge')) {
        return json(res, 400, { error: 'invalid_request' });
      }
      if (req.method === 'GET') return void res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(page(`${url.pathname}${url.search}`));
      const login = new URLSearchParams(await bodyOf(req)).get('login') ?? '';
      if (!accounts.has(login)) return void res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(page(`${url.pathname}${url.search}`));
      const code = randomBytes(16).toString('hex');
      codes.set(code, { login, redirectUri: q.get('redirect_uri')!, challenge: q.get('code_challenge')! });
      const back = new URL(q.get('redirect_uri')!);
      back.searchParams.set('code', code);
      if (q.get('state')) back.searchParams.set('state', q.get('state')!);
      return void res.writeHead(302, { Location: back.href }).end();
    }
    if (url.pathname === '/login/oauth/access_token' && req.method === 'POST') {
      const form = new URLSearchParams(await bodyOf(req));
      const grant = codes.get(form.get('code') ?? '');
      codes.delete(form.get('code') ?? '');
      if (form.get('client_id') !== clientId || form.get('client_secret') !== clientSecret) return json(res, 401, { error: 'invalid_client' });
      const verifier = form.get('code_verifier') ?? '';
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      if (!grant || grant.redirectUri !== form.get('redirect_uri') || grant.challenge !== challenge) return json(res, 400, { error: 'bad_verification_code' });
      const token = `gho_${randomBytes(16).toString('hex')}`;
      tokens.set(token, grant.login);
      return json(res, 200, { access_token: token, token_type: 'bearer', scope: 'read:user,user:email' });
    }
    const login = tokens.get((req.headers.authorization ?? '').replace(/^Bearer /, ''));
    const account = login ? accounts.get(login) : undefined;
    if (!account) return json(res, 401, { message: 'Bad credentials' });
    if (url.pathname === '/user') return json(res, 200, { id: account.id, login });
    if (url.pathname === '/user/emails') return json(res, 200, account.emails.map((e) => ({ ...e, visibility: null })));
    return json(res, 404, { message: 'Not Found' });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    clientId,
    clientSecret,
    setAccount: (login, account) => void accounts.set(login, account),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
