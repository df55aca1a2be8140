// The dashboard's state lives in the URL (period, custom dates, filters), so every view can be
// bookmarked, shared and restored with the back button.
import { useCallback, useMemo } from 'react';
import { useSearchParams } from 'react-router';
import { type Filter, formatFilter, parseFilter } from './filters.ts';
import { type DateRange, DEFAULT_PERIOD, isPeriod, type Period, rangeOf } from './range.ts';

export interface DashboardState {
  period: Period;
  range: DateRange;
  filters: Filter[];
  /** False when the URL says with_imported=false: figures imported from other tools are left out. */
  withImported: boolean;
  setWithImported(shown: boolean): void;
  setPeriod(period: Period, custom?: DateRange): void;
  addFilter(filter: Filter): void;
  removeFilter(index: number): void;
  /** Other URL parameters a view keeps (the events explorer's selections). */
  params: URLSearchParams;
  setParams(changes: Record<string, string | null>): void;
}

export function useDashboardState(timezone: string): DashboardState {
  const [params, setSearch] = useSearchParams();
  const rawPeriod = params.get('period');
  const period: Period = isPeriod(rawPeriod) ? rawPeriod : DEFAULT_PERIOD;
  const from = params.get('from');
  const to = params.get('to');
  const filterTexts = params.getAll('filter').join('\n');

  const range = useMemo(() => rangeOf(period, timezone, { from: from ?? undefined, to: to ?? undefined }), [period, timezone, from, to]);
  const filters = useMemo(
    () =>
      filterTexts
        .split('\n')
        .map(parseFilter)
        .filter((f): f is Filter => f !== null),
    [filterTexts],
  );

  const update = useCallback(
    (change: (next: URLSearchParams) => void) =>
      setSearch((current) => {
        const next = new URLSearchParams(current);
        change(next);
        return next;
      }),
    [setSearch],
  );

  return {
    period,
    range,
    filters,
    withImported: params.get('with_imported') !== 'false',
    setWithImported: (shown) =>
      update((next) => {
        if (shown) next.delete('with_imported');
        else next.set('with_imported', 'false');
      }),
    params,
    setPeriod: (p, custom) =>
      update((next) => {
        if (p === DEFAULT_PERIOD) next.delete('period');
        else next.set('period', p);
        next.delete('from');
        next.delete('to');
        if (p === 'custom' && custom) {
          next.set('from', custom.from);
          next.set('to', custom.to);
        }
      }),
    addFilter: (filter) =>
      update((next) => {
        const kept = next.getAll('filter').filter((text) => parseFilter(text)?.dimension !== filter.dimension);
        next.delete('filter');
        for (const text of [...kept, formatFilter(filter)]) next.append('filter', text);
      }),
    removeFilter: (index) =>
      update((next) => {
        const kept = filters.filter((_, i) => i !== index).map(formatFilter);
        next.delete('filter');
        for (const text of kept) next.append('filter', text);
      }),
    setParams: (changes) =>
      update((next) => {
        for (const [key, value] of Object.entries(changes)) {
          if (value === null) next.delete(key);
          else next.set(key, value);
        }
      }),
  };
}

/** Query parameters of a stats request for this state; imported figures are the server's default, so only leaving them out is said. */
export function statsQuery(state: Pick<DashboardState, 'range' | 'filters' | 'withImported'>) {
  const query = { from: state.range.from, to: state.range.to, filter: state.filters.map(formatFilter) };
  return state.withImported ? query : { ...query, with_imported: 'false' };
}
