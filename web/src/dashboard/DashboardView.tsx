// The analytics of one site: range, filters, KPI cards, chart and breakdown panels. Used by the
// signed-in site dashboard (`/api/sites/{id}`) and by share links (`/api/share/{token}`).
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useEffect, useMemo, useState } from 'react';
import { api, type DashboardStats, type Kpis as KpiValues, type StatsResponse } from '../api.ts';
import { Breakdowns } from './Breakdowns.tsx';
import { ExportMenu } from './ExportMenu.tsx';
import { FilterBar } from './FilterBar.tsx';
import { GoalConversions } from './GoalConversions.tsx';
import { Kpis } from './Kpis.tsx';
import { LiveVisitors } from './LiveVisitors.tsx';
import type { SiteRole } from './plugin-dashboard.ts';
import { PluginPanels } from './PluginPanels.tsx';
import { RangePicker } from './RangePicker.tsx';
import { Realtime } from './Realtime.tsx';
import { type DayRange, importedBuckets } from './imported.ts';
import { describeRange, previousRange } from './range.ts';
import { formatDateRange } from './dates.ts';
import { statsQuery, useDashboardState } from './state.ts';
import { type PreviousSeries, TimeChart } from './TimeChart.tsx';

const NO_RANGES: DayRange[] = [];

/** Under the chart: which days' figures came from imports, and the switch that leaves them out (kept in the URL). */
function ImportedNote({ ranges, shown, onChange }: { ranges: DayRange[]; shown: boolean; onChange(shown: boolean): void }) {
  return (
    <div className="imported-note" data-testid="imported-note">
      {ranges.length > 0 ? (
        <p>
          <span className="swatch-imported" aria-hidden /> Includes imported data: {ranges.map((r) => formatDateRange(r)).join(', ')}
        </p>
      ) : (
        <p className="muted">Imported data is left out of these figures.</p>
      )}
      <label className="check">
        <input type="checkbox" checked={shown} onChange={(e) => onChange(e.target.checked)} />
        <span>Show imported data</span>
      </label>
    </div>
  );
}

/** `role` is the signed-in person's on the site: it decides which of the plugins' panels and buttons are drawn. */
export function DashboardView({ base, timezone, realtime = true, role }: { base: string; timezone: string; realtime?: boolean; role?: SiteRole }) {
  const state = useDashboardState(timezone);
  // Plugins' panels read the plugins' own routes, which a share link does not reach.
  const siteId = /^\/api\/sites\/([^/]+)$/.exec(base)?.[1];
  const query = statsQuery(state);
  const live = realtime && state.period === 'realtime';
  const stats = useQuery({
    queryKey: ['stats', base, query],
    queryFn: ({ signal }) => api<DashboardStats>(`${base}/stats`, { query, signal }),
    enabled: !live,
    // A new range or filter keeps the current figures on screen until the new ones are in.
    placeholderData: keepPreviousData,
  });
  // The panels and goal conversions are asked for once the stats request is on its way (this
  // effect runs after the query's own subscription has sent it), so the KPIs' query reaches the
  // server first and gets its cores; the panels' queries then run beside it instead of after it.
  const [statsSent, setStatsSent] = useState(false);
  useEffect(() => {
    if (!statsSent && (stats.isFetching || !stats.isPending)) setStatsSent(true);
  }, [statsSent, stats.isFetching, stats.isPending]);
  // The previous period is asked for once the current one is on screen: as one request with
  // compare=previous_period it would double the wait for the cards and the chart. Its bounds are
  // the server's own: the same length of time right before the range's first instant, in buckets
  // of the same interval, so its KPIs go under the cards and its line under the chart's.
  const current = stats.isPlaceholderData ? undefined : stats.data?.range;
  const previous = useQuery({
    queryKey: ['stats-previous', base, query.filter, state.withImported, current?.from, current?.to, current?.interval],
    queryFn: ({ signal }) => {
      const from = Date.parse(current!.from);
      const length = Date.parse(current!.to) - from;
      const bounds = { from: new Date(from - length).toISOString(), to: new Date(from).toISOString() };
      const imported = state.withImported ? {} : { with_imported: 'false' };
      return api<StatsResponse>(`${base}/stats`, { query: { ...bounds, interval: current!.interval, filter: query.filter, ...imported }, signal });
    },
    enabled: !live && current !== undefined,
  });
  const comparison: KpiValues | undefined = previous.data?.kpis;
  const period = describeRange(previousRange(state.range));
  const chart = useMemo(() => {
    const points = stats.data?.timeseries ?? [];
    const kpis = stats.data?.kpis;
    return {
      buckets: points.map((p) => p.bucket),
      series: [
        { label: 'Visitors', values: points.map((p) => p.visitors), total: kpis?.visitors },
        { label: 'Pageviews', values: points.map((p) => p.pageviews), total: kpis?.pageviews },
      ],
    };
  }, [stats.data]);
  // Servers without imports answer no `imported`: nothing is shaded or said.
  const importedRanges = stats.data?.imported?.ranges ?? NO_RANGES;
  const importedMask = useMemo(
    () => (stats.data ? importedBuckets(stats.data.timeseries.map((p) => p.bucket), stats.data.range.interval, timezone, importedRanges) : undefined),
    [stats.data, timezone, importedRanges],
  );
  const before: PreviousSeries | undefined = useMemo(() => {
    const points = previous.data?.timeseries;
    if (!points) return undefined;
    return { label: 'Visitors, previous period', values: points.map((p) => p.visitors), total: previous.data?.kpis.visitors, buckets: points.map((p) => p.bucket) };
  }, [previous.data]);

  return (
    <div className="dashboard">
      <div className="toolbar">
        <RangePicker key={state.period} period={state.period} range={state.range} onChange={state.setPeriod} realtime={realtime} timezone={timezone} />
        <div className="toolbar-end">
          {!live && stats.data && <LiveVisitors base={base} initial={stats.data.kpis.live_visitors} realtime={realtime} />}
          {siteId && <ExportMenu siteId={siteId} range={state.range} timezone={timezone} />}
        </div>
      </div>
      {live ? (
        <Realtime base={base} timezone={timezone} />
      ) : (
        <>
          <FilterBar filters={state.filters} onRemove={state.removeFilter} />
          {stats.isError && (
            <p className="error" role="alert">
              Could not load the figures: {stats.error.message}
            </p>
          )}
          {stats.data ? (
            <>
              <Kpis kpis={stats.data.kpis} comparison={comparison} period={period} />
              <section className="card" aria-label="Visitors over time">
                <TimeChart
                  title="Visitors and pageviews over time"
                  buckets={chart.buckets}
                  series={chart.series}
                  interval={stats.data.range.interval}
                  timezone={timezone}
                  totalsLabel={describeRange(state.range)}
                  previous={before}
                  imported={importedMask}
                />
                {(importedRanges.length > 0 || !state.withImported) && <ImportedNote ranges={importedRanges} shown={state.withImported} onChange={state.setWithImported} />}
              </section>
            </>
          ) : (
            !stats.isError && <div className="kpis placeholder" aria-busy="true" />
          )}
          <Breakdowns base={base} query={query} onFilter={state.addFilter} ready={statsSent} />
          <GoalConversions base={base} range={state.range} ready={statsSent} />
          {siteId && statsSent && <PluginPanels siteId={siteId} range={state.range} timezone={timezone} role={role} />}
        </>
      )}
    </div>
  );
}
