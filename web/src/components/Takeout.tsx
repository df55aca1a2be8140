// A takeout: everything Plumb holds about a site (its settings, goals, funnels, share links and its
// whole analytics history) or about the signed-in account, as one file. Like the dashboard's
// Export it is a plain link: the browser streams the file to disk as the server writes it.
import { Download } from 'lucide-react';
import { useId, useState } from 'react';
import { withQuery } from '../api.ts';

const TAKEOUT_FORMATS = [
  { id: 'xlsx', label: 'Excel (xlsx): one sheet per table' },
  { id: 'csv', label: 'CSV files in a zip' },
  { id: 'json', label: 'JSON files in a zip' },
  { id: 'ndjson', label: 'NDJSON files in a zip' },
  { id: 'parquet', label: 'Parquet files in a zip' },
] as const;

type TakeoutFormat = (typeof TAKEOUT_FORMATS)[number]['id'];

export function TakeoutDownload({ route, description, label }: { route: string; description: string; label: string }) {
  const [format, setFormat] = useState<TakeoutFormat>('xlsx');
  const id = useId();
  return (
    <div className="stack">
      <p>{description}</p>
      <div className="inline-form">
        <label className="field inline" htmlFor={id}>
          <span>Format</span>
          <select id={id} value={format} onChange={(e) => setFormat(e.target.value as TakeoutFormat)}>
            {TAKEOUT_FORMATS.map((f) => (
              <option key={f.id} value={f.id}>
                {f.label}
              </option>
            ))}
          </select>
        </label>
        <a className="button primary" href={withQuery(route, { format })} download>
          <Download aria-hidden size={16} />
          {label}
        </a>
      </div>
      <p className="muted small">The file lists its tables, their columns and row counts in a manifest (the first sheet of the workbook, manifest.json in a zip).</p>
    </div>
  );
}
