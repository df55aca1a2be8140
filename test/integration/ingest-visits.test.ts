// The visits the ingest pipeline writes as pageviews and events arrive (a new state and the
// cancellation of the one it replaces, per hit) answer every stats question exactly as the visits
// rebuilt afterwards from the stored pageviews and events do, while the states are still unmerged.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { rebuildVisits } from '../../lib/analytics/visits.ts';
import { request, waitFor } from '../support/instance.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

const UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
const DAY = '2026-01-20';
const PATHS = ['/', '/a', '/b', '/blog/one', '/blog/two', '/pricing'];

let t: TestNode;
let token: string;

let seed = 7;
const rand = () => {
  seed = (seed * 16807) % 2147483647;
  return seed / 2147483647;
};
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];

interface Item {
  type: 'pageview' | 'event';
  url: string;
  timestamp: string;
  visitor_ip: string;
  user_agent: string;
  session_id: string;
  name?: string;
  referrer?: string;
  hostname: string;
}

/** 61 visits on one day: 1–6 pageviews a few minutes apart, some with a custom event, some sharing a visitor. */
function replay(): Item[] {
  const items: Item[] = [];
  for (let v = 0; v < 60; v++) {
    let at = Date.parse(`${DAY}T08:00:00Z`) + Math.floor(rand() * 10 * 3_600_000);
    const ip = `193.0.6.${10 + (v % 40)}`;
    const pages = 1 + Math.floor(rand() * 6);
    const referrer = pick(['https://www.google.com/', 'https://news.ycombinator.com/', undefined]);
    for (let p = 0; p < pages; p++) {
      const host = rand() < 0.2 ? 'shop.example.net' : 'example.com';
      const path = pick(PATHS);
      items.push({ type: 'pageview', url: `https://${host}${path}`, hostname: host, timestamp: new Date(at).toISOString(), visitor_ip: ip, user_agent: UA, session_id: `visit-${v}`, ...(p === 0 && referrer ? { referrer } : {}) });
      if (rand() < 0.15) items.push({ type: 'event', name: 'signup', url: `https://${host}${path}`, hostname: host, timestamp: new Date(at + 500).toISOString(), visitor_ip: ip, user_agent: UA, session_id: `visit-${v}` });
      at += 30_000 + Math.floor(rand() * 240_000);
    }
  }
  // A crawler-like visit of 60 distinct pages: past the 50 a visit lists, its pages are counted but not listed.
  for (let p = 0; p < 60; p++) {
    const timestamp = new Date(Date.parse(`${DAY}T12:00:00Z`) + p * 20_000).toISOString();
    items.push({ type: 'pageview', url: `https://example.com/long/${p}`, hostname: 'example.com', timestamp, visitor_ip: '193.0.6.99', user_agent: UA, session_id: 'visit-long' });
  }
  // In time order, as a server replaying its logs would send them: visits interleave.
  return items.sort((a, b) => a.timestamp.localeCompare(b.timestamp));
}

const post = (path: string, body: unknown) =>
  request(`${t.url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` }, body: JSON.stringify(body) });
const read = async (path: string, query: Record<string, string>) => {
  const res = await request(`${t.url}/api/sites/${t.site.id}/${path}?${new URLSearchParams({ from: DAY, to: DAY, ...query })}`, { headers: { Authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  return res.body;
};

const QUESTIONS: [string, Record<string, string>][] = [
  ['stats', {}],
  ['stats', { filter: 'page:is_not:/a' }],
  ['stats', { filter: 'exit_page:is:/b|/pricing' }],
  ['stats', { filter: 'page:contains:blog' }],
  ['stats', { filter: 'hostname:is:shop.example.net' }],
  ...['pages', 'entry_pages', 'exit_pages', 'hostnames', 'sources', 'countries'].map((dimension): [string, Record<string, string>] => ['stats/breakdown', { dimension, limit: '100' }]),
  ['stats/breakdown', { dimension: 'exit_pages', limit: '100', filter: 'page:is_not:/b' }],
  ['stats/breakdown', { dimension: 'pages', limit: '100', filter: 'exit_page:is_not:/' }],
];
const answers = () => Promise.all(QUESTIONS.map(([path, query]) => read(path, query)));

let pageviews = 0;
beforeAll(async () => {
  t = await startTestNode();
  token = await t.token(['ingest:write', 'stats:read']);
  const items = replay();
  pageviews = items.filter((i) => i.type === 'pageview').length;
  // Most arrive in batches, the rest one by one, so states of one visit land in different inserts.
  for (let i = 0; i < items.length; ) {
    if (rand() < 0.5) {
      const { type, hostname: _, ...item } = items[i++];
      const res = await post(`/api/ingest/server/${type}`, type === 'event' ? { ...item, properties: {} } : item);
      expect(res.status).toBe(202);
    } else {
      const batch = items.slice(i, i + 1 + Math.floor(rand() * 20)).map(({ hostname: _, ...item }) => item);
      i += batch.length;
      const res = await post('/api/ingest/server/batch', { items: batch });
      expect((res.body as { accepted: number }).accepted).toBe(batch.length);
    }
  }
  await t.rows('hits', pageviews);
  // The writer stores a batch's tables one after the other: wait for the visits too.
  const analytics = t.node.runtime.analytics();
  await waitFor(
    async () => {
      const [row] = await analytics.query<{ n: string }>('SELECT sum(sign * visit_pageviews) AS n FROM {db:Identifier}.visits', { db: analytics.tenantDatabase(t.team.id) });
      return Number(row.n) === pageviews;
    },
    10_000,
    () => 'the visits never counted every pageview',
  );
}, 60_000);

afterAll(() => t.stop());

describe('visits written at ingest', () => {
  it('leave one visit per session once their states are summed', async () => {
    const net = await t.node.runtime
      .analytics()
      .query<{ sessions: string; bad: string; states: string }>(
        'SELECT uniqExact(session_id) AS sessions, countIf(net != 1) AS bad, sum(states) AS states FROM (SELECT session_id, sum(sign) AS net, count() AS states FROM {db:Identifier}.visits GROUP BY session_id)',
        { db: t.node.runtime.analytics().tenantDatabase(t.team.id) },
      );
    expect(Number(net[0].sessions)).toBe(61);
    expect(Number(net[0].bad)).toBe(0);
    // Cancelled states are really there, unmerged: this is what the queries must see through.
    expect(Number(net[0].states)).toBeGreaterThan(61);
  });

  it('answer KPIs, breakdowns and filters exactly as visits rebuilt from the stored pageviews', async () => {
    const written = await answers();
    expect((written[0] as { kpis: { visits: number; pageviews: number } }).kpis).toMatchObject({ visits: 61, pageviews });
    await rebuildVisits(t.node.runtime.analytics(), t.node.runtime.analytics().tenantDatabase(t.team.id));
    const rebuilt = await answers();
    for (const [index, question] of QUESTIONS.entries()) expect([question, written[index]]).toEqual([question, rebuilt[index]]);
    const pages = (written[QUESTIONS.findIndex(([, q]) => q.dimension === 'pages' && !q.filter)] as { rows: { value: string }[] }).rows;
    expect(pages.filter((row) => row.value.startsWith('/long/')).length).toBe(50);
  });
});

describe('visits of the tracker', () => {
  it('gain the engagement time and custom events sent after their pageviews', async () => {
    const send = (path: string, body: unknown) =>
      request(`${t.url}${path}`, { method: 'POST', headers: { 'Content-Type': 'text/plain', Origin: 'https://example.com', 'User-Agent': UA }, body: JSON.stringify(body) });
    expect((await send('/ingest', { url: 'https://example.com/tracked', width: 1280 })).status).toBe(202);
    expect((await send('/ingest/event', { name: '$engagement', url: 'https://example.com/tracked', engagement_ms: 4200 })).status).toBe(202);
    expect((await send('/ingest', { url: 'https://example.com/tracked/next', width: 1280 })).status).toBe(202);
    expect((await send('/ingest/event', { name: 'Download', url: 'https://example.com/tracked/next', props: { file: 'a.pdf' } })).status).toBe(202);
    type Row = { visit_pageviews: number; events: number; visit_engagement_ms: string; entry_page: string; exit_page: string };
    const analytics = t.node.runtime.analytics();
    let rows: Row[] = [];
    // Read FINAL: the states a visit had are collapsed to its last, which holds both pageviews and the event.
    await waitFor(
      async () => {
        rows = await analytics.query<Row>("SELECT * FROM {db:Identifier}.visits FINAL WHERE entry_page = '/tracked'", { db: analytics.tenantDatabase(t.team.id) });
        return rows.length === 1 && rows[0].visit_pageviews === 2 && rows[0].events === 1;
      },
      10_000,
      () => `expected the tracked visit of two pageviews and an event, found ${JSON.stringify(rows)}`,
    );
    expect(rows[0]).toMatchObject({ visit_pageviews: 2, events: 1, visit_engagement_ms: '4200', entry_page: '/tracked', exit_page: '/tracked/next' });
  });
});
