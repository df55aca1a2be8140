// A large export read a slice at a time. One SELECT over millions of rows sorted by time makes
// ClickHouse read every part at once in order (8M pageviews as CSV: +450 MiB of the node's memory).
// Read as slices of consecutive hours, each sorted on its own and read one after another, the
// rows cost what one slice holds: the engine sorts a whole slice in memory (a 200,000-row slice
// of pageviews needs 40–80 MiB, a 50,000-row one under 20). The slices are found first from a
// count of rows an hour, and run in order, so the rows and their order are the same as one query's.
import { collectYoungGeneration } from '../process-settings.ts';
import type { AnalyticsStore, Params, RowFormat } from '../stores/analytics/index.ts';

/** Rows a slice holds at most (whole hours: an hour with more is a slice of its own). */
export const SLICE_ROWS = 50_000;

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

export interface Slice {
  from: Date;
  to: Date;
}

/**
 * The slices of the query's span: whole UTC hours with rows (whole days for a table whose time
 * column is a Date), packed in order up to `maxRows` rows each.
 */
export async function slicesOf(store: AnalyticsStore, query: SlicedQuery, maxRows = SLICE_ROWS): Promise<Slice[]> {
  const bounded = query.range ? `AND ${query.time} >= {from:DateTime64(3)} AND ${query.time} < {to:DateTime64(3)}` : '';
  // toDateTime: a Date column's hour is its midnight, a DateTime64's is truncated to the second first.
  const hours = await store.query<{ hour: string; rows: string }>(
    `SELECT toString(toUnixTimestamp(toStartOfHour(toDateTime(${query.time})))) AS hour, toString(count()) AS rows
       FROM {db:Identifier}.${query.table}
      WHERE site_id = {site:UUID} ${bounded}
      GROUP BY hour ORDER BY toUInt32(hour)`,
    { db: query.params.db, site: query.params.site, ...(query.range ?? {}) },
  );
  const slices: Slice[] = [];
  let current: (Slice & { rows: number }) | undefined;
  for (const { hour, rows } of hours) {
    const from = new Date(Number(hour) * 1000);
    const to = new Date(from.getTime() + 3_600_000);
    if (current && current.rows + Number(rows) <= maxRows) {
      current.to = to;
      current.rows += Number(rows);
    } else {
      if (current) slices.push(current);
      current = { from, to, rows: Number(rows) };
    }
  }
  if (current) slices.push(current);
  // The first and last slices keep to the span asked for (its bounds need not be whole UTC hours).
  const range = query.range;
  return slices.map(({ from, to }) => ({ from: range && from < range.from ? range.from : from, to: range && to > range.to ? range.to : to }));
}

/**
 * After each slice: the slice's blocks, dead once sent, are freed now rather than when V8's
 * external-memory limit next forces a collection (~60 MiB of them later; lib/process-settings.ts).
 */
export const afterSlice = collectYoungGeneration;

/**
 * Runs `read` over the query's slices, then has the engine give back what the read freed, however
 * it ended: each table's first large read grows the embedded engine's allocator by what it worked
 * ahead of the reader, and a takeout reads one table after another.
 */
export async function* eachSlice<T>(store: AnalyticsStore, query: SlicedQuery, read: (slices: Slice[]) => AsyncIterable<T>): AsyncIterable<T> {
  try {
    yield* read(await slicesOf(store, query));
  } finally {
    await store.releaseMemory().catch(() => undefined);
  }
}

/** The query's bytes in `format`, slice after slice: what one query would give. Break to cancel. */
export function slicedBytes(store: AnalyticsStore, query: SlicedQuery, format: RowFormat): AsyncIterable<Uint8Array> {
  return eachSlice(store, query, async function* (slices) {
    for (const slice of slices) {
      yield* store.streamBytes(query.sql, { ...query.params, ...slice }, format);
      afterSlice();
    }
  });
}

/** The query's rows, slice after slice. Break to cancel. */
export function slicedRows<T>(store: AnalyticsStore, query: SlicedQuery): AsyncIterable<T> {
  return eachSlice(store, query, async function* (slices) {
    for (const slice of slices) {
      yield* store.stream<T>(query.sql, { ...query.params, ...slice });
      afterSlice();
    }
  });
}
