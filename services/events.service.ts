// Event analytics and the realtime feed over HTTP: custom-event names, property keys, breakdowns,
// time series and audience panels under /api/sites/:id/events, and /api/sites/:id/realtime as
// Server-Sent Events. Thin actions over lib/analytics/; Site Viewer or higher on every route.
import type { Context, ServiceSchema } from 'moleculer';
import { type Audience, eventAudience } from '../lib/analytics/events/audience.ts';
import { type BreakdownRow, eventBreakdown } from '../lib/analytics/events/breakdown.ts';
import { DIMENSION_KEYS, type EventQueryInput, type EventSite, parseEventQuery } from '../lib/analytics/events/filters.ts';
import { type EventNameRow, eventNames } from '../lib/analytics/events/names.ts';
import { eventProperties, type PropertyKeyRow } from '../lib/analytics/events/properties.ts';
import { eventTimeseries, INTERVALS, type Interval, type Timeseries } from '../lib/analytics/events/timeseries.ts';
import { openRealtimeFeed, REALTIME_DEFAULTS, type RealtimeFeed, realtimeSnapshot } from '../lib/analytics/realtime.ts';
import * as R from '../lib/analytics/events/responses.ts';
import { liveSite } from '../lib/sites/sites.ts';
import { action } from '../lib/openapi/action.ts';
import type { Runtime } from '../lib/runtime.ts';
import type { RequestMeta } from '../types/meta.ts';

type Ctx<P> = Context<P & { id: string }, RequestMeta & { $responseType?: string }>;

/**
 * Dependencies a test may build the service with; the node passes none, so a running node's feeds
 * keep the product's timing and no one outside the service sees them.
 */
export interface EventsServiceDeps {
  /** Snapshot, heartbeat and connection-lifetime timing of the realtime feed (REALTIME_DEFAULTS otherwise). */
  realtime?: Partial<Record<keyof typeof REALTIME_DEFAULTS, number>>;
  /** Where the service keeps its open realtime feeds; a test passes its own set to watch them close. */
  feeds?: Set<RealtimeFeed>;
}

const tags = ['event analytics'];
const viewer = { auth: 'any', access: { site: { param: 'id', role: 'viewer', scope: 'stats:read' } } } as const;
/** Dates (YYYY-MM-DD, whole local days) or RFC 3339 instants; parseRange checks the form. */
const range = { id: 'uuid', from: 'string|optional|max:40', to: 'string|optional|max:40' };
const eventName = { event_name: 'string|min:1|max:500' };
const propertyFilter = { property_key: 'string|optional|min:1|max:500', property_value: 'string|optional|max:2000' };
/** What each audience dimension (panel and dimension_key) means, for the OpenAPI document. */
const AUDIENCE_DIMENSIONS =
  'Audience dimensions: `path` is the page the event was sent on; `referrer` is the source of the visit that sent it, named as the dashboard’s Sources panel names it (`Google`, a hostname, an empty string for direct visits), not the referrer of the page the event came from; `device` and `country` are the visit’s. A session with events but no pageview has its events’ own source, device and country. No value is an empty string.';
const dimensionFilter = {
  dimension_key: { type: 'enum', values: [...DIMENSION_KEYS], optional: true },
  dimension_value: 'string|optional|max:2000',
};

/** Only the parameters an endpoint documents reach its query; others are ignored. */
const pick = (params: EventQueryInput, keys: readonly (keyof EventQueryInput)[]): EventQueryInput =>
  Object.fromEntries(keys.filter((key) => params[key] !== undefined).map((key) => [key, params[key]]));
const FILTERED = ['from', 'to', 'event_name', 'property_key', 'property_value', 'dimension_key', 'dimension_value'] as const;

export default function createEventsService(runtime: Runtime, deps: EventsServiceDeps = {}): ServiceSchema {
  const feeds = deps.feeds ?? new Set<RealtimeFeed>();
  const timing = { ...REALTIME_DEFAULTS, ...deps.realtime };

  /** The site's tenant and time zone; access has been checked, so a miss means it just went away. */
  const siteOf = (id: string): Promise<EventSite> => liveSite(runtime.sites, id);
  const query = async (ctx: Ctx<EventQueryInput>, keys: readonly (keyof EventQueryInput)[], needsEvent: boolean) =>
    parseEventQuery(pick(ctx.params, keys), await siteOf(ctx.params.id), { needsEvent });

  return {
    name: 'events',
    settings: { rest: '/' },
    actions: {
      names: action({
        rest: 'GET /api/sites/:id/events/names',
        ...viewer,
        params: range,
        openapi: { summary: 'Custom-event names recorded in the range, most unique sessions first', tags, response: R.EventNames },
        async handler(ctx: Ctx<EventQueryInput>): Promise<{ rows: EventNameRow[] }> {
          return { rows: await eventNames(runtime.analytics(), await query(ctx, ['from', 'to'], false)) };
        },
      }),

      properties: action({
        rest: 'GET /api/sites/:id/events/properties',
        ...viewer,
        params: { ...range, ...eventName },
        openapi: { summary: 'Property keys present on the event, with the unique sessions that sent each', tags, response: R.EventProperties },
        async handler(ctx: Ctx<EventQueryInput>): Promise<{ rows: PropertyKeyRow[] }> {
          return { rows: await eventProperties(runtime.analytics(), await query(ctx, ['from', 'to', 'event_name'], true)) };
        },
      }),

      breakdown: action({
        rest: 'GET /api/sites/:id/events/breakdown',
        ...viewer,
        params: { ...range, ...eventName, property_key: 'string|min:1|max:500' },
        openapi: { summary: 'One row per distinct value of the property, most unique sessions first (at most 1000)', tags, response: R.EventBreakdown },
        async handler(ctx: Ctx<EventQueryInput & { property_key: string }>): Promise<{ rows: BreakdownRow[] }> {
          const q = await query(ctx, ['from', 'to', 'event_name'], true);
          return { rows: await eventBreakdown(runtime.analytics(), q, ctx.params.property_key) };
        },
      }),

      timeseries: action({
        rest: 'GET /api/sites/:id/events/timeseries',
        ...viewer,
        params: { ...range, ...eventName, ...propertyFilter, ...dimensionFilter, interval: { type: 'enum', values: [...INTERVALS], optional: true } },
        openapi: {
          summary: 'Unique sessions and events per bucket in the site’s time zone (hour up to 2 days, else day), zero-filled',
          description: AUDIENCE_DIMENSIONS,
          tags,
          response: R.EventTimeseries,
        },
        async handler(ctx: Ctx<EventQueryInput & { interval?: Interval }>): Promise<Timeseries> {
          return eventTimeseries(runtime.analytics(), await query(ctx, FILTERED, true), ctx.params.interval);
        },
      }),

      audience: action({
        rest: 'GET /api/sites/:id/events/audience',
        ...viewer,
        params: { ...range, ...eventName, ...propertyFilter, ...dimensionFilter },
        openapi: {
          summary: 'Top 10 pages, sources, devices and countries by unique sessions that sent the event',
          description: AUDIENCE_DIMENSIONS,
          tags,
          response: R.EventAudience,
        },
        async handler(ctx: Ctx<EventQueryInput>): Promise<Audience> {
          return eventAudience(runtime.analytics(), await query(ctx, FILTERED, true));
        },
      }),

      realtime: action({
        rest: 'GET /api/sites/:id/realtime',
        ...viewer,
        params: { id: 'uuid' },
        openapi: {
          response: R.RealtimeStream,
          summary: 'Live visitors, their current pages and sources, and recent events as Server-Sent Events (`snapshot` at least every 5 s)',
          description: 'Sources are those of the visits, named as the dashboard’s Sources panel names them (an empty string for direct visits).',
          tags: ['realtime'],
        },
        async handler(ctx: Ctx<unknown>): Promise<RealtimeFeed> {
          const site = await siteOf(ctx.params.id);
          // A session cookie ends the stream when the session does; the reconnect then re-authenticates.
          const sessionLeftMs = ctx.meta.session ? ctx.meta.session.expiresAt * 1000 - Date.now() : Number.POSITIVE_INFINITY;
          const feed = await openRealtimeFeed(() => realtimeSnapshot(runtime.analytics(), site), {
            intervalMs: timing.intervalMs,
            heartbeatMs: timing.heartbeatMs,
            lifetimeMs: Math.max(1000, Math.min(timing.lifetimeMs, sessionLeftMs)),
            log: runtime.log,
            onClose: () => feeds.delete(feed),
          });
          feeds.add(feed);
          // moleculer-web pipes a returned Readable into the response with these headers, and
          // destroys it when the client goes away (which stops the feed's timers).
          ctx.meta.$responseType = 'text/event-stream; charset=utf-8';
          ctx.meta.$responseHeaders = { 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no' };
          return feed;
        },
      }),
    },

    stopped() {
      // An open stream would hold the HTTP server's close forever; end each one cleanly instead.
      for (const feed of feeds) feed.finish();
    },
  };
}
