// Panels the node's plugins describe for a site's dashboard (GET /api/dashboard/plugins),
// drawn here from each plugin's own GET route for the range: a table of rows or KPI cards. The
// plugin sends data and a description of it, never code: nothing of a plugin runs in the browser.
import { useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import { api } from '../api.ts';
import { ListTable } from '../components/ListTable.tsx';
import { formatNumber } from './format.ts';
import { type SitePanel, usePluginDashboard } from './plugin-dashboard.ts';
import type { DateRange } from './range.ts';

const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

/** A cell as the dashboard writes values everywhere: numbers in the locale, times in the site's zone, nothing as a dash. */
function cell(value: unknown, moment?: Intl.DateTimeFormat): string {
  if (value === null || value === undefined || value === '') return '—';
  if (typeof value === 'number') return formatNumber(value);
  if (typeof value === 'string' && moment && ISO_TIME.test(value)) return moment.format(new Date(value));
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** One panel: its route's answer drawn as KPI cards or a table. `query` goes with the request (a site panel's range). */
export function PluginPanel({ panel, path, query, moment }: { panel: SitePanel; path: string; query?: Record<string, string>; moment: Intl.DateTimeFormat }) {
  const data = useQuery({
    queryKey: ['plugin-panel', panel.plugin, panel.id, path, query],
    queryFn: ({ signal }) => api<Record<string, unknown>>(path, { query, signal }),
  });
  const headingId = `plugin-${panel.plugin}-${panel.id}`;
  const rows = panel.kind === 'table' && Array.isArray(data.data?.[panel.items ?? '']) ? (data.data?.[panel.items ?? ''] as Record<string, unknown>[]) : [];
  return (
    <section className="card stack" aria-labelledby={headingId} data-testid={headingId}>
      <h2 id={headingId}>{panel.title}</h2>
      {data.isError && <p className="error">{data.error.message}</p>}
      {data.data && panel.kind === 'kpis' && (
        <div className="kpis">
          {(panel.kpis ?? []).map((kpi) => (
            <div key={kpi.key} className="kpi">
              <p className="kpi-label">{kpi.label}</p>
              <p className="kpi-value">{cell(data.data?.[kpi.key])}</p>
            </div>
          ))}
        </div>
      )}
      {data.data && panel.kind === 'table' && rows.length === 0 && <p className="muted">{panel.empty ?? 'Nothing in this range.'}</p>}
      {rows.length > 0 && (
        <ListTable columns={(panel.columns ?? []).map((c) => c.label)} numeric={(panel.columns ?? []).filter((c) => c.numeric).map((c) => c.label)} label={panel.title}>
          {rows.map((row, index) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: a plugin's rows need not carry an id
            <tr key={index}>
              {(panel.columns ?? []).map((column, at) =>
                at === 0 ? (
                  <th key={column.key} scope="row" className={column.numeric ? 'num' : undefined}>
                    {cell(row[column.key], moment)}
                  </th>
                ) : (
                  <td key={column.key} className={column.numeric ? 'num' : undefined}>
                    {cell(row[column.key], moment)}
                  </td>
                ),
              )}
            </tr>
          ))}
        </ListTable>
      )}
    </section>
  );
}

/** Every plugin panel for this site's dashboard, below Plumb's own. */
export function PluginPanels({ siteId, range, timezone }: { siteId: string; range: DateRange; timezone: string }) {
  const moment = useMemo(() => new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short', timeZone: timezone }), [timezone]);
  const panels = usePluginDashboard();
  return (
    <>
      {(panels.data?.site_panels ?? []).map((panel) => (
        <PluginPanel
          key={`${panel.plugin}/${panel.id}`}
          panel={panel}
          path={panel.route.replace('{site}', encodeURIComponent(siteId))}
          query={{ from: range.from, to: range.to }}
          moment={moment}
        />
      ))}
    </>
  );
}
