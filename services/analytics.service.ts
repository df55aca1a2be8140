// The analytics API of a site: dashboard stats (KPIs, timeseries, breakdowns) and the AI crawler
// reports, each in its own block. Thin actions over lib/analytics/.
import type { Context, ServiceSchema } from 'moleculer';
import {
  AI_REPORT_INTERVALS,
  AiFetchPages,
  AiFetchReport,
  AiFetchTimeseries,
  type AiReportInterval,
  aiFetchPages,
  aiFetchReport,
  aiFetchTimeseries,
  parseReportRange,
} from '../lib/analytics/ai-fetches.ts';
import { BREAKDOWN_DIMENSIONS, type BreakdownDimension } from '../lib/analytics/query/plan.ts';
import { INTERVALS, type Interval } from '../lib/analytics/query/interval.ts';
import * as S from '../lib/analytics/query/responses.ts';
import { COMPARISONS, siteBreakdown, siteKpis, siteStats, siteTimeseries, type StatsRequest, type StatsSite } from '../lib/analytics/query/stats.ts';
import type { AccessRule } from '../lib/auth/access.ts';
import { withImports } from '../lib/imports/imports.ts';
import { liveSite } from '../lib/sites/sites.ts';
import { action } from '../lib/openapi/action.ts';
import { type PageQuery, pageParams } from '../lib/pagination.ts';
import type { Runtime } from '../lib/runtime.ts';
import type { RequestMeta } from '../types/meta.ts';

type Ctx<P> = Context<P, RequestMeta>;

// ---- Stats: stats, kpis, timeseries, breakdown ----

/** Any member of the site from viewer up, or a token with stats:read on it. */
const readStats: AccessRule = { site: { param: 'id', role: 'viewer', scope: 'stats:read' } };
const statsTags = ['stats'];
const text = (max: number) => ({ type: 'string', max, optional: true });
/** Query parameters every stats endpoint takes. */
const statsQuery = {
  id: 'uuid',
  from: text(64),
  to: text(64),
  // Repeatable: one string, or an array when given more than once (filters AND-combine).
  filter: { type: 'multi', optional: true, rules: [{ type: 'string' }, { type: 'array', items: 'string' }] },
  compare: { type: 'enum', values: [...COMPARISONS], optional: true },
  compare_from: text(64),
  compare_to: text(64),
  // Imported data fills the days without native data unless this is false.
  with_imported: { type: 'boolean', optional: true, convert: true },
};
/** `auto` (or absent) lets the range choose: ≤ 2 days hour, ≤ 62 days day, ≤ 26 weeks week, else month. */
const intervalParam = { type: 'enum', values: ['auto', ...INTERVALS], optional: true };

type StatsParams = StatsRequest & { id: string; interval?: Interval | 'auto' };
type BreakdownParams = StatsRequest & PageQuery & { id: string; dimension: BreakdownDimension };

function statsActions(runtime: Runtime): ServiceSchema['actions'] {
  const siteOf = async (id: string): Promise<StatsSite> => withImports(runtime.metadata(), await liveSite(runtime.sites, id));
  const interval = (value: StatsParams['interval']) => (value === 'auto' ? undefined : value);

  return {
    stats: action({
      rest: 'GET /api/sites/:id/stats',
      auth: 'any',
      access: readStats,
      params: { ...statsQuery, interval: intervalParam },
      openapi: { summary: 'KPIs (with comparison) and the zero-filled timeseries of a range, in the site’s time zone', tags: statsTags, response: S.Stats },
      async handler(ctx: Ctx<StatsParams>) {
        const { id, ...request } = ctx.params;
        return siteStats(runtime.analytics(), await siteOf(id), { ...request, interval: interval(request.interval) });
      },
    }),

    kpis: action({
      rest: 'GET /api/sites/:id/stats/kpis',
      auth: 'any',
      access: readStats,
      params: statsQuery,
      openapi: { summary: 'The KPIs of a range (with comparison) without the timeseries and live visitors: what the cards compare against', tags: statsTags, response: S.KpisOnly },
      async handler(ctx: Ctx<StatsParams>) {
        const { id, ...request } = ctx.params;
        return siteKpis(runtime.analytics(), await siteOf(id), request);
      },
    }),

    timeseries: action({
      rest: 'GET /api/sites/:id/stats/timeseries',
      auth: 'any',
      access: readStats,
      params: { ...statsQuery, interval: intervalParam },
      openapi: { summary: 'Visitors, visits and pageviews per hour, day, week or month of a range (every bucket, zero-filled)', tags: statsTags, response: S.Timeseries },
      async handler(ctx: Ctx<StatsParams>) {
        const { id, ...request } = ctx.params;
        return siteTimeseries(runtime.analytics(), await siteOf(id), { ...request, interval: interval(request.interval) });
      },
    }),

    breakdown: action({
      rest: 'GET /api/sites/:id/stats/breakdown',
      auth: 'any',
      access: readStats,
      params: {
        ...statsQuery,
        dimension: { type: 'enum', values: BREAKDOWN_DIMENSIONS },
        ...pageParams,
      },
      openapi: { summary: 'Visitors, visits, pageviews, bounce rate and visit duration per value of a dimension, most visitors first', tags: statsTags, response: S.Breakdown },
      async handler(ctx: Ctx<BreakdownParams>) {
        const { id, ...request } = ctx.params;
        return siteBreakdown(runtime.analytics(), await siteOf(id), request);
      },
    }),
  };
}

// ---- end of Stats ----

// ---- AI crawlers: what AI agents fetched, and the visits AI assistants referred ----

const aiTags = ['ai crawlers'];
/** Dates (YYYY-MM-DD, whole local days) or RFC 3339 instants, at most 366 days apart. */
const aiRange = { id: 'uuid', from: text(64), to: text(64) };
type AiParams = { id: string; from?: string; to?: string };

function aiFetchActions(runtime: Runtime): ServiceSchema['actions'] {
  const siteAndRange = async (params: AiParams) => {
    const site = await liveSite(runtime.sites, params.id);
    return { site, range: parseReportRange(params, site.timezone) };
  };

  return {
    aiFetchSummary: action({
      rest: 'GET /api/sites/:id/ai-fetches/summary',
      auth: 'any',
      access: readStats,
      params: aiRange,
      openapi: { summary: 'AI crawler and assistant fetches of a range: totals, assistants, top paths, and breakdowns by family, category, resource type and status class', tags: aiTags, response: AiFetchReport },
      async handler(ctx: Ctx<AiParams>) {
        const { site, range } = await siteAndRange(ctx.params);
        return aiFetchReport(runtime.analytics(), site, range);
      },
    }),

    aiFetchTimeseries: action({
      rest: 'GET /api/sites/:id/ai-fetches/timeseries',
      auth: 'any',
      access: readStats,
      params: { ...aiRange, interval: { type: 'enum', values: [...AI_REPORT_INTERVALS], optional: true } },
      openapi: { summary: 'AI fetches per hour or day (default) of the site’s time zone, by assistant family, every bucket present', tags: aiTags, response: AiFetchTimeseries },
      async handler(ctx: Ctx<AiParams & { interval?: AiReportInterval }>) {
        const { site, range } = await siteAndRange(ctx.params);
        return aiFetchTimeseries(runtime.analytics(), site, range, ctx.params.interval);
      },
    }),

    aiFetchPages: action({
      rest: 'GET /api/sites/:id/ai-fetches/pages',
      auth: 'any',
      access: readStats,
      params: aiRange,
      openapi: { summary: 'The paths AI agents fetch most with the AI-referred visits that landed on each, and the AI-referred landing pages no agent fetched', tags: aiTags, response: AiFetchPages },
      async handler(ctx: Ctx<AiParams>) {
        const { site, range } = await siteAndRange(ctx.params);
        return aiFetchPages(runtime.analytics(), site, range);
      },
    }),
  };
}

// ---- end of AI crawlers ----

export default function createAnalyticsService(runtime: Runtime): ServiceSchema {
  return {
    name: 'analytics',
    settings: { rest: '/' },
    actions: {
      ...statsActions(runtime),
      ...aiFetchActions(runtime),
    },
  };
}
