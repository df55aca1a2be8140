// The browser-facing hardening headers through a real node: the dashboard (shell, client routes,
// assets) under a strict Content Security Policy that no other site may frame; API answers that
// never sniff and never frame; the tracking script loadable by customers' pages; a share page
// framable only by the sites its link lists.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { as, type Person, person } from '../support/accounts.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

const DASHBOARD_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-src 'none'; frame-ancestors 'none'";
const API_CSP = "default-src 'none'; frame-ancestors 'none'";
const PERMISSIONS = 'accelerometer=(), camera=(), display-capture=(), geolocation=(), gyroscope=(), magnetometer=(), microphone=(), midi=(), payment=(), usb=()';

let t: TestNode;
let owner: Person;

const get = async (path: string, accept = 'text/html') => {
  const res = await fetch(`${t.url}${path}`, { headers: { Accept: accept } });
  await res.arrayBuffer();
  return res;
};

const headersOf = (res: Response, names: string[]) => Object.fromEntries(names.map((name) => [name, res.headers.get(name)]));
const BROWSER_HEADERS = ['content-security-policy', 'x-frame-options', 'referrer-policy', 'permissions-policy', 'x-content-type-options'];

const dashboardHeaders = { 'content-security-policy': DASHBOARD_CSP, 'x-frame-options': 'DENY', 'referrer-policy': 'same-origin', 'permissions-policy': PERMISSIONS, 'x-content-type-options': 'nosniff' };

async function shareLink(embedOrigins?: string[]) {
  const res = await as(t, owner, 'POST', `/api/sites/${t.site.id}/share`, embedOrigins ? { embed_origins: embedOrigins } : {});
  expect(res.status).toBe(201);
  return res.body as { share: { id: string }; token: string };
}

beforeAll(async () => {
  t = await startTestNode({ PLUMB_API_RATE_PER_SECOND: '100000', PLUMB_API_BURST: '100000' });
  owner = await person(t);
  await t.node.runtime.metadata().query("INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, 'owner')", [t.site.id, owner.id]);
}, 60_000);

afterAll(() => t.stop());

describe('the dashboard', () => {
  it('serves its shell at / under the strict policy, unframable', async () => {
    const res = await get('/');
    expect(res.status).toBe(200);
    expect(headersOf(res, BROWSER_HEADERS)).toEqual(dashboardHeaders);
  });

  it('serves a client-side route (a site dashboard) with the same headers', async () => {
    const res = await get(`/sites/${t.site.id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(headersOf(res, BROWSER_HEADERS)).toEqual(dashboardHeaders);
  });

  it('serves its built assets with the same headers', async () => {
    const html = await (await fetch(`${t.url}/`, { headers: { Accept: 'text/html' } })).text();
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)![1];
    const res = await get(script, '*/*');
    expect(res.status).toBe(200);
    expect(headersOf(res, BROWSER_HEADERS)).toEqual(dashboardHeaders);
    const icon = await get('/favicon.svg', 'image/*');
    expect(headersOf(icon, BROWSER_HEADERS)).toEqual(dashboardHeaders);
  });

  it('keeps the headers on a 304 revalidation', async () => {
    const first = await get('/');
    const again = await fetch(`${t.url}/`, { headers: { Accept: 'text/html', 'If-None-Match': first.headers.get('etag')! } });
    expect(again.status).toBe(304);
    expect(headersOf(again, ['content-security-policy', 'x-frame-options'])).toEqual({ 'content-security-policy': DASHBOARD_CSP, 'x-frame-options': 'DENY' });
  });
});

describe('API answers', () => {
  it('never sniff and never frame, success or error', async () => {
    const ok = await as(t, owner, 'GET', '/api/sites');
    expect(ok.status).toBe(200);
    expect(headersOf(ok as unknown as Response, ['content-security-policy', 'x-frame-options', 'x-content-type-options', 'referrer-policy'])).toEqual({
      'content-security-policy': API_CSP,
      'x-frame-options': 'DENY',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'same-origin',
    });
    const denied = await get('/api/sites', 'application/json');
    expect(denied.status).toBe(401);
    expect(headersOf(denied, ['content-security-policy', 'x-content-type-options'])).toEqual({ 'content-security-policy': API_CSP, 'x-content-type-options': 'nosniff' });
    const missing = await get('/api/no-such-route', 'application/json');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-security-policy')).toBe(API_CSP);
  });

  it("are on the tracker ingest's errors, and off its answer without a body, which has no content to protect", async () => {
    const send = (body: string) =>
      fetch(`${t.url}/ingest`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Origin: 'https://example.com', 'User-Agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0 Safari/537.36' },
        body,
      });
    const accepted = await send(JSON.stringify({ url: 'https://example.com/', referrer: '' }));
    expect(await accepted.text()).toBe('');
    expect(accepted.status).toBe(202);
    expect(headersOf(accepted, ['content-security-policy', 'x-content-type-options', 'x-frame-options', 'referrer-policy', 'access-control-allow-origin'])).toEqual({
      'content-security-policy': null,
      'x-content-type-options': null,
      'x-frame-options': null,
      'referrer-policy': null,
      'access-control-allow-origin': '*',
    });
    const refused = await send(JSON.stringify({ url: 5 }));
    await refused.arrayBuffer();
    expect(refused.status).toBe(400);
    expect(headersOf(refused, ['content-security-policy', 'x-content-type-options', 'x-frame-options', 'referrer-policy', 'access-control-allow-origin'])).toEqual({
      'content-security-policy': API_CSP,
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'same-origin',
      'access-control-allow-origin': '*',
    });
  });
});

describe('the tracking script', () => {
  it('stays loadable by pages of other origins', async () => {
    const res = await fetch(`${t.url}/plumb.js`, { headers: { Origin: 'https://example.com', 'Sec-Fetch-Site': 'cross-site', 'Sec-Fetch-Dest': 'script' } });
    await res.arrayBuffer();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(res.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });
});

describe('share pages', () => {
  it('may not be framed when the link lists no site', async () => {
    const { token } = await shareLink();
    const res = await get(`/share/${token}`);
    expect(res.status).toBe(200);
    expect(headersOf(res, BROWSER_HEADERS)).toEqual(dashboardHeaders);
  });

  it('may be framed by exactly the sites the link lists, and no longer once they are removed', async () => {
    const { share, token } = await shareLink(['https://blog.example.com', 'https://wiki.example.org:8443']);
    const res = await get(`/share/${token}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toBe(DASHBOARD_CSP.replace("frame-ancestors 'none'", 'frame-ancestors https://blog.example.com https://wiki.example.org:8443'));
    expect(res.headers.get('x-frame-options')).toBeNull();
    // The link's API reads stay unframable JSON.
    expect((await get(`/api/share/${token}`, 'application/json')).headers.get('content-security-policy')).toBe(API_CSP);
    expect((await as(t, owner, 'PATCH', `/api/sites/${t.site.id}/share/${share.id}`, { embed_origins: [] })).status).toBe(200);
    expect(headersOf(await get(`/share/${token}`), BROWSER_HEADERS)).toEqual(dashboardHeaders);
  });

  it('of a revoked or unknown link may not be framed', async () => {
    const { share, token } = await shareLink(['https://blog.example.com']);
    expect((await as(t, owner, 'DELETE', `/api/sites/${t.site.id}/share/${share.id}`)).status).toBe(204);
    expect((await get(`/share/${token}`)).headers.get('content-security-policy')).toBe(DASHBOARD_CSP);
    expect((await get('/share/not-a-token')).headers.get('content-security-policy')).toBe(DASHBOARD_CSP);
  });

  it('other dashboard pages stay unframable whatever a link allows', async () => {
    await shareLink(['https://blog.example.com']);
    expect((await get(`/sites/${t.site.id}/settings`)).headers.get('content-security-policy')).toBe(DASHBOARD_CSP);
  });
});
