// Period buttons and custom dates. Realtime is offered only where the live feed is reachable.
// Given the site's time zone, it says which clock the days and hours follow.
import { useState } from 'react';
import { zoneNote } from './dates.ts';
import { type DateRange, describeRange, PERIODS, type Period } from './range.ts';
import { submitHandler } from '../forms.ts';

export function RangePicker({
  period,
  range,
  onChange,
  realtime = true,
  timezone,
}: {
  period: Period;
  range: DateRange;
  onChange(period: Period, custom?: DateRange): void;
  realtime?: boolean;
  timezone?: string;
}) {
  const [custom, setCustom] = useState(period === 'custom');
  const [from, setFrom] = useState(range.from);
  const [to, setTo] = useState(range.to);
  const apply = submitHandler(() => onChange('custom', { from, to }));
  return (
    <div className="range-picker">
      <fieldset className="segmented">
        <legend className="visually-hidden">Date range</legend>
        {PERIODS.filter((p) => realtime || p.id !== 'realtime').map((p) => (
          <button
            key={p.id}
            type="button"
            aria-pressed={p.id === 'custom' ? custom || period === 'custom' : period === p.id && !custom}
            onClick={() => {
              if (p.id === 'custom') {
                setCustom(true);
                setFrom(range.from);
                setTo(range.to);
              } else {
                setCustom(false);
                onChange(p.id);
              }
            }}
          >
            {p.label}
          </button>
        ))}
      </fieldset>
      {custom && (
        <form className="custom-range" onSubmit={apply}>
          <label className="field inline">
            <span>From</span>
            <input type="date" name="from" value={from} max={to} onChange={(e) => setFrom(e.target.value)} required />
          </label>
          <label className="field inline">
            <span>To</span>
            <input type="date" name="to" value={to} min={from} onChange={(e) => setTo(e.target.value)} required />
          </label>
          <button type="submit" className="button">
            Apply
          </button>
        </form>
      )}
      {(period !== 'realtime' || timezone) && (
        <p className="range-label">
          {period !== 'realtime' && <span>{describeRange(range)}</span>}
          {timezone && <span data-testid="time-zone">{zoneNote(timezone)}</span>}
        </p>
      )}
    </div>
  );
}
