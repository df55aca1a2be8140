// Events explorer: pick a custom event, see it over time, break it down by a property, and see
// who sent it. At most two filters apply at once: one property value and one
// audience dimension; with both set, nothing in the UI can add a third.
import { useQuery } from '@tanstack/react-query';
import { X } from 'lucide-react';
import { type FormEvent, useMemo, useState } from 'react';
import { type Audience, type AudienceRow, api, type EventBreakdownRow, type EventDimension, type EventNameRow, type EventTimeseries, type PropertyKeyRow } from '../api.ts';
import { BarRows } from './BarRows.tsx';
import { countryName } from './filters.ts';
import { formatNumber, NOUNS, nounFor, valueLabel } from './format.ts';
import { describeRange } from './range.ts';
import { RangePicker } from './RangePicker.tsx';
import { SourceIcon } from './SourceIcon.tsx';
import { useDashboardState } from './state.ts';
import { TimeChart } from './TimeChart.tsx';

const AUDIENCE: { key: EventDimension; title: string }[] = [
  { key: 'path', title: 'Top pages' },
  { key: 'referrer', title: 'Top sources' },
  { key: 'device', title: 'Devices' },
  { key: 'country', title: 'Countries' },
];
const DIMENSION_LABEL: Record<EventDimension, string> = { path: 'Page', referrer: 'Source', device: 'Device', country: 'Country' };

function Rows({ rows, disabled, onPick, format = (v) => v, icons = false }: { rows: AudienceRow[]; disabled: boolean; onPick(value: string): void; format?(v: string): string; icons?: boolean }) {
  if (rows.length === 0) return <p className="muted small">No data for this range.</p>;
  return (
    <BarRows
      rows={rows.map((r) => ({ value: r.value, label: r.value === '' ? valueLabel('') : format(r.value), count: r.unique_sessions, icon: icons ? <SourceIcon source={r.value} /> : undefined }))}
      unit={NOUNS.session}
      hint="event-filter-hint"
      disabled={disabled}
      onPick={onPick}
    />
  );
}

export function EventsView({ base, timezone }: { base: string; timezone: string }) {
  const state = useDashboardState(timezone);
  const { from, to } = state.range;
  const p = state.params;
  const propertyFilter = p.get('pk') !== null && p.get('pv') !== null ? { key: p.get('pk')!, value: p.get('pv')! } : null;
  const dk = p.get('dk');
  const audienceFilter = dk && ['path', 'referrer', 'device', 'country'].includes(dk) && p.get('dv') !== null ? { key: dk as EventDimension, value: p.get('dv')! } : null;

  const names = useQuery({
    queryKey: ['event-names', base, from, to],
    queryFn: ({ signal }) => api<{ rows: EventNameRow[] }>(`${base}/events/names`, { query: { from, to }, signal }),
  });
  const event = p.get('event') ?? names.data?.rows[0]?.name ?? null;
  const filterQuery = {
    from,
    to,
    event_name: event ?? '',
    property_key: propertyFilter?.key,
    property_value: propertyFilter?.value,
    dimension_key: audienceFilter?.key,
    dimension_value: audienceFilter?.value,
  };
  const series = useQuery({
    queryKey: ['event-series', base, filterQuery],
    queryFn: ({ signal }) => api<EventTimeseries>(`${base}/events/timeseries`, { query: filterQuery, signal }),
    enabled: event !== null,
  });
  const audience = useQuery({
    queryKey: ['event-audience', base, filterQuery],
    queryFn: ({ signal }) => api<Audience>(`${base}/events/audience`, { query: filterQuery, signal }),
    enabled: event !== null,
  });
  const properties = useQuery({
    queryKey: ['event-properties', base, from, to, event],
    queryFn: ({ signal }) => api<{ rows: PropertyKeyRow[] }>(`${base}/events/properties`, { query: { from, to, event_name: event ?? '' }, signal }),
    enabled: event !== null,
  });
  const propertyKey = p.get('key') ?? properties.data?.rows[0]?.key ?? null;
  const breakdown = useQuery({
    queryKey: ['event-breakdown', base, from, to, event, propertyKey],
    queryFn: ({ signal }) => api<{ rows: EventBreakdownRow[] }>(`${base}/events/breakdown`, { query: { from, to, event_name: event ?? '', property_key: propertyKey ?? '' }, signal }),
    enabled: event !== null && propertyKey !== null,
  });

  // Events add up over buckets; sessions do not (one session may span two days), so the total of
  // sessions is the event list's own count, known only while no filter narrows the chart.
  const unfiltered = propertyFilter === null && audienceFilter === null;
  const sessionsTotal = unfiltered ? names.data?.rows.find((n) => n.name === event)?.unique_sessions : undefined;
  const chart = useMemo(() => {
    const rows = series.data?.rows ?? [];
    return {
      buckets: rows.map((r) => r.bucket),
      series: [
        { label: 'Sessions', values: rows.map((r) => r.unique_sessions), total: sessionsTotal },
        { label: 'Events', values: rows.map((r) => r.events), total: rows.reduce((sum, r) => sum + r.events, 0) },
      ],
    };
  }, [series.data, sessionsTotal]);

  const chooseEvent = (name: string) => state.setParams({ event: name, key: null, pk: null, pv: null, dk: null, dv: null });

  return (
    <div className="dashboard">
      <div className="toolbar">
        <RangePicker key={state.period} period={state.period === 'realtime' ? 'today' : state.period} range={state.range} onChange={state.setPeriod} realtime={false} timezone={timezone} />
      </div>
      {names.isSuccess && names.data.rows.length === 0 && <p className="muted">No custom events in this range.</p>}
      {names.data && names.data.rows.length > 0 && (
        <div className="events-layout">
          <section className="card panel" aria-labelledby="event-names">
            <h2 id="event-names">Events</h2>
            <ol className="rows">
              {names.data.rows.map((n) => (
                <li key={n.name}>
                  <button type="button" className="row" aria-pressed={n.name === event} onClick={() => chooseEvent(n.name)}>
                    <span className="row-label">
                      <span className="row-text">{n.name}</span>
                    </span>
                    <span className="row-value">
                      {formatNumber(n.unique_sessions)}
                      <span className="visually-hidden">{` ${nounFor(n.unique_sessions, NOUNS.session)}`}</span>
                    </span>
                  </button>
                </li>
              ))}
            </ol>
          </section>
          <div className="stack">
            <EventFilters
              propertyFilter={propertyFilter}
              audienceFilter={audienceFilter}
              propertyKeys={properties.data?.rows.map((r) => r.key) ?? []}
              onAdd={(changes) => state.setParams(changes)}
            />
            <section className="card" aria-label={`${event} over time`}>
              <h2>{event}</h2>
              {series.data && (
                <TimeChart
                  title={`${event}: sessions and events over time`}
                  buckets={chart.buckets}
                  series={chart.series}
                  interval={series.data.interval}
                  timezone={timezone}
                  totalsLabel={describeRange(state.range)}
                />
              )}
            </section>
            <div className="panels">
              <section className="card panel" aria-labelledby="event-props">
                <header className="panel-head">
                  <h2 id="event-props">Properties</h2>
                </header>
                {properties.data && properties.data.rows.length > 0 && (
                  <div className="tabs">
                    {properties.data.rows.map((r) => (
                      <button key={r.key} type="button" aria-pressed={r.key === propertyKey} onClick={() => state.setParams({ key: r.key })}>
                        {r.key}
                      </button>
                    ))}
                  </div>
                )}
                {properties.data?.rows.length === 0 && <p className="muted small">This event has no properties.</p>}
                {breakdown.data && propertyKey && (
                  <Rows rows={breakdown.data.rows} disabled={propertyFilter !== null} onPick={(value) => state.setParams({ pk: propertyKey, pv: value })} />
                )}
              </section>
              {AUDIENCE.map((a) => (
                <section key={a.key} className="card panel" aria-labelledby={`aud-${a.key}`}>
                  <h2 id={`aud-${a.key}`}>{a.title}</h2>
                  {audience.data && (
                    <Rows
                      rows={audience.data[a.key]}
                      disabled={audienceFilter !== null}
                      format={a.key === 'country' ? countryName : undefined}
                      icons={a.key === 'referrer'}
                      onPick={(value) => state.setParams({ dk: a.key, dv: value })}
                    />
                  )}
                </section>
              ))}
            </div>
            <p id="event-filter-hint" className="visually-hidden">
              Choose a row to filter the event by it: one property value and one audience value at most.
            </p>
          </div>
        </div>
      )}
    </div>
  );
}

function EventFilters({
  propertyFilter,
  audienceFilter,
  propertyKeys,
  onAdd,
}: {
  propertyFilter: { key: string; value: string } | null;
  audienceFilter: { key: EventDimension; value: string } | null;
  propertyKeys: string[];
  onAdd(changes: Record<string, string | null>): void;
}) {
  const [open, setOpen] = useState(false);
  // A property filter needs a property to choose; the audience one is always possible.
  const kinds = [propertyFilter || propertyKeys.length === 0 ? null : 'property', audienceFilter ? null : 'audience'].filter((k): k is 'property' | 'audience' => k !== null);
  const full = propertyFilter !== null && audienceFilter !== null;
  const [kind, setKind] = useState<'property' | 'audience'>('property');
  const [key, setKey] = useState('');
  const [value, setValue] = useState('');
  const activeKind = kinds.includes(kind) ? kind : kinds[0];
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (activeKind === 'property') onAdd({ pk: key || propertyKeys[0] || '', pv: value });
    else onAdd({ dk: key || 'path', dv: value });
    setOpen(false);
    setKey('');
    setValue('');
  };
  return (
    <section className="event-filters" aria-label="Event filters">
      <ul className="filter-bar" aria-label="Active filters">
        {propertyFilter && (
          <li className="chip">
            <span>
              Property {propertyFilter.key} is {propertyFilter.value}
            </span>
            <button type="button" aria-label={`Remove filter: property ${propertyFilter.key} is ${propertyFilter.value}`} onClick={() => onAdd({ pk: null, pv: null })}>
              <X aria-hidden size={14} />
            </button>
          </li>
        )}
        {audienceFilter && (
          <li className="chip">
            <span>
              {DIMENSION_LABEL[audienceFilter.key]} is {audienceFilter.key === 'country' ? countryName(audienceFilter.value) : audienceFilter.value}
            </span>
            <button type="button" aria-label={`Remove filter: ${DIMENSION_LABEL[audienceFilter.key].toLowerCase()} is ${audienceFilter.value}`} onClick={() => onAdd({ dk: null, dv: null })}>
              <X aria-hidden size={14} />
            </button>
          </li>
        )}
        <li>
          <button type="button" className="button small" disabled={kinds.length === 0} aria-expanded={open} onClick={() => setOpen(!open)}>
            Add filter
          </button>
        </li>
      </ul>
      {full && <p className="muted small" data-testid="filter-limit">At most two filters apply: one property value and one audience dimension. Remove one to change it.</p>}
      {open && kinds.length > 0 && (
        <form className="inline-form" onSubmit={submit}>
          {kinds.length > 1 && (
            <label className="field inline">
              <span>Filter on</span>
              <select value={activeKind} onChange={(e) => setKind(e.target.value as 'property' | 'audience')}>
                <option value="property">a property value</option>
                <option value="audience">who sent it</option>
              </select>
            </label>
          )}
          {activeKind === 'property' ? (
            <label className="field inline">
              <span>Property</span>
              <select value={key || propertyKeys[0] || ''} onChange={(e) => setKey(e.target.value)}>
                {propertyKeys.map((k) => (
                  <option key={k}>{k}</option>
                ))}
              </select>
            </label>
          ) : (
            <label className="field inline">
              <span>Dimension</span>
              <select value={key || 'path'} onChange={(e) => setKey(e.target.value)}>
                {(Object.keys(DIMENSION_LABEL) as EventDimension[]).map((d) => (
                  <option key={d} value={d}>
                    {DIMENSION_LABEL[d]}
                  </option>
                ))}
              </select>
            </label>
          )}
          <label className="field inline">
            <span>Value</span>
            <input value={value} onChange={(e) => setValue(e.target.value)} required />
          </label>
          <button type="submit" className="button">
            Apply
          </button>
        </form>
      )}
    </section>
  );
}
