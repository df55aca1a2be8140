// Visitors and pageviews over time, drawn with uPlot (small, canvas, fast). The data is also
// offered as a table for screen readers.
import { useEffect, useRef, useState } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { RangeView } from '../api.ts';
import { onThemeChange } from '../theme.ts';

export interface Series {
  label: string;
  values: number[];
}

function bucketLabel(iso: string, interval: RangeView['interval'], timezone: string): string {
  const options: Intl.DateTimeFormatOptions =
    interval === 'hour' ? { hour: 'numeric', minute: '2-digit', timeZone: timezone } : interval === 'month' ? { month: 'short', year: 'numeric', timeZone: timezone } : { day: 'numeric', month: 'short', timeZone: timezone };
  return new Intl.DateTimeFormat(undefined, options).format(new Date(iso));
}

const css = (name: string) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

export function TimeChart({ buckets, series, interval, timezone, title }: { buckets: string[]; series: Series[]; interval: RangeView['interval']; timezone: string; title: string }) {
  const host = useRef<HTMLDivElement>(null);
  const [theme, setTheme] = useState(0);
  useEffect(() => onThemeChange(() => setTheme((n) => n + 1)), []);

  useEffect(() => {
    // Read by the colours below; a new value means they changed.
    void theme;
    const el = host.current;
    if (!el) return;
    const colors = [css('--accent'), css('--accent-2')];
    const grid = css('--border');
    const text = css('--muted');
    const xs = buckets.map((b) => Date.parse(b) / 1000);
    const plot = new uPlot(
      {
        width: el.clientWidth,
        height: 240,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), timezone),
        legend: { show: true, live: true },
        cursor: { points: { size: 6 } },
        scales: { y: { range: (_u, _min, max) => [0, Math.max(4, Math.ceil(max * 1.1))] } },
        axes: [
          { stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid } },
          { stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid }, size: 48 },
        ],
        series: [
          { label: 'Time', value: (_u, v) => (v == null ? '' : bucketLabel(new Date(v * 1000).toISOString(), interval, timezone)) },
          ...series.map((s, i) => ({ label: s.label, stroke: colors[i % colors.length], width: 2, fill: i === 0 ? `${colors[0]}22` : undefined, points: { show: xs.length < 40 } })),
        ],
      },
      [xs, ...series.map((s) => s.values)],
      el,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: el.clientWidth, height: 240 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [buckets, series, interval, timezone, theme]);

  return (
    <figure className="chart" data-testid="chart">
      <figcaption className="visually-hidden">{title}</figcaption>
      <div ref={host} className="chart-canvas" aria-hidden />
      <table className="visually-hidden">
        <thead>
          <tr>
            <th scope="col">Time</th>
            {series.map((s) => (
              <th key={s.label} scope="col">
                {s.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {buckets.map((b, i) => (
            <tr key={b}>
              <th scope="row">{bucketLabel(b, interval, timezone)}</th>
              {series.map((s) => (
                <td key={s.label}>{s.values[i]}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}
