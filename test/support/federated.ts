// Steps of a sign-in through another provider as a browser takes them, over HTTP: start at Plumb
// (which sets the flow cookie and names the provider's URL), sign in at the provider
// (signInAt), and return to Plumb's callback with or without that cookie.
import { cookiesOf } from './accounts.ts';
import type { TestNode } from './node.ts';

export interface Started {
  authorizationUrl: string;
  /** The Cookie header of the flow cookie Plumb set. */
  flowCookie: string;
}

export async function startAt(t: TestNode, path: string, body: unknown, cookie?: string): Promise<Started> {
  const res = await fetch(`${t.url}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(cookie ? { Cookie: cookie } : {}) },
    body: JSON.stringify(body),
  });
  const answer = (await res.json()) as { authorization_url?: string; message?: string };
  if (res.status !== 200 || !answer.authorization_url) throw new Error(`${path} answered ${res.status}: ${answer.message}`);
  return { authorizationUrl: answer.authorization_url, flowCookie: cookiesOf(res) };
}

export interface Returned {
  status: number;
  /** Location relative to Plumb's public URL (`/`, `/login?signin_error=…`). */
  location: string;
  /** The Cookie header of the cookies Plumb set (the session's on success). */
  cookie: string;
  setCookies: string[];
}

/** Plumb's answer to the browser coming back to `callbackUrl` with these cookies. */
export async function returnTo(t: TestNode, callbackUrl: string, cookie: string): Promise<Returned> {
  const res = await fetch(callbackUrl, { redirect: 'manual', headers: cookie ? { Cookie: cookie } : {} });
  const location = res.headers.get('location') ?? '';
  return { status: res.status, location: location.startsWith(t.url) ? location.slice(t.url.length) : location, cookie: cookiesOf(res), setCookies: res.headers.getSetCookie() };
}

/** Rewrites one query parameter of a URL. */
export function withParam(url: string, name: string, value: string): string {
  const u = new URL(url);
  u.searchParams.set(name, value);
  return u.href;
}
