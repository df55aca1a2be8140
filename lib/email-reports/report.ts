// The figures of one scheduled report, computed by the same functions the stats API answers with
// (siteKpis, siteBreakdown, goalStats), over the report's period and the one before it, so a
// report never disagrees with the dashboard for the same dates.
import { parseStatsRequest, siteBreakdown, siteKpis, type StatsSite } from '../analytics/query/stats.ts';
import { goalStats } from '../goals/conversions.ts';
import type { Goal } from '../goals/goals.ts';
import type { AnalyticsStore } from '../stores/analytics/index.ts';
import type { DateSpan } from './period.ts';

/** A figure of the period and of the period before it. */
export interface Change {
  current: number;
  previous: number;
}

export interface RankedRow extends Change {
  value: string;
}

export interface ReportFigures {
  visitors: Change;
  pageviews: Change;
  visits: Change;
  bounce_rate: Change;
  /** Top 5 by visitors; `previous` is the same page's visitors in the period before. */
  pages: RankedRow[];
  sources: RankedRow[];
  /** Unique converting visitors per goal. */
  goals: RankedRow[];
}

const TOP = 5;

export async function reportFigures(store: AnalyticsStore, site: StatsSite, goals: readonly Goal[], current: DateSpan, previous: DateSpan, now: Date): Promise<ReportFigures> {
  const request = { from: current.from, to: current.to, compare: 'custom' as const, compare_from: previous.from, compare_to: previous.to };
  const top = async (dimension: 'pages' | 'sources') => {
    const page = await siteBreakdown(store, site, { ...request, dimension, limit: TOP, offset: 0 }, now);
    return page.rows.map((row) => ({ value: row.value, current: row.visitors, previous: row.comparison?.visitors ?? 0 }));
  };
  const ranges = parseStatsRequest(site, request, now);
  const [kpis, pages, sources, goalsNow, goalsBefore] = await Promise.all([
    siteKpis(store, site, request, now),
    top('pages'),
    top('sources'),
    goalStats(store, site, goals, ranges.range),
    goalStats(store, site, goals, ranges.comparison!),
  ]);
  const change = (field: 'visitors' | 'pageviews' | 'visits' | 'bounce_rate'): Change => ({ current: kpis.kpis[field], previous: kpis.comparison?.kpis[field] ?? 0 });
  const before = new Map(goalsBefore.map((g) => [g.goal_id, g.conversions]));
  return {
    visitors: change('visitors'),
    pageviews: change('pageviews'),
    visits: change('visits'),
    bounce_rate: change('bounce_rate'),
    pages,
    sources,
    goals: goalsNow.map((g) => ({ value: g.name, current: g.conversions, previous: before.get(g.goal_id) ?? 0 })),
  };
}
