// Breakdown panels (pages, sources, campaigns, locations, devices), each with its tabs in one row
// under its title; a row is a button that filters the whole dashboard by its value.
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, type BreakdownResponse } from '../api.ts';
import { BarRows } from './BarRows.tsx';
import { countryName, type Filter } from './filters.ts';
import { NOUNS, valueLabel } from './format.ts';
import { PANELS, type Tab } from './panels.ts';
import { SourceIcon } from './SourceIcon.tsx';

const displayValue = (tab: Tab, value: string) => (tab.filter === 'country' && value !== '' ? countryName(value) : valueLabel(value));
const hasIcons = (tab: Tab) => tab.filter === 'source' || tab.filter === 'referrer';

interface PanelsProps {
  base: string;
  query: Record<string, string | string[]>;
  onFilter(f: Filter): void;
  /** False until the KPIs' request is on its way, so it reaches the server before the panels'. */
  ready: boolean;
}

function Panel({ title, tabs, base, query, onFilter, ready }: PanelsProps & { title: string; tabs: Tab[] }) {
  const [active, setActive] = useState(0);
  const tab = tabs[active];
  const result = useQuery({
    queryKey: ['breakdown', base, tab.dimension, query],
    queryFn: ({ signal }) => api<BreakdownResponse>(`${base}/stats/breakdown`, { query: { ...query, dimension: tab.dimension, limit: 10 }, signal }),
    enabled: ready,
    // Same tab, new range or filter: keep the rows until the new ones are in. Another tab: no rows
    // of the wrong kind in the meantime.
    placeholderData: (previous, query) => (query?.queryKey[2] === tab.dimension ? keepPreviousData(previous) : undefined),
  });
  const rows = result.data?.rows ?? [];
  const id = `panel-${title.toLowerCase()}`;
  return (
    <section className="card panel" aria-labelledby={`${id}-title`} data-panel={title}>
      <header className="panel-head">
        <h2 id={`${id}-title`}>{title}</h2>
      </header>
      {tabs.length > 1 && (
        <div className="tabs">
          {tabs.map((t, i) => (
            <button key={t.dimension} type="button" aria-pressed={i === active} onClick={() => setActive(i)}>
              {t.label}
            </button>
          ))}
        </div>
      )}
      <div className="panel-columns" aria-hidden>
        <span>{tab.label}</span>
        <span>Visitors</span>
      </div>
      <p id={`${id}-hint`} className="visually-hidden">
        Choose a row to filter the dashboard by it.
      </p>
      {result.isPending && <p className="muted small">Loading…</p>}
      {result.isError && <p className="error small">Could not load {tab.label.toLowerCase()}.</p>}
      {result.isSuccess && rows.length === 0 && <p className="muted small">No data for this range.</p>}
      {rows.length > 0 && (
        <BarRows
          rows={rows.map((row) => ({ value: row.value, label: displayValue(tab, row.value), count: row.visitors, icon: hasIcons(tab) ? <SourceIcon source={row.value} /> : undefined }))}
          unit={NOUNS.visitor}
          hint={`${id}-hint`}
          onPick={(value) => onFilter({ dimension: tab.filter, op: 'is', value })}
        />
      )}
    </section>
  );
}

export function Breakdowns(props: PanelsProps) {
  return (
    <div className="panels">
      {PANELS.map((p) => (
        <Panel key={p.title} title={p.title} tabs={p.tabs} {...props} />
      ))}
    </div>
  );
}
