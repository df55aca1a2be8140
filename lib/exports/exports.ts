// Exports of a site's raw rows (pageviews, AI fetches) over a range, as a file streamed to the
// caller: read the request → build one SELECT → let ClickHouse write the format → pass its bytes
// on. CSV, NDJSON and JSON come from the store's byte stream (one block in memory at a time), a
// spreadsheet (xlsx) from its rows, one block at a time, written row by row (lib/exports/xlsx.ts);
// Parquet one slice at a time by ClickHouse, its row groups joined into one file as they go out
// (lib/exports/parquet.ts).
import { PassThrough, Readable } from 'node:stream';
import { localDate, parseRange, type TimeRange } from '../analytics/range.ts';
import type { AnalyticsStore, Params } from '../stores/analytics/index.ts';
import { slicedParquet } from './parquet.ts';
import { type SlicedQuery, slicedBytes, slicedRows } from './slices.ts';
import type { ExportTable } from './tables.ts';
import { type CellValue, writeWorkbook, XLSX_CONTENT_TYPE, XLSX_MAX_ROWS } from './xlsx.ts';

export const EXPORT_FORMATS = ['csv', 'ndjson', 'json', 'parquet', 'xlsx'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const CONTENT_TYPES: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  ndjson: 'application/x-ndjson',
  json: 'application/json',
  parquet: 'application/vnd.apache.parquet',
  xlsx: XLSX_CONTENT_TYPE,
};

/** The site as an export needs it: where its rows are, its clock, and its name for the file. */
export interface ExportSite {
  id: string;
  domain: string;
  tenant: string;
  timezone: string;
}

/** Query parameters of an export route (types already checked by the action). */
export interface ExportRequest {
  from?: string;
  to?: string;
  format?: ExportFormat;
  [filter: string]: string | undefined;
}

export interface ExportFile {
  body: Readable;
  contentType: string;
  /** `attachment; filename="…"`. */
  disposition: string;
}

/**
 * The rows of `table` for the site over the request's range (the stats routes' rules: dates in
 * the site's time zone or RFC 3339 instants, at most ten years), oldest first.
 */
export async function openExport(store: AnalyticsStore, site: ExportSite, table: ExportTable, request: ExportRequest, now = new Date(), maxSheetRows = XLSX_MAX_ROWS): Promise<ExportFile> {
  const range = parseRange({ from: request.from, to: request.to }, site.timezone, now);
  const format = request.format ?? 'csv';
  const { sql, params } = exportQuery(site, table, range, request, format);
  const sliced: SlicedQuery = { sql, params, table: table.table, time: 'ts', range: { from: range.from, to: range.to } };
  const body =
    format === 'parquet'
      ? await started(slicedParquet(store, sliced))
      : format === 'xlsx'
        ? await spreadsheet(store, sliced, table, maxSheetRows)
        : await started(textBody(store, sliced, table, format));
  return { body, contentType: CONTENT_TYPES[format], disposition: `attachment; filename="${fileName(site, table, range, format)}"` };
}

/** The one SELECT of an export; only fixed SQL text is joined, every value is bound. */
export function exportQuery(site: ExportSite, table: ExportTable, range: TimeRange, request: ExportRequest, format: ExportFormat): { sql: string; params: Params } {
  // Parquet keeps ts as a UTC timestamp; text formats write it as ISO 8601 UTC text.
  // Columns are qualified (`row.ts`): the text form of ts takes the column's name as its alias.
  // The order starts with the day, as the table's sorting key does after the site: ClickHouse then
  // reads the parts in that order and sorts one day at a time, instead of holding the whole range
  // in memory to sort it (same rows, same order: the day only follows ts).
  const columns = table.columns.map(([name, kind]) => (kind === 'time' && format !== 'parquet' ? `concat(replaceOne(toString(row.${name}), ' ', 'T'), 'Z') AS ${name}` : `row.${name} AS ${name}`));
  const filters = table.filters.filter((name) => request[name] !== undefined);
  const sql = `
    SELECT ${columns.join(', ')}
    FROM {db:Identifier}.${table.table} AS row
    WHERE row.site_id = {site:UUID} AND row.ts >= {from:DateTime64(3)} AND row.ts < {to:DateTime64(3)}
      ${filters.map((name) => `AND row.${name} = {${name}:String}`).join(' ')}
    ORDER BY toDate(row.ts), row.ts, row.${table.rowId}`;
  const params: Params = { db: site.tenant, site: site.id, from: range.from, to: range.to };
  for (const name of filters) params[name] = request[name];
  return { sql, params };
}

/** `example.com-pageviews-2026-01-01-to-2026-01-31.csv`: the range's first and last local days. */
export function fileName(site: ExportSite, table: ExportTable, range: TimeRange, format: ExportFormat): string {
  const domain = site.domain.toLowerCase().replace(/[^a-z0-9.-]+/g, '_').replace(/^[.-]+/, '') || 'site';
  const first = localDate(range.from, range.timezone);
  const last = localDate(new Date(range.to.getTime() - 1), range.timezone);
  return `${domain}-${table.label}-${first}-to-${last}.${format}`;
}

function textBody(store: AnalyticsStore, query: SlicedQuery, table: ExportTable, format: 'csv' | 'ndjson' | 'json'): AsyncIterable<Uint8Array> {
  if (format === 'csv') return withHeader(table, slicedBytes(store, query, 'CSV'));
  const lines = slicedBytes(store, query, 'JSONEachRow');
  return format === 'json' ? jsonArray(lines) : lines;
}

/**
 * The body as a stream whose query has started and given its first bytes: a query that fails
 * at once is then an error answer (with its status) rather than a response cut after its headers.
 * Destroying the stream ends the iteration, which cancels the query.
 */
async function started(chunks: AsyncIterable<Uint8Array>): Promise<Readable> {
  const iterator = chunks[Symbol.asyncIterator]();
  const first = await iterator.next();
  async function* all(): AsyncIterable<Uint8Array> {
    try {
      if (first.done) return;
      yield first.value;
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
    } finally {
      await iterator.return?.();
    }
  }
  const body = Readable.from(all(), { objectMode: false });
  // A stream destroyed before it was read (a HEAD request) never runs all(); its query still ends.
  body.once('close', () => void iterator.return?.());
  return body;
}

/**
 * The rows as one sheet (more past Excel's row limit), with text values as in CSV (timestamps as
 * ISO text, 64-bit integers as text). Its query has given its first rows before the answer starts
 * (as started() does); the workbook is written as the client reads it, and a client that goes
 * away ends the query.
 */
async function spreadsheet(store: AnalyticsStore, query: SlicedQuery, table: ExportTable, maxSheetRows: number): Promise<Readable> {
  const iterator = slicedRows<Record<string, CellValue>>(store, query)[Symbol.asyncIterator]();
  const first = await iterator.next();
  const names = table.columns.map(([name]) => name);
  async function* rows(): AsyncIterable<CellValue[]> {
    try {
      if (first.done) return;
      yield names.map((name) => first.value[name] ?? null);
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield names.map((name) => next.value[name] ?? null);
    } finally {
      await iterator.return?.();
    }
  }
  const out = new PassThrough();
  out.once('close', () => void iterator.return?.());
  writeWorkbook(out, [{ name: table.label, columns: names, rows: rows() }], maxSheetRows).catch((error: Error) => out.destroy(error));
  return out;
}

/** CSV without a header from the store (see RowFormat), the header written here, quoted as ClickHouse quotes. */
async function* withHeader(table: ExportTable, rows: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  const header = Buffer.from(`${table.columns.map(([name]) => `"${name}"`).join(',')}\n`);
  // The header goes out with the first rows, so the query has run once it is sent (see started()).
  let sent = false;
  for await (const chunk of rows) {
    yield sent ? chunk : Buffer.concat([header, chunk]);
    sent = true;
  }
  if (!sent) yield header;
}

const OPEN = Buffer.from('[\n');
const SEPARATOR = Buffer.from(',\n');

/**
 * JSONEachRow lines as one JSON array. A raw newline byte only ever ends a row (JSON escapes
 * newlines in strings, and no UTF-8 sequence contains the byte), so each one but the last becomes
 * a comma, wherever the blocks happen to be cut.
 */
export async function* jsonArray(lines: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  // A row's end seen and not yet written: it is a comma only if another row follows.
  let held = false;
  // The bracket goes out with the first rows, so the query has run once it is sent (see started()).
  let opened = false;
  for await (const chunk of lines) {
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const parts: Buffer[] = opened ? [] : [OPEN];
    opened = true;
    for (let start = 0; start < bytes.length; ) {
      const end = bytes.indexOf(0x0a, start);
      const stop = end === -1 ? bytes.length : end;
      if (stop > start) {
        if (held) parts.push(SEPARATOR);
        held = false;
        parts.push(bytes.subarray(start, stop));
      }
      if (end === -1) break;
      held = true;
      start = end + 1;
    }
    if (parts.length > 0) yield Buffer.concat(parts);
  }
  yield Buffer.from(`${opened ? '' : '[\n'}${held ? '\n' : ''}]\n`);
}
