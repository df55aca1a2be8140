// Event analytics credit the visit, through the real ingest pipeline: people who came from Google
// and signed up on their second page (whose referrer is the site's own first page, or another
// site) are Google's on the audience panels and under the `referrer` filter, as on the dashboard;
// device and country are the visit's too, and `path` stays the page the event was sent on.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createSite, type Site } from '../../lib/sites/sites.ts';
import { as, person } from '../support/accounts.ts';
import { waitFor } from '../support/instance.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

const CHROME_WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const FIREFOX_LINUX = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
const SAFARI_IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';
const EVENT = 'Signup';

let t: TestNode;
let site: Site;
let token: string;
const range = () => ({ from: new Date(Date.now() - 3_600_000).toISOString(), to: new Date(Date.now() + 3_600_000).toISOString() });

/** A tracker request from one browser (its IP and User-Agent make it one visitor). */
function track(path: '/ingest' | '/ingest/event', body: Record<string, unknown>, browser: { ip: string; ua: string }) {
  return fetch(`${t.url}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'text/plain', Origin: `https://${site.domain}`, 'User-Agent': browser.ua, 'X-Forwarded-For': browser.ip },
    body: JSON.stringify(body),
  });
}
function server(path: 'pageview' | 'event', body: Record<string, unknown>) {
  return fetch(`${t.url}/api/ingest/server/${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
    body: JSON.stringify({ timestamp: new Date().toISOString(), ...body }),
  });
}
/** GET /api/sites/:id/{path} over the last and next hour; /events paths ask about the signups. */
async function get(path: string, query: Record<string, string> = {}) {
  const event: Record<string, string> = path.startsWith('events/') ? { event_name: EVENT } : {};
  const res = await fetch(`${t.url}/api/sites/${site.id}/${path}?${new URLSearchParams({ ...range(), ...event, ...query })}`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}
const eventsOf = async (query: Record<string, string>) => ((await get('events/timeseries', query)).rows as { events: number }[]).reduce((sum, row) => sum + row.events, 0);

beforeAll(async () => {
  t = await startTestNode({ PLUMB_TRUSTED_PROXY_HOPS: '1' });
  site = await createSite(t.node.runtime.metadata(), { teamId: t.team.id, domain: 'visits.example' });
  token = await t.token(['ingest:write', 'stats:read'], [{ siteId: site.id, role: 'editor' }]);
  const home = `https://${site.domain}/`;
  const pricing = `https://${site.domain}/pricing`;
  const sent = [];

  // From Google to the home page, then to /pricing from the home page, and signs up there.
  const first = { ip: '8.8.8.8', ua: CHROME_WINDOWS };
  sent.push(await track('/ingest', { url: home, referrer: 'https://www.google.com/', width: 1440 }, first));
  sent.push(await track('/ingest', { url: pricing, referrer: home, width: 1440 }, first));
  sent.push(await track('/ingest/event', { name: EVENT, url: pricing, referrer: home }, first));

  // From Google to the home page; /pricing then says its referrer is Hacker News (a link shared there).
  const second = { ip: '8.8.8.8', ua: FIREFOX_LINUX };
  sent.push(await track('/ingest', { url: home, referrer: 'https://www.google.com/', width: 1440 }, second));
  sent.push(await track('/ingest', { url: pricing, referrer: 'https://news.ycombinator.com/', width: 1440 }, second));
  sent.push(await track('/ingest/event', { name: EVENT, url: pricing, referrer: 'https://news.ycombinator.com/' }, second));

  // A server's own session: the pageview from Google on a Dutch desktop, the signup from an
  // American phone with Hacker News as its referrer.
  sent.push(await server('pageview', { url: home, referrer: 'https://www.google.com/', visitor_ip: '193.0.6.139', user_agent: FIREFOX_LINUX, session_id: 'checkout-1' }));
  sent.push(
    await server('event', { name: EVENT, url: pricing, referrer: 'https://news.ycombinator.com/', visitor_ip: '8.8.8.8', user_agent: SAFARI_IPHONE, session_id: 'checkout-1', properties: {} }),
  );
  expect(sent.map((res) => res.status)).toEqual(sent.map(() => 202));

  // The writer stores a batch's tables one after the other: wait for the events and their visits.
  const events = await t.rows<{ session_id: string }>('events', 3, 'site_id = {site:UUID} AND name = {name:String}', { site: site.id, name: EVENT });
  const sessions = events.map((e) => BigInt(e.session_id));
  await waitFor(
    async () => (await t.rowsNow('visits', 'session_id IN {sessions:Array(UInt64)} AND sign = 1', { sessions })).length >= 3,
    10_000,
    () => 'the visits of the three signups were never stored',
  );
}, 60_000);

afterAll(() => t?.stop());

describe('GET /api/sites/:id/events/audience', () => {
  it('names the visits’ source as the dashboard does, and gives their device and country', async () => {
    expect(await get('events/audience')).toEqual({
      path: [{ value: '/pricing', unique_sessions: 3 }],
      referrer: [{ value: 'Google', unique_sessions: 3 }],
      device: [{ value: 'desktop', unique_sessions: 3 }],
      country: [
        { value: 'US', unique_sessions: 2 },
        { value: 'NL', unique_sessions: 1 },
      ],
    });
  });

  it('agrees with the dashboard’s Sources panel for the same visits', async () => {
    const sources = await get('stats/breakdown', { dimension: 'sources' });
    expect((sources.rows as { value: string; visits: number }[]).map((row) => [row.value, row.visits])).toEqual([['Google', 3]]);
  });

  it('reads the same through a share link', async () => {
    const created = await as(t, await person(t, 'owner'), 'POST', `/api/sites/${site.id}/share`, {});
    expect(created.status).toBe(201);
    const res = await fetch(`${t.url}/api/share/${created.body.token}/events/audience?${new URLSearchParams({ ...range(), event_name: EVENT })}`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { referrer: unknown }).referrer).toEqual([{ value: 'Google', unique_sessions: 3 }]);
  });
});

describe('the dimension filter of /events', () => {
  it('referrer=Google selects those sessions’ events; the events’ own referrers select nothing', async () => {
    expect(await eventsOf({ dimension_key: 'referrer', dimension_value: 'Google' })).toBe(3);
    for (const value of ['', 'Hacker News', 'news.ycombinator.com', 'google.com', 'www.google.com']) {
      expect({ value, events: await eventsOf({ dimension_key: 'referrer', dimension_value: value }) }).toEqual({ value, events: 0 });
    }
    expect((await get('events/audience', { dimension_key: 'referrer', dimension_value: 'Google' })).referrer).toEqual([{ value: 'Google', unique_sessions: 3 }]);
  });

  it('device and country follow the visit; path is the page the event was sent on', async () => {
    const cases: [string, string, number][] = [
      ['device', 'desktop', 3],
      ['device', 'mobile', 0],
      ['country', 'NL', 1],
      ['country', 'US', 2],
      ['path', '/pricing', 3],
      ['path', '/', 0],
    ];
    for (const [key, value, events] of cases) {
      expect({ key, value, events: await eventsOf({ dimension_key: key, dimension_value: value }) }).toEqual({ key, value, events });
    }
  });
});
