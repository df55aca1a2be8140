// Panels the node's plugins describe for a site's dashboard (GET /api/dashboard/plugins),
// drawn here from each plugin's own GET route for the range: a table of rows or KPI cards. A
// panel may have buttons above it, which POST the range to the plugin's routes, and a table's rows
// buttons of their own; after one succeeds the plugin's panels are read again. Only what the
// person's role on the site reaches is drawn. The plugin sends data and a description of it,
// never code: nothing of a plugin runs in the browser.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useMemo, useRef, useState } from 'react';
import { api, problem } from '../api.ts';
import { ListTable } from '../components/ListTable.tsx';
import { ActionOutcome, usePluginActions } from './plugin-actions.tsx';
import { onSite, reaches, type RowAction, refocus, rowRoute, type SitePanel, type SiteRole, usePluginDashboard } from './plugin-dashboard.ts';
import { shownValue } from './plugin-values.ts';
import type { DateRange } from './range.ts';

/**
 * A row's React key: its `id` when every row has a distinct one, so that a refresh which adds a row
 * above keeps each row (and a focused button in it) with its own data; else its place.
 */
function rowKeys(rows: readonly Record<string, unknown>[]): (string | number)[] {
  const ids = rows.map((row) => row.id);
  const usable = ids.every((id) => typeof id === 'string' || typeof id === 'number') && new Set(ids).size === ids.length;
  return usable ? ids.map((id) => `id:${String(id)}`) : rows.map((_, index) => index);
}

/** A site panel's buttons, which POST the range (`{ from, to }`); the answer's message (or error) shows below them. */
function PanelActions({ panel, siteId, range, role }: { panel: SitePanel; siteId: string; range: Record<string, string>; role?: SiteRole }) {
  const queries = useQueryClient();
  const [said, setSaid] = useState<string | null>(null);
  const actions = usePluginActions({
    onAnswer: setSaid,
    // Every panel of the plugin is read again: what the button started usually shows in another one.
    onDone: () => void queries.invalidateQueries({ queryKey: ['plugin-panel', panel.plugin] }),
    routeOf: (route) => onSite(route, siteId),
    body: range,
  });
  const shown = (panel.actions ?? []).filter((action) => reaches(action.role, role));
  if (shown.length === 0) return null;
  return (
    <>
      <div className="form-actions">{actions.buttons(shown)}</div>
      <ActionOutcome error={actions.error} said={said} />
    </>
  );
}

/**
 * One panel: its route's answer drawn as KPI cards or a table, with its buttons. `query` goes with
 * the request (a site panel's range) and with its buttons' POSTs; `role` (the person's on the site)
 * decides which buttons are drawn.
 */
export function PluginPanel({ panel, siteId, query, moment, role }: { panel: SitePanel; siteId?: string; query?: Record<string, string>; moment: Intl.DateTimeFormat; role?: SiteRole }) {
  const path = onSite(panel.route, siteId);
  const every = panel.refresh_seconds ? panel.refresh_seconds * 1000 : undefined;
  const data = useQuery({
    queryKey: ['plugin-panel', panel.plugin, panel.id, path, query],
    queryFn: ({ signal }) => api<Record<string, unknown>>(path, { query, signal }),
    // A refreshing panel keeps its last answer on screen while the next is read (same key, no
    // placeholder), and is read only while the page is visible: React Query's focus follows
    // document.visibilityState, and a page shown again is read at once when its answer has aged.
    ...(every ? { refetchInterval: every, refetchIntervalInBackground: false, staleTime: every, refetchOnWindowFocus: true } : {}),
  });
  const queries = useQueryClient();
  const heading = useRef<HTMLHeadingElement>(null);
  const [said, setSaid] = useState<string | null>(null);
  /** The button that ran, to have the focus back after a failure once the buttons are enabled again. */
  const clicked = useRef<HTMLButtonElement | null>(null);
  const act = useMutation({
    mutationFn: ({ action, route }: { action: RowAction; route: string }) => api<{ message?: unknown } | undefined>(route, { method: action.method, body: action.method === 'POST' ? {} : undefined }),
    onMutate: () => setSaid(null),
    onSuccess: async (answer) => {
      setSaid(typeof answer?.message === 'string' ? answer.message : null);
      // Every panel of the plugin is read again, not only this table: its other panels (a count, a
      // summary) often describe the same rows.
      await queries.invalidateQueries({ queryKey: ['plugin-panel', panel.plugin] });
      // The table is drawn again, and the row with its button may be gone: the panel keeps the focus.
      clicked.current = null;
      refocus(heading.current);
    },
  });
  useEffect(() => {
    if (!act.isPending) refocus(clicked.current);
  }, [act.isPending]);
  const headingId = `plugin-${panel.plugin}-${panel.id}`;
  const rows = panel.kind === 'table' && Array.isArray(data.data?.[panel.items ?? '']) ? (data.data?.[panel.items ?? ''] as Record<string, unknown>[]) : [];
  const keys = rowKeys(rows);
  const rowActions = (panel.row_actions ?? []).filter((action) => reaches(action.role, role));
  return (
    <section className="card stack" aria-labelledby={headingId} data-testid={headingId}>
      <h2 id={headingId} ref={heading} tabIndex={-1}>
        {panel.title}
      </h2>
      {siteId && query && <PanelActions panel={panel} siteId={siteId} range={query} role={role} />}
      {data.isError && <p className="error">{data.error.message}</p>}
      {data.data && panel.kind === 'kpis' && (
        <div className="kpis">
          {(panel.kpis ?? []).map((kpi) => (
            <div key={kpi.key} className="kpi">
              <p className="kpi-label">{kpi.label}</p>
              <p className="kpi-value">{shownValue(data.data?.[kpi.key], kpi.format, moment)}</p>
            </div>
          ))}
        </div>
      )}
      {data.data && panel.kind === 'table' && rows.length === 0 && <p className="muted">{panel.empty ?? 'Nothing in this range.'}</p>}
      {rows.length > 0 && (
        <ListTable
          columns={(panel.columns ?? []).map((c) => c.label)}
          numeric={(panel.columns ?? []).filter((c) => c.numeric).map((c) => c.label)}
          actions={rowActions.length > 0}
          label={panel.title}
        >
          {rows.map((row, index) => (
            <tr key={keys[index]}>
              {(panel.columns ?? []).map((column, at) =>
                at === 0 ? (
                  <th key={column.key} scope="row" className={column.numeric ? 'num' : undefined}>
                    {shownValue(row[column.key], column.format, moment)}
                  </th>
                ) : (
                  <td key={column.key} className={column.numeric ? 'num' : undefined}>
                    {shownValue(row[column.key], column.format, moment)}
                  </td>
                ),
              )}
              {rowActions.length > 0 && (
                <td className="actions">
                  {rowActions.map((action) => {
                    const route = rowRoute(onSite(action.route, siteId), row);
                    return (
                      <button
                        key={action.id}
                        type="button"
                        className={action.danger ? 'button small danger' : 'button small'}
                        disabled={route === null || act.isPending}
                        onClick={(event) => {
                          if (route === null || (action.confirm && !confirm(action.confirm))) return;
                          clicked.current = event.currentTarget;
                          act.mutate({ action, route });
                        }}
                      >
                        {action.label}
                      </button>
                    );
                  })}
                </td>
              )}
            </tr>
          ))}
        </ListTable>
      )}
      {act.error && (
        <p className="error" role="alert">
          {problem(act.error)}
        </p>
      )}
      {said && <p role="status">{said}</p>}
    </section>
  );
}

/** Every plugin panel for this site's dashboard that the person's `role` on the site may read, below Plumb's own. */
export function PluginPanels({ siteId, range, timezone, role }: { siteId: string; range: DateRange; timezone: string; role?: SiteRole }) {
  const moment = useMemo(() => new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short', timeZone: timezone }), [timezone]);
  const panels = usePluginDashboard();
  return (
    <>
      {(panels.data?.site_panels ?? [])
        .filter((panel) => reaches(panel.role, role))
        .map((panel) => (
          <PluginPanel key={`${panel.plugin}/${panel.id}`} panel={panel} siteId={siteId} query={{ from: range.from, to: range.to }} moment={moment} role={role} />
        ))}
    </>
  );
}
