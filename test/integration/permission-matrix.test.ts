// Who may call what, for every route the node serves × every role, from one table. A route the
// node serves without an entry here fails the test, so a new route cannot ship unexamined.
//
// "allowed" means the request passes authentication and authorisation: any status but 401, 403
// and 404 (the body may still be refused with 400/409). "denied" means 401, 403 or 404.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestNode, type TestNode } from '../support/node.ts';
import { buildFixture, type Fixture, ROLES, type Role } from '../support/permission-fixture.ts';

type Allow = readonly Role[] | 'everyone';

interface Entry {
  allow: Allow;
  /** Request body; the default is {} for POST/PUT/PATCH. */
  body?: (fx: Fixture) => unknown;
  /** Path parameters; `:id` defaults to the fixture site. */
  params?: (fx: Fixture) => Record<string, string>;
  /** Acts destructively on its target: each role gets a fresh site to act on. */
  freshSite?: boolean;
}

const SIGNED_IN: Role[] = ['instance-owner', 'instance-admin', 'instance-user', 'site-owner', 'site-admin', 'site-editor', 'site-viewer'];
const SCOPED_CLIENT: Role[] = ['client-scoped'];

const serverPageview = (fx: Fixture) => ({
  url: `https://${fx.t.site.domain}/matrix`,
  timestamp: new Date().toISOString(),
  visitor_ip: '192.0.2.1',
  user_agent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0',
});

/** The table. Keys are "METHOD /path" exactly as the OpenAPI document lists them. */
const MATRIX: Record<string, Entry> = {
  'GET /healthz': { allow: 'everyone' },
  'GET /readyz': { allow: 'everyone' },
  'GET /plumb.js': { allow: 'everyone' },
  'GET /plumb-vitals.js': { allow: 'everyone' },
  'GET /api/docs/v1/openapi.json': { allow: 'everyone' },
  'GET /api/status': { allow: 'everyone' },
  'POST /ingest': { allow: 'everyone', body: () => ({ url: 'https://unknown.example/' }) },
  'POST /ingest/event': { allow: 'everyone', body: () => ({ url: 'https://unknown.example/', name: 'x' }) },
  'POST /ingest/web-vitals': { allow: 'everyone', body: () => ({ url: 'https://unknown.example/', metric: 'LCP', value: 1 }) },
  'POST /api/initial-user': { allow: 'everyone', body: () => ({ email: 'late@example.com', password: 'a long enough password' }) },
  'POST /api/login': { allow: 'everyone', body: () => ({ email: 'nobody@example.com', password: 'x' }) },
  'POST /api/logout': { allow: 'everyone' },
  'GET /api/auth/session': { allow: SIGNED_IN },
  'POST /api/auth/session/extend': { allow: SIGNED_IN },
  'POST /api/ingest/server/pageview': { allow: SCOPED_CLIENT, body: serverPageview },
  'POST /api/ingest/server/event': { allow: SCOPED_CLIENT, body: (fx) => ({ ...serverPageview(fx), name: 'Matrix' }) },
  'POST /api/ingest/server/batch': { allow: SCOPED_CLIENT, body: (fx) => ({ items: [{ type: 'pageview', ...serverPageview(fx) }] }) },
  'POST /api/sites/{id}/ingest/ai-fetch': {
    allow: SCOPED_CLIENT,
    body: () => ({ path: '/', status_code: 200, user_agent: 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)' }),
  },
};

/** Statuses that are not about the caller's rights: the gateway's own refusals of an anonymous tracker post etc. */
const DENIED = new Set([401, 403, 404]);

let t: TestNode;
let fx: Fixture;
let documented: string[];

beforeAll(async () => {
  t = await startTestNode({ PLUMB_LOGIN_RATE_PER_MINUTE: '100000', PLUMB_LOGIN_BURST: '100000', PLUMB_API_RATE_PER_SECOND: '100000', PLUMB_API_BURST: '100000', PLUMB_INGEST_RATE_PER_SECOND: '100000', PLUMB_INGEST_BURST: '100000' });
  fx = await buildFixture(t);
  const doc = (await (await fetch(`${t.url}/api/docs/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
  documented = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`));
}, 60_000);

afterAll(() => t.stop());

describe('the permission matrix', () => {
  it('has an entry for every route the node serves, and no entry for a route it does not serve', () => {
    expect(documented.filter((route) => !(route in MATRIX)).sort()).toEqual([]);
    expect(Object.keys(MATRIX).filter((route) => !documented.includes(route)).sort()).toEqual([]);
  });

  it.each(Object.entries(MATRIX))('%s', async (route, entry) => {
    const [method, template] = route.split(' ');
    const outcomes: Record<string, string> = {};
    const expected: Record<string, string> = {};
    for (const role of ROLES) {
      // The cookie-less public routes answer everyone the same way; tokens and cookies change nothing.
      let headers = fx.headers(role);
      let params = { id: fx.siteId, ...entry.params?.(fx) };
      if (entry.freshSite) {
        const fresh = await fx.freshSite(role);
        headers = fresh.headers;
        params = { ...params, id: fresh.siteId };
      }
      const path = template.replace(/\{(\w+)\}/g, (_, name: string) => params[name as keyof typeof params] ?? name);
      const sendsBody = ['POST', 'PUT', 'PATCH'].includes(method);
      const res = await fetch(`${t.url}${path}`, {
        method,
        headers: { ...headers, ...(sendsBody ? { 'Content-Type': 'application/json' } : {}) },
        body: sendsBody ? JSON.stringify(entry.body?.(fx) ?? {}) : undefined,
      });
      await res.arrayBuffer();
      const allowed = entry.allow === 'everyone' || entry.allow.includes(role);
      expected[role] = allowed ? 'allowed' : 'denied';
      // Public routes may refuse a request for reasons of their own (unknown origin, bad login).
      outcomes[role] = entry.allow === 'everyone' ? 'allowed' : DENIED.has(res.status) ? 'denied' : 'allowed';
      if (entry.allow === 'everyone') expect({ role, unauthorised: res.status === 401 && route !== 'POST /api/login' }).toEqual({ role, unauthorised: false });
    }
    expect(outcomes).toEqual(expected);
  });
});
