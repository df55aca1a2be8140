// The realtime feed (GET /api/sites/:id/realtime) as Server-Sent Events on a real node: headers,
// the first snapshot and a later one with the right contents (sources named as the dashboard
// names them, from the visits), heartbeats, a disconnect that ends
// the query loop, who may connect, and a stopping node that closes open streams. Then the feed on
// its own: lifetime, a failing snapshot, a reader that stops reading.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createApiClient } from '../../lib/auth/api-clients.ts';
import { openRealtimeFeed, type RealtimeFeed, type RealtimeSnapshot } from '../../lib/analytics/realtime.ts';
import { silentLog } from '../../lib/log.ts';
import { createSite } from '../../lib/sites/sites.ts';
import type { AnalyticsStore } from '../../lib/stores/analytics/index.ts';
import { gatewayOf } from '../../services/api.service.ts';
import createEventsService from '../../services/events.service.ts';
import { type Person, person } from '../support/accounts.ts';
import { waitFor } from '../support/instance.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

const INTERVAL_MS = 200;
const CHROME_WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const HEARTBEAT_MS = 150;

interface SseMessage {
  event?: string;
  data?: unknown;
  comment?: string;
  retry?: number;
}

/** Reads an SSE response one message at a time. */
function sseReader(res: Response) {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const parse = (block: string): SseMessage => {
    const message: SseMessage = {};
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) message.comment = line.slice(1).trim();
      else if (line.startsWith('event: ')) message.event = line.slice(7);
      else if (line.startsWith('data: ')) message.data = JSON.parse(line.slice(6));
      else if (line.startsWith('retry: ')) message.retry = Number(line.slice(7));
    }
    return message;
  };
  return {
    /** The next message, or null when the stream has ended. */
    async next(): Promise<SseMessage | null> {
      for (;;) {
        const end = buffer.indexOf('\n\n');
        if (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          return parse(block);
        }
        const { value, done } = await reader.read();
        if (done) return null;
        buffer += decoder.decode(value, { stream: true });
      }
    },
    /** The next message that passes `test`, skipping others. */
    async until(test: (m: SseMessage) => boolean): Promise<SseMessage> {
      for (;;) {
        const message = await this.next();
        if (message === null) throw new Error('the stream ended');
        if (test(message)) return message;
      }
    },
  };
}
const isSnapshot = (m: SseMessage) => m.event === 'snapshot';

let t: TestNode;
let viewer: Person;
let stranger: Person;
let noScopeToken: string;
let store: AnalyticsStore;
const minutesAgo = (n: number) => new Date(Date.now() - n * 60_000);
/** The realtime feeds the events service under test has open (a closed connection must leave none). */
const feeds = new Set<RealtimeFeed>();
const openFeeds = () => [...feeds];
const tenant = () => ({ database: store.tenantDatabase(t.team.id) });

function connect(headers: Record<string, string> = { Cookie: viewer.cookie }, siteId = t.site.id) {
  const controller = new AbortController();
  const response = fetch(`${t.url}/api/sites/${siteId}/realtime`, { headers, signal: controller.signal });
  return { controller, response };
}

// Live: visitors 1, 2, 3 viewed pages in the last 5 minutes (visitor 1 moved from /a to /b),
// visitor 5 only sent an event; visitor 4 was last seen 10 minutes ago; another site's visitor
// does not count. 25 events in the last hour, every fifth one an $engagement. Each session's
// visit names its source; the hits' and events' own referrers (the site itself, another site)
// are not the source. Visitor 5's visit began two hours ago, and its states are unmerged.
const HITS = [
  { visitor_id: 1, path: '/a', ago: 4, referrer_source: '' },
  { visitor_id: 1, path: '/b', ago: 1, referrer_source: 'news.example.net' },
  { visitor_id: 2, path: '/a', ago: 2, referrer_source: '' },
  { visitor_id: 3, path: '/b', ago: 3, referrer_source: '' },
  { visitor_id: 4, path: '/c', ago: 10, referrer_source: '' },
];
const VISITS = [
  { session_id: 1, referrer_source: 'Google', ago: 4 },
  { session_id: 2, referrer_source: 'Google', ago: 2 },
  { session_id: 3, referrer_source: 'Hacker News', ago: 3 },
  { session_id: 4, referrer_source: 'X', ago: 10 },
  { session_id: 5, referrer_source: 'DuckDuckGo', ago: 120 },
];
const EVENTS = Array.from({ length: 25 }, (_, i) => ({ visitor_id: 5, name: i % 5 === 0 ? '$engagement' : `event-${i}`, path: `/e${i}`, ago: 1 + i * 2.5 }));

beforeAll(async () => {
  t = await startTestNode({ PLUMB_API_RATE_PER_SECOND: '100000', PLUMB_API_BURST: '100000' });
  // The events service again with short intervals (the node's own, once registered, goes first).
  const registered = t.node.broker.getLocalService('events');
  if (registered) await t.node.broker.destroyService(registered);
  t.node.broker.createService(createEventsService(t.node.runtime, { realtime: { intervalMs: INTERVAL_MS, heartbeatMs: HEARTBEAT_MS }, feeds }));
  await t.node.broker.waitForServices(['events']);
  gatewayOf(t.node.broker).refreshRoutes();
  store = t.node.runtime.analytics();
  const db = t.node.runtime.metadata();
  [viewer, stranger] = await Promise.all([person(t), person(t)]);
  await db.query('INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, $3)', [t.site.id, viewer.id, 'viewer']);
  noScopeToken = (await createApiClient(db, { name: 'no stats', scopes: ['ingest:write'], sites: [{ siteId: t.site.id, role: 'owner' }], ownerUserId: viewer.id })).token;
  await store.insert(
    'hits',
    [
      ...HITS.map((h) => ({ ts: minutesAgo(h.ago), site_id: t.site.id, session_id: h.visitor_id, visitor_id: h.visitor_id, path: h.path, referrer_source: h.referrer_source })),
      { ts: minutesAgo(1), site_id: t.otherSite.id, session_id: 99, visitor_id: 99, path: '/other' },
    ],
    tenant(),
  );
  await store.insert(
    'events',
    [
      ...EVENTS.map((e) => ({ ts: minutesAgo(e.ago), site_id: t.site.id, session_id: 5, visitor_id: e.visitor_id, name: e.name, path: e.path, referrer_source: 'news.example.net' })),
      { ts: minutesAgo(0.5), site_id: t.otherSite.id, session_id: 99, visitor_id: 99, name: 'elsewhere', path: '/other' },
    ],
    tenant(),
  );
  await store.insert(
    'visits',
    VISITS.flatMap((v) => {
      const visit = { site_id: t.site.id, session_id: v.session_id, visitor_id: v.session_id, start: minutesAgo(v.ago), first_ts: minutesAgo(v.ago), last_ts: minutesAgo(v.ago), referrer_source: v.referrer_source };
      return [
        { ...visit, sign: 1, version: 1 },
        { ...visit, sign: -1, version: 1 },
        { ...visit, sign: 1, version: 2 },
      ];
    }),
    tenant(),
  );
}, 60_000);

afterAll(async () => {
  await t?.stop();
});

describe('GET /api/sites/:id/realtime', () => {
  it('streams text/event-stream, uncached and unbuffered, with a snapshot right away and then every interval', async () => {
    const before = Date.now();
    const { controller, response } = connect();
    const res = await response;
    try {
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('x-accel-buffering')).toBe('no');
      const sse = sseReader(res);
      expect(await sse.next()).toEqual({ retry: INTERVAL_MS });

      const first = (await sse.until(isSnapshot)).data as RealtimeSnapshot;
      const recent = EVENTS.filter((e) => e.name !== '$engagement')
        .sort((a, b) => a.ago - b.ago)
        .slice(0, 20);
      expect(first).toEqual({
        live_visitors: 4,
        current_pages: [
          { path: '/b', visitors: 2 },
          { path: '/a', visitors: 1 },
        ],
        current_sources: [
          { source: 'Google', visitors: 2 },
          { source: 'DuckDuckGo', visitors: 1 },
          { source: 'Hacker News', visitors: 1 },
        ],
        recent_events: recent.map((e) => ({ name: e.name, path: e.path, source: 'DuckDuckGo', ts: expect.any(String) })),
        at: expect.any(String),
      });
      first.recent_events.forEach((e, i) => {
        expect(Math.abs(Date.parse(e.ts) - (Date.parse(first.at) - recent[i].ago * 60_000))).toBeLessThan(2000);
      });
      expect(Date.parse(first.at)).toBeGreaterThanOrEqual(before - 1000);

      // A new visitor arrives on /a from Bing: a later snapshot has them, by the source of their
      // first hit while their visit is not stored yet.
      await store.insert('hits', [{ ts: new Date(), site_id: t.site.id, session_id: 6, visitor_id: 6, path: '/a', referrer_source: 'Bing' }], tenant());
      const later = (await sse.until((m) => isSnapshot(m) && (m.data as RealtimeSnapshot).live_visitors === 5)).data as RealtimeSnapshot;
      expect(later.current_pages).toEqual([
        { path: '/a', visitors: 2 },
        { path: '/b', visitors: 2 },
      ]);
      expect(later.current_sources).toEqual([
        { source: 'Google', visitors: 2 },
        { source: 'Bing', visitors: 1 },
        { source: 'DuckDuckGo', visitors: 1 },
        { source: 'Hacker News', visitors: 1 },
      ]);
      expect(Date.parse(later.at)).toBeGreaterThan(Date.parse(first.at));
    } finally {
      controller.abort();
    }
  });

  it('pushes snapshots at the configured interval and heartbeat comments in between', async () => {
    const { controller, response } = connect();
    const sse = sseReader(await response);
    try {
      const times: number[] = [];
      let heartbeats = 0;
      while (times.length < 4) {
        const m = await sse.until((x) => isSnapshot(x) || x.comment === 'heartbeat');
        if (m.comment === 'heartbeat') heartbeats++;
        else times.push(Date.parse((m.data as RealtimeSnapshot).at));
      }
      expect(heartbeats).toBeGreaterThan(0);
      for (let i = 1; i < times.length; i++) expect(times[i] - times[i - 1]).toBeGreaterThanOrEqual(INTERVAL_MS - 20);
      expect(times[3] - times[0]).toBeLessThan(INTERVAL_MS * 3 + 1500);
    } finally {
      controller.abort();
    }
  });

  it('stops querying when the client disconnects: the feed ends, no timer is left, the store hears nothing more', async () => {
    await waitFor(async () => openFeeds().length === 0, 5000, () => 'feeds of earlier tests still open');
    const { controller, response } = connect();
    const sse = sseReader(await response);
    await sse.until(isSnapshot);
    const [feed] = openFeeds();
    expect(openFeeds()).toHaveLength(1);
    expect(feed.pendingTimers).toBeGreaterThan(0);

    let queries = 0;
    const query = store.query;
    store.query = ((...args: Parameters<AnalyticsStore['query']>) => {
      // Only this site's queries: background work of the node may query the store too.
      if (args[1]?.site === t.site.id) queries++;
      return query.apply(store, args);
    }) as AnalyticsStore['query'];
    try {
      controller.abort();
      await waitFor(async () => openFeeds().length === 0, 5000, () => 'the feed outlived its connection');
      expect(feed.destroyed).toBe(true);
      expect(feed.pendingTimers).toBe(0);
      // Any query already in flight at the abort has finished by now; none may follow it.
      await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS * 2));
      const settled = queries;
      await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS * 4));
      expect(queries).toBe(settled);
      expect(settled).toBeLessThanOrEqual(3);
    } finally {
      store.query = query;
    }
  });

  it('names a visitor’s source from where their visit came, through the tracker: Google, not the page’s referrer', async () => {
    const site = await createSite(t.node.runtime.metadata(), { teamId: t.team.id, domain: 'live.example' });
    await t.node.runtime.metadata().query('INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, $3)', [site.id, viewer.id, 'viewer']);
    const track = (path: string, body: Record<string, unknown>) =>
      fetch(`${t.url}${path}`, { method: 'POST', headers: { 'Content-Type': 'text/plain', Origin: 'https://live.example', 'User-Agent': CHROME_WINDOWS }, body: JSON.stringify(body) });
    // From Google to the home page, then to /pricing (from a link on Hacker News), signing up there.
    const sent = [
      await track('/ingest', { url: 'https://live.example/', referrer: 'https://www.google.com/' }),
      await track('/ingest', { url: 'https://live.example/pricing', referrer: 'https://news.ycombinator.com/' }),
      await track('/ingest/event', { name: 'Signup', url: 'https://live.example/pricing', referrer: 'https://news.ycombinator.com/' }),
    ];
    expect(sent.map((res) => res.status)).toEqual([202, 202, 202]);
    await t.rows('events', 1, 'site_id = {site:UUID}', { site: site.id });
    await waitFor(async () => (await t.rowsNow('visits', 'site_id = {site:UUID} AND visit_pageviews = 2', { site: site.id })).length > 0, 10_000, () => 'the visit was never stored');

    const { controller, response } = connect({ Cookie: viewer.cookie }, site.id);
    try {
      const snapshot = (await sseReader(await response).until(isSnapshot)).data as RealtimeSnapshot;
      expect(snapshot).toMatchObject({
        live_visitors: 1,
        current_pages: [{ path: '/pricing', visitors: 1 }],
        current_sources: [{ source: 'Google', visitors: 1 }],
        recent_events: [{ name: 'Signup', path: '/pricing', source: 'Google' }],
      });
    } finally {
      controller.abort();
    }
  });

  it('answers ordinary JSON errors before any stream: 401 without credentials, 404 to a non-member, 403 to a token without stats:read', async () => {
    const cases: [Record<string, string>, number][] = [
      [{}, 401],
      [{ Cookie: stranger.cookie }, 404],
      [{ Authorization: `Bearer ${noScopeToken}` }, 403],
      [{ 'X-API-Key': noScopeToken }, 403],
    ];
    for (const [headers, status] of cases) {
      const res = await fetch(`${t.url}/api/sites/${t.site.id}/realtime`, { headers });
      expect({ headers: Object.keys(headers), status: res.status, type: res.headers.get('content-type') }).toEqual({
        headers: Object.keys(headers),
        status,
        type: 'application/json; charset=utf-8',
      });
      expect(typeof ((await res.json()) as { message: string }).message).toBe('string');
    }
    expect((await fetch(`${t.url}/api/sites/${t.otherSite.id}/realtime`, { headers: { Cookie: viewer.cookie } })).status).toBe(404);
    expect(openFeeds()).toHaveLength(0);
  });

  it('a stopping node ends open streams, so the server can close', async () => {
    const { response } = connect();
    const sse = sseReader(await response);
    await sse.until(isSnapshot);
    const stopped = t.stop();
    // The stream ends cleanly (done), rather than hanging until the shutdown deadline cuts it.
    let message: SseMessage | null;
    do message = await sse.next();
    while (message !== null);
    await stopped;
  });
});

describe('the realtime feed', () => {
  const snapshot = (n: number): RealtimeSnapshot => ({ live_visitors: n, current_pages: [], current_sources: [], recent_events: [], at: new Date().toISOString() });
  const collect = async (feed: RealtimeFeed) => {
    let text = '';
    const sink = new Writable({
      write(chunk, _encoding, done) {
        text += String(chunk);
        done();
      },
    });
    await pipeline(feed, sink);
    return text;
  };

  it('ends after its lifetime, holding no timers', async () => {
    let n = 0;
    const feed = await openRealtimeFeed(async () => snapshot(++n), { intervalMs: 20, heartbeatMs: 1000, lifetimeMs: 150, log: silentLog });
    const text = await collect(feed);
    expect(text.startsWith('retry: 20\n\nevent: snapshot\ndata: {"live_visitors":1,')).toBe(true);
    expect(text.match(/event: snapshot/g)?.length).toBeGreaterThan(2);
    expect(feed.pendingTimers).toBe(0);
  });

  it('a failing first snapshot is an ordinary error; a later failure is told in the stream, which then ends', async () => {
    await expect(openRealtimeFeed(() => Promise.reject(new Error('store down')), { intervalMs: 20, heartbeatMs: 1000, lifetimeMs: 10_000, log: silentLog })).rejects.toThrow(
      'store down',
    );
    let n = 0;
    let closed = 0;
    const feed = await openRealtimeFeed(() => (++n < 3 ? Promise.resolve(snapshot(n)) : Promise.reject(new Error('store down'))), {
      intervalMs: 20,
      heartbeatMs: 1000,
      lifetimeMs: 10_000,
      log: silentLog,
      onClose: () => closed++,
    });
    const text = await collect(feed);
    expect(text.match(/event: snapshot/g)).toHaveLength(2);
    expect(text.endsWith('event: error\ndata: {"message":"The realtime feed failed; reconnecting"}\n\n')).toBe(true);
    expect(closed).toBe(1);
    expect(feed.pendingTimers).toBe(0);
  });

  it('skips snapshots while nobody reads, instead of buffering them', async () => {
    let n = 0;
    const feed = await openRealtimeFeed(async () => ({ ...snapshot(++n), current_pages: [{ path: `/${'x'.repeat(20_000)}`, visitors: 1 }] }), {
      intervalMs: 5,
      heartbeatMs: 10_000,
      lifetimeMs: 10_000,
      log: silentLog,
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Without a reader the buffer stops growing once it holds a high-water mark's worth.
    expect(n).toBeLessThan(5);
    expect(feed.readableLength).toBeLessThan(feed.readableHighWaterMark + 25_000);
    feed.destroy();
    expect(feed.pendingTimers).toBe(0);
  });
});
