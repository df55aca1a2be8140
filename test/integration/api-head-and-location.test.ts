// A running `plumb serve` used through its API as a client does: every create answers 201 with
// the Location of what it created, every GET route answers HEAD alike without a body, and the
// instance's log carries no warning about either.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Instance, request, startInstance } from '../support/instance.ts';

let instance: Instance;
let cookie: string;
const created: Record<string, string> = {};

// Never followed: a sign-in callback's 303 to the login page is the route's own answer.
const call = (method: string, path: string, body?: unknown, who = cookie) =>
  request(`${instance.url}${path}`, {
    method,
    redirect: 'manual',
    headers: { Cookie: who, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

const cookieOf = (res: { headers: Headers }) =>
  res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');

beforeAll(async () => {
  // Webhooks may target loopback here: no name resolves on the test machine.
  instance = await startInstance({ env: { PLUMB_WEBHOOK_ALLOW_DEVELOPMENT_TARGETS: 'true', PLUMB_API_RATE_PER_SECOND: '100000', PLUMB_API_BURST: '100000' }, timeoutMs: 60_000 });
}, 90_000);

afterAll(() => instance.destroy());

describe('a create answers 201 with the Location of what it created', () => {
  it('POST /api/initial-user: the account, read at /api/user/me', async () => {
    const res = await request(`${instance.url}/api/initial-user`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: 'owner@example.com', password: 'a long enough password' }),
    });
    expect([res.status, res.headers.get('location')]).toEqual([201, '/api/user/me']);
    cookie = cookieOf(res);
    expect((await call('GET', '/api/user/me')).status).toBe(200);
  });

  it('POST /api/user/teams and /api/sites', async () => {
    const team = await call('POST', '/api/user/teams', { name: 'Shop' });
    created.team = team.body.id as string;
    expect([team.status, team.headers.get('location')]).toEqual([201, `/api/user/teams/${created.team}`]);
    const site = await call('POST', '/api/sites', { domain: 'shop.example.com', team_id: created.team });
    created.site = (site.body.site as { id: string }).id;
    expect([site.status, site.headers.get('location')]).toEqual([201, `/api/sites/${created.site}`]);
    expect((await call('GET', site.headers.get('location')!)).body.site).toMatchObject({ id: created.site, domain: 'shop.example.com' });
  });

  it('POST goals, funnels, share links and webhooks of a site', async () => {
    const base = `/api/sites/${created.site}`;
    const goal = await call('POST', `${base}/goals`, { name: 'Signup', type: 'event', event_name: 'signup' });
    created.goal = (goal.body.goal as { id: string }).id;
    expect([goal.status, goal.headers.get('location')]).toEqual([201, `${base}/goals/${created.goal}`]);
    expect((await call('GET', goal.headers.get('location')!)).body.goal).toMatchObject({ id: created.goal, name: 'Signup' });

    const steps = [{ type: 'path', path_pattern: '/' }, { type: 'event', event_name: 'signup' }];
    const funnel = await call('POST', `${base}/funnels`, { name: 'Onboarding', steps });
    created.funnel = (funnel.body.funnel as { id: string }).id;
    expect([funnel.status, funnel.headers.get('location')]).toEqual([201, `${base}/funnels/${created.funnel}`]);
    expect((await call('GET', funnel.headers.get('location')!)).status).toBe(200);

    const share = await call('POST', `${base}/share`, { name: 'Board' });
    created.share = (share.body.share as { id: string }).id;
    created.shareToken = share.body.token as string;
    expect([share.status, share.headers.get('location')]).toEqual([201, `${base}/share/${created.share}`]);

    const webhook = await call('POST', `${base}/webhooks`, { name: 'CRM', url: 'http://127.0.0.1:9/hook', events: ['goal.created'] });
    created.webhook = (webhook.body.webhook as { id: string }).id;
    expect([webhook.status, webhook.headers.get('location')]).toEqual([201, `${base}/webhooks/${created.webhook}`]);
    expect((await call('GET', webhook.headers.get('location')!)).status).toBe(200);
  });

  it('POST /api/admin/users and /api/user/api-clients', async () => {
    const user = await call('POST', '/api/admin/users', { email: 'ana@example.com', password: 'a long enough password', role: 'user' });
    created.user = (user.body.user as { id: string }).id;
    expect([user.status, user.headers.get('location')]).toEqual([201, `/api/admin/users/${created.user}`]);
    const client = await call('POST', '/api/user/api-clients', { name: 'CI', scopes: ['stats:read'], sites: [] });
    const clientId = (client.body.api_client as { id: string }).id;
    expect([client.status, client.headers.get('location')]).toEqual([201, `/api/user/api-clients/${clientId}`]);
  });

  it('POST a team member: the invitation; accepting it, the new account', async () => {
    const invited = await call('POST', `/api/user/teams/${created.team}/members`, { email: 'bo@example.com', role: 'member' });
    const invitation = (invited.body.invitation as { id: string }).id;
    expect([invited.status, invited.headers.get('location')]).toEqual([201, `/api/user/teams/${created.team}/invitations/${invitation}`]);
    const accepted = await request(`${instance.url}/api/auth/accept-invite`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ token: invited.body.invite_token, password: 'another long password' }),
    });
    expect([accepted.status, accepted.headers.get('location')]).toEqual([201, '/api/user/me']);
  });
});

describe('HEAD on every GET route of the API', () => {
  /** A value for each path parameter, from what the creates above made. */
  const fill = (template: string) =>
    template.replace(/\{(\w+)\}/g, (_all, name: string) => {
      const values: Record<string, string> = {
        goalId: created.goal,
        funnelId: created.funnel,
        webhookId: created.webhook,
        token: created.shareToken,
        domain: 'example.com',
        userId: created.user,
      };
      if (name === 'id') return template.startsWith('/api/user/teams') ? created.team : created.site;
      return values[name] ?? name;
    });
  /** A GET's answer without its body when that is an endless event stream. */
  const headersOfGet = async (url: string) => {
    const abort = new AbortController();
    const res = await fetch(`${instance.url}${url}`, { headers: { Cookie: cookie }, signal: abort.signal, redirect: 'manual' });
    if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) abort.abort();
    else await res.text();
    return res;
  };
  /**
   * The headers an answer has, but the connection's (fetch's HEAD asks to close it) and the
   * chunked framing of an event stream, which only a body being sent has.
   */
  const headerNames = (res: { headers: Headers }) =>
    [...res.headers.keys()].filter((name) => !['date', 'connection', 'keep-alive', 'transfer-encoding'].includes(name)).sort();

  it('answers with the status and headers GET answers, and no body', async () => {
    const doc = (await call('GET', '/api/docs/v1/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const routes = Object.entries(doc.paths)
      .filter(([path, ops]) => ops.get && path.startsWith('/api/'))
      .map(([path]) => fill(path));
    expect(routes.length).toBeGreaterThan(40);
    let ok = 0;
    for (const path of routes) {
      const url = `${path}?event_name=signup&property_key=plan&dimension=pages`;
      // HEAD first: an event stream (realtime) must answer it at once rather than stream.
      const head = await call('HEAD', url);
      const get = await headersOfGet(url);
      expect({ path, status: head.status, type: head.headers.get('content-type'), names: headerNames(head), body: head.text }).toEqual({
        path,
        status: get.status,
        type: get.headers.get('content-type'),
        names: headerNames(get),
        body: '',
      });
      if (get.status === 200) ok++;
    }
    // Most routes answer their data; the rest refuse the shared query alike for both methods.
    expect(ok).toBeGreaterThan(routes.length * 0.8);
  }, 120_000);
});

describe("the instance's log", () => {
  it('has no warning of a missing Location, or any other warning of the gateway', () => {
    const output = instance.output();
    expect(output).not.toContain('$location');
    const warnings = output
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: number; msg: string })
      .filter((line) => line.level >= 40 && !line.msg.startsWith('PLUMB_WEBHOOK_ALLOW_DEVELOPMENT_TARGETS'));
    expect(warnings).toEqual([]);
  });
});
