// Signed-in people for tests: an account created through the product's own functions, and the
// Cookie header of a fresh session for it.
import type { InstanceRole } from '../../lib/auth/roles.ts';
import type { UserPrincipal } from '../../lib/auth/sessions.ts';
import { createUser } from '../../lib/users/users.ts';
import type { TestNode } from './node.ts';

export interface Person extends UserPrincipal {
  password: string;
  /** `plumb_session=…`, ready for a Cookie header. */
  cookie: string;
}

let counter = 0;

export async function person(t: TestNode, role: InstanceRole = 'user', email?: string): Promise<Person> {
  const password = 'a long enough password';
  const user = await createUser(t.node.runtime.metadata(), { email: email ?? `person${++counter}-${Date.now()}@example.com`, password, role });
  const session = await t.node.runtime.sessions.start(user.id, { remember: false });
  return { ...user, password, cookie: session.setCookies.map((c) => c.split(';')[0]).join('; ') };
}

/** The Cookie header a response's Set-Cookie values amount to (cleared cookies left out). */
export const cookiesOf = (res: { headers: Headers }) =>
  res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .filter((c) => !c.endsWith('='))
    .join('; ');

async function send(t: TestNode, credentials: Record<string, string>, method: string, path: string, body?: unknown) {
  const headers: Record<string, string> = { ...credentials };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(`${t.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  const json = text && (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : {};
  return { status: res.status, body: json as Record<string, unknown> & { message?: string; code?: string }, headers: res.headers };
}

/** fetch() with a JSON body and, when given, a person's session cookie; parses JSON answers. */
export function as(t: TestNode, who: Person | undefined, method: string, path: string, body?: unknown) {
  return send(t, who ? { Cookie: who.cookie } : {}, method, path, body);
}

/** The same with an API-client token instead of a cookie; answers `{status, body}`. */
export async function withToken(t: TestNode, token: string, method: string, path: string, body?: unknown) {
  const res = await send(t, { Authorization: `Bearer ${token}` }, method, path, body);
  return { status: res.status, body: res.body };
}

/**
 * Brings an existing account into a team the way the product does: a team admin invites the
 * email, then the person accepts while signed in. Answers the acceptance.
 */
export async function joinTeam(t: TestNode, inviter: Person, teamId: string, who: Person, role: string) {
  const invited = await as(t, inviter, 'POST', `/api/user/teams/${teamId}/members`, { email: who.email, role });
  if (invited.status !== 201) return invited;
  return as(t, who, 'POST', `/api/user/invitations/${(invited.body.invitation as { id: string }).id}/accept`, {});
}
