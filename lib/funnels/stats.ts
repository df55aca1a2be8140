// Funnel stats: how many visitors reached each step, in order, within the funnel's window, over
// the site's pageviews and custom events of a date range (ClickHouse windowFunnel per visitor).
//
// Counting rules, as windowFunnel applies them in 'strict_increase' mode:
// - Steps count only in order, each strictly later than the step before (one row, or two rows
//   of the same millisecond, never make two steps), all within window_seconds of the step-1 row.
// - Other pageviews and events between steps do not break the chain.
// - Repeating a step is harmless: a later step-1 row starts a fresh window, so a visitor who
//   came back and then went through counts; a repeated middle step neither helps nor hurts.
// - A visitor is counted once per step, at the furthest step of their best chain.
import type { TimeRange } from '../analytics/range.ts';
import { percent } from '../goals/conversions.ts';
import { pathPatternToLike } from '../goals/matcher.ts';
import type { AnalyticsStore } from '../stores/analytics/index.ts';
import { type Funnel, stepLabel } from './funnels.ts';

export interface FunnelStepStats {
  /** 1-based position of the step. */
  index: number;
  label: string;
  /** Visitors who reached this step (after every earlier one, in order, within the window). */
  visitors: number;
  /** Visitors who reached the previous step but not this one (0 for step 1). */
  dropoff: number;
  /** visitors as a percentage of step 1's, one decimal. */
  conversion_rate: number;
  /** visitors as a percentage of the previous step's, one decimal (step 1: of itself). */
  step_conversion_rate: number;
}

export interface FunnelStats {
  funnel: { id: string; name: string };
  steps: FunnelStepStats[];
}

export async function funnelStats(analytics: AnalyticsStore, site: { id: string; tenant: string }, funnel: Funnel, range: TimeRange): Promise<FunnelStats> {
  const params: Record<string, unknown> = { db: site.tenant, site: site.id, from: range.from, to: range.to, window_ms: funnel.window_seconds * 1000 };
  // The SQL's shape follows the number and types of the steps; every value is a bound parameter.
  const conditions = funnel.steps.map((step, i) => {
    if (step.type === 'path') {
      params[`step${i}`] = pathPatternToLike(step.path_pattern ?? '');
      return `(is_hit = 1 AND path LIKE {step${i}:String})`;
    }
    params[`step${i}`] = step.event_name ?? '';
    return `(is_hit = 0 AND name = {step${i}:String})`;
  });
  const rows = await analytics.query<{ level: number; visitors: string }>(
    `SELECT level, count() AS visitors
       FROM (
         SELECT visitor_id,
                windowFunnel({window_ms:UInt64}, 'strict_increase')(toUInt64(toUnixTimestamp64Milli(ts)), ${conditions.join(', ')}) AS level
           FROM (
             SELECT ts, visitor_id, 1 AS is_hit, path, '' AS name FROM {db:Identifier}.hits
              WHERE site_id = {site:UUID} AND ts >= {from:DateTime64(3)} AND ts < {to:DateTime64(3)}
             UNION ALL
             SELECT ts, visitor_id, 0 AS is_hit, path, toString(name) AS name FROM {db:Identifier}.events
              WHERE site_id = {site:UUID} AND ts >= {from:DateTime64(3)} AND ts < {to:DateTime64(3)}
           )
          WHERE ${conditions.join(' OR ')}
          GROUP BY visitor_id
       )
      WHERE level > 0
      GROUP BY level`,
    params,
  );
  // Visitors at step i: those whose furthest level is i or more.
  const atLevel = new Map(rows.map((r) => [r.level, Number(r.visitors)]));
  const reached = funnel.steps.map((_, i) => {
    let sum = 0;
    for (let level = i + 1; level <= funnel.steps.length; level++) sum += atLevel.get(level) ?? 0;
    return sum;
  });
  const steps = funnel.steps.map((step, i): FunnelStepStats => {
    const previous = i === 0 ? reached[0] : reached[i - 1];
    return {
      index: i + 1,
      label: stepLabel(step),
      visitors: reached[i],
      dropoff: previous - reached[i],
      conversion_rate: percent(reached[i], reached[0]),
      step_conversion_rate: percent(reached[i], previous),
    };
  });
  return { funnel: { id: funnel.id, name: funnel.name }, steps };
}
