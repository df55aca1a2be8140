// An instance that looks lived in, for browser tests that judge screens: an owner with an
// authenticator app, a second team member and a pending invitation, two sites, 60 days of visits
// from several sources, countries and devices (sent through server ingest with their own
// timestamps), custom events with properties, goals, a funnel, share links and API clients.
import { expect } from '@jest/globals';
import { type Instance, request } from './instance.ts';
import { seededRandom } from './seeded-random.ts';
import { totpAt } from './totp.ts';

export const OWNER = { email: 'owner@example.com', password: 'correct horse battery' };
export const SHARE_PASSWORD = 'open sesame';
const DAY = 86_400_000;

export interface SeededInstance {
  /** Cookies of the owner's session (after turning on the authenticator app), for a browser context. */
  cookies: { name: string; value: string; url: string }[];
  teamId: string;
  siteId: string;
  shareUrl: string;
  protectedShareUrl: string;
  inviteUrl: string;
  /** The owner's authenticator secret, to sign in again (e.g. on a restored copy). */
  totpSecret: string;
  /** A token with ingest:write and stats:read, editor on both sites. */
  importerToken: string;
}

const DEVICES = [
  { weight: 5, width: 1440, ua: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36' },
  { weight: 3, width: 1512, ua: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15' },
  { weight: 1, width: 1920, ua: 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0' },
  { weight: 4, width: 390, ua: 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1' },
  { weight: 3, width: 412, ua: 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36' },
  { weight: 1, width: 820, ua: 'Mozilla/5.0 (iPad; CPU OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.6 Mobile/15E148 Safari/604.1' },
];
/** Addresses registered in different countries (US, NL, GB, DE, BR, JP, FR). */
const ADDRESSES = [
  { weight: 6, ip: '8.8.8.8' },
  { weight: 3, ip: '193.0.6.139' },
  { weight: 3, ip: '81.2.69.142' },
  { weight: 4, ip: '85.214.132.117' },
  { weight: 1, ip: '200.160.2.3' },
  { weight: 1, ip: '133.11.0.1' },
  { weight: 2, ip: '62.210.16.6' },
];
const SOURCES = [
  { weight: 6, referrer: undefined, query: '' },
  { weight: 7, referrer: 'https://www.google.com/', query: '' },
  { weight: 2, referrer: 'https://www.bing.com/', query: '' },
  { weight: 3, referrer: 'https://news.ycombinator.com/item?id=42424242', query: '' },
  { weight: 2, referrer: 'https://t.co/xYz123', query: '' },
  { weight: 2, referrer: 'https://github.com/plumb/plumb', query: '' },
  { weight: 2, referrer: undefined, query: '?utm_source=newsletter&utm_medium=email&utm_campaign=autumn-launch' },
];
const PAGES = [
  { weight: 8, path: '/' },
  { weight: 5, path: '/pricing' },
  { weight: 4, path: '/docs' },
  { weight: 3, path: '/docs/getting-started/installing-on-a-small-server' },
  { weight: 2, path: '/blog/why-we-stopped-using-cookies-for-analytics-and-what-we-learned' },
  { weight: 2, path: '/about' },
  { weight: 1, path: '/changelog' },
];

type Weighted = { weight: number };
const picker =
  (random: () => number) =>
  <T extends Weighted>(options: readonly T[]): T => {
    let left = random() * options.reduce((sum, o) => sum + o.weight, 0);
    for (const option of options) {
      left -= option.weight;
      if (left < 0) return option;
    }
    return options[options.length - 1];
  };

type Site = { id: string; domain: string };
type Item = { type: 'pageview' | 'event'; timestamp: string; [field: string]: unknown };

/**
 * Visits of `visitors` people over the last `days` days (more in the recent half, so the
 * comparison with the previous period shows growth), a few of them in the last minutes.
 */
function visits(domain: string, visitors: number, days: number, seed: number): Item[] {
  const random = seededRandom(seed);
  const pick = picker(random);
  const now = Date.now();
  const items: Item[] = [];
  for (let v = 0; v < visitors; v++) {
    const recent = v < 6;
    // Squaring leans the days towards today.
    const start = recent ? now - (1 + v) * 40_000 : now - Math.floor(random() ** 1.6 * days * DAY) - 300_000;
    const device = pick(DEVICES);
    const source = pick(SOURCES);
    const base = { visitor_ip: pick(ADDRESSES).ip, user_agent: device.ua, width: device.width, session_id: `visitor-${seed}-${v}` };
    const pages = recent ? 1 : 1 + Math.floor(random() ** 2 * 5);
    let at = start;
    for (let p = 0; p < pages; p++) {
      const path = p === 0 && random() < 0.5 ? '/' : pick(PAGES).path;
      const first = p === 0;
      const url = `https://${domain}${path}${first ? source.query : ''}`;
      items.push({ type: 'pageview', ...base, url, timestamp: new Date(at).toISOString(), ...(first && source.referrer ? { referrer: source.referrer } : {}) });
      if (path === '/pricing' && random() < 0.45) {
        const plan = pick([
          { weight: 3, name: 'free' },
          { weight: 2, name: 'pro' },
          { weight: 1, name: 'team' },
        ]).name;
        items.push({ type: 'event', ...base, url, name: 'Signup', properties: { plan, billing: random() < 0.5 ? 'monthly' : 'yearly' }, timestamp: new Date(at + 20_000).toISOString() });
      }
      if (path.startsWith('/docs') && random() < 0.3) {
        const file = random() < 0.6 ? 'plumb-linux-x64.tar.gz' : 'plumb-darwin-arm64.tar.gz';
        items.push({ type: 'event', ...base, url, name: 'Download', properties: { file }, timestamp: new Date(at + 15_000).toISOString() });
      }
      at += 20_000 + Math.floor(random() * 150_000);
      if (at > now) break;
    }
  }
  return items.sort((a, b) => a.timestamp.localeCompare(b.timestamp));
}

export async function seedInstance(instance: Instance): Promise<SeededInstance> {
  let cookie = '';
  const call = async <T = Record<string, never>>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> => {
    const res = await request(`${instance.url}${path}`, {
      method,
      headers: { ...(cookie ? { Cookie: cookie } : {}), ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (res.status >= 400) throw new Error(`${method} ${path} answered ${res.status}: ${res.text}`);
    const set = res.headers.getSetCookie().map((c) => c.split(';')[0]);
    if (set.length > 0) cookie = set.filter((c) => !c.endsWith('=')).join('; ');
    return res.body as T;
  };

  await call('POST', '/api/initial-user', OWNER);
  const teamId = (await call<{ items: { id: string }[] }>('GET', '/api/user/teams')).items[0].id;
  await call('PATCH', `/api/user/teams/${teamId}`, { name: 'Northwind Analytics' });
  const site = (await call<{ site: Site }>('POST', '/api/sites', { domain: 'shop.example.com', team_id: teamId, timezone: 'Europe/Berlin' })).site;
  const blog = (await call<{ site: Site }>('POST', '/api/sites', { domain: 'blog.example.org', team_id: teamId, timezone: 'America/New_York' })).site;

  const importer = await call<{ token: string }>('POST', '/api/user/api-clients', {
    name: 'Server importer',
    scopes: ['ingest:write', 'stats:read'],
    sites: [
      { site_id: site.id, role: 'editor' },
      { site_id: blog.id, role: 'editor' },
    ],
  });
  await call('POST', '/api/user/api-clients', { name: 'Weekly report', scopes: ['stats:read'], sites: [{ site_id: site.id, role: 'viewer' }], expires_at: '2099-01-01T00:00:00Z' });

  const sent = new Map<string, number>();
  for (const [s, items] of [
    [site, visits(site.domain, 420, 60, 1)],
    [blog, visits(blog.domain, 60, 30, 2)],
  ] as const) {
    let pageviews = 0;
    for (let i = 0; i < items.length; i += 1000) {
      const answer = await call<{ rejected: number; results: { status: string }[] }>('POST', '/api/ingest/server/batch', { items: items.slice(i, i + 1000) }, { Authorization: `Bearer ${importer.token}` });
      pageviews += answer.results.filter((r, k) => r.status === 'accepted' && items[i + k].type === 'pageview').length;
      expect(answer.rejected).toBe(0);
    }
    sent.set(s.id, pageviews);
  }

  await call('POST', `/api/sites/${site.id}/goals`, { name: 'Signed up', type: 'event', event_name: 'Signup' });
  await call('POST', `/api/sites/${site.id}/goals`, { name: 'Pro signup', type: 'event', event_name: 'Signup', property_conditions: [{ key: 'plan', value: 'pro' }] });
  await call('POST', `/api/sites/${site.id}/goals`, { name: 'Read the docs', type: 'path', path_pattern: '/docs/*' });
  await call('POST', `/api/sites/${site.id}/funnels`, {
    name: 'Home to signup',
    steps: [
      { type: 'path', path_pattern: '/' },
      { type: 'path', path_pattern: '/pricing' },
      { type: 'event', event_name: 'Signup' },
    ],
  });
  await call('POST', `/api/sites/${site.id}/funnels`, {
    name: 'Docs to download',
    steps: [
      { type: 'path', path_pattern: '/docs' },
      { type: 'event', event_name: 'Download' },
    ],
  });
  const share = await call<{ token: string }>('POST', `/api/sites/${site.id}/share`, { name: 'Investors' });
  const locked = await call<{ token: string }>('POST', `/api/sites/${site.id}/share`, { name: 'Agency', password: SHARE_PASSWORD });

  const analyst = (await call<{ user: { id: string; email: string } }>('POST', '/api/admin/users', { email: 'analyst@example.com', password: 'an analyst password', role: 'user' })).user;
  await call('POST', `/api/user/teams/${teamId}/members`, { email: analyst.email, role: 'member' });
  await call('PUT', `/api/sites/${site.id}/members/${analyst.id}`, { role: 'viewer' });
  const invitation = await call<{ invite_token: string }>('POST', `/api/user/teams/${teamId}/members`, { email: 'newcomer@example.com', role: 'admin' });

  const { secret } = await call<{ secret: string }>('POST', '/api/user/security/totp/setup/start', {});
  await call('POST', '/api/user/security/totp/setup/verify', { code: totpAt(secret, Date.now() / 1000) });

  // The writer flushes in the background: wait until every accepted pageview is counted.
  const range = { from: new Date(Date.now() - 70 * DAY).toISOString(), to: new Date(Date.now() + DAY).toISOString() };
  for (const [id, pageviews] of sent) {
    const deadline = Date.now() + 30_000;
    let counted = -1;
    while (counted !== pageviews && Date.now() < deadline) {
      counted = (await call<{ kpis: { pageviews: number } }>('GET', `/api/sites/${id}/stats/kpis?${new URLSearchParams(range)}`)).kpis.pageviews;
      if (counted !== pageviews) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(counted).toBe(pageviews);
  }

  return {
    cookies: cookie.split('; ').map((pair) => {
      const at = pair.indexOf('=');
      return { name: pair.slice(0, at), value: pair.slice(at + 1), url: instance.url };
    }),
    teamId,
    siteId: site.id,
    shareUrl: `${instance.url}/share/${share.token}`,
    protectedShareUrl: `${instance.url}/share/${locked.token}`,
    inviteUrl: `${instance.url}/invite/${invitation.invite_token}`,
    totpSecret: secret,
    importerToken: importer.token,
  };
}
