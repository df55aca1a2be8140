// The realtime view of a site (GET /api/sites/:id/realtime): who is on the site right now, on which
// pages, from which sources, and the latest events, pushed as Server-Sent Events. The feed is a Readable the gateway
// pipes to the response; when the client goes away the pipe destroys it, and destroying it is
// what stops the timers, so a dropped connection never leaves a query loop behind.
import { Readable } from 'node:stream';
import type { Log } from '../log.ts';
import type { AnalyticsStore } from '../stores/analytics/index.ts';

/**
 * Sources are named as the dashboard's Sources panel names them ("Google", a hostname, '' for
 * direct): the source of the visit, not the referrer of the page a hit or event came from.
 */
export interface RealtimeSnapshot {
  live_visitors: number;
  current_pages: { path: string; visitors: number }[];
  /** Live visitors by the source of their current visit. */
  current_sources: { source: string; visitors: number }[];
  recent_events: { name: string; path: string; source: string; ts: string }[];
  /** When the snapshot was taken (RFC 3339 UTC); the windows below end here. */
  at: string;
}

/** "Live" means seen in the last five minutes. */
export const LIVE_WINDOW_MS = 5 * 60_000;
/** Recent events are looked for in the last day only, so the query reads one or two days' parts. */
const RECENT_WINDOW_MS = 24 * 3_600_000;
const TOP_PAGES = 10;
const TOP_SOURCES = 10;
const RECENT_EVENTS = 20;
/**
 * A visit starts at most a day before its hits: the tracker's visitor ids, and so its sessions,
 * change with the daily (UTC) salt. Visits are looked up from this far back.
 */
const VISIT_START_MARGIN_MS = 24 * 3_600_000;

/**
 * The source of a session's visit as `visit_source`, with `has_visit` = 1 when there is one (0 and
 * '' otherwise). Any row of a visit carries its source: states and their cancellations repeat the
 * first pageview's origin, so neither FINAL nor grouping is needed. `sessions` is a query or a
 * bound array of the sessions wanted, so the lookup stays the size of the answer.
 */
const visitSources = (sessions: string) => `(
       SELECT session_id, 1 AS has_visit, toString(referrer_source) AS visit_source
       FROM {db:Identifier}.visits
       WHERE site_id = {site:UUID} AND start >= {visits_from:DateTime64(3, 'UTC')} AND session_id IN ${sessions}
     )`;

export interface RealtimeSite {
  id: string;
  tenant: string;
}

const isoFromClickHouse = (text: string) => new Date(`${text.replace(' ', 'T')}Z`).toISOString();

/**
 * One snapshot. Live visitors count pageviews and events alike (a reader who stays on one page
 * still sends $engagement events); a visitor's current page is the last page they viewed, so the
 * page counts add up to at most the live visitors.
 */
export async function realtimeSnapshot(store: AnalyticsStore, site: RealtimeSite, now: Date = new Date()): Promise<RealtimeSnapshot> {
  const params = { db: site.tenant, site: site.id, live: new Date(now.getTime() - LIVE_WINDOW_MS), recent: new Date(now.getTime() - RECENT_WINDOW_MS) };
  const liveVisitorsSince = new Date(params.live.getTime() - VISIT_START_MARGIN_MS);
  const live = store.query<{ live_visitors: string }>(
    `SELECT uniqExact(visitor_id) AS live_visitors FROM (
       SELECT visitor_id FROM {db:Identifier}.hits WHERE site_id = {site:UUID} AND ts >= {live:DateTime64(3, 'UTC')}
       UNION ALL
       SELECT visitor_id FROM {db:Identifier}.events WHERE site_id = {site:UUID} AND ts >= {live:DateTime64(3, 'UTC')}
     )`,
    params,
  );
  const pages = store.query<{ path: string; visitors: string }>(
    `SELECT path, count() AS visitors FROM (
       SELECT visitor_id, argMax(path, ts) AS path
       FROM {db:Identifier}.hits
       WHERE site_id = {site:UUID} AND ts >= {live:DateTime64(3, 'UTC')}
       GROUP BY visitor_id
     )
     GROUP BY path
     ORDER BY visitors DESC, path
     LIMIT {top:UInt32}`,
    { ...params, top: TOP_PAGES },
  );
  // Each live visitor's latest session, and the source of its visit; a session whose visit is not
  // stored yet (or that has only events) falls back on the source of its earliest hit in the window.
  const sources = store.query<{ source: string; visitors: string }>(
    `SELECT if(has_visit = 1, visit_source, own_source) AS source, count() AS visitors
     FROM (
       SELECT visitor_id, argMax(sid, ts) AS session_id, argMin(own, ts) AS own_source
       FROM (
         SELECT visitor_id, session_id AS sid, ts, toString(referrer_source) AS own FROM {db:Identifier}.hits
         WHERE site_id = {site:UUID} AND ts >= {live:DateTime64(3, 'UTC')}
         UNION ALL
         SELECT visitor_id, session_id AS sid, ts, toString(referrer_source) AS own FROM {db:Identifier}.events
         WHERE site_id = {site:UUID} AND ts >= {live:DateTime64(3, 'UTC')}
       )
       GROUP BY visitor_id
     ) AS live
     LEFT ANY JOIN ${visitSources(`(
         SELECT session_id FROM {db:Identifier}.hits WHERE site_id = {site:UUID} AND ts >= {live:DateTime64(3, 'UTC')}
         UNION ALL
         SELECT session_id FROM {db:Identifier}.events WHERE site_id = {site:UUID} AND ts >= {live:DateTime64(3, 'UTC')})`)} AS visit USING (session_id)
     GROUP BY source
     ORDER BY visitors DESC, source
     LIMIT {top:UInt32}
     SETTINGS join_use_nulls = 0`,
    { ...params, visits_from: liveVisitorsSince, top: TOP_SOURCES },
  );
  const events = recentEventsWithSources(store, params);
  const [[visitors], topPages, topSources, recentEvents] = await Promise.all([live, pages, sources, events]);
  return {
    live_visitors: Number(visitors?.live_visitors ?? 0),
    current_pages: topPages.map((p) => ({ path: p.path, visitors: Number(p.visitors) })),
    current_sources: topSources.map((s) => ({ source: s.source, visitors: Number(s.visitors) })),
    recent_events: recentEvents,
    at: now.toISOString(),
  };
}

/**
 * The latest custom events, then the sources of their visits: the lookup is by the handful of
 * sessions listed, so it never reads the day's visits. An event without a stored visit keeps the
 * source ingest gave the event itself.
 */
async function recentEventsWithSources(store: AnalyticsStore, params: { db: string; site: string; recent: Date }): Promise<RealtimeSnapshot['recent_events']> {
  const events = await store.query<{ name: string; path: string; ts: string; session_id: string; own_source: string }>(
    `SELECT name, path, ts, session_id, toString(referrer_source) AS own_source
     FROM {db:Identifier}.events
     WHERE site_id = {site:UUID} AND ts >= {recent:DateTime64(3, 'UTC')} AND name != '$engagement'
     ORDER BY ts DESC
     LIMIT {recent_count:UInt32}`,
    { ...params, recent_count: RECENT_EVENTS },
  );
  if (events.length === 0) return [];
  const found = await store.query<{ session_id: string; visit_source: string }>(
    `SELECT session_id, any(visit_source) AS visit_source FROM ${visitSources('{sessions:Array(UInt64)}')} GROUP BY session_id`,
    { ...params, sessions: [...new Set(events.map((e) => e.session_id))].map(BigInt), visits_from: new Date(params.recent.getTime() - VISIT_START_MARGIN_MS) },
  );
  const sourceOf = new Map(found.map((row) => [row.session_id, row.visit_source]));
  return events.map((e) => ({ name: e.name, path: e.path, source: sourceOf.get(e.session_id) ?? e.own_source, ts: isoFromClickHouse(e.ts) }));
}

export interface RealtimeFeedOptions {
  /** Time between snapshots (5 s in the product; tests use less). */
  intervalMs: number;
  /** Time between heartbeat comments, which keep proxies from closing a quiet connection. */
  heartbeatMs: number;
  /**
   * The feed ends after this long, and the browser's EventSource reconnects (after the `retry`
   * it was given), passing authentication again: a revoked session or token cannot keep a stream.
   */
  lifetimeMs: number;
  log: Log;
  /** Called once, when the feed has ended for whatever reason and holds no timers. */
  onClose?: () => void;
}

export const REALTIME_DEFAULTS = { intervalMs: 5_000, heartbeatMs: 15_000, lifetimeMs: 10 * 60_000 } as const;

/** One Server-Sent Event: `event:` line, one `data:` line of JSON, blank line. */
const sseEvent = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/**
 * A running realtime feed. Snapshots follow each other (a slow query delays the next one rather
 * than piling up queries); a feed whose reader has stopped reading skips snapshots instead of
 * buffering them.
 */
export class RealtimeFeed extends Readable {
  private readonly takeSnapshot: () => Promise<RealtimeSnapshot>;
  private readonly options: RealtimeFeedOptions;
  private nextTimer: NodeJS.Timeout | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private lifetimeTimer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(take: () => Promise<RealtimeSnapshot>, options: RealtimeFeedOptions) {
    super({ encoding: 'utf8' });
    this.takeSnapshot = take;
    this.options = options;
  }

  /** Timers still scheduled (0 once the feed has ended). */
  get pendingTimers(): number {
    return [this.nextTimer, this.heartbeatTimer, this.lifetimeTimer].filter((timer) => timer !== undefined).length;
  }

  /** Queues the first snapshot (already taken, so its failure was an ordinary error answer) and starts the loop. */
  start(first: RealtimeSnapshot): this {
    this.push(`retry: ${this.options.intervalMs}\n\n`);
    this.push(sseEvent('snapshot', first));
    this.schedule(Date.now());
    this.heartbeatTimer = setInterval(() => this.push(': heartbeat\n\n'), this.options.heartbeatMs);
    this.lifetimeTimer = setTimeout(() => this.finish(), this.options.lifetimeMs);
    return this;
  }

  /** Ends the feed cleanly (lifetime over, node stopping): the response ends after what is queued. */
  finish(): void {
    if (this.stopped) return;
    this.stop();
    this.push(null);
  }

  override _read(): void {
    // Snapshots are pushed by the timer; there is nothing to pull.
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // The pipe destroys the feed when the client disconnects (ERR_STREAM_PREMATURE_CLOSE).
    this.stop();
    callback(error);
  }

  private schedule(lastStarted: number): void {
    if (this.stopped) return;
    const wait = Math.max(0, this.options.intervalMs - (Date.now() - lastStarted));
    this.nextTimer = setTimeout(() => {
      this.nextTimer = undefined;
      void this.tick();
    }, wait);
  }

  private async tick(): Promise<void> {
    const started = Date.now();
    // A reader that is not reading gets no new snapshots until it catches up.
    if (this.readableLength >= this.readableHighWaterMark) return this.schedule(started);
    try {
      const snapshot = await this.takeSnapshot();
      if (this.stopped) return;
      this.push(sseEvent('snapshot', snapshot));
      this.schedule(started);
    } catch (err) {
      if (this.stopped) return;
      // The headers are long gone, so the failure is told in the stream; the browser reconnects
      // after `retry` and, if the failure persists, gets it as an ordinary error answer.
      this.options.log.warn({ err }, 'realtime snapshot failed; ending the feed');
      this.push(sseEvent('error', { message: 'The realtime feed failed; reconnecting' }));
      this.finish();
    }
  }

  private stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.nextTimer);
    clearInterval(this.heartbeatTimer);
    clearTimeout(this.lifetimeTimer);
    this.nextTimer = this.heartbeatTimer = this.lifetimeTimer = undefined;
    this.options.onClose?.();
  }
}

/**
 * Takes the first snapshot, then returns the running feed. The first one is taken before the
 * stream exists so that a failure (store unavailable) is still an ordinary JSON error answer.
 */
export async function openRealtimeFeed(take: () => Promise<RealtimeSnapshot>, options: RealtimeFeedOptions): Promise<RealtimeFeed> {
  const first = await take();
  return new RealtimeFeed(take, options).start(first);
}
