// KPI cards, each with its change against the previous period (the same length of time right
// before the range). Every card says it the same way: an arrow and a percentage, "from 0" when
// the previous figure was nothing, and "No previous data" on all of them when the previous
// period had no visits at all, so no card is ever the odd one out.
import type { Kpis as KpiValues } from '../api.ts';
import { change, formatDuration, formatNumber, formatPercent } from './format.ts';

type Key = 'visitors' | 'visits' | 'pageviews' | 'views_per_visit' | 'bounce_rate' | 'visit_duration';

const CARDS: { key: Key; label: string; format(n: number): string; lowerIsBetter?: boolean }[] = [
  { key: 'visitors', label: 'Visitors', format: formatNumber },
  { key: 'visits', label: 'Visits', format: formatNumber },
  { key: 'pageviews', label: 'Pageviews', format: formatNumber },
  { key: 'views_per_visit', label: 'Views per visit', format: formatNumber },
  { key: 'bounce_rate', label: 'Bounce rate', format: formatPercent, lowerIsBetter: true },
  { key: 'visit_duration', label: 'Visit duration', format: formatDuration },
];

function Change({ value, previous, format, lowerIsBetter, period }: { value: number; previous: number; format(n: number): string; lowerIsBetter?: boolean; period: string }) {
  const delta = change(value, previous);
  const rising = delta === null ? value > 0 : delta > 0;
  const falling = delta !== null && delta < 0;
  const tone = !rising && !falling ? '' : rising !== Boolean(lowerIsBetter) ? 'good' : 'bad';
  const arrow = rising ? '↑' : falling ? '↓' : '→';
  return (
    <p className={`kpi-change ${tone}`} title={`${period}: ${format(previous)}`}>
      <span aria-hidden>{arrow}</span> {delta === null ? `from ${format(0)}` : `${formatNumber(Math.abs(delta))}%`}
      <span className="visually-hidden">
        {' '}
        {rising ? 'more' : falling ? 'less' : 'the same'} than the previous period ({format(previous)})
      </span>
    </p>
  );
}

/**
 * `comparison` (the previous period's figures) may arrive later than `kpis`; the changes appear
 * then. `period` names the previous period ("Sep 26 – Oct 26, 2026").
 */
export function Kpis({ kpis, comparison, period }: { kpis: KpiValues; comparison?: KpiValues; period: string }) {
  const empty = comparison !== undefined && comparison.visits === 0;
  return (
    <section aria-label="Key figures" className="kpis" data-testid="kpis">
      {CARDS.map((card) => (
        <div key={card.key} className="kpi" data-kpi={card.key}>
          <p className="kpi-label">{card.label}</p>
          <p className="kpi-value" data-testid={`kpi-${card.key}`}>
            {card.format(kpis[card.key])}
          </p>
          {comparison === undefined ? (
            // Holds the line the change will take, so the cards do not grow when it arrives.
            <p className="kpi-change" aria-hidden="true">
              &nbsp;
            </p>
          ) : empty ? (
            <p className="kpi-change" title={`No visits in the previous period (${period})`}>
              No previous data<span className="visually-hidden"> (no visits in {period})</span>
            </p>
          ) : (
            <Change value={kpis[card.key]} previous={comparison[card.key]} format={card.format} lowerIsBetter={card.lowerIsBetter} period={period} />
          )}
        </div>
      ))}
    </section>
  );
}
