// A takeout: several tables in one download, as a spreadsheet (one sheet per table, a manifest
// sheet first) or as a zip holding one file per table in csv/ndjson/json/parquet plus
// manifest.json. Tables come from the analytics store (streamed, one block in memory at a time)
// or as rows already read (settings, goals, the account). The zip's entries are added one at a
// time, each when the one before has been read out, so a slow client holds back the queries; a
// client that goes away ends the running query, and Parquet's temporary files are removed
// however the download ends.
import { finished } from 'node:stream/promises';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { asyncBufferFromFile, parquetMetadataAsync } from 'hyparquet';
import { ZipFile } from 'yazl';
import { VERSION } from '../brand.ts';
import type { AnalyticsStore, Params, RowFormat } from '../stores/analytics/index.ts';
import { type ExportFormat, jsonArray } from './exports.ts';
import { slicedParquet } from './parquet.ts';
import { slicedBytes, slicedRows } from './slices.ts';
import type { TakeoutColumn, TakeoutType } from './takeout-tables.ts';
import { type CellValue, type SheetSource, writeWorkbook, XLSX_MAX_ROWS } from './xlsx.ts';

export const TAKEOUT_VERSION = 1;

export interface ManifestTable {
  name: string;
  /** The zip entry, or in a spreadsheet the table's first sheet. */
  file: string;
  /** Rows written (in a spreadsheet, counted over the table's sheets by the reader). */
  rows: number | null;
  columns: TakeoutColumn[];
}

export interface TakeoutManifest {
  kind: 'plumb-takeout' | 'plumb-account-takeout';
  version: typeof TAKEOUT_VERSION;
  plumb_version: string;
  created_at: string;
  format: ExportFormat;
  site?: { id: string; domain: string; timezone: string };
  user?: { id: string; email: string };
  tables: ManifestTable[];
}

interface TableBase {
  name: string;
  columns: readonly TakeoutColumn[];
}

/** A table already read: values in column order (timestamps as ISO text, JSON as text). */
export interface RowsTable extends TableBase {
  rows: readonly (readonly CellValue[])[];
}

/**
 * A table of the analytics store, read a slice of time at a time (lib/exports/slices.ts): its
 * SELECT bounded to one slice (`{from}`, `{to}`) in the text formats' form and in Parquet's.
 */
export interface QueryTable extends TableBase {
  sql: string;
  parquetSql: string;
  params: Params;
  slices: { table: string; time: string };
}

const sliced = (table: QueryTable, sql: string) => ({ sql, params: table.params, ...table.slices });

/** The text form's rows of a table. */
const tableRows = (store: AnalyticsStore, table: QueryTable) => slicedRows<Record<string, CellValue>>(store, sliced(table, table.sql));

/** The text form's bytes of a table. */
const tableBytes = (store: AnalyticsStore, table: QueryTable, format: RowFormat) => slicedBytes(store, sliced(table, table.sql), format);

export type TakeoutTable = RowsTable | QueryTable;

export interface TakeoutRequest {
  kind: TakeoutManifest['kind'];
  format: ExportFormat;
  site?: TakeoutManifest['site'];
  user?: TakeoutManifest['user'];
  tables: readonly TakeoutTable[];
  now?: Date;
  /** Rows per sheet, Excel's limit unless a test asks for less. */
  maxSheetRows?: number;
}

const isQuery = (table: TakeoutTable): table is QueryTable => 'sql' in table;

/** The download's body; whatever way it ends, its queries stop and its temporary files go. */
export function writeTakeout(store: AnalyticsStore, request: TakeoutRequest): Readable {
  const manifest: TakeoutManifest = {
    kind: request.kind,
    version: TAKEOUT_VERSION,
    plumb_version: VERSION,
    created_at: (request.now ?? new Date()).toISOString(),
    format: request.format,
    ...(request.site ? { site: request.site } : {}),
    ...(request.user ? { user: request.user } : {}),
    tables: [],
  };
  return request.format === 'xlsx' ? spreadsheet(store, request, manifest) : zipped(store, request, manifest);
}

// ————— spreadsheet —————

function spreadsheet(store: AnalyticsStore, request: TakeoutRequest, manifest: TakeoutManifest): Readable {
  const out = new PassThrough();
  manifest.tables = request.tables.map((table) => ({ name: table.name, file: table.name, rows: null, columns: [...table.columns] }));
  async function* sheets(): AsyncIterable<SheetSource> {
    yield { name: 'manifest', columns: ['field', 'value', 'columns'], rows: fromArray(manifestRows(manifest)) };
    for (const table of request.tables) {
      yield { name: table.name, columns: table.columns.map((c) => c.name), rows: isQuery(table) ? queryRows(store, table) : fromArray(table.rows) };
    }
  }
  writeWorkbook(out, sheets(), request.maxSheetRows ?? XLSX_MAX_ROWS).catch((error: Error) => out.destroy(error));
  return out;
}

/** The manifest as a sheet: one field a row, then one row per table with its columns. */
export function manifestRows(manifest: TakeoutManifest): CellValue[][] {
  const rows: CellValue[][] = [
    ['kind', manifest.kind, null],
    ['version', manifest.version, null],
    ['plumb_version', manifest.plumb_version, null],
    ['created_at', manifest.created_at, null],
    ['format', manifest.format, null],
  ];
  for (const [key, value] of Object.entries(manifest.site ?? {})) rows.push([`site.${key}`, value, null]);
  for (const [key, value] of Object.entries(manifest.user ?? {})) rows.push([`user.${key}`, value, null]);
  for (const table of manifest.tables) rows.push(['table', table.name, table.columns.map((c) => `${c.name}:${c.type}`).join(', ')]);
  return rows;
}

async function* fromArray<T>(items: readonly T[]): AsyncIterable<T> {
  yield* items;
}

async function* queryRows(store: AnalyticsStore, table: QueryTable): AsyncIterable<CellValue[]> {
  const names = table.columns.map((c) => c.name);
  for await (const row of tableRows(store, table)) yield names.map((name) => row[name] ?? null);
}

// ————— zip —————

interface Entry {
  body: Readable;
  /** Rows written, once the body has been read to its end. */
  rows(): Promise<number>;
  /** Removes what the entry left on disk. */
  cleanup(): Promise<void>;
}

function zipped(store: AnalyticsStore, request: TakeoutRequest, manifest: TakeoutManifest): Readable {
  const zip = new ZipFile();
  const out = zip.outputStream as PassThrough;
  const format = request.format as Exclude<ExportFormat, 'xlsx'>;
  let current: Entry | null = null;
  let dir: Promise<string> | null = null;
  const temporary = () => (dir ??= mkdtemp(join(tmpdir(), 'plumb-takeout-')));
  const removeTemporary = async () => {
    if (dir) await rm(await dir, { recursive: true, force: true });
  };
  out.once('close', () => {
    current?.body.destroy();
    void removeTemporary();
  });

  const write = async () => {
    for (const table of request.tables) {
      if (out.destroyed) return;
      const file = `${table.name}.${format}`;
      const entry = await openEntry(store, table, format, temporary);
      current = entry;
      try {
        if (out.destroyed) return;
        zip.addReadStream(entry.body, file, { compress: format !== 'parquet' });
        await finished(entry.body);
        manifest.tables.push({ name: table.name, file, rows: await entry.rows(), columns: [...table.columns] });
      } finally {
        current = null;
        await entry.cleanup();
      }
    }
    zip.addBuffer(Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`), 'manifest.json');
    zip.end();
  };
  write().catch((error: Error) => out.destroy(error));
  return out;
}

async function openEntry(store: AnalyticsStore, table: TakeoutTable, format: Exclude<ExportFormat, 'xlsx'>, temporary: () => Promise<string>): Promise<Entry> {
  if (format === 'parquet') return parquetEntry(store, table, temporary);
  let rows = 0;
  const nothing = async () => undefined;
  if (!isQuery(table)) {
    rows = table.rows.length;
    return { body: Readable.from([Buffer.from(rowsText(table, format))]), rows: async () => rows, cleanup: nothing };
  }
  const count = (counter: (chunk: Uint8Array) => number) =>
    async function* (chunks: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
      for await (const chunk of chunks) {
        rows += counter(chunk);
        yield chunk;
      }
    };
  let bytes: AsyncIterable<Uint8Array>;
  if (format === 'csv') {
    const header = async function* () {
      yield Buffer.from(`${csvLine(table.columns.map((c) => c.name))}\n`);
    };
    bytes = concat(header(), count(csvRowEnds())(tableBytes(store, table, 'CSV')));
  } else {
    const lines = count(lineEnds)(tableBytes(store, table, 'JSONEachRow'));
    bytes = format === 'json' ? jsonArray(lines) : lines;
  }
  // Destroying the body ends the iteration, which cancels the query.
  return { body: Readable.from(bytes, { objectMode: false }), rows: async () => rows, cleanup: nothing };
}

async function* concat(...parts: AsyncIterable<Uint8Array>[]): AsyncIterable<Uint8Array> {
  for (const part of parts) yield* part;
}

const lineEnds = (chunk: Uint8Array) => {
  let n = 0;
  for (let at = chunk.indexOf(0x0a); at !== -1; at = chunk.indexOf(0x0a, at + 1)) n++;
  return n;
};

/**
 * Counts the records of ClickHouse's CSV as it passes: a newline ends a record unless it is inside
 * quotes (a doubled quote inside quotes flips the state twice, so it changes nothing).
 */
export function csvRowEnds(): (chunk: Uint8Array) => number {
  let quoted = false;
  return (chunk) => {
    let n = 0;
    for (const byte of chunk) {
      if (byte === 0x22) quoted = !quoted;
      else if (byte === 0x0a && !quoted) n++;
    }
    return n;
  };
}

/**
 * A store table's Parquet is written a slice at a time (lib/exports/parquet.ts) as the zip reads
 * it; rows already read are written by ClickHouse to a file, whose footer counts them.
 */
async function parquetEntry(store: AnalyticsStore, table: TakeoutTable, temporary: () => Promise<string>): Promise<Entry> {
  if (isQuery(table)) {
    let rows = 0;
    const body = Readable.from(slicedParquet(store, sliced(table, table.parquetSql), (n) => (rows += n)), { objectMode: false });
    return { body, rows: async () => rows, cleanup: async () => undefined };
  }
  const file = join(await temporary(), `${table.name}.parquet`);
  const cleanup = () => rm(file, { force: true });
  try {
    await store.exportParquet(rowsParquetSql(table), { structure: rowsStructure(table.columns), data: Buffer.from(rowsText(table, 'ndjson')).toString('base64') }, file);
    const rows = Number((await parquetMetadataAsync(await asyncBufferFromFile(file))).num_rows);
    return { body: createReadStream(file), rows: async () => rows, cleanup };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

// ————— rows already read, written here —————

/** The ClickHouse type a row value is read as before it is written to Parquet. */
const STRUCTURE: Record<TakeoutType, string> = {
  timestamp: 'Nullable(String)',
  date: 'Nullable(String)',
  uuid: 'Nullable(String)',
  string: 'Nullable(String)',
  json: 'Nullable(String)',
  decimal: 'Nullable(String)',
  integer: 'Nullable(Int64)',
  int64: 'Nullable(String)',
  float: 'Nullable(Float64)',
  boolean: 'Nullable(Bool)',
};

const rowsStructure = (columns: readonly TakeoutColumn[]) => columns.map((c) => `${c.name} ${STRUCTURE[c.type]}`).join(', ');

/**
 * Rows already read go to Parquet through ClickHouse too (one writer of Parquet in Plumb): passed
 * as base64 (a parameter keeps no raw newline), timestamps and days turned back into their types.
 */
function rowsParquetSql(table: RowsTable): string {
  const select = table.columns.map(({ name, type }) => {
    if (type === 'timestamp') return `parseDateTime64BestEffortOrNull(${name}, 3, 'UTC') AS ${name}`;
    if (type === 'date') return `toDate32OrNull(${name}) AS ${name}`;
    if (type === 'int64') return `toInt64OrNull(${name}) AS ${name}`;
    return name;
  });
  return `SELECT ${select.join(', ')} FROM format(JSONEachRow, {structure:String}, base64Decode({data:String}))`;
}

/** A CSV field as ClickHouse writes one: text quoted (quotes doubled), numbers and booleans bare, null empty. */
const csvField = (value: CellValue) => (value === null ? '' : typeof value === 'string' ? `"${value.replaceAll('"', '""')}"` : String(value));
const csvLine = (values: readonly CellValue[]) => values.map(csvField).join(',');

function rowsText(table: RowsTable, format: 'csv' | 'ndjson' | 'json'): string {
  if (format === 'csv') return [table.columns.map((c) => c.name), ...table.rows].map((row) => `${csvLine(row)}\n`).join('');
  const objects = table.rows.map((row) => JSON.stringify(Object.fromEntries(table.columns.map((c, i) => [c.name, row[i] ?? null]))));
  if (format === 'ndjson') return objects.map((line) => `${line}\n`).join('');
  return objects.length === 0 ? '[\n]\n' : `[\n${objects.join(',\n')}\n]\n`;
}

/** `example.com-takeout-2026-01-31.zip`: the site's domain (or the account's name) and the UTC day. */
export function takeoutFileName(owner: string, format: ExportFormat, now: Date): string {
  const safe = owner.toLowerCase().replace(/[^a-z0-9.@-]+/g, '_').replace(/^[.-]+/, '') || 'plumb';
  return `${safe}-takeout-${now.toISOString().slice(0, 10)}.${format === 'xlsx' ? 'xlsx' : 'zip'}`;
}
