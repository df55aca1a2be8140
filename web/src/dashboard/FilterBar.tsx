// Active filters as removable chips.
import { X } from 'lucide-react';
import { describeFilter, type Filter } from './filters.ts';

export function FilterBar({ filters, onRemove }: { filters: Filter[]; onRemove(index: number): void }) {
  if (filters.length === 0) return null;
  return (
    <ul className="filter-bar" aria-label="Active filters">
      {filters.map((f, i) => (
        <li key={`${f.dimension}:${f.value}`} className="chip">
          <span>{describeFilter(f)}</span>
          <button type="button" aria-label={`Remove filter: ${describeFilter(f)}`} onClick={() => onRemove(i)}>
            <X aria-hidden size={14} />
          </button>
        </li>
      ))}
    </ul>
  );
}
