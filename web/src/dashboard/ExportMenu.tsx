// "Export" on the site dashboard: the raw rows behind the figures (pageviews or AI fetches) over
// the dashboard's current range, as a file. The download is a plain link the browser follows with
// the session cookie and streams to disk: nothing of a large file passes through the page.
import { Download } from 'lucide-react';
import { useEffect, useId, useRef, useState } from 'react';
import { exportHref, FILE_FORMATS, type FormatId, RAW_TABLES, type TableId } from './export-link.ts';
import { type DateRange, describeRange } from './range.ts';

export function ExportMenu({ siteId, range, timezone }: { siteId: string; range: DateRange; timezone: string }) {
  const [open, setOpen] = useState(false);
  const [table, setTable] = useState<TableId>('pageviews');
  const [format, setFormat] = useState<FormatId>('csv');
  const id = useId();
  const wrap = useRef<HTMLDivElement>(null);
  const toggle = useRef<HTMLButtonElement>(null);
  const firstChoice = useRef<HTMLInputElement>(null);

  useEffect(() => {
    if (!open) return;
    firstChoice.current?.focus();
    // A click or focus anywhere else closes it, as a menu does; Escape closes it and gives the focus back.
    const outside = (e: Event) => {
      if (wrap.current && !wrap.current.contains(e.target as Node)) setOpen(false);
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return;
      setOpen(false);
      toggle.current?.focus();
    };
    document.addEventListener('pointerdown', outside);
    document.addEventListener('focusin', outside);
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('pointerdown', outside);
      document.removeEventListener('focusin', outside);
      document.removeEventListener('keydown', onKey);
    };
  }, [open]);

  return (
    <div className="popover-wrap" ref={wrap}>
      <button ref={toggle} type="button" className="button" aria-expanded={open} aria-controls={id} onClick={() => setOpen(!open)}>
        <Download aria-hidden size={16} />
        Export
      </button>
      {open && (
        <div className="popover stack" id={id} role="dialog" aria-labelledby={`${id}-title`}>
          <h2 id={`${id}-title`} className="popover-title">
            Export raw data
          </h2>
          <fieldset className="choices">
            <legend>What</legend>
            {RAW_TABLES.map((t, i) => (
              <label key={t.id} className="check">
                <input ref={i === 0 ? firstChoice : undefined} type="radio" name={`${id}-table`} value={t.id} checked={table === t.id} onChange={() => setTable(t.id)} />
                <span>{t.label}</span>
              </label>
            ))}
          </fieldset>
          <label className="field">
            <span>Format</span>
            <select value={format} onChange={(e) => setFormat(e.target.value as FormatId)}>
              {FILE_FORMATS.map((f) => (
                <option key={f.id} value={f.id}>
                  {f.label}
                </option>
              ))}
            </select>
          </label>
          <p className="small" data-testid="export-range">
            <span className="muted">Range: </span>
            {describeRange(range)} <span className="muted">({timezone})</span>
          </p>
          <p className="muted small">One row per {table === 'pageviews' ? 'pageview' : 'fetch'}, oldest first; times in UTC. Change the range on the dashboard to export another.</p>
          <a className="button primary" href={exportHref(siteId, table, range, format)} download onClick={() => setOpen(false)}>
            <Download aria-hidden size={16} />
            Download
          </a>
        </div>
      )}
    </div>
  );
}
