// A ranked list whose rows are buttons: a bar as wide as the row's share of the top count, the
// label, the count (with its unit for screen readers). Choosing a row filters by its value; a row
// without a value (direct, not set) cannot be chosen.
import { formatNumber } from './format.ts';

export interface BarRow {
  value: string;
  label: string;
  count: number;
}

export function BarRows({ rows, unit, hint, disabled = false, onPick }: { rows: BarRow[]; unit: string; hint: string; disabled?: boolean; onPick(value: string): void }) {
  const max = Math.max(1, ...rows.map((r) => r.count));
  return (
    <ol className="rows">
      {rows.map((r) => (
        <li key={r.value}>
          <button type="button" className="row" disabled={disabled || r.value === ''} aria-describedby={hint} onClick={() => onPick(r.value)}>
            <span className="bar" style={{ width: `${(r.count / max) * 100}%` }} />
            <span className="row-label">{r.label}</span>
            <span className="row-value">
              {formatNumber(r.count)}
              <span className="visually-hidden">{` ${unit}`}</span>
            </span>
          </button>
        </li>
      ))}
    </ol>
  );
}
