// The column layouts in which a pageview's hit is journaled and inserted, and its visit's state
// inserted: one array of values a row (JSONCompactEachRow), not an object with every key name.
// The store parses half the bytes at ~40% less CPU per row, and the journal writes and checksums
// half the bytes. A journal record names the version of the layout its values are in, so a
// layout can change (a new column) while records in the old one still wait in a journal: add a
// version, never edit one that has shipped.
import { rowWriter } from '../stores/analytics/transport.ts';
import type { AnalyticsTable } from './pipeline.ts';

/** The columns of a table's rows, in the order of the values of its compact lines. */
export interface RowLayout {
  version: number;
  columns: readonly string[];
}

const SHARED_COLUMNS = ['referrer', 'referrer_source', 'channel', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content', 'country', 'region', 'browser', 'os', 'device'];

/**
 * Every layout of each table, by version. hitRow (lib/ingest/context.ts) and visitRow
 * (lib/ingest/visits.ts) produce exactly these keys; a test holds them to it. A visits layout
 * begins with site_id, session_id and sign: the writer turns a state's line into its cancellation
 * by rewriting the sign in place.
 */
const LAYOUTS: Partial<Record<AnalyticsTable, readonly RowLayout[]>> = {
  hits: [
    {
      version: 1,
      columns: ['ts', 'site_id', 'session_id', 'visitor_id', 'path', 'hostname', ...SHARED_COLUMNS, 'browser_version', 'os_version', 'hit_id', 'screen_width', 'engagement_ms', 'is_entry', 'source'],
    },
  ],
  visits: [
    {
      version: 1,
      columns: [
        'site_id',
        'session_id',
        'sign',
        'version',
        'visitor_id',
        'start',
        'first_ts',
        'last_ts',
        'visit_pageviews',
        'events',
        'visit_engagement_ms',
        'entry_page',
        'exit_page',
        'pages',
        'page_hits',
        'hostnames',
        'hostname_hits',
        ...SHARED_COLUMNS,
      ],
    },
  ],
};

/** The layout a table's rows are written in now, or undefined for a table written as JSON objects. */
export function currentLayout(table: string): RowLayout | undefined {
  const layouts = LAYOUTS[table as AnalyticsTable];
  return layouts?.[layouts.length - 1];
}

/** The columns of a layout a journal record names; one this version does not know is refused. */
export function layoutColumns(table: string, version: unknown): readonly string[] {
  const layout = LAYOUTS[table as AnalyticsTable]?.find((candidate) => candidate.version === version);
  if (!layout) throw new Error(`journal record of ${table} in layout ${JSON.stringify(version)}, which this version of Plumb does not know (written by a newer one?)`);
  return layout.columns;
}

/** Rows to read lines into, one per layout's columns: each read overwrites every column of its layout's row. */
export type ScratchRows = Map<readonly string[], Record<string, unknown>>;

/** A row from the values of a compact line: a new object, or with `scratch` the one row kept there for these columns, every column set again. */
export function rowOfValues(columns: readonly string[], values: readonly unknown[], scratch?: ScratchRows): Record<string, unknown> {
  let row = scratch?.get(columns);
  if (row === undefined) {
    row = {};
    scratch?.set(columns, row);
  }
  return rowWriter(columns)(row, values);
}

/**
 * A journal line's row: the values of `layout`'s columns (into `scratch`'s row for them, when
 * given), or, for a line without a layout, the JSON object it is.
 */
export function rowOfLine(table: string, layout: number | undefined, line: string, scratch?: ScratchRows): Record<string, unknown> {
  const parsed = JSON.parse(line) as Record<string, unknown> | unknown[];
  return layout === undefined ? (parsed as Record<string, unknown>) : rowOfValues(layoutColumns(table, layout), parsed as unknown[], scratch);
}
