// A large export read a slice at a time. One SELECT over millions of rows sorted by time makes
// ClickHouse read every part at once in order (8M pageviews as CSV: +450 MiB of the node's memory).
// Read as slices of consecutive hours (minutes or seconds of a busy hour), each sorted on its own
// and read one after another, the rows cost what one slice holds: the engine sorts a whole slice
// in memory (a 200,000-row slice of pageviews needs 40–80 MiB, a 50,000-row one under 20). The
// slices are found first from a count of rows an hour, and run in order, so the rows and their
// order are the same as one query's.
import { collectYoungGeneration } from '../process-settings.ts';
import type { AnalyticsStore, Params, RowFormat } from '../stores/analytics/index.ts';

/** Rows a slice holds at most (whole hours, or minutes or seconds of an hour with more). */
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

/** The units rows are counted in, coarsest first: an hour with more than a slice holds is counted again by minute, such a minute by second. */
const UNITS_SECONDS = [3600, 60, 1];

/** Rows a bucket of `unit` seconds holds, for each bucket with rows between `from` and `to` (all of the site when absent), in time order. */
async function countsIn(store: AnalyticsStore, query: SlicedQuery, unit: number, bounds?: Slice): Promise<{ start: number; rows: number }[]> {
  const bounded = bounds ? `AND ${query.time} >= {from:DateTime64(3)} AND ${query.time} < {to:DateTime64(3)}` : '';
  // toDateTime: a Date column's bucket is its midnight, a DateTime64's is truncated to the second first.
  const counted = await store.query<{ start: string; rows: string }>(
    `SELECT toString(intDiv(toUnixTimestamp(toDateTime(${query.time})), {unit:UInt32}) * {unit:UInt32}) AS start, toString(count()) AS rows
       FROM {db:Identifier}.${query.table}
      WHERE site_id = {site:UUID} ${bounded}
      GROUP BY start ORDER BY toUInt32(start)`,
    { db: query.params.db, site: query.params.site, unit, ...(bounds ?? {}) },
  );
  return counted.map(({ start, rows }) => ({ start: Number(start), rows: Number(rows) }));
}

/**
 * The slices of the query's span: whole UTC hours with rows (whole days for a table whose time
 * column is a Date), packed in order up to `maxRows` rows each. An hour with more rows is cut into
 * minutes, and such a minute into seconds, so a busy hour (a large site's, or a burst of ingest) is
 * not sorted in one piece; a single second with more rows is a slice of its own.
 */
export async function slicesOf(store: AnalyticsStore, query: SlicedQuery, maxRows = SLICE_ROWS): Promise<Slice[]> {
  const range = query.range;
  /** Buckets of `UNITS_SECONDS[level]` within `bounds`, those over `maxRows` replaced by their finer buckets. */
  const buckets = async (level: number, bounds: Slice | undefined): Promise<(Slice & { rows: number })[]> => {
    const unit = UNITS_SECONDS[level];
    const found: (Slice & { rows: number })[] = [];
    for (const { start, rows } of await countsIn(store, query, unit, bounds)) {
      const bucket = { from: new Date(start * 1000), to: new Date((start + unit) * 1000) };
      if (rows > maxRows && level + 1 < UNITS_SECONDS.length) {
        // Kept to the span asked for: the range's bounds need not be whole units.
        const within = { from: bounds && bounds.from > bucket.from ? bounds.from : bucket.from, to: bounds && bounds.to < bucket.to ? bounds.to : bucket.to };
        found.push(...(await buckets(level + 1, within)));
      } else found.push({ ...bucket, rows });
    }
    return found;
  };
  const slices: Slice[] = [];
  let current: (Slice & { rows: number }) | undefined;
  for (const bucket of await buckets(0, range)) {
    if (current && current.rows + bucket.rows <= maxRows) {
      current.to = bucket.to;
      current.rows += bucket.rows;
    } else {
      if (current) slices.push(current);
      current = bucket;
    }
  }
  if (current) slices.push(current);
  // The first and last slices keep to the span asked for (its bounds need not be whole UTC hours).
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
