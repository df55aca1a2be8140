// A ranked list whose rows are buttons: a bar as wide as the row's share of the top count, the
// label (with an icon where the list has them), the count (with its noun for screen readers).
// Choosing a row filters by its value; a row without a value ("(none)") cannot be chosen.
import type { ReactNode } from 'react';
import { formatNumber, type Noun, nounFor } from './format.ts';

export interface BarRow {
  value: string;
  label: string;
  count: number;
  icon?: ReactNode;
}

export function BarRows({ rows, unit, hint, disabled = false, onPick }: { rows: BarRow[]; unit: Noun; hint: string; disabled?: boolean; onPick(value: string): void }) {
  const max = Math.max(1, ...rows.map((r) => r.count));
  return (
    <ol className="rows">
      {rows.map((r) => (
        <li key={r.value}>
          <button type="button" className="row" disabled={disabled || r.value === ''} aria-describedby={hint} onClick={() => onPick(r.value)}>
            <span className="bar" style={{ width: `${(r.count / max) * 100}%` }} />
            <span className="row-label">
              {r.icon}
              <span className="row-text">{r.label}</span>
            </span>
            <span className="row-value">
              {formatNumber(r.count)}
              <span className="visually-hidden">{` ${nounFor(r.count, unit)}`}</span>
            </span>
          </button>
        </li>
      ))}
    </ol>
  );
}
