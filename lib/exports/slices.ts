// A large export read a slice at a time. One SELECT over millions of rows sorted by time makes
// ClickHouse read every part at once in order (8M pageviews as CSV: +450 MiB of the node's memory),
// while the same rows read as slices of consecutive days, each sorted on its own and read one
// after another, cost what one slice does (+235 MiB, most of it the engine's first-read warm-up,
// which the next export does not pay again). The slices are found first from a count of rows a
// day, and run in order, so the rows and their order are the same as one query's.
import type { AnalyticsStore, Params, RowFormat } from '../stores/analytics/index.ts';

/** Rows a slice holds at most (whole days: a day with more is a slice of its own). */
const SLICE_ROWS = 200_000;

/** A SELECT whose time column is bounded by `{from:DateTime64(3)}` and `{to:DateTime64(3)}`, one slice bound at a time. */
export interface SlicedQuery {
  sql: string;
  params: Params;
  /** Where the rows are: the tenant table and its time column (a DateTime64 or a Date). */
  table: string;
  time: string;
  /** The whole span asked for; absent: everything of the site. */
  range?: { from: Date; to: Date };
}

interface Slice {
  from: Date;
  to: Date;
}

/** The slices of the query's span: whole UTC days with rows, packed in order up to SLICE_ROWS rows each. */
export async function slicesOf(store: AnalyticsStore, query: SlicedQuery): Promise<Slice[]> {
  const bounded = query.range ? `AND ${query.time} >= {from:DateTime64(3)} AND ${query.time} < {to:DateTime64(3)}` : '';
  const days = await store.query<{ day: string; rows: string }>(
    `SELECT toString(toDate(${query.time})) AS day, toString(count()) AS rows
       FROM {db:Identifier}.${query.table}
      WHERE site_id = {site:UUID} ${bounded}
      GROUP BY day ORDER BY day`,
    { db: query.params.db, site: query.params.site, ...(query.range ?? {}) },
  );
  const slices: Slice[] = [];
  let current: (Slice & { rows: number }) | undefined;
  for (const { day, rows } of days) {
    const from = new Date(`${day}T00:00:00.000Z`);
    const to = new Date(from.getTime() + 86_400_000);
    if (current && current.rows + Number(rows) <= SLICE_ROWS) {
      current.to = to;
      current.rows += Number(rows);
    } else {
      if (current) slices.push(current);
      current = { from, to, rows: Number(rows) };
    }
  }
  if (current) slices.push(current);
  // The first and last slices keep to the span asked for (its bounds need not be whole UTC days).
  const range = query.range;
  return slices.map(({ from, to }) => ({ from: range && from < range.from ? range.from : from, to: range && to > range.to ? range.to : to }));
}

/** The query's bytes in `format`, slice after slice: what one query would give. Break to cancel. */
export async function* slicedBytes(store: AnalyticsStore, query: SlicedQuery, format: RowFormat): AsyncIterable<Uint8Array> {
  for (const slice of await slicesOf(store, query)) yield* store.streamBytes(query.sql, { ...query.params, ...slice }, format);
}

/** The query's rows, slice after slice. Break to cancel. */
export async function* slicedRows<T>(store: AnalyticsStore, query: SlicedQuery): AsyncIterable<T> {
  for (const slice of await slicesOf(store, query)) yield* store.stream<T>(query.sql, { ...query.params, ...slice });
}
