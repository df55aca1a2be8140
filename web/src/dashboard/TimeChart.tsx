// A range's figures over time, drawn with uPlot (small, canvas, fast): labels on whole buckets of
// the interval, whole-number counts, and the previous period as a faint dashed line. The legend
// above it says the range's totals, or the hovered bucket's values (and the previous period's at
// the same place) while the pointer is on the chart. The data is also a table for screen readers.
import { useEffect, useMemo, useRef, useState } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { onThemeChange } from '../theme.ts';
import { bucketLabel, type Interval, tickLabel } from './dates.ts';
import { formatNumber } from './format.ts';
import { bands } from './imported.ts';
import { countTicks, timeTicks } from './ticks.ts';

export interface Series {
  label: string;
  values: number[];
  /** The whole range's figure (unique visitors are not the sum of the buckets'); none: not shown. */
  total?: number;
}

/** The period before, bucket for bucket: its i-th bucket is drawn over the range's i-th. */
export interface PreviousSeries extends Series {
  buckets: string[];
}

const HEIGHT = 240;
const Y_AXIS_PX = 48;

const css = (name: string) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

interface Props {
  title: string;
  buckets: string[];
  series: Series[];
  interval: Interval;
  timezone: string;
  /** What the totals cover ("Oct 27 – Nov 25, 2026"), shown when no bucket is hovered. */
  totalsLabel: string;
  previous?: PreviousSeries;
  /** For each bucket, whether its figures include data imported from another tool: shaded behind the lines. */
  imported?: boolean[];
}

export function TimeChart({ title, buckets, series, interval, timezone, totalsLabel, previous, imported }: Props) {
  const host = useRef<HTMLDivElement>(null);
  const [theme, setTheme] = useState(0);
  const [hovered, setHovered] = useState<number | null>(null);
  useEffect(() => onThemeChange(() => setTheme((n) => n + 1)), []);

  const starts = useMemo(() => buckets.map((b) => Date.parse(b)), [buckets]);
  const before = useMemo(() => (previous ? buckets.map((_, i) => previous.values[i] ?? null) : null), [buckets, previous]);
  const previousLabel = previous?.label;
  const importedRuns = useMemo(() => bands(imported ?? []), [imported]);

  useEffect(() => {
    // Read by the colours below; a new value means they changed.
    void theme;
    const el = host.current;
    if (!el) return;
    const colors = [css('--accent'), css('--accent-2')];
    const grid = css('--border');
    const text = css('--muted');
    const shade = css('--imported-shade');
    const xs = starts.map((ms) => ms / 1000);
    const max = Math.max(0, ...series.flatMap((s) => s.values), ...(before ?? []).map((v) => v ?? 0));
    const severalDays = interval === 'hour' && starts.length > 0 && starts[starts.length - 1] - starts[0] >= 86_400_000;
    const plotWidth = (u: uPlot) => u.bbox.width / uPlot.pxRatio;
    const plotHeight = (u: uPlot) => u.bbox.height / uPlot.pxRatio;
    const plot = new uPlot(
      {
        width: el.clientWidth,
        height: HEIGHT,
        legend: { show: false },
        cursor: { points: { size: 7 }, y: false, drag: { x: false, y: false } },
        scales: {
          x: { time: false, range: (_u, min, max) => (min === max ? [min - 1, max + 1] : [min, max]) },
          y: { range: (u) => [0, countTicks(max, plotHeight(u)).top] },
        },
        axes: [
          {
            stroke: text,
            grid: { stroke: grid, width: 1 },
            ticks: { stroke: grid },
            splits: (u) => timeTicks(starts, interval, timezone, plotWidth(u)).map((i) => xs[i]),
            values: (_u, splits) => splits.map((s) => tickLabel(s * 1000, interval, timezone, severalDays)),
          },
          {
            stroke: text,
            grid: { stroke: grid, width: 1 },
            ticks: { stroke: grid },
            size: Y_AXIS_PX,
            splits: (u) => countTicks(max, plotHeight(u)).ticks,
            values: (_u, splits) => splits.map((s) => formatNumber(s)),
          },
        ],
        series: [
          {},
          ...series.map((s, i) => ({
            label: s.label,
            stroke: colors[i % colors.length],
            width: 2,
            fill: i === 0 ? `${colors[0]}22` : undefined,
            // Dots only where they stand apart: a month on a phone is a line.
            points: { show: (u: uPlot) => plotWidth(u) / Math.max(1, xs.length) >= 16 },
          })),
          ...(before ? [{ label: previousLabel, stroke: `${colors[0]}80`, width: 1.5, dash: [5, 4], points: { show: false } }] : []),
        ],
        hooks: {
          setCursor: [(u: uPlot) => setHovered(u.cursor.idx ?? null)],
          // Imported days as bands behind the grid and the lines, each bucket's band reaching halfway to its neighbours.
          drawClear: [
            (u: uPlot) => {
              if (importedRuns.length === 0) return;
              const at = (i: number) => u.valToPos(xs[i], 'x', true);
              const half = (i: number, side: -1 | 1) => {
                const neighbour = xs[i + side] === undefined ? xs[i - side] : xs[i + side];
                return neighbour === undefined ? u.bbox.width : Math.abs(u.valToPos(neighbour, 'x', true) - at(i)) / 2;
              };
              const { left, top, width, height } = u.bbox;
              u.ctx.save();
              u.ctx.fillStyle = shade;
              for (const [first, last] of importedRuns) {
                const from = Math.max(left, at(first) - half(first, -1));
                const to = Math.min(left + width, at(last) + half(last, 1));
                u.ctx.fillRect(from, top, to - from, height);
              }
              u.ctx.restore();
            },
          ],
        },
      },
      [xs, ...series.map((s) => s.values), ...(before ? [before] : [])],
      el,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: el.clientWidth, height: HEIGHT }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
      setHovered(null);
    };
  }, [starts, before, previousLabel, series, interval, timezone, theme, importedRuns]);

  const at = hovered !== null && hovered < buckets.length ? hovered : null;
  const previousAt = at !== null && previous?.buckets[at] !== undefined ? Date.parse(previous.buckets[at]) : null;
  return (
    <figure className="chart" data-testid="chart">
      <figcaption className="visually-hidden">{title}</figcaption>
      <div className="chart-legend" data-testid="chart-legend" data-hovered={at !== null}>
        <p className="chart-legend-when">{at === null ? totalsLabel : bucketLabel(starts[at], interval, timezone)}</p>
        <ul>
          {series.map((s, i) => {
            const value = at === null ? s.total : s.values[at];
            return (
              <li key={s.label} data-series={s.label}>
                <span className={`swatch swatch-${i}`} aria-hidden />
                {s.label} <strong>{value === undefined ? '' : formatNumber(value)}</strong>
              </li>
            );
          })}
          {previous && (
            <li data-series="previous">
              <span className="swatch swatch-previous" aria-hidden />
              {previous.label}{' '}
              <strong>{at === null ? (previous.total === undefined ? '' : formatNumber(previous.total)) : formatNumber(previous.values[at] ?? 0)}</strong>
              {previousAt !== null && <span className="muted"> {bucketLabel(previousAt, interval, timezone)}</span>}
            </li>
          )}
          {importedRuns.length > 0 && (
            <li data-series="imported">
              <span className="swatch-imported" aria-hidden />
              {at !== null && imported?.[at] ? 'Includes imported data' : 'Imported data'}
            </li>
          )}
        </ul>
      </div>
      <div ref={host} className="chart-canvas" aria-hidden />
      {/* A table is never narrower than its content: hidden in a box, it cannot widen the page. */}
      <div className="visually-hidden">
        <table>
          <thead>
            <tr>
              <th scope="col">Time</th>
              {series.map((s) => (
                <th key={s.label} scope="col">
                  {s.label}
                </th>
              ))}
              {previous && <th scope="col">{previous.label}</th>}
              {importedRuns.length > 0 && <th scope="col">Imported data</th>}
            </tr>
          </thead>
          <tbody>
            {buckets.map((b, i) => (
              <tr key={b}>
                <th scope="row">{bucketLabel(starts[i], interval, timezone)}</th>
                {series.map((s) => (
                  <td key={s.label}>{formatNumber(s.values[i])}</td>
                ))}
                {previous && <td>{formatNumber(previous.values[i] ?? 0)}</td>}
                {importedRuns.length > 0 && <td>{imported?.[i] ? 'included' : '—'}</td>}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </figure>
  );
}
