// The MCP server's tools, one action each, named as the tool: what it reads for the API client
// that called POST /mcp (lib/mcp/endpoint.ts answers the HTTP side, lib/mcp/tools.ts describes
// the tools to assistants and checks their arguments). Each read is the REST route's own use case
// after the REST route's own access check (lib/mcp/site-access.ts), so an assistant sees the
// figures a REST client sees. The actions have no route and are called only on this node: a tool
// call runs as a tracked Moleculer call, which a stopping node drains and the request timeout bounds.
import type { Context, ServiceSchema } from 'moleculer';
import { aiFetchSummary } from '../lib/analytics/ai-fetches.ts';
import { eventAudience } from '../lib/analytics/events/audience.ts';
import { eventBreakdown } from '../lib/analytics/events/breakdown.ts';
import { type EventQueryInput, parseEventQuery } from '../lib/analytics/events/filters.ts';
import { eventNames } from '../lib/analytics/events/names.ts';
import { eventProperties } from '../lib/analytics/events/properties.ts';
import { eventTimeseries } from '../lib/analytics/events/timeseries.ts';
import type { BreakdownDimension } from '../lib/analytics/query/plan.ts';
import type { Interval } from '../lib/analytics/query/interval.ts';
import { siteBreakdown, siteKpis, siteTimeseries, type StatsRequest } from '../lib/analytics/query/stats.ts';
import { parseRange } from '../lib/analytics/range.ts';
import { realtimeSnapshot } from '../lib/analytics/realtime.ts';
import type { ApiClientPrincipal } from '../lib/auth/api-clients.ts';
import { getFunnel, listFunnels } from '../lib/funnels/funnels.ts';
import { funnelStats } from '../lib/funnels/stats.ts';
import { goalStats } from '../lib/goals/conversions.ts';
import { siteGoals } from '../lib/goals/goals.ts';
import { withImports } from '../lib/imports/imports.ts';
import { checkRangeLength, readableSite } from '../lib/mcp/site-access.ts';
import type { PageQuery } from '../lib/pagination.ts';
import type { Runtime } from '../lib/runtime.ts';
import { listSites } from '../lib/sites/sites-admin.ts';

type Ctx<P> = Context<P, { apiClient?: ApiClientPrincipal }>;

/** A filter as a tool takes it; the REST API's `filter=dimension:operator:value` spelled out. */
interface ToolFilter {
  dimension: string;
  operator: string;
  value: string;
}
interface SiteInput {
  site_id: string;
}
interface RangeInput extends SiteInput {
  from?: string;
  to?: string;
}
interface StatsInput extends RangeInput {
  filters?: ToolFilter[];
  compare?: 'previous_period' | 'year';
}
type EventInput = RangeInput & Omit<EventQueryInput, 'from' | 'to'>;

/** Only the local node's endpoint calls these; they are never published as routes. */
const internal = { visibility: 'protected' } as const;

const statsRequest = (input: StatsInput): StatsRequest => ({
  from: input.from,
  to: input.to,
  filter: (input.filters ?? []).map((f) => `${f.dimension}:${f.operator}:${f.value}`),
  compare: input.compare,
});

export default function createMcpService(runtime: Runtime): ServiceSchema {
  const analytics = () => runtime.analytics();
  const site = (ctx: Ctx<SiteInput>) => readableSite(runtime, ctx.meta.apiClient, ctx.params.site_id);
  /** The site, once the token may read it and the range is within the MCP cap. */
  const siteOverRange = async (ctx: Ctx<RangeInput>) => {
    const found = await site(ctx);
    checkRangeLength(found, ctx.params);
    return found;
  };
  /** The site for the stats tools, which read its imported data only when it has some (as the stats routes do). */
  const statsSite = async (ctx: Ctx<RangeInput>) => withImports(runtime.metadata(), await siteOverRange(ctx));
  /** The event query of `input` (the tool's arguments, less those that are not filters). */
  const eventQuery = async (ctx: Ctx<EventInput>, { site_id: _, ...input }: EventInput, needsEvent: boolean) =>
    parseEventQuery(input, await siteOverRange(ctx), { needsEvent });

  return {
    name: 'mcp',
    actions: {
      list_sites: {
        ...internal,
        handler: (ctx: Ctx<PageQuery>) => listSites(runtime.metadata(), { apiClient: ctx.meta.apiClient }, ctx.params, 'mcp'),
      },
      get_kpis: {
        ...internal,
        handler: async (ctx: Ctx<StatsInput>) => siteKpis(analytics(), await statsSite(ctx), statsRequest(ctx.params)),
      },
      get_timeseries: {
        ...internal,
        handler: async (ctx: Ctx<StatsInput & { interval?: Interval }>) => siteTimeseries(analytics(), await statsSite(ctx), { ...statsRequest(ctx.params), interval: ctx.params.interval }),
      },
      get_breakdown: {
        ...internal,
        async handler(ctx: Ctx<StatsInput & PageQuery & { dimension: BreakdownDimension }>) {
          const { dimension, limit, offset } = ctx.params;
          return siteBreakdown(analytics(), await statsSite(ctx), { ...statsRequest(ctx.params), dimension, limit, offset });
        },
      },
      list_event_names: {
        ...internal,
        handler: async (ctx: Ctx<EventInput>) => ({ rows: await eventNames(analytics(), await eventQuery(ctx, ctx.params, false)) }),
      },
      get_event_properties: {
        ...internal,
        handler: async (ctx: Ctx<EventInput>) => ({ rows: await eventProperties(analytics(), await eventQuery(ctx, ctx.params, true)) }),
      },
      get_event_breakdown: {
        ...internal,
        async handler(ctx: Ctx<EventInput & { property_key: string }>) {
          // The property is what the rows group by here, not a filter on them.
          const { property_key, ...filters } = ctx.params;
          return { rows: await eventBreakdown(analytics(), await eventQuery(ctx, filters, true), property_key) };
        },
      },
      get_event_timeseries: {
        ...internal,
        handler: async (ctx: Ctx<EventInput & { interval?: Interval }>) => {
          const { interval, ...filters } = ctx.params;
          return eventTimeseries(analytics(), await eventQuery(ctx, filters, true), interval);
        },
      },
      get_event_audience: {
        ...internal,
        handler: async (ctx: Ctx<EventInput>) => eventAudience(analytics(), await eventQuery(ctx, ctx.params, true)),
      },
      list_goals: {
        ...internal,
        async handler(ctx: Ctx<RangeInput>) {
          const found = await siteOverRange(ctx);
          const goals = await siteGoals(runtime.metadata(), found.id);
          return { rows: await goalStats(analytics(), found, goals, parseRange(ctx.params, found.timezone)) };
        },
      },
      list_funnels: {
        ...internal,
        handler: async (ctx: Ctx<SiteInput & PageQuery>) => listFunnels(runtime.metadata(), (await site(ctx)).id, ctx.params),
      },
      get_funnel: {
        ...internal,
        async handler(ctx: Ctx<RangeInput & { funnel_id: string }>) {
          const found = await siteOverRange(ctx);
          const funnel = await getFunnel(runtime.metadata(), found.id, ctx.params.funnel_id);
          return { funnel, stats: await funnelStats(analytics(), found, funnel, parseRange(ctx.params, found.timezone)) };
        },
      },
      get_realtime: {
        ...internal,
        handler: async (ctx: Ctx<SiteInput>) => realtimeSnapshot(analytics(), await site(ctx)),
      },
      get_ai_fetches: {
        ...internal,
        async handler(ctx: Ctx<RangeInput>) {
          const found = await siteOverRange(ctx);
          return aiFetchSummary(analytics(), found, parseRange(ctx.params, found.timezone));
        },
      },
    },
  };
}
