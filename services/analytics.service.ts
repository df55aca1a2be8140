// The analytics API of a site: dashboard stats (KPIs, timeseries, breakdowns) now; event analytics
// and realtime join this service in their own blocks. Thin actions over lib/analytics/.
import type { Context, ServiceSchema } from 'moleculer';
import { BREAKDOWN_DIMENSIONS, type BreakdownDimension } from '../lib/analytics/query/plan.ts';
import { INTERVALS, type Interval } from '../lib/analytics/query/interval.ts';
import * as S from '../lib/analytics/query/responses.ts';
import { COMPARISONS, siteBreakdown, siteKpis, siteStats, siteTimeseries, type StatsRequest, type StatsSite } from '../lib/analytics/query/stats.ts';
import type { AccessRule } from '../lib/auth/access.ts';
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
  const siteOf = (id: string): Promise<StatsSite> => liveSite(runtime.sites, id);
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

export default function createAnalyticsService(runtime: Runtime): ServiceSchema {
  return {
    name: 'analytics',
    settings: { rest: '/' },
    actions: {
      ...statsActions(runtime),
    },
  };
}
