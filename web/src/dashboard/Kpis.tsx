// KPI cards with the change against the previous period.
import type { Kpis as KpiValues } from '../api.ts';
import { change, formatDuration, formatNumber, formatPercent } from './format.ts';

type Key = 'visitors' | 'visits' | 'pageviews' | 'views_per_visit' | 'bounce_rate' | 'visit_duration';

const CARDS: { key: Key; label: string; format(n: number): string; lowerIsBetter?: boolean }[] = [
  { key: 'visitors', label: 'Visitors', format: formatNumber },
  { key: 'visits', label: 'Visits', format: formatNumber },
  { key: 'pageviews', label: 'Pageviews', format: formatNumber },
  { key: 'views_per_visit', label: 'Views per visit', format: (n) => String(Math.round(n * 100) / 100) },
  { key: 'bounce_rate', label: 'Bounce rate', format: formatPercent, lowerIsBetter: true },
  { key: 'visit_duration', label: 'Visit duration', format: formatDuration },
];

/** `comparison` (the previous period's figures) may arrive later than `kpis`; the changes appear then. */
export function Kpis({ kpis, comparison }: { kpis: KpiValues; comparison?: KpiValues }) {
  return (
    <section aria-label="Key figures" className="kpis" data-testid="kpis">
      {CARDS.map((card) => {
        const value = kpis[card.key];
        const delta = change(value, comparison?.[card.key]);
        const good = delta !== null && delta !== 0 && (delta > 0) !== Boolean(card.lowerIsBetter);
        return (
          <div key={card.key} className="kpi" data-kpi={card.key}>
            <p className="kpi-label">{card.label}</p>
            <p className="kpi-value" data-testid={`kpi-${card.key}`}>
              {card.format(value)}
            </p>
            {delta === null && (
              // Holds the line the change will take, so the cards do not grow when it arrives.
              <p className="kpi-change" aria-hidden="true">
                &nbsp;
              </p>
            )}
            {delta !== null && (
              <p className={`kpi-change ${delta === 0 ? '' : good ? 'good' : 'bad'}`}>
                <span aria-hidden>{delta > 0 ? '↑' : delta < 0 ? '↓' : '→'}</span> {Math.abs(delta)}%
                <span className="visually-hidden"> {delta >= 0 ? 'more' : 'less'} than the previous period</span>
              </p>
            )}
          </div>
        );
      })}
    </section>
  );
}
